"""``lax.ragged_all_to_all`` (and ``ragged_all_to_all_p``) against JAX 0.10.2 on two CPU
devices: the jaxpr inside shard_map, the lowered custom call, XLA:CPU's refusal to run it
(as under JAX), the eager error and the operand checks; traxla's vmap and VJP trace."""
from __future__ import annotations

from tests._device_scripts import run_json_script

_SCRIPT = """
import json, numpy as np
import {lib} as lib
lax = lib.lax
P = lib.sharding.PartitionSpec
from tests._outcomes import outcome
out = {{}}
mesh = lib.sharding.Mesh(np.array(lib.devices()), ("x",))
operand = np.array([[1, 2, 2], [3, 4, 0]], np.float32)
output = np.zeros((2, 4), np.float32)
io = np.array([[0, 1], [0, 1]], np.int32)
ss = np.array([[1, 2], [1, 1]], np.int32)
oo = np.array([[0, 0], [1, 2]], np.int32)
rs = np.array([[1, 1], [2, 1]], np.int32)
args = (operand, output, io, ss, oo, rs)
def body(a, b, c, d, e, f):
    return lax.ragged_all_to_all(a[0], b[0], c[0], d[0], e[0], f[0], axis_name="x")[None]
f = lib.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
out["jaxpr"] = str(lib.make_jaxpr(f)(*args))
text = lib.jit(f).lower(*args).as_text()
out["custom_call"] = [l.strip() for l in text.splitlines() if "ragged_all_to_all" in l]
out["run"] = outcome(lambda: f(*args))
out["eager"] = outcome(lambda: lax.ragged_all_to_all(operand[0], output[0], io[0], ss[0], oo[0],
                                               rs[0], axis_name="x"))
for i, name in enumerate(["input_offsets", "send_sizes", "output_offsets", "recv_sizes"]):
    def bad(a, b, *rest, i=i):
        rest = [r[0] for r in rest]
        rest[i] = rest[i].astype(np.float32)
        return lax.ragged_all_to_all(a[0], b[0], *rest, axis_name="x")[None]
    out["float_" + name] = outcome(lambda bad=bad: str(lib.make_jaxpr(lib.shard_map(
        bad, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(*args)))
out["rank"] = outcome(lambda: str(lib.make_jaxpr(lib.shard_map(
    lambda a, b, c, d, e, g: lax.ragged_all_to_all(a[0], b[0], c, d[0], e[0], g[0],
                                                   axis_name="x")[None],
    mesh=mesh, in_specs=P("x"), out_specs=P("x")))(*args)))
out["unbound"] = outcome(lambda: str(lib.make_jaxpr(lib.shard_map(
    lambda a, b, c, d, e, g: lax.ragged_all_to_all(a[0], b[0], c[0], d[0], e[0], g[0],
                                                   axis_name="y")[None],
    mesh=mesh, in_specs=P("x"), out_specs=P("x")))(*args)))
out["vmap_own_axis"] = outcome(lambda: lib.vmap(lambda a: lax.ragged_all_to_all(
    a, a, io[0], ss[0], oo[0], rs[0], axis_name="i"), axis_name="i")(np.ones((2, 4), np.float32)))
print(json.dumps(out))
"""


def test_ragged_all_to_all_matches_jax_on_two_devices():
    theirs = run_json_script(_SCRIPT, "jax", 2)
    ours = run_json_script(_SCRIPT, "traxla", 2)
    assert ours == theirs
    assert "ragged_all_to_all[" in theirs["jaxpr"]
    assert theirs["run"].startswith("JaxRuntimeError: UNIMPLEMENTED: HLO opcode "
                                    "`ragged-all-to-all` is not supported by XLA:CPU")
    assert theirs["eager"] == ("RuntimeError: ragged_all_to_all must be used within a mapped "
                               "context like vmap or shard_map.")


_TRACES = """
import json, numpy as np
import {lib} as lib
lax = lib.lax
P = lib.sharding.PartitionSpec
mesh = lib.sharding.Mesh(np.array(lib.devices()), ("x",))
io = np.array([[0, 1], [0, 1]], np.int32)
ss = np.array([[1, 2], [1, 1]], np.int32)
oo = np.array([[0, 0], [1, 2]], np.int32)
rs = np.array([[1, 1], [2, 1]], np.int32)
def body(a, b, c, d, e, g):  # vmapped over a batch axis of the operand and output
    return lib.vmap(lambda a_, b_: lax.ragged_all_to_all(a_, b_, c[0], d[0], e[0], g[0],
                                                         axis_name="x"))(a, b)
f = lib.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
vm = lib.make_jaxpr(f)(np.ones((4, 3), np.float32), np.zeros((4, 4), np.float32), io, ss, oo, rs)
g = lib.shard_map(lambda a, b, c, d, e, h: lax.ragged_all_to_all(
    a[0], b[0], c[0], d[0], e[0], h[0], axis_name="x")[None], mesh=mesh, in_specs=P("x"),
    out_specs=P("x"))
vjp = lib.make_jaxpr(lambda a, b: lib.vjp(lambda a, b: g(a, b, io, ss, oo, rs), a, b)[1](
    np.ones((2, 4), np.float32)))(np.ones((2, 3), np.float32), np.zeros((2, 4), np.float32))
print(json.dumps({{"vmap": str(vm), "vjp": str(vjp)}}))
"""


def test_vmap_and_vjp_trace():
    # JAX 0.10.2 fails on both (an assertion in its batcher; a constant in its JVP): traxla's
    # batching merges the batch into the ragged axis and offsets each member's block; the
    # transpose sends the received slices back (offsets and sizes swapped by all_to_all)
    out = run_json_script(_TRACES, "traxla", 2)
    assert "ragged_all_to_all[axis_index_groups=None axis_name=('x',)]" in out["vmap"]
    assert "f32[8]{V:x} = ragged_all_to_all" in out["vmap"]  # 2 batch members x 4 rows
    assert out["vjp"].count("ragged_all_to_all") == 2 and "all_to_all[" in out["vjp"]
    assert "cumsum" in out["vjp"]

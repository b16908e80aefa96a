"""``lax.conv_general_dilated`` on explicitly sharded operands (issue #28, flax's
nnx/spmd_test::test_out_sharding_conv), on 2 CPU devices against JAX 0.10.2 (a fresh
process each): JAX's sharding rule -- the lhs's sharding for a replicated kernel and a
whole lhs feature dimension (a sharded spatial dimension that changes size must still
divide), JAX's ShardingTypeError otherwise -- and ``out_sharding=`` (a P or a
NamedSharding; printed in the jaxpr as written); eager, under jit, its grad (each
transpose's out_sharding: its primal's sharding), vmap and ``jnp.convolve``."""
from __future__ import annotations

import re

import pytest

from _device_scripts import run_json_script

_SCRIPT = """
import json
import numpy as np
import {lib} as jax
import {lib}.numpy as jnp
N, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
out = {{}}
def run(name, f):
    try:
        out[name] = f()
    except Exception as e:
        out[name] = type(e).__name__ + ": " + str(e)
m = jax.make_mesh((2,), ("X",), axis_types=(jax.sharding.AxisType.Explicit,))
dn = ("NWC", "WIO", "NWC")
x = np.arange(2 * 4 * 4, dtype=np.float32).reshape(2, 4, 4) / 10
w = np.arange(3 * 4 * 8, dtype=np.float32).reshape(3, 4, 8) / 50
def conv(a, b, padding="SAME", **kw):
    return jax.lax.conv_general_dilated(a, b, (1,), padding, dimension_numbers=dn, **kw)
t = lambda v: str(jax.typeof(v))
with jax.set_mesh(m):
    xs = jax.device_put(x, P("X"))
    ws = jax.device_put(w, P())
    run("eager", lambda: [t(conv(xs, ws)), np.asarray(conv(xs, ws)).round(3).tolist(),
                          repr(conv(xs, ws).sharding)])
    run("jit", lambda: [t(jax.jit(conv)(xs, ws)), repr(jax.jit(conv)(xs, ws).sharding)])
    run("jaxpr", lambda: str(jax.make_jaxpr(conv)(xs, ws)))
    run("valid", lambda: t(conv(xs, ws, "VALID")))
    run("feature", lambda: t(conv(jax.device_put(x, P(None, None, "X")), ws)))
    xsp = jax.device_put(x, P(None, "X"))
    run("spatial_same", lambda: t(conv(xsp, ws)))
    run("spatial_valid", lambda: t(conv(xsp, ws, "VALID")))
    run("spatial_ragged", lambda: t(jax.lax.conv_general_dilated(
        xsp, w[:2], (1,), "VALID", dimension_numbers=dn)))
    wo = jax.device_put(w, P(None, None, "X"))
    run("rhs_out", lambda: t(conv(xs, wo)))
    run("rhs_in", lambda: t(conv(xs, jax.device_put(w, P(None, "X")))))
    run("out_sharding", lambda: [t(conv(xs, wo, out_sharding=P("X"))),
                                 t(conv(xs, ws, out_sharding=N(m, P(None, None, "X"))))])
    run("out_sharding_jit", lambda: t(jax.jit(
        lambda a, b: conv(a, b, out_sharding=P(None, None, "X")))(xs, wo)))
    run("out_sharding_jaxpr", lambda: str(jax.make_jaxpr(
        lambda a, b: conv(a, b, out_sharding=P("X")))(xs, wo)))
    loss = lambda a, b: (conv(a, b) ** 2).sum()
    run("grad", lambda: [(t(g), np.asarray(g).round(2).tolist())
                         for g in jax.grad(loss, (0, 1))(xs, ws)])
    run("grad_jit", lambda: [t(g) for g in jax.jit(jax.grad(loss, (0, 1)))(xs, ws)])
    run("grad_jaxpr", lambda: str(jax.make_jaxpr(jax.grad(loss, (0, 1)))(xs, ws)))
    wb = np.stack([w, w + 1])
    run("vmap", lambda: t(jax.vmap(conv, in_axes=(None, 0))(xs, wb)))
    run("vmap_jaxpr", lambda: str(jax.make_jaxpr(jax.vmap(
        lambda a, b: conv(a, b, out_sharding=P("X")), in_axes=(None, 0)))(xs, wb)))
    v = jax.device_put(np.arange(8.0, dtype=np.float32), P("X"))
    run("convolve", lambda: [t(jnp.convolve(v, np.ones(3, np.float32))),
                             t(jnp.convolve(v, np.ones(3, np.float32), mode="valid"))])
run("no_mesh", lambda: t(conv(x, w, out_sharding=P("X"))))
run("not_a_sharding", lambda: t(conv(x, w, out_sharding="X")))
print(json.dumps(out))
"""


def _run(lib):
    return run_json_script(_SCRIPT, lib, devices=2)


@pytest.fixture(scope="module")
def results():
    return _run("traxla"), _run("jax")


def _conv_equations(jaxpr):
    """The conv_general_dilated equations of a printed jaxpr (result type and params)."""
    out, cur = [], None
    for line in jaxpr.splitlines():
        if "conv_general_dilated[" in line:
            cur = [re.sub(r"^\s*\w+:", "", line).strip()]
        elif cur is not None:
            if line.strip().startswith("]"):
                out.append(cur)
                cur = None
            else:
                cur.append(line.strip())
    return out


@pytest.mark.parametrize("name", ["eager", "jit", "jaxpr", "valid", "feature", "spatial_same",
                                  "spatial_valid", "spatial_ragged", "rhs_out", "rhs_in",
                                  "out_sharding", "out_sharding_jit", "out_sharding_jaxpr",
                                  "grad", "grad_jit", "vmap", "vmap_jaxpr", "convolve",
                                  "no_mesh", "not_a_sharding"])
def test_matches_jax(results, name):
    got, want = results
    assert got[name] == want[name]


def test_grad_jaxpr_convolutions_match_jax(results):
    # (the cotangent's seed is staged apart from the convolutions; compared are these)
    got, want = (_conv_equations(r["grad_jaxpr"]) for r in results)
    assert len(want) == 3 and got == want


def test_refused_cases_are_jax_errors(results):
    got, _ = results
    msg = ("ShardingTypeError: Please specify the output sharding via `out_sharding` "
           "parameter of `conv_general_dilated`")
    assert got["feature"] == got["rhs_out"] == got["rhs_in"] == msg
    assert got["eager"][0] == "float32[2@X,4,8]"

"""pure_callback and io_callback: under jit, vmap (every vmap_method, compared with JAX's
jaxprs and call shapes), grad through custom_jvp; io_callback ordered; a callback that
returns the wrong shape/dtype/count or raises gives a Python exception naming it, and the
next call works."""
from __future__ import annotations

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
from traxla.experimental import io_callback as t_io_callback

jax = pytest.importorskip("jax")
from jax.experimental import io_callback as j_io_callback  # noqa: E402


class SDS:
    """Any object with .shape and .dtype describes a result."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


F3 = np.array([0.5, -1.25, 2.0], np.float32)
F23 = np.array([[0.5, -1.5, 2.0], [3.25, -0.75, 1.0]], np.float32)


def _shapes_seen(pure_callback, jit, vmap, vmap_method, in_axes, args):
    seen = []

    def host(x, y):
        seen.append((np.shape(x), np.shape(y)))
        return np.asarray(x) * np.asarray(y)

    def f(x, y):
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        return pure_callback(host, SDS(shape, np.float32), x, y, vmap_method=vmap_method)

    out = jit(vmap(f, in_axes=in_axes))(*args)
    return np.asarray(out), seen


@pytest.mark.parametrize("vmap_method", ["sequential", "sequential_unrolled", "expand_dims",
                                         "broadcast_all", "legacy_vectorized"])
def test_vmap_methods_match_jax(vmap_method):
    args = (F23, F3)
    in_axes = (0, None)
    if vmap_method == "legacy_vectorized":
        args, in_axes = (F23, F23), (0, 0)
    t_out, t_seen = _shapes_seen(traxla.pure_callback, traxla.jit, traxla.vmap, vmap_method,
                                 in_axes, args)
    j_out, j_seen = _shapes_seen(jax.pure_callback, jax.jit, jax.vmap, vmap_method,
                                 in_axes, args)
    np.testing.assert_allclose(t_out, j_out)
    assert t_seen == j_seen

    def prog(pure_callback, vmap):
        def f(x, y):
            return pure_callback(np.multiply, SDS(np.broadcast_shapes(np.shape(x), np.shape(y)),
                                                  np.float32), x, y, vmap_method=vmap_method)
        return vmap(f, in_axes=in_axes)
    t_text = str(traxla.make_jaxpr(prog(traxla.pure_callback, traxla.vmap))(*args))
    j_text = str(jax.make_jaxpr(prog(jax.pure_callback, jax.vmap))(*args))
    assert t_text == j_text


def test_vmap_without_method_refuses():
    f = traxla.vmap(lambda x: traxla.pure_callback(np.sin, SDS((), np.float32), x))
    with pytest.raises(NotImplementedError, match="vmap_method"):
        f(F3)


def test_pure_callback_jit_eager_and_pytrees():
    def host(d):
        return {"s": np.sin(d["a"]), "n": np.asarray(d["b"].sum(), np.int32)}

    def f(a, b):
        return traxla.pure_callback(host, {"s": SDS((3,), np.float32), "n": SDS((), np.int32)},
                                    {"a": a, "b": b})
    b = np.arange(4, dtype=np.int32)
    for fn in (f, traxla.jit(f)):
        out = fn(F3, b)
        np.testing.assert_allclose(np.asarray(out["s"]), np.sin(F3), rtol=1e-6)
        assert int(out["n"]) == 6 and out["n"].dtype == np.int32


def test_pure_callback_bool_operands_and_results():
    f = traxla.jit(lambda x: traxla.pure_callback(np.logical_not, SDS((3,), np.bool_), x))
    out = f(np.array([True, False, True]))
    assert out.dtype == np.bool_ and np.asarray(out).tolist() == [False, True, False]


def test_grad_through_custom_jvp():
    @traxla.custom_jvp
    def sin(x):
        return traxla.pure_callback(np.sin, SDS(np.shape(x), np.float32), x,
                                    vmap_method="expand_dims")

    @sin.defjvp
    def sin_jvp(primals, tangents):
        x, = primals
        t, = tangents
        cos = traxla.pure_callback(np.cos, SDS(np.shape(x), np.float32), x,
                                   vmap_method="expand_dims")
        return sin(x), cos * t

    g = traxla.jit(traxla.grad(lambda x: sin(x) * 2))
    np.testing.assert_allclose(float(g(np.float32(0.5))), 2 * np.cos(0.5), rtol=1e-6)
    gs = traxla.jit(traxla.vmap(traxla.grad(sin)))(F3)
    np.testing.assert_allclose(np.asarray(gs), np.cos(F3), rtol=1e-6)


def test_differentiating_a_callback_says_use_custom_jvp():
    f = lambda x: traxla.pure_callback(np.sin, SDS((), np.float32), x)  # noqa: E731
    with pytest.raises(ValueError, match="custom_jvp"):
        traxla.grad(f)(np.float32(1.0))
    g = lambda x: t_io_callback(np.sin, SDS((), np.float32), x)  # noqa: E731
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        traxla.grad(g)(np.float32(1.0))


def test_io_callback_ordered_in_scan_and_jaxpr_as_jax():
    log = []

    def record(i, x):
        log.append((int(i), float(x)))
        return np.asarray(x * 2, np.float32)

    def prog(io_callback, lax):
        def f(xs):
            def body(c, x):
                y = io_callback(record, SDS((), np.float32), c, x, ordered=True)
                return c + 1, y
            return lax.scan(body, np.int32(0), xs)
        return f
    out = traxla.jit(prog(t_io_callback, tlax))(F3)
    assert log == [(0, 0.5), (1, -1.25), (2, 2.0)]
    np.testing.assert_allclose(np.asarray(out[1]), F3 * 2)
    assert (str(traxla.make_jaxpr(prog(t_io_callback, tlax))(F3))
            == str(jax.make_jaxpr(prog(j_io_callback, jax.lax))(F3)))
    effects = traxla.make_jaxpr(prog(t_io_callback, tlax))(F3).effects
    assert [str(e) for e in effects] == ["OrderedIO"]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        traxla.vmap(lambda x: t_io_callback(record, SDS((), np.float32), x, x, ordered=True))(F3)


def test_unordered_io_callback_under_vmap_runs_per_lane():
    seen = []

    def host(x):
        seen.append(float(x))
        return np.asarray(x + 1, np.float32)
    out = traxla.jit(traxla.vmap(lambda x: t_io_callback(host, SDS((), np.float32), x)))(F3)
    np.testing.assert_allclose(np.asarray(out), F3 + 1)
    assert seen == [0.5, -1.25, 2.0]


@traxla.jit
def _bad_shape(x):
    return traxla.pure_callback(lambda v: np.zeros(8, np.float32), SDS((3,), np.float32), x)


@traxla.jit
def _bad_dtype(x):
    return traxla.pure_callback(lambda v: np.zeros(3, np.float64), SDS((3,), np.int32), x)


@traxla.jit
def _bad_count(x):
    return traxla.pure_callback(lambda v: (v, v), SDS((3,), np.float32), x)


def _raises_value_error(v):
    raise ValueError("boom from the host")


@traxla.jit
def _raising(x):
    return traxla.pure_callback(_raises_value_error, SDS((3,), np.float32), x) + 1


@traxla.jit
def _good(x):
    return traxla.pure_callback(np.cos, SDS((3,), np.float32), x)


@traxla.jit
def _not_an_array(x):
    return traxla.pure_callback(lambda v: "text", SDS((), np.float32), x)


@pytest.mark.parametrize("fn, message", [
    (_not_an_array, r"Incorrect output dtype for return value #0: Expected: float32, Actual: <U4"),
    (_bad_shape, r"Incorrect output shape for return value #0: Expected: \(3,\), Actual: \(8,\)"),
    (_bad_dtype, r"Incorrect output dtype for return value #0: Expected: int32, Actual: float32"),
    (_bad_count, r"Mismatched number of outputs from callback. Expected: 1, Actual: 2"),
    (_raising, r"boom from the host"),
])
def test_bad_callbacks_raise_and_next_call_works(fn, message):
    with pytest.raises(traxla.errors.CallbackError, match=message) as info:
        fn(F3)
    assert "callback" in str(info.value)
    if fn is _raising:  # the original exception, with its traceback, is the cause
        assert isinstance(info.value.__cause__, ValueError)
        assert info.value.__cause__.__traceback__ is not None
        assert "_raises_value_error" in str(info.value)
    np.testing.assert_allclose(np.asarray(_good(F3)), np.cos(F3), rtol=1e-6)
    traxla.effects_barrier()  # nothing pending


@pytest.mark.parametrize("how", ["pure", "io", "debug"])
@pytest.mark.parametrize("jit", [False, True])
def test_callback_exception_is_jax_runtime_error(how, jit):
    """As JAX's: a callback that raises gives a JaxRuntimeError (a RuntimeError) whose message
    is JAX's prefix and the traceback, under jit and for an eager pure/io callback (JAX runs
    those compiled); an eager debug.callback lets the exception through."""
    def run(lib, io_callback, errors):
        def call(x):
            if how == "pure":
                return lib.pure_callback(_raises_value_error, SDS((3,), np.float32), x)
            if how == "io":
                return io_callback(_raises_value_error, SDS((3,), np.float32), x)
            lib.debug.callback(_raises_value_error, x)
            return x
        try:
            (lib.jit(call) if jit else call)(F3)
            lib.effects_barrier()
        except Exception as e:  # noqa: BLE001
            return (isinstance(e, errors.JaxRuntimeError), isinstance(e, RuntimeError),
                    str(e).startswith("INTERNAL: CpuCallback error calling callback: Traceback "
                                      "(most recent call last):\n"),
                    str(e).endswith("\nValueError: boom from the host"))
        return None
    got = run(traxla, t_io_callback, traxla.errors)
    assert got == run(jax, j_io_callback, jax.errors)
    assert got[0] == (jit or how != "debug")


def test_eager_bad_result_raises():
    with pytest.raises(RuntimeError, match="Incorrect output shape"):
        traxla.pure_callback(lambda v: np.zeros(2, np.float32), SDS((3,), np.float32), F3)


def test_result_shape_dtypes_validation():
    with pytest.raises(ValueError, match="64-bit"):
        traxla.pure_callback(np.sin, SDS((3,), np.float64), F3)
    with pytest.raises(ValueError, match="vmap_method must be on of"):
        traxla.pure_callback(np.sin, SDS((3,), np.float32), F3, vmap_method="nope")


def test_prng_keys_print_as_jax_and_cannot_be_callback_results(capsys):
    key = traxla.random.key(0)
    traxla.jit(lambda k: traxla.debug.print("{}", k))(key)
    traxla.debug.print("{}", key)
    jax.jit(lambda k: jax.debug.print("{}", k))(jax.random.key(0))
    jax.debug.print("{}", jax.random.key(0))
    jax.effects_barrier()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == lines[2] == "[0 0]"  # under jit, as JAX
    assert lines[1] == "[0 0]"  # (outside jit JAX prints the key array's repr)
    with pytest.raises(TypeError, match="key_data"):
        traxla.pure_callback(lambda k: k, SDS((), np.float32), key)


_SPMD_SCRIPT = """
import numpy as np, traxla
from traxla.sharding import NamedSharding, PartitionSpec as P
mesh = traxla.make_mesh((2,), ("x",))
x = traxla.device_put(np.arange(4, dtype=np.float32), NamedSharding(mesh, P("x")))

@traxla.jit
def whole(x):
    traxla.debug.print("whole {}", x)
    return traxla.pure_callback(lambda v: np.asarray(v) * 2,
                                traxla.ShapedArray((4,), np.dtype("float32")), x) + 1

def block(b):
    traxla.debug.print("block {}", b)
    return b * 2

print("result", np.asarray(whole(x)).tolist())
print("result", np.asarray(traxla.jit(traxla.shard_map(
    block, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)).tolist())

def ordered_block(b):
    traxla.debug.print("block {}", b, ordered=True)
    return b
try:
    traxla.jit(traxla.shard_map(ordered_block, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)
except ValueError as e:
    print(e)
"""


def test_callbacks_in_spmd_programs():
    """On a 2-device mesh a callback of the whole program runs once with whole values (on
    device 0, as JAX places it); inside shard_map it runs once per device, on its block;
    ordered effects on several devices are refused with JAX's error."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, TRAXLA_NUM_CPU_DEVICES="2")
    proc = subprocess.run([sys.executable, "-c", _SPMD_SCRIPT], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["whole [0. 1. 2. 3.]", "result [1.0, 3.0, 5.0, 7.0]"]
    assert sorted(lines[2:4]) == ["block [0. 1.]", "block [2. 3.]"]
    assert lines[4] == "result [0.0, 2.0, 4.0, 6.0]"
    assert lines[5] == ("The following ordered effects are not supported for more than 1 "
                        "device: [OrderedDebug]")

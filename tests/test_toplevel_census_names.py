"""Top-level names of issue #31's census (``jax.ad``, ``jax.dlpack``, ...), checked against
JAX 0.10.2."""
import ml_dtypes
import numpy as np
import pytest

import traxla

jax = pytest.importorskip("jax")


def _run_or_error(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return (type(e).__name__, str(e))


# -- jax.ad ------------------------------------------------------------------------------------

def _with_refs(m):
    ad, jnp = m.ad, m.numpy
    out = [sorted(vars(ad)), ad.DontWant() == ad.DontWant(), repr(ad.GradRef()),
           repr(ad.DidntWant()), repr(ad.GradValue()),
           len(m.tree.leaves([ad.GradRef(), ad.DidntWant(), ad.GradValue(), ad.DontWant()])),
           m.tree.structure([ad.GradRef(), ad.DidntWant(), 1]).num_leaves]
    x, y = jnp.arange(3.0), jnp.ones(3)
    _, vjp = m.vjp(lambda x, y: (x * y).sum(), x, y)
    ref = m.new_ref(jnp.zeros(3))
    out.append(repr(vjp.with_refs(ref, ad.DontWant())(1.0)))
    out.append(np.asarray(ref[...]).tolist())
    got = vjp.with_refs(ad.GradValue(), ad.DontWant())(1.0)
    out.append((np.asarray(got[0]).tolist(), repr(got[1])))
    got = vjp.with_refs(ad.GradValue(), ad.GradValue())(1.0)
    out.append([np.asarray(g).tolist() for g in got])
    return out


def test_ad_namespace_as_jax():
    assert _with_refs(traxla) == _with_refs(jax)


# -- jax.dlpack --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", np.float32, "float64", "complex128",
                                   ml_dtypes.bfloat16, np.bool_, "uint64",
                                   ml_dtypes.float8_e4m3fn, "U", None], ids=repr)
def test_dlpack_is_supported_dtype_as_jax(dtype):
    assert _run_or_error(lambda: traxla.dlpack.is_supported_dtype(dtype)) == \
        _run_or_error(lambda: jax.dlpack.is_supported_dtype(dtype))


@pytest.mark.parametrize("value", [np.arange(6, dtype=np.float32).reshape(2, 3),
                                   np.ones(2), np.ones(2, np.int64),
                                   np.array([True, False])], ids=str)
def test_dlpack_from_dlpack_as_jax(value):
    def program(m):
        a = m.dlpack.from_dlpack(value)
        b = m.dlpack.from_dlpack(value, device=m.devices()[0])
        c = m.dlpack.from_dlpack(value, copy=True)
        return [(x.dtype, x.shape, np.asarray(x).tolist()) for x in (a, b, c)]
    assert program(traxla) == program(jax)


@pytest.mark.parametrize("bad", [[1, 2], 3.0])
def test_dlpack_from_dlpack_refuses_as_jax(bad):
    assert _run_or_error(lambda: traxla.dlpack.from_dlpack(bad)) == \
        _run_or_error(lambda: jax.dlpack.from_dlpack(bad))


# -- config states: no_execution, no_tracing, softmax_custom_jvp, jax2tf_... ------------------

def _guards(m):
    def f(x):
        return x * 2
    jf = m.jit(f)
    jf(1.0)
    compiled = m.jit(lambda x: x * 3).lower(1.0).compile()
    out = [m.no_tracing.value, m.no_execution.value]
    with m.no_tracing(True):
        out += [m.no_tracing.value, _run_or_error(lambda: float(jf(1.0))),
                _run_or_error(lambda: jf(np.ones(2, np.float32))),
                _run_or_error(lambda: m.jit(lambda x: x + 1)(1.0))]
    with m.no_execution(True):
        out += [_run_or_error(lambda: jf(1.0)), _run_or_error(lambda: m.lax.sin(1.0)),
                _run_or_error(lambda: m.jit(lambda x: x + 1)(1.0)),
                _run_or_error(lambda: compiled(1.0)),
                _run_or_error(lambda: str(m.jit(lambda x: x + 5).lower(1.0).compile().as_text()
                                          is not None)),
                _run_or_error(lambda: np.asarray(m.device_put(np.ones(2))).tolist())]
    out.append(_run_or_error(lambda: float(jf(1.0))))
    m.config.update("jax_no_execution", True)
    try:
        out += [_run_or_error(lambda: jf(1.0)), _run_or_error(lambda: jf(1.0))]
    finally:
        m.config.update("jax_no_execution", False)
    out += [_run_or_error(lambda: float(jf(1.0))), _run_or_error(lambda: float(jf(1.0)))]
    with m.no_tracing():
        out.append(m.no_tracing.value)
    return [o if not isinstance(o, tuple) or o[0] == "ok" else
            (o[0], o[1].replace(__file__, "<here>")) for o in out]


def test_no_tracing_and_no_execution_as_jax():
    """A jitted call that would trace raises under no_tracing (a cached one runs); under
    no_execution every run of a program raises, cached calls included, compiling does not.
    (traxla's eager operations are primitives, not jitted functions: they never trace.)"""
    assert _guards(traxla) == _guards(jax)


def _softmaxes(m):
    x = np.array([[1., 2., 3.], [0.5, -1, 2]], np.float32)
    w = np.array([[True, False, True], [True, True, True]])
    out = []
    for flag in (False, True):
        with m.softmax_custom_jvp(flag):
            out += [m.softmax_custom_jvp.value, str(m.make_jaxpr(m.nn.softmax)(x)),
                    str(m.make_jaxpr(m.grad(lambda x: m.nn.softmax(x)[0, 1]))(x)),
                    np.asarray(m.nn.softmax(x)).round(6).tolist(),
                    np.asarray(m.grad(lambda x: m.nn.softmax(x, where=w)[0, 2])(x))
                    .round(6).tolist(),
                    str(m.make_jaxpr(lambda x: m.nn.softmax(x, where=w))(x))]
    return out


def test_softmax_custom_jvp_as_jax():
    assert _softmaxes(traxla) == _softmaxes(jax)


def test_jax2tf_associative_scan_reductions_is_a_flag_as_jax():
    """Read by jax2tf only: JAX 0.10.2 itself, like traxla, changes nothing under it."""
    for m in (traxla, jax):
        assert m.jax2tf_associative_scan_reductions.value is False
        with m.jax2tf_associative_scan_reductions(True):
            assert m.jax2tf_associative_scan_reductions.value is True
            assert np.asarray(m.numpy.cumsum(np.arange(4.0))).tolist() == [0, 1, 3, 6]
        assert m.jax2tf_associative_scan_reductions.value is False


# -- make_user_context -------------------------------------------------------------------------

def _user_contexts(m):
    import threading
    traces = []

    @m.jit
    def f(x):
        traces.append(1)
        return x * 2
    ctx = m.make_user_context(default_value=None)
    x = m.numpy.float32(1.0)
    f(x), f(x)
    out = [len(traces), type(ctx).__name__, ctx.value, ctx.get_global()]
    with ctx(1):
        f(x), f(x)
        out += [len(traces), ctx.value]
    with ctx(2):
        f(x)
        out.append(len(traces))
        with ctx(1):  # traced under 1 before: a hit
            f(x)
            out += [len(traces), ctx.value]
        out.append(ctx.value)
    f(x)
    out += [len(traces), ctx.value]
    ctx.set_global(5)
    f(x), f(x)
    out += [len(traces), ctx.value, ctx.get_global()]
    ctx.set_global(None)
    f(x)
    out.append(len(traces))
    seen = []
    with ctx(9):  # another thread sees the global value
        t = threading.Thread(target=lambda: seen.append(ctx.value))
        t.start()
        t.join()
    out.append(seen)
    return out


def test_make_user_context_as_jax():
    """Its value keys jit's caches: a new value traces again, a value seen before hits."""
    assert _user_contexts(traxla) == _user_contexts(jax)

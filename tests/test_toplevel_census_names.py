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

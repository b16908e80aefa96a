"""DLPack interchange (``traxla.dlpack``, ``jnp.from_dlpack``, ``Array.__dlpack__``) with
NumPy and with JAX, both ways, as JAX 0.10.2 behaves."""
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp

try:  # imported at collection: jaxlib caches a failed ``import jax.core`` (traxla blocks it
    import jax  # noqa: F401  while reading buffers), so jax must come first in this process
except ImportError:  # pragma: no cover
    jax = None


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.complex64,
                                   np.float16, np.int8])
def test_from_numpy_and_back(dtype):
    host = (np.arange(6) % 2).astype(dtype).reshape(2, 3)
    a = traxla.dlpack.from_dlpack(host)
    assert type(a) is traxla.Array.__mro__[0] or isinstance(a, traxla.Array)
    assert a.dtype == host.dtype and a.shape == host.shape and not a.weak_type
    np.testing.assert_array_equal(np.asarray(a), host)
    np.testing.assert_array_equal(np.from_dlpack(a), host)
    np.testing.assert_array_equal(tnp.from_dlpack(host) + 0, host + 0)


def test_64_bit_producer_is_canonicalized_without_x64():
    a = tnp.from_dlpack(np.arange(3, dtype=np.int64))
    assert a.dtype == np.int32
    np.testing.assert_array_equal(a, [0, 1, 2])


def test_results_of_programs_export_and_device_argument():
    y = traxla.jit(lambda x: x * 2)(tnp.arange(4.0))
    assert y.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(y), [0.0, 2.0, 4.0, 6.0])
    z = tnp.from_dlpack(np.ones(2, np.float32), device=traxla.devices()[0])
    assert z.devices() == {traxla.devices()[0]}


def test_errors_as_jax():
    with pytest.raises(TypeError, match="must have __dlpack__ and __dlpack_device__"):
        traxla.dlpack.from_dlpack([1, 2])
    with pytest.raises(TypeError, match="Expected a string or dtype-like object"):
        traxla.dlpack.is_supported_dtype(None)
    assert traxla.dlpack.is_supported_dtype("bfloat16")
    assert not traxla.dlpack.is_supported_dtype(np.dtype("float8_e4m3fn")) if hasattr(
        np, "float8_e4m3fn") else True
    with pytest.raises(Exception, match="trivial \\(compact\\) striding"):
        traxla.dlpack.from_dlpack(np.arange(6.0).reshape(2, 3)[:, 1])


def test_with_jax_both_ways():
    if jax is None:
        pytest.skip("jax is not installed")
    a = traxla.dlpack.from_dlpack(jax.numpy.arange(3.0))
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    b = jax.dlpack.from_dlpack(tnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(b), [0.0, 1.0, 2.0, 3.0])

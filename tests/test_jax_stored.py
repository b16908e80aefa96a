"""tests/_jax_stored.py: JAX's results survive their JSON record unchanged (values, dtypes,
shapes, BCOO/BCSR buffers and flags, errors), and the key covers the code that made them."""
from __future__ import annotations

import json

import numpy as np
import pytest

from _jax_stored import StoredError, decode, encode, strip_tests


def roundtrip(x):
    return decode(json.loads(json.dumps(encode(x))))


@pytest.mark.parametrize("a", [
    np.array([[1.5, -0.], [np.nan, np.inf]], np.float32), np.array(3, np.int8),
    np.zeros((0, 2), np.complex128), np.array([1 + 2j, -3.5j], np.complex64),
    np.array([True, False]), np.float32(0.1), np.uint32(7)])
def test_arrays_keep_values_dtype_and_shape(a):
    b = roundtrip(a)
    a = np.asarray(a)
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(b, a)


def test_containers_scalars_dtypes_and_errors():
    x = {"a": (1, 2.5, None, True, "s"), "b": [np.dtype("int16")]}
    assert roundtrip(x) == x
    err = roundtrip(ValueError("bad input"))
    assert err == StoredError(ValueError, "bad input")
    with pytest.raises(TypeError, match="cannot store"):
        encode(object())


def test_sparse_records_keep_buffers_layout_flags_and_repr():
    from jax.experimental import sparse as jsparse
    data, idx = np.array([1., 2.], np.float32), np.array([[0, 1], [2, 0]], np.int32)
    b = jsparse.BCOO((data, idx), shape=(3, 4), indices_sorted=True)
    r = roundtrip(b)
    assert r.kind == "BCOO" and r.shape == (3, 4) and repr(r) == repr(b)
    assert (r.nse, r.n_batch, r.n_sparse, r.n_dense) == (2, 0, 2, 0)
    assert (r.indices_sorted, r.unique_indices) == (True, False)
    np.testing.assert_array_equal(r.data, data)
    assert r.indices.dtype == np.int32
    np.testing.assert_array_equal(r.indices, idx)


def test_the_module_key_drops_only_test_functions():
    text = strip_tests("import x\nC = 1\n\n\ndef helper():\n    return C\n\n\n"
                       "@deco\ndef test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    assert "helper" in text and "C = 1" in text
    assert "test_a" not in text and "@deco" not in text and "test_b" not in text

"""JAX's type promotion lattice with weak types, against JAX itself."""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import traxla
import traxla.numpy as tnp
from traxla.ir import dtypes

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

DTYPES = [np.dtype(d) for d in dtypes.ALL_DTYPES]
PY_SCALARS = [True, 1, 1.0, 1j]


def _jax_result(*xs):
    warnings.simplefilter("ignore", UserWarning)
    return np.dtype(jnp.result_type(*xs))


@pytest.mark.parametrize("a, b", list(itertools.combinations_with_replacement(DTYPES, 2)))
def test_typed_pairs_promote_as_in_jax(a, b):
    ours = dtypes.result_type_of((a, False), (b, False))
    assert ours == (_jax_result(a, b), False)


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("scalar", PY_SCALARS)
def test_python_scalars_are_weak(a, scalar):
    ours_dtype, _ = tnp._result_type(np.zeros(1, a), scalar)
    assert ours_dtype == _jax_result(np.zeros(1, a), scalar)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(DTYPES + PY_SCALARS), min_size=1, max_size=4))
def test_n_ary_promotion_matches_jax(items):
    args = [np.zeros(1, x) if isinstance(x, np.dtype) else x for x in items]
    assert tnp.result_type(*args) == _jax_result(*args)


def test_x64_switch_canonicalizes():
    assert dtypes.canonicalize(np.float64) == np.float32
    with traxla.config.flag("enable_x64", True):
        assert dtypes.canonicalize(np.float64) == np.float64
        assert tnp.result_type(1.0) == np.float64
    assert tnp.result_type(1) == np.int32


def test_weak_operand_keeps_typed_width_in_jaxpr():
    f = lambda x: x * 2.0  # noqa: E731
    x = np.ones(3, np.float16)
    assert str(traxla.make_jaxpr(f)(x)) == str(jax.make_jaxpr(f)(x))
    assert traxla.jit(f)(x).dtype == np.float16


def test_short_names():
    assert [dtypes.short_name(d) for d in DTYPES] == [
        "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
        "f64", "c64", "c128"]

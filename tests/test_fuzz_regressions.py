"""Bugs the random-program fuzzer found, each pinned against JAX."""
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _same(ours, theirs):
    assert type(ours).__name__ == "ArrayImpl"  # a device array, not a NumPy value
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert ours.weak_type == theirs.weak_type
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


@pytest.mark.parametrize("value", [np.bool_(True), np.array([1, 2], np.uint8)])
def test_abs_of_bool_or_unsigned_numpy_returns_an_array(value):
    # jnp.abs handed the NumPy input back unchanged (no .weak_type, not an Array)
    _same(tnp.abs(value), jnp.abs(value))


def test_vmap_of_a_function_returning_its_numpy_input_returns_an_array():
    x = np.array([8, 16], np.uint8)
    _same(traxla.vmap(tnp.abs)(x), jax.vmap(jnp.abs)(x))


def test_grad_of_a_weak_input_is_weak():
    # the transpose of broadcasting lost the weak type of a Python-float input
    def f(api, m):
        v1 = np.array([0.5, -1.0, 2.0], np.float32)
        return api.grad(lambda x: m.sum(m.sqrt(m.square(v1) + m.square(x))))(1.5)
    _same(f(traxla, tnp), f(jax, jnp))


@pytest.mark.parametrize("make", [
    lambda m: m.equal(1.5, 1.5),
    lambda m: m.greater(2, 1),
    lambda m: m.asarray(1.0) > 0,
    lambda m: m.isfinite(1.0),
    lambda m: m.logical_not(1.5),
    lambda m: m.logical_and(1.0, 2.0),
    lambda m: m.equal(m.float32(1), 1.0),
])
def test_comparisons_of_weak_operands_are_weak_booleans(make):
    _same(make(tnp), make(jnp))


def test_astype_of_a_concrete_scalar_is_an_array():
    # returned an internal Literal (np.asarray of it gave an object array)
    _same(tnp.asarray(np.int32(3)).astype(tnp.float32), jnp.asarray(np.int32(3)).astype(jnp.float32))
    _same(tnp.asarray(np.array(3, np.int32)).astype(tnp.float32),
          jnp.asarray(np.array(3, np.int32)).astype(jnp.float32))


@pytest.mark.parametrize("make", [
    lambda m: m.transpose(0.377),
    lambda m: m.transpose(2),
    lambda m: m.sum(np.float16(0.3772)),
    lambda m: m.mean(np.float16(0.3772)),
    lambda m: m.prod(np.float16(1.5)),
    lambda m: m.dot(1.5, 2.5),
    lambda m: m.vdot(1.5, 2.0),
    lambda m: m.broadcast_arrays(1.5, 2)[0],
])
def test_constant_folded_scalars_come_back_as_arrays(make):
    # these returned traxla's internal Literal instead of an Array
    _same(make(tnp), make(jnp))


def test_zero_gradient_of_a_weak_input_is_weak():
    # the instantiated symbolic zero was strongly typed
    _same(traxla.grad(lambda x, y: tnp.abs(y))(1.5, np.float32(2)),
          jax.grad(lambda x, y: jnp.abs(y))(1.5, np.float32(2)))


def test_arithmetic_on_weak_booleans_is_strongly_typed():
    # two weak booleans (comparisons of Python floats) skipped promotion and stayed weak
    _same(tnp.add(tnp.equal(0.5, 0.5), tnp.equal(0.5, 0.5)),
          jnp.add(jnp.equal(0.5, 0.5), jnp.equal(0.5, 0.5)))

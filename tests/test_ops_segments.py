"""``jax.ops`` segment reductions against JAX: values, dtypes, jaxprs, gradients, errors."""
import numpy as np
import pytest

import traxla

jax = pytest.importorskip("jax")

NAMES = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
DATA = np.arange(12, dtype=np.float32).reshape(6, 2) - 4.5
IDS = np.array([0, 0, 1, 3, 3, 3])
OPTIONS = [dict(), dict(num_segments=5), dict(num_segments=3), dict(num_segments=4, bucket_size=2),
           dict(num_segments=4, indices_are_sorted=True), dict(num_segments=4, mode="clip")]


def _both(name, *args, **kwargs):
    return [getattr(m.ops, name)(*args, **kwargs) for m in (jax, traxla)]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_values_and_jaxprs_match_jax(name, options, jax_side):
    theirs = jax_side(lambda: getattr(jax.ops, name)(DATA, IDS, **options))  # (stored)
    ours = getattr(traxla.ops, name)(DATA, IDS, **options)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    options = {"num_segments": 4, **options}

    def jaxpr(m):
        return str(m.make_jaxpr(lambda d, i: getattr(m.ops, name)(d, i, **options))(DATA, IDS))
    assert jaxpr(traxla) == jax_side(lambda: jaxpr(jax))


@pytest.mark.parametrize("data", [np.array([1, 2, 3], np.int32), np.array([True, False, True]),
                                  np.array([1.5, 2.5, 0.5], np.float16)])
@pytest.mark.parametrize("name", NAMES)
def test_identities_per_dtype(name, data):
    outcomes = []
    for m in (jax, traxla):  # segments 1 and 3 are empty: they hold the identity
        try:
            outcomes.append(getattr(m.ops, name)(data, np.array([0, 2, 0]), 4))
        except TypeError as e:  # (JAX: no sum or product of booleans)
            outcomes.append(type(e))
    theirs, ours = outcomes
    if isinstance(theirs, type):
        assert ours is theirs
        return
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_jax(name):
    ids = np.array([0, 1, 1, 2, 0, 2], np.int32)
    results = []
    for m in (jax, traxla):
        try:
            results.append(m.grad(lambda d: getattr(m.ops, name)(d, ids, 3).sum())(DATA))
        except NotImplementedError as e:  # JAX: scatter_mul gradients need unique indices
            results.append(str(e))
    if isinstance(results[0], str):
        assert results[1] == results[0]
    else:
        np.testing.assert_allclose(np.asarray(results[1]), np.asarray(results[0]))


def test_errors():
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        traxla.ops.segment_sum(DATA, IDS, -1)
    with pytest.raises(traxla.errors.ConcretizationTypeError):
        traxla.jit(lambda d, n: traxla.ops.segment_sum(d, IDS, n))(DATA, 4)
    with pytest.raises(TypeError):
        traxla.ops.segment_sum([1.0, 2.0], IDS)  # a list is not an array, as in JAX

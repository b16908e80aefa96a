"""``traxla.scipy.interpolate.RegularGridInterpolator`` against SciPy (values) and JAX 0.10.2
(jaxprs, errors)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.interpolate as scipy_interpolate

import jax
import jax.scipy.interpolate as jax_interpolate

import traxla
import traxla.numpy as tnp
from traxla.scipy.interpolate import RegularGridInterpolator

GRID = (np.array([0., 1., 2.], np.float32), np.array([0., 1., 3., 4.], np.float32))
VALUES = np.arange(12., dtype=np.float32).reshape(3, 4) ** 1.5
# inside, on a grid line, on the upper corner, and outside (below and above)
QUERY = np.array([[0.5, 0.5], [1.5, 3.5], [2., 4.], [1., 2.2], [-0.1, 1.], [1., 4.5]],
                 np.float32)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_matches_scipy(method):
    got = traxla.jit(lambda v, q: RegularGridInterpolator(GRID, v, method=method)(q))(
        VALUES, QUERY)
    want = scipy_interpolate.RegularGridInterpolator(
        GRID, VALUES, method=method, bounds_error=False)(QUERY)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_fill_value_none_extrapolates_and_method_per_call():
    interp = RegularGridInterpolator(GRID, VALUES, fill_value=None)
    filled = RegularGridInterpolator(GRID, VALUES, fill_value=-1.)
    got, got_nearest, got_filled = traxla.jit(
        lambda f, g, q: (f(q), f(q[:4], method="nearest"), g(q)))(interp, filled, QUERY)
    want = scipy_interpolate.RegularGridInterpolator(
        GRID, VALUES, bounds_error=False, fill_value=None)
    np.testing.assert_allclose(got, want(QUERY), rtol=1e-5)
    np.testing.assert_allclose(got_nearest, want(QUERY[:4], method="nearest"))
    np.testing.assert_array_equal(got_filled[4:], [-1., -1.])


def test_trailing_value_dims_tuple_points_and_int_values():
    values = np.stack([VALUES, -VALUES], axis=-1)  # (3, 4, 2): a vector at each grid point
    xs, ys = np.array([[0.5], [1.5]], np.float32), np.array([0.5, 3.5], np.float32)

    @traxla.jit
    def interpolate(values, xs, ys):
        return (RegularGridInterpolator(GRID, values)(QUERY[:4]),
                # a tuple of coordinate arrays broadcasts to the points' shape
                RegularGridInterpolator(GRID, values[..., 0])((xs, ys)),
                # integer values are promoted to the default float, as in JAX
                RegularGridInterpolator(GRID, tnp.arange(12).reshape(3, 4))(QUERY[:1]))
    vectors, from_tuple, ints = interpolate(values, xs, ys)
    assert vectors.shape == (4, 2) and from_tuple.shape == (2, 2)
    np.testing.assert_allclose(
        vectors, scipy_interpolate.RegularGridInterpolator(GRID, values)(QUERY[:4]), rtol=1e-6)
    np.testing.assert_allclose(
        from_tuple, scipy_interpolate.RegularGridInterpolator(GRID, VALUES)((xs, ys)), rtol=1e-6)
    assert ints.dtype == np.float32 and float(ints[0]) == pytest.approx(2.5)


def test_pytree_through_jit_and_vmap():
    interp = RegularGridInterpolator(GRID, VALUES, method="nearest")
    leaves, treedef = traxla.tree_util.tree_flatten(interp)
    assert len(leaves) == 4  # two grid axes, the values, the fill value
    rebuilt = traxla.tree_util.tree_unflatten(treedef, leaves)
    assert rebuilt.method == "nearest"
    got = traxla.jit(lambda f, q: f(q))(interp, QUERY)
    np.testing.assert_array_equal(got, scipy_interpolate.RegularGridInterpolator(
        GRID, VALUES, method="nearest", bounds_error=False)(QUERY))
    # vmap over a batch of value tables, one query set
    batch = np.stack([VALUES, 2 * VALUES])
    got = traxla.jit(traxla.vmap(lambda v: RegularGridInterpolator(GRID, v)(QUERY[:4])))(batch)
    want = scipy_interpolate.RegularGridInterpolator(GRID, VALUES)(QUERY[:4])
    np.testing.assert_allclose(got, [want, 2 * want], rtol=1e-6)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_jaxpr_matches_jax(method):
    def make(module):
        return lambda v, q: module.RegularGridInterpolator(GRID, v, method=method)(q)
    assert (str(traxla.make_jaxpr(make(traxla.scipy.interpolate))(VALUES, QUERY))
            == str(jax.make_jaxpr(make(jax_interpolate))(VALUES, QUERY)))


def test_errors_as_jax():
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(GRID, VALUES, method="cubic")
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(GRID, VALUES)(QUERY, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(GRID, VALUES, bounds_error=True)
    with pytest.raises(ValueError, match="there are 3 point arrays, but values has 2"):
        RegularGridInterpolator(GRID + (GRID[0],), VALUES)
    with pytest.raises(ValueError, match="fill_value must be either 'None'"):
        RegularGridInterpolator(GRID, VALUES, fill_value=1j)
    with pytest.raises(ValueError, match="have dimension 3"):
        RegularGridInterpolator(GRID, VALUES)(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError):
        RegularGridInterpolator(GRID, [[1.0, 2.0]])  # lists are not arrays, as in JAX

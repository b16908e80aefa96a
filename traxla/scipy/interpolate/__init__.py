"""``traxla.scipy.interpolate``: ``RegularGridInterpolator`` ('linear' and 'nearest' on a
rectilinear grid), as JAX's ``jax.scipy.interpolate`` computes it."""
from __future__ import annotations

from itertools import product

import numpy as np

from traxla.numpy import asarray, broadcast_arrays, empty, searchsorted, where, zeros
from traxla.numpy._promotion import check_arraylike, promote_dtypes_inexact
from traxla.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _ndim_coords_from_arrays(points, ndim=None):
    """A tuple of coordinate arrays, or one array, as a ``(..., ndim)`` array."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]  # an argument tuple around one array
    if isinstance(points, tuple):
        coords = broadcast_arrays(*points)
        for other in coords[1:]:
            if other.shape != coords[0].shape:
                raise ValueError("coordinate arrays do not have the same shape")
        stacked = empty(coords[0].shape + (len(points),), dtype=float)
        for j, item in enumerate(coords):
            stacked = stacked.at[..., j].set(item)
        return stacked
    check_arraylike("_ndim_coords_from_arrays", points)
    points = asarray(points)
    if points.ndim == 1:
        points = points.reshape(-1, 1) if ndim is None else points.reshape(-1, ndim)
    return points


class RegularGridInterpolator:
    """Interpolate points on a regular rectangular grid.

    JAX implementation of :class:`scipy.interpolate.RegularGridInterpolator`.

    Args:
      points: length-N sequence of arrays, the grid coordinates of each axis (strictly
        increasing: a decreasing axis silently gives wrong results, as in JAX).
      values: N-dimensional array of the grid values (trailing dimensions are carried).
      method: ``"linear"`` or ``"nearest"``.
      bounds_error: must be False: a data-dependent error cannot be raised under jit.
      fill_value: value for points outside the grid (NaN by default); None extrapolates.
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")

        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        values, = promote_dtypes_inexact(values)

        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value

        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")

        ndim = len(self.grid)
        xi = _ndim_coords_from_arrays(xi, ndim=ndim)
        if xi.shape[-1] != ndim:
            raise ValueError("the requested sample points xi have dimension"
                             f" {xi.shape[1]}, but this RegularGridInterpolator has"
                             f" dimension {ndim}")
        xi_shape = xi.shape
        xi = xi.reshape(-1, xi_shape[-1])

        indices, norm_distances, out_of_bounds = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, norm_distances)
        else:
            result = self._evaluate_nearest(indices, norm_distances)
        if not self.bounds_error and self.fill_value is not None:
            bcast_shape = result.shape[:1] + (1,) * (result.ndim - 1)
            result = where(out_of_bounds.reshape(bcast_shape), self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _evaluate_linear(self, indices, norm_distances):
        # broadcasts the weights over the trailing (non-grid) dimensions of the values
        vslice = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        # every corner of the cell: per axis the lower index i or the upper i + 1
        corners = product(*[[i, i + 1] for i in indices])
        values = asarray(0.)
        for corner in corners:
            weight = asarray(1.)
            for corner_index, i, y in zip(corner, indices, norm_distances):
                weight *= where(corner_index == i, 1 - y, y)
            values += self.values[corner] * weight[vslice]
        return values

    def _evaluate_nearest(self, indices, norm_distances):
        nearest = [where(y <= .5, i, i + 1) for i, y in zip(indices, norm_distances)]
        return self.values[tuple(nearest)]

    def _find_indices(self, xi):
        indices = []  # lower edge of the cell each point lies in, per axis
        norm_distances = []  # distance from that edge, in units of the cell width
        out_of_bounds = zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = searchsorted(g, x) - 1
            i = where(i < 0, 0, i)
            i = where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            norm_distances.append((x - g[i]) / (g[i + 1] - g[i]))
            if not self.bounds_error:
                out_of_bounds += x < g[0]
                out_of_bounds += x > g[-1]
        return indices, norm_distances, out_of_bounds


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(*children[:2], *aux, *children[2:]),
)

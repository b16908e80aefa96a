"""``traxla.flatten_util.ravel_pytree``: a pytree of arrays as one 1-D array and the function
that undoes it (``jax.flatten_util``)."""
from __future__ import annotations

import functools
import warnings

import numpy as np

from traxla import dtypes, lax
from traxla.tree_util import tree_flatten, tree_unflatten


class HashablePartial(functools.partial):
    """A partial that hashes and compares by its function and arguments (as JAX's), so two
    unravel functions of the same structure are equal (static arguments, jit caches)."""

    def __eq__(self, other):
        return (type(other) is HashablePartial and self.func.__code__ == other.func.__code__
                and self.args == other.args and self.keywords == other.keywords)

    def __hash__(self):
        return hash((self.func.__code__, self.args, tuple(sorted(self.keywords.items()))))


_PYTHON_SCALAR_DTYPES = {bool: np.dtype(bool), int: np.dtype(np.int64),
                         float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def _dtype(x):
    """The dtype of a value before canonicalization (JAX's ``dtypes.dtype``): Python
    scalars as 64-bit, arrays and tracers as they are."""
    t = _PYTHON_SCALAR_DTYPES.get(type(x))
    if t is not None:
        return t
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return dt if dtypes.issubdtype(dt, dtypes.extended) else np.dtype(dt)
    return np.asarray(x).dtype


def ravel_pytree(pytree):
    """``(flat, unravel)``: the leaves of ``pytree`` raveled and concatenated (dtype: their
    promoted dtype; an empty float32 array for no leaves) and ``unravel(flat)`` rebuilding
    the pytree."""
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, HashablePartial(unravel_pytree, treedef, unravel_list)


def unravel_pytree(treedef, unravel_list, flat):
    return tree_unflatten(treedef, unravel_list(flat))


def _ravel_list(lst, /):
    if not lst:
        return lax.full([0], 0, "float32"), lambda _: []
    from_dtypes = tuple(_dtype(x) for x in lst)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(x)) for x in lst)
    shapes = tuple(tuple(np.shape(x)) for x in lst)
    if all(dt == to_dtype for dt in from_dtypes):
        # No conversion: the unravel function then works for any dtype (JAX issue 7809).
        raveled = lax.concatenate([lax.reshape(e, (int(np.size(e)),)) for e in lst], 0)
        return raveled, HashablePartial(_unravel_list_single_dtype, sizes, shapes)
    raveled = lax.concatenate([lax.convert_element_type(e, to_dtype).ravel() for e in lst], 0)
    return raveled, HashablePartial(_unravel_list, sizes, shapes, from_dtypes, to_dtype)


def _unravel_list_single_dtype(sizes, shapes, arr):
    chunks = lax.split(arr, sizes)
    return [chunk.reshape(shape) for chunk, shape in zip(chunks, shapes)]


def _unravel_list(sizes, shapes, from_dtypes, to_dtype, arr):
    arr_dtype = _dtype(arr)
    if arr_dtype != to_dtype:
        raise TypeError(f"unravel function given array of dtype {arr_dtype}, "
                        f"but expected dtype {to_dtype}")
    chunks = lax.split(arr, sizes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex-to-real casts are intended here
        return [lax.convert_element_type(chunk.reshape(shape), dtype)
                for chunk, shape, dtype in zip(chunks, shapes, from_dtypes)]


__all__ = ["ravel_pytree"]

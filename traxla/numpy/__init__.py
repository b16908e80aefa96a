"""``traxla.numpy``: the NumPy API over lax primitives, as ``jax.numpy``.

Functions apply JAX's type promotion (weak types included) and rank
promotion, then bind ``lax`` primitives; nothing here talks to MLIR or PJRT.
"""
from __future__ import annotations

import ml_dtypes as _ml_dtypes
import numpy as _np

from traxla.ir import dtypes as _dtypes
from traxla.runtime import Array as ndarray  # noqa: F401
from traxla.numpy import _operators  # noqa: F401  (installs operators on Array and tracers)
from traxla.numpy._operators import ARRAY_API_VERSION as __array_api_version__  # noqa: F401
from traxla.numpy._creation import (arange, array, asarray, empty, eye, full, full_like, identity, linspace,
                        ones, ones_like, zeros, zeros_like)
from traxla.numpy._indexer import NonConcreteBooleanIndexError  # noqa: F401
from traxla.numpy._indexing import take, take_along_axis  # noqa: F401
from traxla.numpy._einsum import einsum, einsum_path, tensordot
from traxla.numpy._diagonals_tiles import diagonal, meshgrid, polyval, repeat, roll, tile, trace, tri, tril, triu
from traxla.numpy._linalg import dot, inner, matmul, outer, vdot
from traxla import dtypes as _public_dtypes
from traxla.numpy._promotion import result_type as _result_type  # noqa: F401  (dtype and weak type)
from traxla.numpy._reductions import (all, amax, amin, any, argmax, argmin, cumprod, cumsum, max, mean,  # noqa: A004
                          min, nancumprod, nancumsum, prod, ptp, std, sum, var)
from traxla.numpy._sorting import argsort, sort
from traxla.numpy._shape import (atleast_1d, atleast_2d, broadcast_arrays, broadcast_to, concatenate, expand_dims, flip,
                     hstack, matrix_transpose, moveaxis, ndim, ravel, reshape, shape, size, split,
                     squeeze, stack, swapaxes, transpose, vstack, unstack, array_split)
from traxla.numpy._ufuncs import (abs, acos, acosh, around, asin, asinh, atan, atan2, atanh, ceil, clip,  # noqa: A004
                      floor, floor_divide, invert, isfinite, left_shift, logical_not, positive,
                      power, reciprocal, remainder, right_shift, rint, round, square,
                      ufuncs as _ufunc_table, where)
from traxla.numpy._ufuncs import divmod, _iscomplexobj as iscomplexobj  # noqa: A004,F401

from traxla.numpy._eager import eager_cached as _eager_cached  # noqa: E402
globals().update({_k: _eager_cached(_v) for _k, _v in _ufunc_table.items()})
absolute = abs
mod = remainder
pow = power  # noqa: A001
concat = concatenate
permute_dims = transpose

bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
bfloat16 = _dtypes.bfloat16.type
complex64, complex128 = _np.complex64, _np.complex128
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype
finfo = _ml_dtypes.finfo  # JAX's jnp.finfo is ml_dtypes' class (np.finfo for ml_dtypes too)
iinfo = _np.iinfo


def result_type(*args):
    """The dtype JAX's promotion lattice gives ``args``: arrays, scalars, dtypes, scalar
    types or dtype names (``jax.dtypes.result_type``)."""
    return _public_dtypes.result_type(*args)


def isscalar(x):
    return _np.isscalar(x) or (hasattr(x, "aval") and not x.aval.shape)


def _scalar_type(np_type):
    """``jnp.float32(3.0)``: a 0-d Array of that dtype (as JAX's scalar types do)."""
    def make(x=0):
        return array(x, dtype=np_type)
    make.__name__ = _np.dtype(np_type).name
    make.dtype = _np.dtype(np_type)
    return make


from traxla.numpy._dtypes_api import _make_scalar_type  # noqa: E402
for _name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "bfloat16", "complex64", "complex128"):
    # JAX's scalar types: ``jnp.float32(x)`` is an Array; the type compares and hashes as
    # NumPy's (``jnp.float32 == np.float32``: tfp compares function defaults so)
    globals()[_name] = _make_scalar_type(_name, globals()[_name])
from traxla.numpy import fft  # noqa: F401,E402  (traxla.numpy.fft, as jax.numpy.fft)
from traxla.numpy._convolve import convolve, correlate  # noqa: F401,E402
from traxla.numpy import linalg  # noqa: E402,F401  (numpy.linalg on lax.linalg)

# -- the rest of jax.numpy (issue #16a), one topic module each ------------------------------
from traxla.numpy._nanfunctions import (average, count_nonzero, nanargmax, nanargmin, nanmax, nanmean,  # noqa: E402
                            nanmin, nanprod, nanstd, nansum, nanvar)
from traxla.numpy._quantiles import (median, nanmedian, nanpercentile, nanquantile, percentile,  # noqa: E402
                         quantile)
from traxla.numpy._searching import (argpartition, argwhere, bincount, choose, compress, digitize,  # noqa: E402
                         extract, flatnonzero, lexsort, nonzero, partition, piecewise, place, put,
                         put_along_axis, searchsorted, select, sort_complex)
from traxla.numpy._setops import (intersect1d, isin, setdiff1d, setxor1d, union1d, unique,  # noqa: E402
                      unique_all, unique_counts, unique_inverse, unique_values)
from traxla.numpy._vectorize import (apply_along_axis, apply_over_axes, frompyfunc, fromfunction,  # noqa: E402
                         matvec, ufunc, vecdot, vecmat, vectorize)
from traxla.numpy._manipulation import (allclose, append, array_equal, array_equiv, atleast_3d,  # noqa: E402
                            block, column_stack, cross, delete, diag, diagflat, diff, dsplit,
                            dstack, ediff1d, fill_diagonal, fliplr, flipud, gradient, hsplit,
                            insert, interp, isclose, kron, resize, rollaxis, rot90, trapezoid,
                            trim_zeros, unwrap, vander, vsplit)
from traxla.numpy._index_tricks import (c_, diag_indices, diag_indices_from, index_exp, indices, ix_,  # noqa: E402
                            mask_indices, mgrid, ogrid, r_, ravel_multi_index, s_, tril_indices,
                            tril_indices_from, triu_indices, triu_indices_from, unravel_index)
from traxla.numpy._pad import pad  # noqa: E402
from traxla.numpy._ufuncs_numeric import (bitwise_count, bitwise_invert, bitwise_left_shift,  # noqa: E402
                            bitwise_not, bitwise_right_shift, cumulative_prod, cumulative_sum,
                            fmax, fmin, frexp, gcd, i0, iscomplex, isreal, isrealobj, lcm, ldexp,
                            logaddexp2, modf, packbits, sinc, spacing, trunc, unpackbits)
from traxla.numpy._ufunc_objects import make_ufuncs as _make_ufuncs  # noqa: E402
globals().update(_make_ufuncs(globals()))  # jnp.add & co are jnp.ufunc objects, as in JAX
from traxla.numpy._statistics import (bartlett, blackman, corrcoef, cov, hamming, hanning, histogram,  # noqa: E402
                          histogram2d, histogram_bin_edges, histogramdd, kaiser)
from traxla.numpy._dtypes_api import (ComplexWarning, array_repr, array_str, astype, broadcast_shapes,  # noqa: E402
                          can_cast, character, complexfloating, copy, empty_like, euler_gamma,
                          flexible, floating, from_dlpack, frombuffer, fromfile, fromiter,
                          fromstring, generic, geomspace, get_printoptions, inexact, integer,
                          isdtype, issubdtype, iterable, load, logspace, number, object_,
                          printoptions, promote_types, save, savez, set_printoptions,
                          signedinteger, unsignedinteger)
from traxla.numpy._dtypes_api import SCALAR_TYPES as _SCALAR_TYPES  # noqa: E402
globals().update(_SCALAR_TYPES)  # int4, float8_*, int_, single, ..., and ``bool`` (last: shadows)
from traxla.numpy._polynomial import (poly, polyadd, polyder, polydiv, polyfit, polyint, polymul,  # noqa: E402
                          polysub, roots)

# Array refs (traxla.state, a layer below) make their values with jnp.array/asarray.
from traxla.state.ref import numpy_api as _refs_numpy_api  # noqa: E402
_refs_numpy_api.array, _refs_numpy_api.asarray = array, asarray

# linalg's TPU lowerings that JAX writes with jax.numpy (eigh, svd, ormqr, tridiagonal_solve)
from traxla.numpy import _tpu_linalg  # noqa: E402,F401

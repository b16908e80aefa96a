"""Linear-algebra primitives (JAX's ``jax/_src/lax/linalg.py``) and their typing rules.

Every operand is a batch of matrices (or vectors): the trailing ``rank`` dimensions are the
matrix, the leading ones are batch dimensions that must have the same number in every
operand, as JAX's ``linalg_shape_rule`` demands. Errors are JAX's, word for word."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.sharding_rules import register_sharding, spec_of
from traxla.ir.rules._util import FLOAT, FLOAT_COMPLEX, check_dtype, check_same_dtypes
from traxla.errors import ShardingTypeError

P: dict[str, Primitive] = {}


def _real_of(dtype):
    dtype = np.dtype(dtype)
    return {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}.get(dtype, dtype)


def _complex_of(dtype):
    dtype = np.dtype(dtype)
    if dtypes.is_complex(dtype):
        return dtype
    return np.dtype(np.complex128) if dtype == np.float64 else np.dtype(np.complex64)


def _split_batch(name, ranks, avals, supports_batching=True):
    """JAX's ``linalg_shape_rule``: (batch dims, per-operand core dims)."""
    batch_dims, dims = [], []
    for i, (rank, aval) in enumerate(zip(ranks, avals)):
        shape = tuple(aval.shape)
        if len(shape) < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                            f"shape={shape}")
        if not supports_batching and len(shape) != rank:
            raise TypeError(f"Input {i} to {name} must have a rank of exactly {rank}, but got "
                            f"shape={shape}")
        batch_dims.append(shape[:len(shape) - rank])
        dims.append(shape[len(shape) - rank:])
    if not all(len(batch_dims[0]) == len(b) for b in batch_dims):
        raise TypeError(f"All inputs to {name} must have the same number of batch dimensions, "
                        f"but got {[len(b) for b in batch_dims]} batch dimensions for the inputs.")
    if any(b != batch_dims[0] for b in batch_dims[1:]):
        # JAX's rule stops at the count; equal sizes too, so that a kernel never reads past
        # the smaller operand
        raise TypeError(f"All inputs to {name} must have the same batch dimensions, but got "
                        f"shapes {[tuple(a.shape) for a in avals]} (batch dimensions "
                        f"{batch_dims}). Broadcast the operands first.")
    return tuple(batch_dims[0]), dims


def _check_dtypes(name, categories, avals, require_same=True):
    for i, (cats, aval) in enumerate(zip(categories, avals)):
        if cats == ("int32",):
            if np.dtype(aval.dtype) != np.dtype(np.int32):
                raise TypeError(f"{name} does not accept dtype {aval.dtype} at position {i}. "
                                f"Accepted dtypes at position {i} are subtypes of int32.")
            continue
        check_dtype(name, cats, aval.dtype, i)
    if require_same:
        check_same_dtypes(name, avals)


def _weak(avals):
    return all(a.weak_type for a in avals)


def linalg_primitive(name, categories, ranks, shape_rule, dtype_rule=None,
                     multiple_results=False, supports_batching=True, require_same=True):
    """A primitive typed as JAX's ``linalg_primitive``: dtype check, batch split, then
    ``shape_rule(*core_dims, **params)`` for the trailing dims of the result(s) and
    ``dtype_rule(*dtypes, **params)`` for their dtypes (default: the first operand's)."""
    prim = Primitive(name, multiple_results)

    def rule(*avals, **params):
        _check_dtypes(name, categories, avals, require_same)
        batch, dims = _split_batch(name, ranks, avals, supports_batching)
        shapes = shape_rule(*dims, **params)
        if dtype_rule is None:
            out_dtypes = ([avals[0].dtype] * len(shapes)) if multiple_results else avals[0].dtype
        else:
            out_dtypes = dtype_rule(*[a.dtype for a in avals], **params)
        weak = _weak(avals)
        if multiple_results:
            return [ShapedArray(batch + tuple(s), np.dtype(d), weak)
                    for s, d in zip(shapes, out_dtypes)]
        return ShapedArray(batch + tuple(shapes), np.dtype(out_dtypes), weak)

    P[name] = def_typing(prim, rule)
    register_sharding(prim, _sharding_rule(name, ranks))
    return prim


def _sharding_rule(name, ranks):
    """JAX's ``linalg_sharding_rule``: batch dims may be sharded (alike in every operand), the
    matrix dims may not; results are sharded as the batch dims."""
    def rule(in_avals, out_avals, **params):
        batch_specs = []
        for i, (rank, aval) in enumerate(zip(ranks, in_avals)):
            spec = spec_of(aval)
            batch, rest = spec[:len(spec) - rank], spec[len(spec) - rank:]
            if not all(p is None for p in rest):
                raise ShardingTypeError(f"Input {i} to {name} must be unsharded on non-batch "
                                        f"dimensions, but got {spec}.")
            batch_specs.append(tuple(batch))
        if any(b != batch_specs[0] for b in batch_specs[1:]):
            raise ShardingTypeError(f"All inputs to {name} must have the same batch sharding, "
                                    f"but got {batch_specs}.")
        batch = batch_specs[0]
        return [batch + (None,) * (len(o.shape) - len(batch)) for o in out_avals]
    return rule


# -- shape rules (trailing dims only; batch dims are prepended) ---------------------------------

def _cholesky_shape(shape):
    if shape[0] != shape[1]:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {shape}.")
    return shape


def _cholesky_update_shape(r_shape, w_shape):
    if r_shape[0] != r_shape[1] or w_shape[0] != r_shape[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a "
                         f"vector of the same size as input. Got shapes {r_shape} and {w_shape} "
                         "instead")
    return r_shape


def _eig_shape(shape, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    if shape[0] != shape[1]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {shape}.")
    n = shape[0]
    return [(n,)] + [(n, n)] * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))


def _eig_dtype(dtype, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    return [_complex_of(dtype)] * (1 + int(compute_left_eigenvectors)
                                   + int(compute_right_eigenvectors))


def _eigh_shape(shape, *, subset_by_index, **_):
    if shape[0] != shape[-1]:
        raise ValueError("Argument to symmetric eigendecomposition must have shape [..., n, n], "
                         f"got shape {shape}")
    n = shape[0]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return [(n, d), (d,)]


def _eigh_dtype(dtype, **_):
    return [dtype, _real_of(dtype)]


def _hessenberg_shape(shape, **_):
    if shape[0] != shape[-1]:
        raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], "
                         f"got shape {shape}")
    return [shape, (shape[-1] - 1,)]


def _householder_product_shape(a_shape, taus_shape, **_):
    m, n = a_shape
    if m < n:
        raise ValueError("The first argument to householder_product must have at least as many "
                         f"rows as columns, got shape {a_shape}")
    if taus_shape[0] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more rows "
                         "than the minimum of the first argument's rows and columns.")
    return a_shape


def _lu_shape(shape):
    m, n = shape
    return [shape, (min(m, n),), (m,)]


def _lu_dtype(dtype, **_):
    return [dtype, np.dtype(np.int32), np.dtype(np.int32)]


def _lu_pivots_to_permutation_shape(shape, *, permutation_size):
    pivots_size, = shape
    if not permutation_size >= pivots_size:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the trailing "
                         f"dimension of the pivots. Got pivots size {pivots_size}")
    return (permutation_size,)


def _geqrf_shape(shape):
    m, n = shape
    return [shape, (min(m, n),)]


def _qr_shape(shape, *, pivoting, full_matrices, **_):
    m, n = shape
    k = m if full_matrices else min(m, n)
    return [(m, k), (k, n), (n,)] if pivoting else [(m, k), (k, n)]


def _qr_dtype(dtype, *, pivoting, **_):
    return [dtype, dtype, np.dtype(np.int32)] if pivoting else [dtype, dtype]


def _schur_shape(shape, *, compute_schur_vectors, **_):
    if shape[0] != shape[1]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {shape}.")
    return [shape, shape] if compute_schur_vectors else [shape]


def _schur_dtype(dtype, *, compute_schur_vectors, **_):
    return [dtype, dtype] if compute_schur_vectors else [dtype]


def _svd_shape(shape, *, full_matrices, compute_uv, subset_by_index, **_):
    m, n = shape
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    if compute_uv:
        return [(rank,), (m, m if full_matrices else rank), (n if full_matrices else rank, n)]
    return [(rank,)]


def _svd_dtype(dtype, *, compute_uv, **_):
    return [_real_of(dtype), dtype, dtype] if compute_uv else [_real_of(dtype)]


def _triangular_solve_shape(a_shape, b_shape, *, left_side=False, **_):
    if a_shape[0] != a_shape[1]:
        raise ValueError("The first input to triangular_solve must be a square matrix. Got "
                         f"shape {a_shape}.")
    common_dim = -2 if left_side else -1
    if a_shape[-1] != b_shape[common_dim]:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a_shape} and "
                         f"{b_shape}.")
    return b_shape


def _tridiagonal_shape(shape, **_):
    if shape[0] != shape[1] or shape[1] == 0:
        raise ValueError(f"Input must be a square matrix with non-zero size. Got shape {shape}.")
    n = shape[0]
    return [shape, (n,), (n - 1,), (n - 1,)]


def _tridiagonal_dtype(dtype, **_):
    real = _real_of(dtype)
    return [dtype, real, real, dtype]


def _tridiagonal_solve_shape(dl_shape, d_shape, du_shape, b_shape, **_):
    if dl_shape != d_shape or dl_shape != du_shape:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same "
                        f"shape, got {dl_shape}, {d_shape}, and {du_shape}")
    if d_shape[0] != b_shape[0]:
        raise TypeError("tridiagonal_solve requires that the leading dimension of the diagonals "
                        "and the right hand side match, got "
                        f"{d_shape[0]} and {b_shape[0]}")
    return b_shape


def _ormqr_shape(a_shape, taus_shape, c_shape, *, left, transpose):
    m = a_shape[0]
    if left and c_shape[0] != m:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as the "
                         f"Householder matrix a. Got a shape {a_shape} and c shape {c_shape}.")
    if not left and c_shape[1] != m:
        raise ValueError("ormqr with left=False expects c to have the same number of columns as "
                         f"the Householder matrix a has rows. Got a shape {a_shape} and c shape "
                         f"{c_shape}.")
    return c_shape


def _geqp3_shape(a_shape, jpvt_shape, **_):
    m, n = a_shape
    return [a_shape, jpvt_shape, (min(m, n),)]


def _geqp3_dtype(dtype, jpvt_dtype, **_):
    return [dtype, jpvt_dtype, dtype]


def _symmetric_product_shape(a_shape, c_shape, **_):
    if a_shape[0] != c_shape[1] or c_shape[0] != c_shape[1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (n, n). Got shapes {a_shape} and {c_shape}.")
    return c_shape


_FC = FLOAT_COMPLEX
cholesky_p = linalg_primitive("cholesky", (_FC,), (2,), _cholesky_shape)
cholesky_update_p = linalg_primitive("cholesky_update", (FLOAT, FLOAT), (2, 1),
                                     _cholesky_update_shape, supports_batching=False)
eig_p = linalg_primitive("eig", (_FC,), (2,), _eig_shape, _eig_dtype, multiple_results=True)
eigh_p = linalg_primitive("eigh", (_FC,), (2,), _eigh_shape, _eigh_dtype, multiple_results=True)
hessenberg_p = linalg_primitive("hessenberg", (_FC,), (2,), _hessenberg_shape,
                                multiple_results=True)
householder_product_p = linalg_primitive("householder_product", (_FC, _FC), (2, 1),
                                         _householder_product_shape)
lu_p = linalg_primitive("lu", (_FC,), (2,), _lu_shape, _lu_dtype, multiple_results=True)
lu_pivots_to_permutation_p = linalg_primitive(
    "lu_pivots_to_permutation", (("int32",),), (1,), _lu_pivots_to_permutation_shape)
geqrf_p = linalg_primitive("geqrf", (_FC,), (2,), _geqrf_shape, multiple_results=True)
qr_p = linalg_primitive("qr", (_FC,), (2,), _qr_shape, _qr_dtype, multiple_results=True)
schur_p = linalg_primitive("schur", (_FC,), (2,), _schur_shape, _schur_dtype,
                           multiple_results=True)
svd_p = linalg_primitive("svd", (_FC,), (2,), _svd_shape, _svd_dtype, multiple_results=True)
triangular_solve_p = linalg_primitive("triangular_solve", (_FC, _FC), (2, 2),
                                      _triangular_solve_shape)
tridiagonal_p = linalg_primitive("tridiagonal", (_FC,), (2,), _tridiagonal_shape,
                                 _tridiagonal_dtype, multiple_results=True)
ormqr_p = linalg_primitive("ormqr", (_FC, _FC, _FC), (2, 1, 2), _ormqr_shape)
geqp3_p = linalg_primitive("geqp3", (_FC, ("integer",)), (2, 1), _geqp3_shape, _geqp3_dtype,
                           multiple_results=True, require_same=False)
symmetric_product_p = linalg_primitive("symmetric_product", (FLOAT, FLOAT), (2, 2),
                                       _symmetric_product_shape)
tridiagonal_solve_p = linalg_primitive("tridiagonal_solve", (_FC,) * 4, (1, 1, 1, 2),
                                       _tridiagonal_solve_shape)


# -- custom_linear_solve: a linear solve with user-supplied solvers (JAX's linear_solve_p) ------

class LinearSolveTuple(tuple):
    """JAX's ``_LinearSolveTuple(matvec, vecmat, solve, transpose_solve)``: one entry per
    function of a ``custom_linear_solve`` (constant counts, or closed jaxprs)."""
    _fields = ("matvec", "vecmat", "solve", "transpose_solve")

    def __new__(cls, matvec, vecmat, solve, transpose_solve):
        return super().__new__(cls, (matvec, vecmat, solve, transpose_solve))

    matvec = property(lambda self: self[0])
    vecmat = property(lambda self: self[1])
    solve = property(lambda self: self[2])
    transpose_solve = property(lambda self: self[3])

    def transpose(self):
        return type(self)(self.vecmat, self.matvec, self.transpose_solve, self.solve)

    def __repr__(self):
        return "_LinearSolveTuple(" + ", ".join(f"{k}={v}" for k, v in zip(self._fields, self)) + ")"


def split_linear_solve_args(args, const_lengths):
    """(per-function constants as a LinearSolveTuple, the right-hand sides)."""
    args, out, i = list(args), [], 0
    for n in const_lengths:
        out.append(args[i:i + n])
        i += n
    return LinearSolveTuple(*out), args[i:]


def _custom_linear_solve_rule(*avals, const_lengths, jaxprs):
    _, b = split_linear_solve_args(avals, const_lengths)
    solve_outs = list(jaxprs.solve.out_avals)
    if len(solve_outs) < len(b) or any(
            tuple(o.shape) != tuple(a.shape) or o.dtype != a.dtype
            for o, a in zip(solve_outs, b)):
        raise TypeError("custom_linear_solve: solve() must return values of b's types "
                        f"{[a.str_short() for a in b]}, got {[a.str_short() for a in solve_outs]}")
    return solve_outs


custom_linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)
def_typing(custom_linear_solve_p, _custom_linear_solve_rule)
P["custom_linear_solve"] = custom_linear_solve_p

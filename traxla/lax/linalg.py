"""``traxla.lax.linalg``: JAX's ``jax.lax.linalg`` (the linear-algebra primitives' wrappers),
binding the primitives of ``ir/rules/linalg.py``. Leading dimensions are batch dimensions.

The Python implementations that JAX lowers with ``mlir.lower_fun`` (``qr`` as ``geqrf`` +
``householder_product``, ``lu_pivots_to_permutation`` as a loop of swaps, ``cholesky_update``
as Givens rotations) are defined here and handed to the lowering layer, which traces them
once per operand types."""
from __future__ import annotations

import enum

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.rules.linalg import (cholesky_p, cholesky_update_p, eig_p, eigh_p, geqp3_p,  # noqa: F401
                               geqrf_p, hessenberg_p, householder_product_p, lu_p,
                               lu_pivots_to_permutation_p, ormqr_p, qr_p, schur_p, svd_p,
                               symmetric_product_p, triangular_solve_p, tridiagonal_p,
                               tridiagonal_solve_p)
from traxla.lowering.rules import linalg as _lowering
from traxla.batching import vmap
from traxla.api import jit
from traxla.lax.solves import custom_linear_solve
from traxla.tracer import trace_to_jaxpr


class EigImplementation(enum.Enum):
    LAPACK = "lapack"
    MAGMA = "magma"
    CUSOLVER = "cusolver"


class EighImplementation(enum.Enum):
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


class _FallbackPrecision(enum.Enum):
    """``lax.Precision`` where this traxla has none: the tag JAX's linear-algebra helpers put
    on their products (printed ``precision=(Precision.HIGHEST, Precision.HIGHEST)``; CPU
    products are full precision either way)."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __repr__(self):
        return f"Precision.{self.name}"


def _highest():
    """JAX's ``precision=lax.Precision.HIGHEST``, as the pair ``dot_general`` carries."""
    precision = getattr(lax, "Precision", None) or _FallbackPrecision
    return (precision.HIGHEST, precision.HIGHEST)


# -- small matrix helpers (JAX's _T, _H, symmetrize, _tril, _triu, ...) ------------------------

def _ndim(x):
    return len(lax.shape_of(x))


def _T(x):
    n = _ndim(x)
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


def _conj(x):
    return lax.conj(x) if dtypes.is_complex(lax.dtype_of(x)) else x


def _H(x):
    return _conj(_T(x))


def symmetrize(x):
    return lax.div(lax.add(x, _H(x)), lax._const(x, 2))


def _tril(m, k=0):
    *_, n, mm = lax.shape_of(m)
    mask = lax._tri(bool, (n, mm), k)
    return lax.select(lax.broadcast(mask, lax.shape_of(m)[:-2]), m, lax.full_like(m, 0))


def _triu(m, k=0):
    *_, n, mm = lax.shape_of(m)
    mask = lax._tri(bool, (n, mm), k - 1)
    return lax.select(lax.broadcast(mask, lax.shape_of(m)[:-2]), lax.full_like(m, 0), m)


def _eye(dtype, shape):
    """JAX's ``lax._eye`` (the row iota plus the offset 0, compared with the column iota)."""
    n, m = shape
    rows = lax.add(lax.broadcasted_iota(np.int32, (n, m), 0), np.int32(0))
    eq = lax.eq(rows, lax.broadcasted_iota(np.int32, (n, m), 1))
    return lax._convert_element_type(eq, np.dtype(dtype), False)


def _eye_like(x, n):
    return lax.broadcast(_eye(lax.dtype_of(x), (n, n)), lax.shape_of(x)[:-2])


def _matmul(a, b, precision=None, preferred_element_type=None):
    """A batched matrix product (leading dims are batch dims, equal in both); JAX's rules ask
    for ``precision=HIGHEST`` where the default (one bf16 pass on a TPU) is too coarse."""
    na, nb = _ndim(a), _ndim(b)
    batch = tuple(range(na - 2))
    return lax.dot_general(a, b, (((na - 1,), (nb - 2,)), (batch, batch)), precision=precision,
                           preferred_element_type=preferred_element_type)


HIGHEST = lax.Precision.HIGHEST


def _extract_diagonal(x):
    """The main diagonals of a batch of matrices: ``[..., min(m, n)]`` (JAX's gather
    ``x[..., i, i]``)."""
    i = lax.iota(np.int32, min(lax.shape_of(x)[-2:]))
    return x[..., i, i]


def _construct_diagonal(s):
    """A batch of diagonal matrices from a batch of vectors (JAX's scatter
    ``zeros.at[..., i, i].set(s)``)."""
    shape = lax.shape_of(s)
    i = lax.iota(np.int32, shape[-1])
    return lax.full((*shape, shape[-1]), 0, lax.dtype_of(s)).at[..., i, i].set(s)


# -- the public wrappers (JAX's signatures) ----------------------------------------------------

def cholesky(x, *, symmetrize_input: bool = True):
    x = lax._asarray(x)
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(cholesky_p.bind(x))


def cholesky_update(r_matrix, w_vector):
    return cholesky_update_p.bind(lax._asarray(r_matrix), lax._asarray(w_vector))


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation=None, use_magma=None):
    if use_magma is not None:
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    return eig_p.bind(lax._asarray(x), compute_left_eigenvectors=compute_left_eigenvectors,
                      compute_right_eigenvectors=compute_right_eigenvectors,
                      enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index=None, implementation=None):
    x = lax._asarray(x)
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=lower, sort_eigenvalues=sort_eigenvalues,
                       subset_by_index=subset_by_index, algorithm=implementation)
    return v, w


def hessenberg(a):
    return hessenberg_p.bind(lax._asarray(a))


def householder_product(a, taus):
    return householder_product_p.bind(lax._asarray(a), lax._asarray(taus))


def lu(x):
    return lu_p.bind(lax._asarray(x))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    return lu_pivots_to_permutation_p.bind(lax._asarray(pivots),
                                           permutation_size=int(permutation_size))


def geqrf(a):
    a_out, taus = geqrf_p.bind(lax._asarray(a))
    return a_out, taus


def geqp3(a, jpvt, *, use_magma=None):
    a_out, jpvt_out, taus = geqp3_p.bind(lax._asarray(a), lax._asarray(jpvt), use_magma=use_magma)
    return a_out, jpvt_out, taus


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    return ormqr_p.bind(lax._asarray(a), lax._asarray(taus), lax._asarray(c), left=left,
                        transpose=transpose)


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    q, r, *p = qr_p.bind(lax._asarray(x), pivoting=pivoting, full_matrices=full_matrices,
                         use_magma=use_magma)
    if pivoting:
        return q, r, p[0]
    return q, r


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1., beta: float = 0.,
                      symmetrize_output: bool = False):
    result = symmetric_product_p.bind(lax._asarray(a_matrix), lax._asarray(c_matrix),
                                      alpha=alpha, beta=beta)
    if symmetrize_output:
        upper_half = _T(_tril(result, k=-1))
        result = lax.add(_tril(result, k=0), upper_half)
    return result


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    return schur_p.bind(lax._asarray(x), compute_schur_vectors=compute_schur_vectors,
                        sort_eig_vals=sort_eig_vals, select_callable=select_callable)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    result = svd_p.bind(lax._asarray(x), full_matrices=full_matrices, compute_uv=compute_uv,
                        subset_by_index=subset_by_index, algorithm=algorithm)
    if compute_uv:
        s, u, v = result
        return u, s, v
    s, = result
    return s


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    a, b = lax._asarray(a), lax._asarray(b)
    conjugate_a = conjugate_a and dtypes.is_complex(lax.dtype_of(a))
    singleton = _ndim(b) == _ndim(a) - 1
    if singleton:
        b = lax.expand_dims(b, (-1 if left_side else -2,))
    out = triangular_solve_p.bind(a, b, left_side=left_side, lower=lower,
                                  transpose_a=transpose_a, conjugate_a=conjugate_a,
                                  unit_diagonal=unit_diagonal)
    if singleton:
        n = _ndim(out)
        out = lax.squeeze(out, (n - 1,) if left_side else (n - 2,))
    return out


def tridiagonal(a, *, lower: bool = True):
    return tridiagonal_p.bind(lax._asarray(a), lower=lower)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    return tridiagonal_solve_p.bind(lax._asarray(dl), lax._asarray(d), lax._asarray(du),
                                    lax._asarray(b), perturb_singular=perturb_singular)


# -- solving through LU and custom_linear_solve (JAX's _lu_solve and _solve) -------------------

def _lu_solve_core(lu, permutation, b, trans):
    m = lax.shape_of(lu)[0]
    b_shape = lax.shape_of(b)
    x = lax.reshape(b, (m, int(np.prod(b_shape[1:]))))
    if trans == 0:
        x = x[permutation, :]
        x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        x = triangular_solve(lu, x, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        x = triangular_solve(lu, x, left_side=True, lower=False, transpose_a=True,
                             conjugate_a=conj)
        x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True,
                             transpose_a=True, conjugate_a=conj)
        _, ind = lax.sort_key_val(permutation, lax.iota(np.int32, lax.shape_of(permutation)[0]))
        x = x[ind, :]
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return lax.reshape(x, b_shape)


def _lu_solve_impl(lu, permutation, b, trans):
    lu_shape, b_shape = lax.shape_of(lu), lax.shape_of(b)
    if len(lu_shape) < 2 or lu_shape[-1] != lu_shape[-2]:
        raise ValueError("last two dimensions of LU decomposition must be equal, "
                         f"got shape {lu_shape}")
    if len(b_shape) < 1:
        raise ValueError(f"b matrix must have rank >= 1, got shape {b_shape}")
    rhs_vector = len(lu_shape) == len(b_shape) + 1
    if rhs_vector:
        if b_shape[-1] != lu_shape[-1]:
            raise ValueError("When LU decomposition matrix and b have the same number of "
                             "dimensions, last axis of LU decomposition matrix (shape "
                             f"{lu_shape}) and b array (shape {b_shape}) must match")
        b = b[..., None]
    elif b_shape[-2] != lu_shape[-1]:
        raise ValueError("When LU decomposition matrix and b different numbers of dimensions, "
                         f"last axis of LU decomposition matrix (shape {lu_shape}) and second "
                         f"to last axis of b array (shape {b_shape}) must match")
    perm_shape = lax.shape_of(permutation)
    batch = tuple(np.broadcast_shapes(lu_shape[:-2], perm_shape[:-1], lax.shape_of(b)[:-2]))
    lu = _broadcast_to(lu, batch + tuple(lu_shape[-2:]))
    permutation = _broadcast_to(permutation, batch + tuple(perm_shape[-1:]))
    b = _broadcast_to(b, batch + tuple(lax.shape_of(b)[-2:]))

    def fn(lu, permutation, b):
        return _lu_solve_core(lu, permutation, b, trans)
    for _ in batch:
        fn = vmap(fn)
    x = fn(lu, permutation, b)
    return x[..., 0] if rhs_vector else x


def _broadcast_to(x, shape):
    # bound even when it is an identity, as JAX does (custom_linear_solve's vecmat
    # transposes it to a reduce_sum over no axes)
    x_shape = lax.shape_of(x)
    return lax.broadcast_in_dim(x, shape, tuple(range(len(shape) - len(x_shape), len(shape))))


def _solve_linear(a, b):
    """``solve(a, b)`` for ``b`` of ``a``'s batch shape (``[..., m, k]``), linear in ``b`` with
    no custom rule (for JVP rules, whose tangent expressions must transpose)."""
    lu_, _, permutation = lu(lax.stop_gradient(a))
    return _lu_solve_impl(lu_, permutation, b, 0)


_lu_solve_jits: dict = {}


def lu_solve(lu, permutation, b, trans=0):
    """JAX's ``lax.linalg.lu_solve``: solves ``op(A) x = b`` from ``lu`` and ``permutation``
    (``trans``: 0 for ``A``, 1 for ``A^T``, 2 for ``A^H``), as the jitted ``_lu_solve``."""
    f = _lu_solve_jits.get(trans)
    if f is None:
        def _lu_solve(lu, permutation, b):
            return _lu_solve_impl(lu, permutation, b, trans)
        f = _lu_solve_jits[trans] = jit(_lu_solve)
    return f(lu, permutation, b)


def _broadcasted_matvec(a, b):
    a_shape, b_shape = lax.shape_of(a), lax.shape_of(b)
    batch = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-1]))
    n_batch = len(batch)
    a = _broadcast_to(a, batch + tuple(a_shape[-2:]))
    b = _broadcast_to(b, batch + tuple(b_shape[-1:]))
    nd_a, nd_b = len(lax.shape_of(a)), len(lax.shape_of(b))
    return lax.dot_general(a, b, (([nd_a - 1], [nd_b - 1]), (list(range(n_batch)),
                                                             list(range(n_batch)))),
                           precision=_highest())


def _check_solve_shapes(a, b):
    a_shape, b_shape = lax.shape_of(a), lax.shape_of(b)
    if not (len(a_shape) >= 2 and len(b_shape) in (len(a_shape), len(a_shape) - 1)
            and a_shape[-1] == a_shape[-2] == b_shape[len(a_shape) - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={tuple(a_shape)} and "
                         f"b={tuple(b_shape)}")


def _solve(a, b):
    """JAX's ``lax.linalg._solve``: ``custom_linear_solve`` over one LU factorization, so
    that derivatives reuse it (transpose_solve solves with ``A^T``)."""
    _check_solve_shapes(a, b)
    a_shape, b_shape = lax.shape_of(a), lax.shape_of(b)
    out_shape = tuple(d_a if d_b == 1 else d_b
                      for d_a, d_b in zip(tuple(a_shape[:-1]) + (1,), b_shape))
    if tuple(out_shape) != tuple(b_shape):
        b = lax.broadcast_in_dim(b, out_shape, tuple(range(len(b_shape))))
    lu_, _, permutation = lu(lax.stop_gradient(a))

    def custom_solve(b):
        return custom_linear_solve(lambda x: _broadcasted_matvec(a, x), b,
                                   solve=lambda _, x: lu_solve(lu_, permutation, x, trans=0),
                                   transpose_solve=lambda _, x: lu_solve(lu_, permutation, x,
                                                                         trans=1))
    if len(a_shape) == len(lax.shape_of(b)) + 1:
        return custom_solve(b)
    nb = len(lax.shape_of(b))
    return vmap(custom_solve, nb - 1, max(len(a_shape), nb) - 1)(b)


# -- Python implementations lowered in place (JAX's mlir.lower_fun) ----------------------------

def _pivots_to_permutation_impl(swaps, *, permutation_size):
    """Applies the row swaps one after the other to ``iota``: JAX's loop of ``k`` steps, each
    reading ``swaps[i]``, ``perm[i]``, ``perm[j]`` and writing ``perm[i]``, ``perm[j]`` as
    JAX's indexing does (negative indices wrapped, one-element scatters; batch dims lead)."""
    shape = lax.shape_of(swaps)
    batch, k, m = tuple(shape[:-1]), shape[-1], permutation_size
    perm = lax.broadcasted_iota(np.int32, batch + (m,), len(batch))
    if m == 0 or k == 0:
        return perm
    step = _swap_step
    for _ in batch:
        step = vmap(step, in_axes=(None, 0, 0), out_axes=0)

    def body(i, carry):
        perm, swaps = carry
        return step(i, perm, swaps), swaps

    return lax.fori_loop(np.int32(0), np.int32(k), body, (perm, swaps))[0]


def _wrapped(i, size, convert):
    """JAX's index normalization: ``i + size`` where ``i < 0`` (``convert``: with the
    int32 conversion JAX's getter applies first)."""
    negative = lax.lt(i, lax._const(i, 0))
    if convert:
        i = lax._convert_element_type(i, np.dtype(np.int32), False)
    return lax.select(negative, lax.add(i, lax._const(i, size)), i)


def _get(x, i, convert=False):
    n = lax.shape_of(x)[0]
    return lax.squeeze(lax.dynamic_slice(x, (_wrapped(i, n, convert),), (1,),
                                         allow_negative_indices=False), (0,))


def _set(x, i, y):
    n = lax.shape_of(x)[0]
    j = lax.select(lax.lt(i, lax._const(i, 0)), lax.add(i, lax._const(i, n)), i)
    index = lax.broadcast_in_dim(lax.convert_element_type(j, np.int32), (1,), ())
    return lax.scatter(x, index, y, _ONE_ELEMENT, indices_are_sorted=True,
                       unique_indices=True, mode=lax.GatherScatterMode.FILL_OR_DROP)


def _swap_step(i, perm, swaps):
    j = _get(swaps, i, True)
    x, y = _get(perm, i, True), _get(perm, j)
    return _set(_set(perm, i, y), j, x)


_ONE_ELEMENT = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))


def _qr_impl(a, *, pivoting, full_matrices, use_magma):
    *batch, m, n = lax.shape_of(a)
    batch = tuple(batch)
    dtype = lax.dtype_of(a)
    if m == 0 or n == 0:
        k = m if full_matrices else min(m, n)
        q = lax.broadcast_in_dim(_eye(dtype, (m, k)), batch + (m, k),
                                 (len(batch), len(batch) + 1))
        out = [q, lax.full(batch + (k, n), 0, dtype)]
        return out + [lax.full(batch + (n,), 0, np.int32)] if pivoting else out
    p = None
    if pivoting:
        jpvt = lax.full(batch + (n,), 0, np.int32)
        r, p, taus = geqp3_p.bind(a, jpvt, use_magma=use_magma)
        p = lax.sub(p, lax._const(p, 1))  # LAPACK's 1-based column indices
    else:
        r, taus = geqrf_p.bind(a)
    if m < n:
        q = householder_product_p.bind(lax.slice(r, (0,) * (len(batch) + 2), batch + (m, m)),
                                       taus)
    elif full_matrices:
        pads = [(0, 0, 0)] * (len(batch) + 1) + [(0, m - n, 0)]
        q = householder_product_p.bind(lax.pad(r, lax._const(r, 0), pads), taus)
    else:
        q = householder_product_p.bind(r, taus)
        if m != n:  # ``r[..., :n, :n]``: JAX's indexing of all of ``r`` is no equation
            r = lax.slice(r, (0,) * (len(batch) + 2), batch + (n, n))
    return [q, _triu(r)] + ([p] if pivoting else [])


def _empty_svd(a, *, full_matrices, compute_uv):
    *batch, m, n = lax.shape_of(a)
    batch = tuple(batch)
    dtype = lax.dtype_of(a)
    real = np.dtype(np.float64) if dtype == np.complex128 else (
        np.dtype(np.float32) if dtype == np.complex64 else dtype)
    s = lax.full(batch + (0,), 0, real)
    if not compute_uv:
        return [s]
    if full_matrices:
        size = max(m, n)
        u = lax.broadcast_in_dim(_eye(dtype, (size, size)), batch + (size, size),
                                 (len(batch), len(batch) + 1))
    else:
        u = lax.full(batch + (m, n), 0, dtype)
    v = lax.full(batch + (0, 0), 0, dtype)
    if m < n:
        u, v = v, u
    return [s, u, v]


def _cholesky_update_impl(r, z):
    """Givens rotations zeroing ``z`` against the rows of ``R`` (JAX's jax_fn)."""
    n = lax.shape_of(z)[0]
    one, zero = lax._const(z, 1), lax._const(z, 0)
    for k in range(n):
        x = lax.squeeze(lax.slice(r, (k, k), (k + 1, k + 1)), (0, 1))
        y = lax.squeeze(lax.slice(z, (k,), (k + 1,)), (0,))
        ax, ay = lax.abs(x), lax.abs(y)
        denom = lax.select(lax.gt(ax, ay), ax, ay)
        safe = lax.select(lax.eq(y, zero), one, denom)
        xs, ys = lax.div(x, safe), lax.div(y, safe)
        rh = lax.div(one, lax.sqrt(lax.add(lax.mul(xs, xs), lax.mul(ys, ys))))
        c = lax.select(lax.eq(y, zero), one, lax.mul(xs, rh))
        s = lax.select(lax.eq(y, zero), zero, lax.neg(lax.mul(ys, rh)))
        row = lax.squeeze(lax.slice(r, (k, 0), (k + 1, n)), (0,))
        new_row = lax.sub(lax.mul(c, row), lax.mul(s, z))
        z = lax.add(lax.mul(c, z), lax.mul(s, row))
        r = lax.dynamic_update_slice(r, lax.expand_dims(new_row, (0,)), (k, 0))
    return r


def _trace_closed(fn, avals):

    def flat(*xs):
        out = fn(*xs)
        return list(out) if isinstance(out, (list, tuple)) else [out]
    return trace_to_jaxpr(flat, avals)


_lowering.register_decomposition(lu_pivots_to_permutation_p, _pivots_to_permutation_impl,
                                 _trace_closed)
_lowering.register_decomposition(qr_p, _qr_impl, _trace_closed)
_lowering.register_decomposition(cholesky_update_p, _cholesky_update_impl, _trace_closed)
_lowering._decompositions["empty_svd"] = (_empty_svd, _trace_closed)


def _symmetric_product_impl(a, c, *, alpha, beta):
    prod = _matmul(a, _T(a))
    return lax.add(lax.mul(lax._const(prod, alpha), prod), lax.mul(lax._const(c, beta), c))


_lowering.register_decomposition(symmetric_product_p, _symmetric_product_impl, _trace_closed)

from traxla.lax._qdwh import qdwh  # noqa: E402,F401  (written with this module's helpers)

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "geqp3",
           "geqrf", "ormqr", "symmetric_product", "qdwh", "ormqr_p", "symmetric_product_p", "geqp3_p",
           "cholesky_update", "eig", "eigh", "hessenberg", "householder_product", "lu",
           "lu_pivots_to_permutation", "qr", "schur", "svd", "triangular_solve", "tridiagonal",
           "tridiagonal_solve", "cholesky_p", "cholesky_update_p", "eig_p", "eigh_p",
           "hessenberg_p", "householder_product_p", "lu_p", "lu_pivots_to_permutation_p",
           "qr_p", "schur_p", "svd_p", "triangular_solve_p", "tridiagonal_p",
           "tridiagonal_solve_p"]

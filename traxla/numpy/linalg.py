"""``traxla.numpy.linalg``: the 31 names of ``jax.numpy.linalg``, with JAX's semantics (dtype
promotion to inexact, batch dimensions, result namedtuples, custom JVPs of ``det``,
``slogdet``, ``pinv`` and ``solve``), built on ``traxla.lax.linalg``."""
from __future__ import annotations

import itertools
import math
import operator
from typing import NamedTuple

import numpy as np

from .. import lax
from ..autodiff import custom_jvp
from ..ir import dtypes
from ..lax import linalg as lax_linalg
from . import _lax_numpy, _reductions
from ._creation import array as _array, eye as _eye, zeros as _zeros
from ._einsum import einsum as _einsum, tensordot as _tensordot
from ._indexing import take_along_axis as _take_along_axis
from ._jitutil import jit_named
from ._linalg import matmul as _matmul
from ._promotion import ensure_arraylike, promote_dtypes_inexact
from ._shape import broadcast_to as _broadcast_to, expand_dims as _expand_dims

__all__ = ["EighResult", "EigResult", "QRResult", "SlogdetResult", "SVDResult", "cholesky",
           "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
           "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
           "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]


class _Namespace:
    """``traxla.numpy`` looked up at call time (its ufuncs are installed after this module's
    imports run)."""

    def __getattr__(self, name):
        from .. import numpy
        return getattr(numpy, name)


_ufuncs = _Namespace()


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def _shape(x):
    return tuple(lax.shape_of(x))


def _ndim(x):
    return len(lax.shape_of(x))


def _mT(x):
    n = _ndim(x)
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


def _H(x):
    return _ufuncs.conjugate(_mT(x))


def _is_complex(x):
    return dtypes.is_complex(lax.dtype_of(x))


def _check_square(name, a, what="Argument to {name}() must have shape [..., n, n], got {shape}"):
    shape = _shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(what.format(name=name, shape=shape))


# -- factorizations ---------------------------------------------------------------------------

def _cholesky(a, *, upper=False, symmetrize_input=True):
    a = ensure_arraylike("jnp.linalg.cholesky", a)
    a, = promote_dtypes_inexact(a)
    low = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _ufuncs.conjugate(_mT(low)) if upper else low


cholesky = jit_named(_cholesky, "cholesky", ("upper", "symmetrize_input"))


def _svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    a = ensure_arraylike("jnp.linalg.svd", a)
    a, = promote_dtypes_inexact(a)
    if hermitian:
        w, v = lax_linalg.eigh(a, subset_by_index=subset_by_index)
        s = lax.abs(v)
        last = _ndim(s) - 1
        if compute_uv:
            sign = lax.sign(v)
            idxs = lax.broadcasted_iota(np.int32, _shape(s), last)
            s, idxs, sign = lax.sort((s, idxs, sign), dimension=-1, num_keys=1)
            s, idxs, sign = (lax.rev(t, (last,)) for t in (s, idxs, sign))
            u = _take_along_axis(w, _expand_dims(idxs, -2), axis=-1)
            vh = _H(u * _expand_dims(sign, -2).astype(u.dtype))
            return SVDResult(u, s, vh)
        return lax.rev(lax.sort(s, dimension=-1), (last,))
    if compute_uv:
        u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                  subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                          subset_by_index=subset_by_index)


svd = jit_named(_svd, "svd", ("full_matrices", "compute_uv", "hermitian", "subset_by_index"))


def svdvals(x, /):
    x = ensure_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


def _eigh(a, UPLO=None, symmetrize_input=True):  # noqa: N803  (NumPy's name)
    a = ensure_arraylike("jnp.linalg.eigh", a)
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    a, = promote_dtypes_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


eigh = jit_named(_eigh, "eigh", ("UPLO", "symmetrize_input"))


def _eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803
    a = ensure_arraylike("jnp.linalg.eigvalsh", a)
    a, = promote_dtypes_inexact(a)
    w, _ = eigh(a, UPLO, symmetrize_input=symmetrize_input)
    return w


eigvalsh = jit_named(_eigvalsh, "eigvalsh", ("UPLO", "symmetrize_input"))


def eig(a):
    a = ensure_arraylike("jnp.linalg.eig", a)
    a, = promote_dtypes_inexact(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def _eigvals(a):
    a = ensure_arraylike("jnp.linalg.eigvals", a)
    a, = promote_dtypes_inexact(a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


eigvals = jit_named(_eigvals, "eigvals")


def _qr(a, mode="reduced"):
    a = ensure_arraylike("jnp.linalg.qr", a)
    a, = promote_dtypes_inexact(a)
    if mode == "raw":
        a, taus = lax_linalg.geqrf(a)
        return QRResult(_mT(a), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    if mode == "r":
        return r
    return QRResult(q, r)


qr = jit_named(_qr, "qr", ("mode",))


# -- solving ------------------------------------------------------------------------------------

def _lu_solve_core(lu, permutation, b, trans):
    """``b``: ``[..., m, k]`` with the batch dims of ``lu`` (already broadcast)."""
    if trans == 0:
        x = _take_along_axis(b, _expand_dims(permutation, -1), axis=-2)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    if trans in (1, 2):
        conj = trans == 2
        x = lax_linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                                        conjugate_a=conj)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True,
                                        transpose_a=True, conjugate_a=conj)
        m = _shape(permutation)[-1]
        iota = lax.broadcasted_iota(np.int32, _shape(permutation), _ndim(permutation) - 1)
        _, ind = lax.sort_key_val(permutation, iota, dimension=-1)
        del m
        return _take_along_axis(x, _expand_dims(ind, -1), axis=-2)
    raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")


def _lu_solve(lu, permutation, b, trans=0):
    """JAX's ``lax.linalg._lu_solve``: solves ``op(A) x = b`` from ``lu`` and ``permutation``."""
    lu_shape, b_shape = _shape(lu), _shape(b)
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
        b = _expand_dims(b, -1)
    elif b_shape[-2] != lu_shape[-1]:
        raise ValueError("When LU decomposition matrix and b different numbers of dimensions, "
                         f"last axis of LU decomposition matrix (shape {lu_shape}) and second "
                         f"to last axis of b array (shape {b_shape}) must match")
    batch = tuple(np.broadcast_shapes(lu_shape[:-2], _shape(permutation)[:-1], _shape(b)[:-2]))
    lu = _broadcast_to(lu, batch + lu_shape[-2:])
    permutation = _broadcast_to(permutation, batch + _shape(permutation)[-1:])
    b = _broadcast_to(b, batch + _shape(b)[-2:])
    x = _lu_solve_core(lu, permutation, b, trans)
    return lax.squeeze(x, (_ndim(x) - 1,)) if rhs_vector else x


@custom_jvp
def _solve_core(a, b):
    lu, _, permutation = lax_linalg.lu(lax.stop_gradient(a))
    return _lu_solve_core(lu, permutation, b, 0)


@_solve_core.defjvp
def _solve_core_jvp(primals, tangents):
    # the tangent is linear in (da, db) and uses only transposable primitives, so reverse
    # mode reuses the factorization as JAX's custom_linear_solve does
    a, b = primals
    da, db = tangents
    lu, _, permutation = lax_linalg.lu(lax.stop_gradient(a))
    x = _lu_solve_core(lu, permutation, b, 0)
    rhs = db - _matmul(da, x)
    return x, _lu_solve_core(lu, permutation, rhs, 0)


def _solve_linear(a, b):
    """``solve(a, b)`` for square ``b`` of ``a``'s batch shape, linear in ``b`` without a
    custom rule (for use inside JVP rules, whose tangent expressions must transpose)."""
    lu, _, permutation = lax_linalg.lu(lax.stop_gradient(a))
    return _lu_solve_core(lu, permutation, b, 0)


def _solve(a, b):
    a, b = ensure_arraylike("jnp.linalg.solve", a, b)
    a, b = promote_dtypes_inexact(a, b)
    a_shape, b_shape = _shape(a), _shape(b)
    if len(a_shape) < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={a_shape!r}")
    if (len(b_shape) > 1 and len(a_shape) == len(b_shape) + 1 and a_shape[-1] == b_shape[-1]
            and a_shape[-1] != b_shape[-2]):
        raise ValueError(f"Invalid shapes for solve: {a_shape}, {b_shape}. Prior to JAX v0.5.0, "
                         "this would have been treated as a batched 1-dimensional solve. To "
                         "recover this behavior, use solve(a, b[..., None]).squeeze(-1).")
    if a_shape[-1] != a_shape[-2]:
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] "
                         f"or b=[..., m]; got a={a_shape} and b={b_shape}")
    vector = len(b_shape) == 1
    if vector:
        b = _expand_dims(b, -1)
    if _shape(b)[-2] != a_shape[-1]:
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] "
                         f"or b=[..., m]; got a={a_shape} and b={b_shape}")
    batch = tuple(np.broadcast_shapes(a_shape[:-2], _shape(b)[:-2]))
    a = _broadcast_to(a, batch + a_shape[-2:])
    b = _broadcast_to(b, batch + _shape(b)[-2:])
    x = _solve_core(a, b)
    return lax.squeeze(x, (_ndim(x) - 1,)) if vector else x


solve = jit_named(_solve, "solve")


def _inv(a):
    arr = ensure_arraylike("jnp.linalg.inv", a)
    shape = _shape(arr)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {shape}.")
    return solve(arr, lax.broadcast(_eye(shape[-1], dtype=arr.dtype), shape[:-2]))


inv = jit_named(_inv, "inv")


def _lstsq(a, b, rcond, *, numpy_resid=False):
    a, b = promote_dtypes_inexact(a, b)
    if _shape(a)[0] != _shape(b)[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = _ndim(b)
    if b_orig_ndim == 1:
        b = _expand_dims(b, 1)
    if _ndim(a) != 2:
        raise TypeError(f"{_ndim(a)}-dimensional array given. Array must be two-dimensional")
    if _ndim(b) != 2:
        raise TypeError(f"{_ndim(b)}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = _shape(a)
    dtype = a.dtype
    if m * n == 0:
        s = _zeros((0,), dtype=a.dtype)
        rank = _array(0, dtype=int)
        x = _zeros((n, *_shape(b)[1:]), dtype=a.dtype)
    else:
        eps = float(np.finfo(dtypes.finfo(dtype).dtype).eps)
        if rcond is None:
            rcond = eps * max(n, m)
        else:
            rcond = _lax_where(rcond < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= _array(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = _lax_where(mask, s, 1).astype(a.dtype)
        s_inv = _lax_where(mask, 1 / safe_s, 0)[:, None]
        u_tb = _matmul(_ufuncs.conjugate(u).T, b)
        x = _matmul(_ufuncs.conjugate(vt).T, s_inv * u_tb)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = _zeros((0,), dtype=_real_dtype(dtype))
    else:
        b_estimate = _matmul(a, x)
        resid = norm(b - b_estimate, axis=0) ** 2
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


def _lax_where(c, x, y):
    from . import where
    return where(c, x, y)


def _real_dtype(dtype):
    return {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}.get(np.dtype(dtype), np.dtype(dtype))


def _lstsq_jit(a, b, rcond):
    return _lstsq(a, b, rcond, numpy_resid=False)


_jit_lstsq = jit_named(_lstsq_jit, "_lstsq")


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    a, b = ensure_arraylike("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq(a, b, rcond, numpy_resid=True)
    return _jit_lstsq(a, b, rcond)


def tensorinv(a, ind=2):
    arr = ensure_arraylike("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind!r}")
    contracting_shape, batch_shape = _shape(arr)[:ind], _shape(arr)[ind:]
    flatshape = (math.prod(contracting_shape), math.prod(batch_shape))
    if flatshape[0] != flatshape[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={_shape(arr)!r} with ind={ind!r}.")
    return inv(arr.reshape(flatshape)).reshape(*batch_shape, *contracting_shape)


def tensorsolve(a, b, axes=None):
    a_arr, b_arr = ensure_arraylike("tensorsolve", a, b)
    if axes is not None:
        from ._shape import moveaxis
        a_arr = moveaxis(a_arr, axes, len(axes) * (_ndim(a_arr) - 1,))
    out_shape = _shape(a_arr)[_ndim(b_arr):]
    if _shape(a_arr)[:_ndim(b_arr)] != _shape(b_arr):
        raise ValueError("After moving axes to end, leading shape of a must match shape of b. "
                         f"got a.shape={_shape(a_arr)}, b.shape={_shape(b_arr)}")
    size = math.prod(_shape(b_arr))
    if size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); "
                         f"got a.shape={_shape(a_arr)}, b.ndim={_ndim(b_arr)}.")
    a_arr = a_arr.reshape(size, math.prod(out_shape))
    return solve(a_arr, b_arr.ravel()).reshape(out_shape)


# -- determinants ---------------------------------------------------------------------------------

def _slogdet_lu_impl(a):
    dtype = lax.dtype_of(a)
    lu, pivot, _ = lax_linalg.lu(a)
    diag = _lax_numpy.diagonal(lu, axis1=-2, axis2=-1)
    is_zero = _reductions.any(diag == _array(0, dtype=dtype), axis=-1)
    n = _shape(a)[-1]
    iota = lax.expand_dims(lax.iota(np.int32, n), tuple(range(_ndim(pivot) - 1)))
    parity = _reductions.sum(pivot != iota, axis=-1)
    if _is_complex(a):
        sign = _reductions.prod(diag / _ufuncs.abs(diag).astype(diag.dtype), axis=-1)
    else:
        sign = _array(1, dtype=dtype)
        parity = parity + _reductions.sum(diag < 0, axis=-1)
    sign = _lax_where(is_zero, _array(0, dtype=dtype),
                      sign * _array(-2 * (parity % 2) + 1, dtype=dtype))
    logdet = _lax_where(is_zero, _array(-np.inf, dtype=dtype),
                        _reductions.sum(_ufuncs.log(_ufuncs.abs(diag)).astype(dtype), axis=-1))
    return sign, _ufuncs.real(logdet)


_slogdet_lu = custom_jvp(_slogdet_lu_impl)


def _slogdet_qr_impl(a):
    if _is_complex(a):
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    n = _shape(a)[-1]
    a, taus = lax_linalg.geqrf(a)
    a_diag = _lax_numpy.diagonal(a, axis1=-2, axis2=-1)
    log_abs_det = _reductions.sum(_ufuncs.log(_ufuncs.abs(a_diag)), axis=-1)
    sign_diag = _reductions.prod(_ufuncs.sign(a_diag), axis=-1)
    sign_taus = _reductions.prod(_lax_where(taus[..., :n - 1] != 0, -1, 1),
                                 axis=-1).astype(sign_diag.dtype)
    return sign_diag * sign_taus, log_abs_det


_slogdet_qr = custom_jvp(_slogdet_qr_impl)


def _slogdet_jvp(primals, tangents):
    x, = primals
    g, = tangents
    sign, ans = slogdet(x)
    ans_dot = _lax_numpy.trace(_solve_linear(x, g), axis1=-1, axis2=-2)
    if _is_complex(x):
        sign_dot = (ans_dot - _ufuncs.real(ans_dot).astype(ans_dot.dtype)) * sign
        ans_dot = _ufuncs.real(ans_dot)
    else:
        sign_dot = lax.full_like(sign, 0)
    return (sign, ans), (sign_dot, ans_dot)


_slogdet_lu.defjvp(_slogdet_jvp)
_slogdet_qr.defjvp(_slogdet_jvp)


def _slogdet(a, *, method=None):
    a = ensure_arraylike("jnp.linalg.slogdet", a)
    a, = promote_dtypes_inexact(a)
    shape = _shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {shape}")
    if method is None or method == "lu":
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), "
                     "and 'qr'.")


slogdet = jit_named(_slogdet, "slogdet", ("method",))


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@custom_jvp
def _det_general(a):
    sign, logdet = slogdet(a)
    return sign * _ufuncs.exp(logdet).astype(sign.dtype)


@_det_general.defjvp
def _det_general_jvp(primals, tangents):
    # d det(A) = det(A) tr(A^{-1} dA); through solve, so it is linear in dA
    x, = primals
    g, = tangents
    y = _det_general(x)
    return y, y * _lax_numpy.trace(_solve_linear(x, g), axis1=-1, axis2=-2)


def _det(a):
    a = ensure_arraylike("jnp.linalg.det", a)
    a, = promote_dtypes_inexact(a)
    shape = _shape(a)
    if len(shape) >= 2 and shape[-1] == 2 and shape[-2] == 2:
        return _det_2x2(a)
    if len(shape) >= 2 and shape[-1] == 3 and shape[-2] == 3:
        return _det_3x3(a)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        return _det_general(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {shape}")


det = jit_named(_det, "det")


# -- pseudo-inverse, rank, powers, condition number ------------------------------------------------

def _pinv_impl(a, rtol=None, hermitian=False):
    a = ensure_arraylike("jnp.linalg.pinv", a)
    arr, = promote_dtypes_inexact(a)
    m, n = _shape(arr)[-2:]
    if m == 0 or n == 0:
        return _zeros(_shape(arr)[:-2] + (n, m), arr.dtype)
    arr = _ufuncs.conjugate(arr)
    if rtol is None:
        eps = np.finfo(dtypes.finfo(arr.dtype).dtype).eps
        rtol = _array(10.0 * max(m, n) * eps, dtype=_real_dtype(arr.dtype))
    from ._creation import asarray
    rtol = asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = lax.expand_dims(rtol[..., None], tuple(range(_ndim(s) - _ndim(rtol) - 1)))
    cutoff = rtol * s[..., 0:1]
    s = _lax_where(s > cutoff, s, np.inf).astype(u.dtype)
    res = _matmul(_mT(vh), _ufuncs.divide(_mT(u), s[..., None]))
    return lax.convert_element_type(res, arr.dtype)


def _pinv_jvp(rtol, hermitian, primals, tangents):
    a, = primals
    a_dot, = tangents
    p = _pinv(a, rtol, hermitian)
    if hermitian:
        a = (a + _H(a)) / 2
        a_dot = (a_dot + _H(a_dot)) / 2
    m, n = _shape(a)[-2:]
    mm = _matmul
    if m >= n:
        s = mm(mm(p, _H(p)), _H(a_dot))
        t = mm(mm(_H(a_dot), _H(p)), p)
        p_dot = -mm(mm(p, a_dot), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
    else:
        s = mm(p, mm(_H(p), _H(a_dot)))
        t = mm(_H(a_dot), mm(_H(p), p))
        p_dot = -mm(p, mm(a_dot, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
    return p, p_dot


_pinv = custom_jvp(_pinv_impl, nondiff_argnums=(1, 2))
_pinv.defjvp(_pinv_jvp)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    return _pinv(a, rtol, hermitian)


def _matrix_power(a, n):
    arr = ensure_arraylike("jnp.linalg.matrix_power", a)
    if _ndim(arr) < 2:
        raise TypeError(f"{_ndim(arr)}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if _shape(arr)[-2] != _shape(arr)[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return _broadcast_to(_eye(_shape(arr)[-2], dtype=arr.dtype), _shape(arr))
    if n < 0:
        arr = inv(arr)
        n = abs(n)
    if n == 1:
        return arr
    if n == 2:
        return arr @ arr
    if n == 3:
        return arr @ arr @ arr
    z = result = None
    while n > 0:
        z = arr if z is None else z @ z
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else result @ z
    return result


matrix_power = jit_named(_matrix_power, "matrix_power", ("n",))


def _matrix_rank(M, rtol=None, *, hermitian=False, tol=None):  # noqa: N803
    M = ensure_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    M, = promote_dtypes_inexact(M)
    if _ndim(M) < 2:
        return (M != 0).any().astype(np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        eps = np.finfo(dtypes.finfo(S.dtype).dtype).eps
        rtol = S.max(-1) * np.max(_shape(M)[-2:]).astype(S.dtype) * eps
    from ._creation import asarray
    rtol = _expand_dims(asarray(rtol), np.ndim(rtol) if not hasattr(rtol, "ndim") else rtol.ndim)
    return _reductions.sum(S > rtol, axis=-1)


matrix_rank = jit_named(_matrix_rank, "matrix_rank", ("hermitian",))


def _cond(x, p=None):
    arr = ensure_arraylike("cond", x)
    shape = _shape(arr)
    if len(shape) < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={shape!r}")
    if shape[-1] == 0 or shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={shape!r}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if shape[-2] != shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got "
                             f"arr.shape={shape!r}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return _lax_where(_ufuncs.isnan(r) & ~_ufuncs.isnan(x).any(axis=(-2, -1)), np.inf, r)


cond = jit_named(_cond, "cond", ("p",))


# -- norms ----------------------------------------------------------------------------------------

def _canon_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _abs2_sum(x, axis=None, keepdims=False):
    return _ufuncs.sqrt(_reductions.sum(_ufuncs.real(x * _ufuncs.conjugate(x)), axis=axis,
                                        keepdims=keepdims))


def _norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    x = ensure_arraylike("jnp.linalg.norm", x)
    x, = promote_dtypes_inexact(x)
    ndim = _ndim(x)
    if axis is None:
        if ord is None:
            return _abs2_sum(x, keepdims=keepdims)
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(_canon_axis(a, ndim) for a in axis)
    else:
        axis = (_canon_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis!r}. Pass one axis to "
                         "compute a vector-norm, or two axes to compute a matrix-norm.")
    row_axis, col_axis = axis
    if ord is None or ord in ("f", "fro"):
        return _abs2_sum(x, axis=axis, keepdims=keepdims)
    if ord == 1:
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        return _reductions.amax(_reductions.sum(_ufuncs.abs(x), axis=row_axis, keepdims=keepdims),
                                axis=col_axis, keepdims=keepdims, initial=0)
    if ord == -1:
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        return _reductions.amin(_reductions.sum(_ufuncs.abs(x), axis=row_axis, keepdims=keepdims),
                                axis=col_axis, keepdims=keepdims)
    if ord == np.inf:
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        return _reductions.amax(_reductions.sum(_ufuncs.abs(x), axis=col_axis, keepdims=keepdims),
                                axis=row_axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        return _reductions.amin(_reductions.sum(_ufuncs.abs(x), axis=col_axis, keepdims=keepdims),
                                axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        from ._shape import moveaxis
        x = moveaxis(x, axis, (-2, -1))
        s = svd(x, compute_uv=False)
        if ord == 2:
            y = _reductions.amax(s, axis=-1, initial=0)
        elif ord == -2:
            y = _reductions.amin(s, axis=-1)
        else:
            y = _reductions.sum(s, axis=-1)
        if keepdims:
            y = _expand_dims(y, axis)
        return y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


norm = jit_named(_norm, "norm", ("ord", "axis", "keepdims"))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    x = ensure_arraylike("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return _abs2_sum(x, axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return _reductions.amax(_ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _reductions.amin(_ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        dt = np.dtype(dtypes.finfo(lax.dtype_of(x)).dtype) if dtypes.is_inexact(
            lax.dtype_of(x)) else dtypes.default_float()
        return _reductions.sum(x != 0, dtype=dt, axis=axis, keepdims=keepdims)
    if ord == 1:
        return _reductions.sum(_ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    abs_x = _ufuncs.abs(x)
    ord_arr = lax._const(abs_x, ord)
    ord_inv = lax._const(abs_x, 1.0 / ord)
    out = _reductions.sum(_ufuncs.power(abs_x, ord_arr), axis=axis, keepdims=keepdims)
    return _ufuncs.power(out, ord_inv)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    x = ensure_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


# -- products and shape helpers --------------------------------------------------------------------

def matrix_transpose(x, /):
    x_arr = ensure_arraylike("jnp.linalg.matrix_transpose", x)
    ndim = _ndim(x_arr)
    if ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim!r}")
    return lax.transpose(x_arr, (*range(ndim - 2), ndim - 1, ndim - 2))


def cross(x1, x2, /, *, axis=-1):
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    if _shape(x1)[axis] != 3 or _shape(x2)[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have x1.shape[axis]={_shape(x1)[axis]!r} and "
                         f"x2.shape[axis]={_shape(x2)[axis]!r}")
    from . import _shape as shape_mod
    x1, x2 = _promote_same(x1, x2)
    a = shape_mod.moveaxis(x1, axis, -1)
    b = shape_mod.moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = _stack_last([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return shape_mod.moveaxis(out, -1, axis)


def _promote_same(x1, x2):
    from ._promotion import promote_dtypes
    return promote_dtypes(x1, x2)


def _stack_last(parts):
    from ._shape import concatenate
    return concatenate([_expand_dims(p, -1) for p in parts], axis=-1)


def outer(x1, x2, /):
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    if _ndim(x1) != 1 or _ndim(x2) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={_ndim(x1)!r} "
                         f"x2.ndim={_ndim(x2)!r}")
    return x1[:, None] * x2[None, :]


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    x1, x2 = ensure_arraylike("jnp.linalg.vecdot", x1, x2)
    x1, x2 = promote_dtypes_inexact(x1, x2) if _is_complex(x1) or _is_complex(x2) else (x1, x2)
    from . import moveaxis
    shape = np.broadcast_shapes(_shape(x1), _shape(x2))
    x1 = moveaxis(_broadcast_to(x1, shape), axis, -1)
    x2 = moveaxis(_broadcast_to(x2, shape), axis, -1)
    return _matmul(_expand_dims(_ufuncs.conjugate(x1), -2), _expand_dims(x2, -1),
                   precision=precision, preferred_element_type=preferred_element_type)[..., 0, 0]


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    x1, x2 = ensure_arraylike("jnp.linalg.matmul", x1, x2)
    return _matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    x1, x2 = ensure_arraylike("jnp.linalg.tensordot", x1, x2)
    return _tensordot(x1, x2, axes=axes, precision=precision,
                      preferred_element_type=preferred_element_type)


def diagonal(x, /, *, offset=0):
    x = ensure_arraylike("jnp.linalg.diagonal", x)
    return _lax_numpy.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    x = ensure_arraylike("jnp.linalg.trace", x)
    return _lax_numpy.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def multi_dot(arrays, *, precision=None):
    arrs = list(ensure_arraylike("jnp.linalg.multi_dot", *arrays))
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (_ndim(arrs[0]) in (1, 2) and _ndim(arrs[-1]) in (1, 2)
            and all(_ndim(a) == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array shapes "
                         f"{[_shape(a) for a in arrs]}")
    if any(_shape(a)[-1] != _shape(b)[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension of "
                         f"following array. Got array shapes {[_shape(a) for a in arrs]}")
    einsum_axes = [(i, i + 1) for i in range(len(arrs))]
    if _ndim(arrs[0]) == 1:
        einsum_axes[0] = einsum_axes[0][1:]
    if _ndim(arrs[-1]) == 1:
        einsum_axes[-1] = einsum_axes[-1][:1]
    return _einsum(*itertools.chain(*zip(arrs, einsum_axes)), optimize="auto",
                   precision=precision)

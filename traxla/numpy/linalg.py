"""``traxla.numpy.linalg``: the 31 names of ``jax.numpy.linalg``, with JAX's semantics (dtype
promotion to inexact, batch dimensions, result namedtuples, custom JVPs of ``det``,
``slogdet``, ``pinv`` and ``solve``), built on ``traxla.lax.linalg``."""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from traxla import lax
from traxla.autodiff import custom_jvp
from traxla.ir import dtypes
from traxla.lax import linalg as lax_linalg
from traxla.numpy import _reductions, _diagonals_tiles as _lax_numpy, where
from traxla.numpy._creation import array as _array, eye as _eye, zeros as _zeros, asarray
from traxla.numpy._indexing import take_along_axis as _take_along_axis
from traxla.numpy._jitutil import jit_named
from traxla.numpy._linalg import matmul as _matmul
from traxla.numpy._linalg_products import _ndim, _shape, _ufuncs
from traxla.numpy._nanfunctions import count_nonzero as _count_nonzero
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes_inexact
from traxla.numpy._shape import broadcast_to as _broadcast_to, expand_dims as _expand_dims, moveaxis
from traxla.batching import vmap

__all__ = ["EighResult", "EigResult", "QRResult", "SlogdetResult", "SVDResult", "cholesky",
           "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
           "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
           "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]


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


_mT = lax_linalg._T  # the matrix transpose of the last two axes


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
            idxs = lax.broadcasted_iota(np.uint32, _shape(s), last)
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
    core_b = 1 if len(b_shape) == 1 else 2   # jnp.vectorize's "(m,m),(m)->(m)" / "(m,m),(m,n)->(m,n)"
    if len(a_shape) < 2 or len(b_shape) < core_b:
        lax_linalg._check_solve_shapes(a, b)
    batch = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:len(b_shape) - core_b]))
    if not batch:
        return lax_linalg._solve(a, b)
    a = _broadcast_to(a, batch + a_shape[-2:])
    b = _broadcast_to(b, batch + b_shape[len(b_shape) - core_b:])
    fn = lax_linalg._solve
    for _ in batch:
        fn = vmap(fn)
    return fn(a, b)


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
        u_tb = _matmul(_ufuncs.conjugate(u).T, b, precision=lax_linalg._highest())
        x = _matmul(_ufuncs.conjugate(vt).T, s_inv * u_tb, precision=lax_linalg._highest())
    if numpy_resid and (int(rank) < n or m <= n):
        resid = _zeros((0,), dtype=_real_dtype(dtype))
    else:
        b_estimate = _matmul(a, x, precision=lax_linalg._highest())
        resid = norm(b - b_estimate, axis=0) ** 2
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


def _lax_where(c, x, y):
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

def _slogdet_small(a):
    """Closed forms for 1x1 and 2x2 matrices (JAX's ``_slogdet_small``)."""
    n = _shape(a)[-1]
    if n == 1:
        det = a[..., 0, 0]
    elif n == 2:
        a00, a01 = a[..., 0, 0], a[..., 0, 1]
        a10, a11 = a[..., 1, 0], a[..., 1, 1]
        det = a00 * a11 - a01 * a10
    else:
        raise ValueError(f"_slogdet_small only supports n in {{1, 2}}, got n={n}")
    abs_det = _ufuncs.abs(det)
    return _ufuncs.sign(det), _ufuncs.real(_ufuncs.log(abs_det))


_slogdet_small = custom_jvp(_slogdet_small)


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
    x, = primals
    g, = tangents
    n = _shape(x)[-1]
    sign, ans = _slogdet_small(x)
    if n == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        x00, x01, x10, x11 = x[..., 0, 0], x[..., 0, 1], x[..., 1, 0], x[..., 1, 1]
        det = x00 * x11 - x01 * x10
        ans_dot = (g[..., 0, 0] * x11 - g[..., 0, 1] * x10 - g[..., 1, 0] * x01
                   + g[..., 1, 1] * x00) / det
    if _is_complex(x):
        sign_dot = (ans_dot - _ufuncs.real(ans_dot).astype(ans_dot.dtype)) * sign
        ans_dot = _ufuncs.real(ans_dot)
    else:
        sign_dot = _ufuncs.zeros_like(sign)
    return (sign, ans), (sign_dot, ans_dot)


def _slogdet_lu(a):
    dtype = lax.dtype_of(a)
    lu, pivot, _ = lax_linalg.lu(a)
    diag = _lax_numpy.diagonal(lu, axis1=-2, axis2=-1)
    is_zero = _reductions.any(diag == _array(0, dtype=dtype), axis=-1)
    n = _shape(a)[-1]
    iota = lax.expand_dims(lax.iota(np.int32, n), tuple(range(_ndim(pivot) - 1)))
    parity = _count_nonzero(pivot != iota, axis=-1)
    if _is_complex(a):
        sign = _reductions.prod(diag / _ufuncs.abs(diag).astype(diag.dtype), axis=-1)
    else:
        sign = _array(1, dtype=dtype)
        parity = parity + _count_nonzero(diag < 0, axis=-1)
    sign = _lax_where(is_zero, _array(0, dtype=dtype),
                      sign * _array(-2 * (parity % 2) + 1, dtype=dtype))
    logdet = _lax_where(is_zero, _array(-np.inf, dtype=dtype),
                        _reductions.sum(_ufuncs.log(_ufuncs.abs(diag)).astype(dtype), axis=-1))
    return sign, _ufuncs.real(logdet)


_slogdet_lu = custom_jvp(_slogdet_lu)


def _slogdet_qr(a):
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


_slogdet_qr = custom_jvp(_slogdet_qr)


def _slogdet_jvp(primals, tangents):
    x, = primals
    g, = tangents
    sign, ans = slogdet(x)
    ans_dot = _lax_numpy.trace(solve(x, g), axis1=-1, axis2=-2)
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
        if shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
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
def _det(a):
    sign, logdet = slogdet(a)
    return sign * _ufuncs.exp(logdet).astype(sign.dtype)


def _cofactor_solve(a, b):
    """JAX's ``_cofactor_solve``: ``(det(a), adjugate(a) @ b)`` from one LU factorization,
    well defined for singular ``a`` (rank n-1: the last pivot replaced by the inverse of the
    other pivots' product; rank < n-1: zeros, where the triangular solve gives NaN or inf)."""
    import traxla.numpy as jnp
    a, b = ensure_arraylike("jnp.linalg._cofactor_solve", a, b)
    a, = promote_dtypes_inexact(a)
    b, = promote_dtypes_inexact(b)
    a_shape, b_shape = _shape(a), _shape(b)
    if not (len(a_shape) >= 2 and a_shape[-1] == a_shape[-2] and b_shape[-2:] == a_shape[-2:]):
        raise ValueError("The arguments to _cofactor_solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, m]; got a={a_shape} and b={b_shape}")
    if a_shape[-1] == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dtype = lax.dtype_of(a)
    batch_dims = lax.broadcast_shapes(_shape(lu)[:-2], b_shape[:-2])
    x = _broadcast_to(b, batch_dims + b_shape[-2:])
    lu = _broadcast_to(lu, batch_dims + _shape(lu)[-2:])
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    iota = lax.expand_dims(jnp.arange(a_shape[-1], dtype=pivots.dtype),
                           range(_ndim(pivots) - 1))
    parity = _count_nonzero(pivots != iota, axis=-1)
    sign = jnp.asarray(-2 * (parity % 2) + 1, dtype=dtype)
    partial_det = jnp.cumprod(diag, axis=-1) * sign[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = _broadcast_to(permutation, (*batch_dims, a_shape[-1]))
    iotas = jnp.ix_(*(lax.iota(np.int32, n) for n in (*batch_dims, 1)))
    d = jnp.ones(_shape(x)[:-1], x.dtype)
    d = lax_linalg.triangular_solve(lu, d, left_side=True, lower=False)
    d = jnp.any(_ufuncs.logical_or(_ufuncs.isnan(d), _ufuncs.isinf(d)), axis=-1)
    d = jnp.tile(d[..., None, None], _ndim(d) * (1,) + _shape(x)[-2:])
    x = where(d, jnp.zeros_like(x), x)  # first filter
    x = x[iotas[:-1] + (permutation, slice(None))]
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = jnp.concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]),
                        axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = where(d, jnp.zeros_like(x), x)  # second filter
    return partial_det[..., -1], x


@_det.defjvp
def _det_jvp(primals, tangents):
    x, = primals
    g, = tangents
    y, z = _cofactor_solve(x, g)
    return y, _lax_numpy.trace(z, axis1=-1, axis2=-2)


def _det_wrapper(a):
    a = ensure_arraylike("jnp.linalg.det", a)
    a, = promote_dtypes_inexact(a)
    shape = _shape(a)
    if len(shape) >= 2 and shape[-1] == 2 and shape[-2] == 2:
        return _det_2x2(a)
    if len(shape) >= 2 and shape[-1] == 3 and shape[-2] == 3:
        return _det_3x3(a)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        return _det(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {shape}")


det = jit_named(_det_wrapper, "det")


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
        rtol = 10.0 * max(m, n) * _array(eps, dtype=_real_dtype(arr.dtype))
    rtol = asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = lax.expand_dims(rtol[..., None], tuple(range(_ndim(s) - _ndim(rtol) - 1)))
    cutoff = rtol * s[..., 0:1]
    s = _lax_where(s > cutoff, s, np.inf).astype(u.dtype)
    res = _matmul(_mT(vh), _ufuncs.divide(_mT(u), s[..., None]), precision=lax_linalg._highest())
    return lax.convert_element_type(res, arr.dtype)


def _pinv_jvp(rtol, hermitian, primals, tangents):
    a, = primals
    a_dot, = tangents
    p = _pinv(a, rtol, hermitian)
    if hermitian:
        a = (a + _H(a)) / 2
        a_dot = (a_dot + _H(a_dot)) / 2
    m, n = _shape(a)[-2:]

    def mm(x, y):  # JAX's products under default_matmul_precision("float32")
        return _matmul(x, y, precision=lax_linalg._highest())
    if m >= n:
        s = mm(mm(p, _H(p)), _H(a_dot))
        t = mm(mm(_H(a_dot), _H(p)), p)
        p_dot = -mm(mm(p, a_dot), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
    else:
        s = mm(p, mm(_H(p), _H(a_dot)))
        t = mm(_H(a_dot), mm(_H(p), p))
        p_dot = -mm(p, mm(a_dot, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
    return p, p_dot


_pinv = custom_jvp(jit_named(_pinv_impl, "_pinv", ("hermitian",)), nondiff_argnums=(1, 2))
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


from traxla.numpy._linalg_products import (cross, diagonal, matmul, matrix_norm, matrix_transpose,  # noqa: E402
                               multi_dot, norm, outer, tensordot, trace, vecdot, vector_norm)

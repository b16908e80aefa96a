"""``scipy.linalg``'s special matrices (``block_diag``, ``toeplitz``, ``hankel``, ``circulant``,
``leslie``, ``companion``, ``fiedler``, ``fiedler_companion``, ``convolution_matrix``,
``hilbert``, ``invhilbert``, ``pascal``, ``invpascal``, ``helmert``, ``hadamard``, ``dft``), as
JAX defines them; re-exported by ``traxla.scipy.linalg``."""
from __future__ import annotations

import math
import operator

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.ir import dtypes
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import promote_dtypes, promote_dtypes_inexact
from traxla.scipy._linalg_util import asarray as _asarray, complex_dtype as _complex_dtype, vectorize as _vectorize


# -- special matrices ---------------------------------------------------------------------------

def _block_diag_impl(*arrs):
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    arrs = tuple(promote_dtypes(*[_asarray(a) for a in arrs]))
    bad = [i for i, a in enumerate(arrs) if a.ndim > 2]
    if bad:
        raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                         f"dimensions, got {arrs[bad[0]]} at argument {bad[0]}.")
    arrs = [jnp.atleast_2d(a) for a in arrs]
    dtype = arrs[0].dtype
    total_cols = sum(a.shape[1] for a in arrs)
    padded, col = [], 0
    for arr in arrs:
        cols = arr.shape[1]
        padded.append(lax.pad(arr, np.zeros((), dtype), ((0, 0, 0), (col, total_cols - cols - col, 0))))
        col += cols
    return jnp.concatenate(padded, axis=0)


block_diag = jit_named(_block_diag_impl, "block_diag")


def _toeplitz_2d(c, r):
    m, n = c.shape[0], r.shape[0]
    dtype = jnp.result_type(c, r)
    if m == 0 or n == 0:
        return jnp.zeros((m, n), dtype)
    elems = jnp.concatenate((c[::-1], r[1:])).astype(dtype)   # elems[m-1+j-i] = T[i, j]
    i = jnp.arange(m)[:, None]
    j = jnp.arange(n)[None, :]
    return elems[m - 1 + j - i]


def toeplitz(c, r=None):
    c = jnp.atleast_1d(_asarray(c))
    r = jnp.conj(c) if r is None else jnp.atleast_1d(_asarray(r))
    return _vectorize(_toeplitz_2d, (1, 1))(c, r)


def _hankel_2d(c, r):
    m, n = c.shape[0], r.shape[0]
    dtype = jnp.result_type(c, r)
    if m == 0 or n == 0:
        return jnp.zeros((m, n), dtype)
    v = jnp.concatenate((c, r[1:])).astype(dtype)
    return v[jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def hankel(c, r=None):
    c = _asarray(c)
    r = jnp.zeros_like(c) if r is None else _asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    return _vectorize(_hankel_2d, (1, 1))(c, r)


def circulant(c):
    c = jnp.atleast_1d(_asarray(c))

    def one(c):
        n = c.shape[0]
        return c[(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n]
    return _vectorize(one, (1,))(c)


def leslie(f, s):
    f_arr, s_arr = jnp.atleast_1d(_asarray(f)), jnp.atleast_1d(_asarray(s))
    if f_arr.shape[-1] < 2:
        raise ValueError("The length of f along the last axis must be at least 2; got shape "
                         f"{f_arr.shape}.")
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis "
                         "must be one less than the length of f; got f shape "
                         f"{f_arr.shape} and s shape {s_arr.shape}.")

    def one(f, s):
        f, s = promote_dtypes(f, s)
        n = f.shape[0]
        i, j = jnp.arange(n)[:, None], jnp.arange(n)[None, :]
        sub = jnp.where(i == j + 1, jnp.concatenate([s, s[:1]])[None, :], 0).astype(f.dtype)
        return jnp.where(i == 0, f[None, :], sub)
    return _vectorize(one, (1, 1))(f_arr, s_arr)


def companion(a):
    a, = promote_dtypes_inexact(jnp.atleast_1d(_asarray(a)))
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape "
                         f"{a.shape}.")

    def one(a):
        first_row = -a[1:] / a[0]
        m = a.shape[0] - 1
        out = jnp.eye(m, m, k=-1, dtype=first_row.dtype)
        return out.at[0].set(first_row)
    return _vectorize(one, (1,))(a)


def fiedler(a):
    arr = jnp.atleast_1d(_asarray(a))
    return jnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a):
    a, = promote_dtypes_inexact(jnp.atleast_1d(_asarray(a)))
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero length, "
                         f"but got an array of shape {a.shape}.")

    def one(a):
        n = a.shape[0] - 1
        if n == 0:
            return jnp.zeros((0, 0), a.dtype)
        a = a / a[0]
        if n == 1:
            return -a[1:].reshape(1, 1)
        i, j = jnp.arange(n)[:, None], jnp.arange(n)[None, :]
        super_val = -a[jnp.minimum(i + 2, n)]
        sub_val = -a[jnp.minimum(i + 1, n)]
        even, odd = i % 2 == 0, i % 2 == 1
        one_, zero = jnp.ones((), a.dtype), jnp.zeros((), a.dtype)
        out = zero + jnp.zeros((n, n), a.dtype)
        for cond_, choice in reversed([((i == 0) & (j == 0), -a[1]), ((i == 1) & (j == 0), one_),
                                       ((j == i + 1) & even, super_val), ((j == i + 2) & even, one_),
                                       ((j == i - 1) & even & (i >= 2), sub_val),
                                       ((j == i - 2) & odd & (i >= 3), one_)]):
            out = jnp.where(cond_, choice, out)
        return out
    return _vectorize(one, (1,))(a)


def _convolution_matrix_impl(a, n, mode="full"):
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a_arr = _asarray(a)
    if a_arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a_arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a_arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    zero = np.zeros((), a_arr.dtype)
    pads = [(0, 0, 0)] * (a_arr.ndim - 1) + [(0, n - 1, 0)]
    az = lax.pad(a_arr, zero, pads)
    raz = lax.pad(jnp.flip(a_arr, axis=-1), zero, pads)
    total = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb = trim // 2
        te = trim - tb
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    col0 = az[..., tb:total - te]
    row0 = raz[..., total - n - tb:total - tb]
    return toeplitz(col0, row0)


convolution_matrix = jit_named(_convolution_matrix_impl, "convolution_matrix", ("n", "mode"))


def _hilbert_impl(n):
    a = lax.broadcasted_iota(dtypes.default_float(), (n, 1), 0)
    return 1 / (a + a.T + 1)


hilbert = jit_named(_hilbert_impl, "hilbert", ("n",))


def invhilbert(n):
    """The inverse of the Hilbert matrix, from its closed form in exact integer arithmetic
    (``n`` is static), as floating point."""
    out = np.empty((n, n), np.float64)
    for i in range(n):
        for j in range(n):
            s = i + j
            out[i, j] = ((-1) ** s * (s + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(s, i) ** 2)
    return jnp.asarray(out.astype(dtypes.default_float()))


def _binom(n, k):
    return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _pascal_impl(n, kind=None):
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be on of: {valid}; got {kind}")
    a = jnp.arange(n, dtype=np.float32)
    low = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return low
    if kind == "upper":
        return low.T
    return jnp.dot(low, low.T)


pascal = jit_named(_pascal_impl, "pascal", ("n", "kind"))


def _invpascal_impl(n, kind=None):
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be one of: {valid}; got {kind}")
    a = jnp.arange(n, dtype=dtypes.default_float())
    i, j = a[:, None], a[None, :]
    sign = 1.0 - 2.0 * jnp.remainder(i - j, 2.0)
    l_inv = sign * _binom(i, j)
    if kind == "lower":
        return l_inv
    if kind == "upper":
        return l_inv.T
    return jnp.dot(l_inv.T, l_inv)


invpascal = jit_named(_invpascal_impl, "invpascal", ("n", "kind"))


def _helmert_impl(n, full=False):
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = i + 1
    k_f = k.astype(dtypes.default_float())
    denom = jnp.sqrt(k_f * (k_f + 1))
    h = jnp.where(j <= i, 1.0 / denom, jnp.where(j == k, -k_f / denom, jnp.zeros_like(denom)))
    if full:
        first = jnp.full((1, n), 1.0 / np.sqrt(n), dtype=h.dtype)
        h = jnp.concatenate([first, h], axis=0)
    return h


helmert = jit_named(_helmert_impl, "helmert", ("n", "full"))


def _hadamard_impl(n, dtype=int):
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.concatenate([jnp.concatenate([h, h], axis=1),
                             jnp.concatenate([h, -h], axis=1)], axis=0)
    return h


hadamard = jit_named(_hadamard_impl, "hadamard", ("n", "dtype"))


def _dft_impl(n, scale=None, *, dtype=None):
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = _complex_dtype(dtypes.default_float())
    else:
        dtype = np.dtype(dtype)
        if not dtypes.is_complex(dtype):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / np.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas


dft = jit_named(_dft_impl, "dft", ("n", "scale", "dtype"))

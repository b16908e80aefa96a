"""Histograms (``histogram_bin_edges``, ``histogram``, ``histogram2d``, ``histogramdd``,
via ``searchsorted`` and ``bincount``), ``cov`` and ``corrcoef``, and the window functions
(``bartlett``, ``blackman``, ``hamming``, ``hanning``, ``kaiser``), as ``jax.numpy``."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import check_arraylike, ensure_arraylike, promote_args_inexact, \
    promote_dtypes_inexact
from traxla.numpy._ufuncs import where, abs as _abs, ufuncs, _iscomplexobj, clip
from traxla.numpy._creation import asarray, linspace, ones_like, zeros, array, full
from traxla.numpy._reductions import ptp, sum as _sum
from traxla.numpy._manipulation import diff, diag
from traxla.numpy._searching import searchsorted, bincount
from traxla.numpy._index_tricks import ix_, ravel_multi_index
from traxla.numpy._shape import reshape, transpose, atleast_2d, concatenate
from traxla.numpy._linalg import dot
from traxla.numpy._nanfunctions import average
from traxla.numpy._ufuncs_numeric import i0


def _to_inexact(dt):
    return dt if dtypes.is_inexact(dt) else dtypes.default_float()


# -- histograms ---------------------------------------------------------------------------------

def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    arr = asarray(a)
    dtype = _to_inexact(arr.dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dtype)
    bins_int = operator.index(bins)
    if range is None:
        range = [arr.min(), arr.max()]  # noqa: A001
    range = asarray(range, dtype=dtype)  # noqa: A001
    if np.shape(range) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    lo = where(ptp(range) == 0, range[0] - 0.5, range[0])
    hi = where(ptp(range) == 0, range[1] + 0.5, range[1])
    return linspace(lo, hi, bins_int + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts (or summed weights) of ``a`` in each bin, and the bin edges."""
    if weights is None:
        a, _ = ensure_arraylike("histogram", a, bins)
        a, = promote_dtypes_inexact(a)
        weights = ones_like(a)
    else:
        a, _, weights = ensure_arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, weights = promote_dtypes_inexact(a, weights)
    bin_edges = histogram_bin_edges(a, bins, range, weights)
    bin_idx = searchsorted(bin_edges, a, side="right")
    bin_idx = where(a == bin_edges[-1], len(bin_edges) - 1, bin_idx)
    counts = zeros(len(bin_edges), weights.dtype).at[bin_idx].add(weights)[1:]
    if density:
        counts = counts / diff(bin_edges) / counts.sum()
    return counts, bin_edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A D-dimensional histogram of ``sample`` (shape ``(N, D)``) and the edges per axis."""
    if weights is None:
        sample = ensure_arraylike("histogramdd", sample)
        sample, = promote_dtypes_inexact(sample)
    else:
        sample, weights = ensure_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(sample, weights)
    N, D = np.shape(sample)
    if range is not None and (len(range) != D or any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(N, D)}, range must be a sequence of {D} pairs or "
                         f"Nones; got range={range}")
    try:
        bins_per_dim = list(bins)
    except TypeError:
        bins_per_dim = D * [bins]
    else:
        if len(bins_per_dim) != D:
            raise ValueError("should be a bin for each dimension.")
    idx_by_dim, edges_by_dim = [], []
    for i in builtins.range(D):
        range_i = None if range is None else range[i]
        edges = histogram_bin_edges(sample[:, i], bins_per_dim[i], range_i, weights)
        idx = searchsorted(edges, sample[:, i], side="right")
        idx = where(sample[:, i] == edges[-1], idx - 1, idx)
        idx_by_dim.append(idx)
        edges_by_dim.append(edges)
    nbins = tuple(len(e) + 1 for e in edges_by_dim)
    dedges = [diff(e) for e in edges_by_dim]
    xy = ravel_multi_index(tuple(idx_by_dim), nbins, mode="clip")
    hist = reshape(bincount(xy, weights, length=math.prod(nbins)), nbins)
    hist = hist[D * (slice(1, -1),)]
    if density:
        hist = hist.astype(sample.dtype)
        hist /= hist.sum()
        for norm in ix_(*dedges):
            hist /= norm
    return hist, edges_by_dim


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    x, y = ensure_arraylike("histogram2d", x, y)
    try:
        N = len(bins)
    except TypeError:
        N = 1
    if N != 1 and N != 2:
        edges = asarray(bins)
        bins = [edges, edges]
    sample = transpose(asarray([x, y]))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


# -- cov, corrcoef --------------------------------------------------------------------------------

def _cov_weights(name, weights, n_samples):
    """``cov``'s ``fweights``/``aweights`` argument as an array, checked to be one weight a
    sample."""
    weights = ensure_arraylike("cov", weights)
    if np.ndim(weights) > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if np.shape(weights)[0] != n_samples:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    return weights


def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    if y is not None:
        m, y = (lax._lift(v) for v in promote_args_inexact("cov", m, y))
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        m, = (lax._lift(v) for v in promote_args_inexact("cov", m))
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.is_inexact(dtypes.to_dtype(dtype)):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
    X = atleast_2d(m)
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return array([]).reshape(0, 0)
    if y is not None:
        y_arr = atleast_2d(y)
        if not rowvar and y_arr.shape[0] != 1:
            y_arr = y_arr.T
        X = concatenate((X, y_arr), axis=0)
    if X.shape[1] == 0:
        return full(() if X.shape[0] == 1 else (X.shape[0], X.shape[0]), np.nan, dtype=X.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        fweights = _cov_weights("fweights", fweights, X.shape[1])
        if not dtypes.is_int(fweights.dtype):
            raise TypeError("fweights must be integer.")
        w = _abs(fweights)
    if aweights is not None:
        aweights = _abs(_cov_weights("aweights", aweights, X.shape[1]))
        w = asarray(aweights if w is None else w * aweights)
    if dtype is not None:
        X = X.astype(dtype)
        w = w.astype(dtype) if w is not None else w
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * _sum(w * aweights) / w_sum
    X = X - avg[:, None]
    X_T = X.T if w is None else (X * lax.broadcast_to_rank(w, X.ndim)).T
    return ufuncs["true_divide"](dot(X, X_T.conj()), f).squeeze()


cov = jit_named(_cov, "cov", ("rowvar", "bias", "ddof", "dtype"))


def _corrcoef(x, y=None, rowvar=True, dtype=None):
    check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.is_inexact(dtypes.to_dtype(dtype)):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype}")
    c = cov(x, y, rowvar, dtype=dtype)
    if len(np.shape(c)) == 0:
        return ufuncs["divide"](c, c)
    d = diag(c)
    stddev = ufuncs["sqrt"](ufuncs["real"](d)).astype(c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    real_part = clip(ufuncs["real"](c), -1, 1)
    if _iscomplexobj(c):
        return lax.complex(real_part, clip(ufuncs["imag"](c), -1, 1))
    return real_part


corrcoef = jit_named(_corrcoef, "corrcoef", ("rowvar", "dtype"))


# -- windows ---------------------------------------------------------------------------------------

def _window(name, M):
    M = operator.index(M) if not hasattr(M, "aval") else int(M)
    dtype = dtypes.default_float()
    if M <= 1:
        return M, None, lax._lift(lax.full((M,), 1, dtype))
    return M, lax._lift(lax.iota(dtype, M)), None


def blackman(M):
    cos = _uf("cos")
    M, n, early = _window("blackman", M)
    if early is not None:
        return early
    return 0.42 - 0.5 * cos(2 * np.pi * n / (M - 1)) + 0.08 * cos(4 * np.pi * n / (M - 1))


def bartlett(M):
    M, n, early = _window("bartlett", M)
    if early is not None:
        return early
    return 1 - _abs(2 * n + 1 - M) / (M - 1)


def hamming(M):
    cos = _uf("cos")
    M, n, early = _window("hamming", M)
    if early is not None:
        return early
    return 0.54 - 0.46 * cos(2 * np.pi * n / (M - 1))


def hanning(M):
    cos = _uf("cos")
    M, n, early = _window("hanning", M)
    if early is not None:
        return early
    return 0.5 * (1 - cos(2 * np.pi * n / (M - 1)))


def kaiser(M, beta):
    sqrt = _uf("sqrt")
    M, n, early = _window("kaiser", M)
    if early is not None:
        return early
    alpha = 0.5 * (M - 1)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


def _uf(name):
    return ufuncs[name]

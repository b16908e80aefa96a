"""The differential corpus of the rest of ``jax.numpy`` (issue #16a): each program is
written once against ``(np_, lax_, ns)`` and built for traxla and for JAX."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

_rng = np.random.default_rng(16)


def _f(*shape, lo=-2.0, hi=2.0):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


X = _f(3, 5)                                                    # general float matrix
XN = X.copy()
XN[0, 1] = XN[2, 2] = XN[2, 3] = np.nan                         # NaNs, one row nearly all
XN2 = np.array([[1., np.nan, 3], [np.nan, np.nan, np.nan]], np.float32)
V = _f(20)
V3 = _f(4, 3)
S = _f(20, 2)
I7 = np.array([3, 1, 4, 1, 0, 4, 2], np.int32)
IS = np.array([-9, 12, 7, 0, 18, -3, 5], np.int32)
SORTED = np.sort(_f(6))
QUERY = np.array([SORTED[2], -5, 5, np.nan, 0.], np.float32)
Q3 = np.array([0.1, 0.5, 0.9], np.float32)
P4 = np.array([1., -3., 2., 5.], np.float32)
P2 = np.array([2., 1.], np.float32)
XP = np.array([-1., 0., 1.], np.float32)
FP = np.array([0., 5., 2.], np.float32)
M555 = np.ones((2, 5, 5), np.float32) + np.eye(5, dtype=np.float32)
BINS = np.array([-2., 0., 0.5, 3.], np.float32)


@dataclass
class Case:
    name: str
    build: Callable   # (np_, lax_, ns) -> function
    args: tuple
    rtol: float = 2e-5
    atol: float = 2e-6


CORPUS: dict = {}


def P(name, args, build, rtol=2e-5, atol=2e-6):
    assert name not in CORPUS, name
    CORPUS[name] = Case(name, build, tuple(args), rtol, atol)


# -- lax: the new primitives ------------------------------------------------------------------
P("lax.top_k", [X], lambda np_, lax_, ns: lambda x: lax_.top_k(x, 2))
P("lax.top_k axis0", [X], lambda np_, lax_, ns: lambda x: lax_.top_k(x, 2, axis=0))
P("lax.approx_max_k", [X], lambda np_, lax_, ns: lambda x: lax_.approx_max_k(x, 3))
P("lax.approx_min_k", [X], lambda np_, lax_, ns: lambda x: lax_.approx_min_k(x, 2))
P("lax.population_count", [IS], lambda np_, lax_, ns: lambda x: lax_.population_count(x))
P("lax.clz", [IS], lambda np_, lax_, ns: lambda x: lax_.clz(x.astype(np.uint8)))
P("grad top_k", [X], lambda np_, lax_, ns: ns.grad(lambda x: lax_.top_k(x, 2)[0].sum()))
P("vmap top_k", [X], lambda np_, lax_, ns: ns.vmap(lambda x: lax_.top_k(x, 2)))
P("jvp top_k", [X, X], lambda np_, lax_, ns: lambda x, t: ns.jvp(lambda v: lax_.top_k(v, 2)[0],
                                                                 (x,), (t,)))

# -- nan-reductions, average, count_nonzero ------------------------------------------------------
for _n in ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax",
           "nanargmin", "count_nonzero"]:
    P(f"{_n} axis1", [XN2], lambda np_, lax_, ns, n=_n: lambda x: getattr(np_, n)(x, axis=1))
P("nansum all", [XN], lambda np_, lax_, ns: lambda x: np_.nansum(x))
P("nanmean keepdims", [XN], lambda np_, lax_, ns: lambda x: np_.nanmean(x, axis=0, keepdims=True))
P("nanstd ddof", [XN], lambda np_, lax_, ns: lambda x: np_.nanstd(x, axis=1, ddof=1))
P("nanmax int", [I7], lambda np_, lax_, ns: lambda x: np_.nanmax(x))
P("average weights", [X], lambda np_, lax_, ns: lambda x: np_.average(x, axis=1, weights=X[0, :5]))
P("average", [X], lambda np_, lax_, ns: lambda x: np_.average(x, axis=1))
P("average returned", [X], lambda np_, lax_, ns: lambda x: np_.average(x, axis=0, returned=True))

# -- quantiles ------------------------------------------------------------------------------------
for _m in ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]:
    P(f"quantile {_m}", [X], lambda np_, lax_, ns, m=_m: lambda x: np_.quantile(x, Q3, axis=1,
                                                                                method=m))
P("median", [X], lambda np_, lax_, ns: lambda x: np_.median(x, axis=0))
P("nanmedian keepdims", [XN], lambda np_, lax_, ns: lambda x: np_.nanmedian(x, axis=1,
                                                                            keepdims=True))
P("percentile axes", [X], lambda np_, lax_, ns: lambda x: np_.percentile(x, 50., axis=(0, 1),
                                                                         keepdims=True))
P("nanpercentile", [XN], lambda np_, lax_, ns: lambda x: np_.nanpercentile(x, Q3 * 100))
P("nanquantile nearest", [XN], lambda np_, lax_, ns: lambda x: np_.nanquantile(
    x, 0.3, axis=0, method="nearest"))

# -- searching and selecting ------------------------------------------------------------------------
P("nonzero size", [X], lambda np_, lax_, ns: lambda x: np_.nonzero(x > 0, size=6, fill_value=-1))
P("argwhere size", [X], lambda np_, lax_, ns: lambda x: np_.argwhere(x > 0, size=6))
P("flatnonzero size", [X], lambda np_, lax_, ns: lambda x: np_.flatnonzero(x > 0, size=4))
P("where size", [X], lambda np_, lax_, ns: lambda x: np_.where(x > 0, size=4))
P("bincount length", [I7], lambda np_, lax_, ns: lambda a: np_.bincount(a, length=6))
P("bincount weights", [I7], lambda np_, lax_, ns: lambda a: np_.bincount(a, weights=a * 1.5,
                                                                         length=4))
for _meth in ["scan", "scan_unrolled", "compare_all", "sort"]:
    for _side in ["left", "right"]:
        P(f"searchsorted {_meth} {_side}", [SORTED, QUERY],
          lambda np_, lax_, ns, m=_meth, s=_side: lambda a, v: np_.searchsorted(a, v, side=s,
                                                                                method=m))
P("digitize", [X], lambda np_, lax_, ns: lambda x: np_.digitize(x, np.array([-1., 0, 1],
                                                                            np.float32)))
P("digitize right decreasing", [X], lambda np_, lax_, ns: lambda x: np_.digitize(
    x, np.array([1., 0, -1], np.float32), right=True))
P("lexsort", [I7, IS], lambda np_, lax_, ns: lambda a, b: np_.lexsort((a, b)))
P("partition", [X], lambda np_, lax_, ns: lambda x: np_.partition(x, 2, axis=1))
P("argpartition", [X], lambda np_, lax_, ns: lambda x: np_.argpartition(x, 2, axis=1))
P("partition unsigned", [I7], lambda np_, lax_, ns: lambda x: np_.partition(x.astype(np.uint8), 3))
P("sort_complex", [X], lambda np_, lax_, ns: lambda x: np_.sort_complex(x))
P("extract size", [X], lambda np_, lax_, ns: lambda x: np_.extract(x > 0, x, size=5))
P("compress size", [X], lambda np_, lax_, ns: lambda x: np_.compress(
    np.array([True, False, True]), x, axis=0, size=3, fill_value=9))
P("select", [X], lambda np_, lax_, ns: lambda x: np_.select([x > 0.5, x < -0.5], [x, x * 2],
                                                            default=-1))
P("choose wrap", [I7], lambda np_, lax_, ns: lambda a: np_.choose(a % 3, [a, a * 2, a * 3],
                                                                  mode="wrap"))
P("piecewise", [X], lambda np_, lax_, ns: lambda x: np_.piecewise(
    x, [x < 0, x > 0.5], [lambda v: -v, 7., lambda v: v * 3]))
P("place", [X], lambda np_, lax_, ns: lambda x: np_.place(x, x > 0, np.array([1., 2.], np.float32),
                                                          inplace=False))
P("put clip", [X], lambda np_, lax_, ns: lambda x: np_.put(
    x, np.array([0, 3, 20]), np.array([1., 2.], np.float32), mode="clip", inplace=False))
P("put_along_axis", [X], lambda np_, lax_, ns: lambda x: np_.put_along_axis(
    x, np.array([[0], [2], [1]]), 9., axis=1, inplace=False))

# -- set operations ----------------------------------------------------------------------------------
P("unique size", [I7], lambda np_, lax_, ns: lambda a: np_.unique(a, size=5, fill_value=-1))
P("unique all outputs", [I7], lambda np_, lax_, ns: lambda a: np_.unique(
    a, return_index=True, return_inverse=True, return_counts=True, size=5))
P("unique_all", [I7], lambda np_, lax_, ns: lambda a: tuple(np_.unique_all(a, size=5)))
P("unique_counts", [I7], lambda np_, lax_, ns: lambda a: tuple(np_.unique_counts(a, size=6,
                                                                                 fill_value=0)))
P("unique_inverse", [I7], lambda np_, lax_, ns: lambda a: tuple(np_.unique_inverse(a, size=6)))
P("unique_values", [I7], lambda np_, lax_, ns: lambda a: np_.unique_values(a, size=6))
P("isin", [I7], lambda np_, lax_, ns: lambda a: np_.isin(a, np.array([1, 3])))
P("isin invert", [I7], lambda np_, lax_, ns: lambda a: np_.isin(a, np.array([1, 3]), invert=True))
P("isin sort", [I7], lambda np_, lax_, ns: lambda a: np_.isin(a, np.array([1, 3]), method="sort"))
P("union1d size", [I7], lambda np_, lax_, ns: lambda a: np_.union1d(a, a + 2, size=9))
P("intersect1d size", [I7], lambda np_, lax_, ns: lambda a: np_.intersect1d(a, a + 2, size=4))
P("intersect1d indices", [I7], lambda np_, lax_, ns: lambda a: np_.intersect1d(
    a, a + 2, size=4, return_indices=True))
P("setdiff1d size", [I7], lambda np_, lax_, ns: lambda a: np_.setdiff1d(a, np.array([1, 2]),
                                                                        size=4))
P("setxor1d size", [I7], lambda np_, lax_, ns: lambda a: np_.setxor1d(a, a + 2, size=5))

# -- manipulation -------------------------------------------------------------------------------------
P("diff n2", [X], lambda np_, lax_, ns: lambda a: np_.diff(a, n=2, axis=0))
P("diff prepend", [X], lambda np_, lax_, ns: lambda a: np_.diff(a, prepend=0., append=1.))
P("ediff1d", [X], lambda np_, lax_, ns: lambda a: np_.ediff1d(a, to_begin=np.array([9.]),
                                                              to_end=-1.))
P("gradient", [X], lambda np_, lax_, ns: lambda a: np_.gradient(a))
P("gradient spacing", [X], lambda np_, lax_, ns: lambda a: np_.gradient(a, 2.0, axis=1))
P("unwrap", [X], lambda np_, lax_, ns: lambda a: np_.unwrap(a * 4))
P("trapezoid dx", [X], lambda np_, lax_, ns: lambda a: np_.trapezoid(a, dx=0.5))
P("trapezoid x", [X], lambda np_, lax_, ns: lambda a: np_.trapezoid(a, x=np.arange(5.) ** 2))
P("append axis", [X], lambda np_, lax_, ns: lambda a: np_.append(a, a, axis=0))
P("delete int", [X], lambda np_, lax_, ns: lambda a: np_.delete(a, 1, axis=1))
P("delete array", [X], lambda np_, lax_, ns: lambda a: np_.delete(a, np.array([0, 2]), axis=1))
P("delete unique", [X], lambda np_, lax_, ns: lambda a: np_.delete(
    a, np.array([0, 2]), axis=1, assume_unique_indices=True))
P("insert scalar", [X], lambda np_, lax_, ns: lambda a: np_.insert(a, 2, 7., axis=1))
P("insert array", [X], lambda np_, lax_, ns: lambda a: np_.insert(
    a, np.array([0, 3]), np.array([7., 8.], np.float32)))
P("resize", [X], lambda np_, lax_, ns: lambda a: np_.resize(a, (4, 6)))
P("rot90", [X], lambda np_, lax_, ns: lambda a: np_.rot90(a))
P("rot90 k3", [X], lambda np_, lax_, ns: lambda a: np_.rot90(a, k=3))
P("fliplr", [X], lambda np_, lax_, ns: lambda a: np_.fliplr(a))
P("flipud", [X], lambda np_, lax_, ns: lambda a: np_.flipud(a))
P("rollaxis", [X], lambda np_, lax_, ns: lambda a: np_.rollaxis(a[None], 2))
P("atleast_3d", [X], lambda np_, lax_, ns: lambda a: np_.atleast_3d(a))
P("block", [X], lambda np_, lax_, ns: lambda a: np_.block([[a, a], [a, a]]))
P("column_stack", [X], lambda np_, lax_, ns: lambda a: np_.column_stack([a[0], a[1]]))
P("dstack", [X], lambda np_, lax_, ns: lambda a: np_.dstack([a, a]))
P("hsplit", [X], lambda np_, lax_, ns: lambda a: np_.hsplit(a, [1, 3]))
P("vsplit", [X], lambda np_, lax_, ns: lambda a: np_.vsplit(a, 3))
P("diag 1d", [X], lambda np_, lax_, ns: lambda a: np_.diag(a[0], k=1))
P("diag 2d", [X], lambda np_, lax_, ns: lambda a: np_.diag(a, k=-1))
P("diagflat", [X], lambda np_, lax_, ns: lambda a: np_.diagflat(a[0], k=-1))
P("fill_diagonal", [X], lambda np_, lax_, ns: lambda a: np_.fill_diagonal(a, 5., inplace=False))
P("kron", [X], lambda np_, lax_, ns: lambda a: np_.kron(a, a[:2, :2]))
P("vander", [X], lambda np_, lax_, ns: lambda a: np_.vander(a[0], 3))
P("cross 3", [V3], lambda np_, lax_, ns: lambda a: np_.cross(a, a[::-1]))
P("cross 2", [V3], lambda np_, lax_, ns: lambda a: np_.cross(a[:, :2], a[::-1, :2]))
P("interp", [X], lambda np_, lax_, ns: lambda a: np_.interp(a, XP, FP))
P("interp extrapolate", [X], lambda np_, lax_, ns: lambda a: np_.interp(
    a, XP, FP, left=-9., right="extrapolate"))
P("interp period", [X], lambda np_, lax_, ns: lambda a: np_.interp(a, XP, FP, period=3.))
P("isclose", [X], lambda np_, lax_, ns: lambda a: np_.isclose(a, a + 1e-7))
P("allclose", [X], lambda np_, lax_, ns: lambda a: np_.allclose(a, a + 1e-3))
P("array_equal", [X], lambda np_, lax_, ns: lambda a: np_.array_equal(a, a))
P("array_equiv", [X], lambda np_, lax_, ns: lambda a: np_.array_equiv(a, a[0]))
P("pad constant", [X], lambda np_, lax_, ns: lambda a: np_.pad(a, ((1, 2), (3, 1))))
for _m in ["edge", "wrap", "reflect", "symmetric", "linear_ramp", "maximum", "minimum", "mean",
           "median", "empty"]:
    P(f"pad {_m}", [X], lambda np_, lax_, ns, m=_m: lambda a: np_.pad(a, ((1, 2), (3, 1)), mode=m))
P("pad constant pairs", [X], lambda np_, lax_, ns: lambda a: np_.pad(
    a, 2, constant_values=((1, 2), (3, 4))))
P("pad reflect odd", [X], lambda np_, lax_, ns: lambda a: np_.pad(a, (4, 6), mode="reflect",
                                                                  reflect_type="odd"))
P("pad ramp end_values", [X], lambda np_, lax_, ns: lambda a: np_.pad(
    a, 2, mode="linear_ramp", end_values=(5, -5)))
P("pad int mean", [IS], lambda np_, lax_, ns: lambda a: np_.pad(a, 2, mode="mean"))

# -- index helpers --------------------------------------------------------------------------------------
P("ix_", [I7], lambda np_, lax_, ns: lambda a: np_.ix_(a, a))
P("indices", [], lambda np_, lax_, ns: lambda: np_.indices((2, 3)))
P("indices sparse", [], lambda np_, lax_, ns: lambda: np_.indices((2, 3), sparse=True))
P("mgrid", [], lambda np_, lax_, ns: lambda: np_.mgrid[0:3, 0:4:2])
P("ogrid", [], lambda np_, lax_, ns: lambda: np_.ogrid[0:3, 0:1:5j])
P("r_", [V], lambda np_, lax_, ns: lambda a: np_.r_[a, 0:3, -1])
P("c_", [V], lambda np_, lax_, ns: lambda a: np_.c_[a, a])
P("unravel_index", [IS], lambda np_, lax_, ns: lambda a: np_.unravel_index(a, (2, 3)))
P("ravel_multi_index clip", [I7], lambda np_, lax_, ns: lambda a: np_.ravel_multi_index(
    (a, a), (5, 6), mode="clip"))
P("tril_indices", [], lambda np_, lax_, ns: lambda: np_.tril_indices(4, 1))
P("triu_indices_from", [X], lambda np_, lax_, ns: lambda a: np_.triu_indices_from(a, -1))
P("diag_indices_from", [X], lambda np_, lax_, ns: lambda a: np_.diag_indices_from(a[:3, :3]))
P("mask_indices", [], lambda np_, lax_, ns: lambda: np_.mask_indices(3, np_.triu, size=6))

# -- lifting functions ----------------------------------------------------------------------------------
P("vectorize", [X], lambda np_, lax_, ns: lambda a: np_.vectorize(lambda u, w: u * w + 1)(a, a[0]))
P("vectorize signature", [X], lambda np_, lax_, ns: lambda a: np_.vectorize(
    lambda u: u.sum(), signature="(n)->()")(a))
P("apply_along_axis", [X], lambda np_, lax_, ns: lambda a: np_.apply_along_axis(
    lambda u: u.max() - u, 0, a))
P("apply_over_axes", [X], lambda np_, lax_, ns: lambda a: np_.apply_over_axes(np_.sum, a, [0, 1]))
P("fromfunction", [], lambda np_, lax_, ns: lambda: np_.fromfunction(
    lambda i, j: i * 10 + j, (2, 3), dtype=np.float32))
P("matvec", [M555], lambda np_, lax_, ns: lambda a: np_.matvec(a, a[0, 0]))
P("vecmat", [X], lambda np_, lax_, ns: lambda a: np_.vecmat(a[:, 0], a))
P("vecdot", [X], lambda np_, lax_, ns: lambda a: np_.vecdot(a, a))
P("frompyfunc call", [X], lambda np_, lax_, ns: lambda a: np_.frompyfunc(
    lambda p, q: p * q + 1, 2, 1)(a, a))
P("frompyfunc reduce", [X], lambda np_, lax_, ns: lambda a: np_.frompyfunc(
    lambda p, q: p * q + 1, 2, 1, identity=0).reduce(a, axis=1))

# -- elementwise extras ----------------------------------------------------------------------------------
P("gcd", [IS], lambda np_, lax_, ns: lambda a: np_.gcd(a, 12))
P("lcm", [IS], lambda np_, lax_, ns: lambda a: np_.lcm(a, 4))
P("frexp", [X], lambda np_, lax_, ns: lambda a: np_.frexp(a))
P("ldexp", [X, IS], lambda np_, lax_, ns: lambda a, b: np_.ldexp(a, b[:5]))
P("modf", [X], lambda np_, lax_, ns: lambda a: np_.modf(a * 3))
P("spacing", [X], lambda np_, lax_, ns: lambda a: np_.spacing(a))
P("sinc", [X], lambda np_, lax_, ns: lambda a: np_.sinc(a * (a > 0.3)))
P("grad sinc", [X], lambda np_, lax_, ns: ns.grad(lambda a: np_.sinc(a * (a > 0.3)).sum()))
P("fmax", [XN], lambda np_, lax_, ns: lambda a: np_.fmax(a, a[::-1]))
P("fmin scalar", [X], lambda np_, lax_, ns: lambda a: np_.fmin(a, 0.))
P("trunc", [X], lambda np_, lax_, ns: lambda a: np_.trunc(a * 3))
P("logaddexp2", [X], lambda np_, lax_, ns: lambda a: np_.logaddexp2(a, a[0]))
P("bitwise_count", [IS], lambda np_, lax_, ns: lambda a: np_.bitwise_count(a))
P("bitwise_not", [IS], lambda np_, lax_, ns: lambda a: np_.bitwise_not(a))
P("bitwise_invert", [IS], lambda np_, lax_, ns: lambda a: np_.bitwise_invert(a))
P("bitwise_left_shift", [IS], lambda np_, lax_, ns: lambda a: np_.bitwise_left_shift(a, 2))
P("bitwise_right_shift", [IS], lambda np_, lax_, ns: lambda a: np_.bitwise_right_shift(a, 1))
P("packbits", [IS], lambda np_, lax_, ns: lambda a: np_.packbits(a > 0))
P("packbits axis little", [X], lambda np_, lax_, ns: lambda a: np_.packbits(a > 0, axis=1,
                                                                            bitorder="little"))
P("unpackbits", [IS], lambda np_, lax_, ns: lambda a: np_.unpackbits(a.astype(np.uint8)))
P("unpackbits count", [IS], lambda np_, lax_, ns: lambda a: np_.unpackbits(a.astype(np.uint8),
                                                                           count=60))
P("iscomplex", [X], lambda np_, lax_, ns: lambda a: np_.iscomplex(a))
P("isreal", [X], lambda np_, lax_, ns: lambda a: np_.isreal(a))
P("cumulative_sum initial", [X], lambda np_, lax_, ns: lambda a: np_.cumulative_sum(
    a, axis=1, include_initial=True))
P("cumulative_sum int8", [IS], lambda np_, lax_, ns: lambda a: np_.cumulative_sum(a.astype(np.int8)))
P("cumulative_prod", [X], lambda np_, lax_, ns: lambda a: np_.cumulative_prod(a, axis=0))

# -- statistics, windows, polynomials ------------------------------------------------------------------
P("histogram", [V], lambda np_, lax_, ns: lambda a: np_.histogram(a, bins=4))
P("histogram range density", [V], lambda np_, lax_, ns: lambda a: np_.histogram(
    a, bins=5, range=(-1., 1.), weights=a * a, density=True))
P("histogram edges", [V], lambda np_, lax_, ns: lambda a: np_.histogram(a, bins=BINS))
P("histogram_bin_edges", [V], lambda np_, lax_, ns: lambda a: np_.histogram_bin_edges(a, bins=6))
P("histogram2d", [V], lambda np_, lax_, ns: lambda a: np_.histogram2d(a, a[::-1], bins=3))
P("histogramdd density", [S], lambda np_, lax_, ns: lambda a: np_.histogramdd(a, bins=(2, 3),
                                                                              density=True))
P("cov", [X], lambda np_, lax_, ns: lambda a: np_.cov(a))
P("cov y ddof", [X], lambda np_, lax_, ns: lambda a: np_.cov(a[0], a[1], ddof=0))
P("cov weights", [X], lambda np_, lax_, ns: lambda a: np_.cov(
    a, rowvar=False, fweights=np.array([1, 2, 1]), aweights=np.array([.5, 1., 2.], np.float32)))
P("corrcoef", [X], lambda np_, lax_, ns: lambda a: np_.corrcoef(a))
for _w in ["bartlett", "blackman", "hamming", "hanning"]:
    P(f"window {_w}", [], lambda np_, lax_, ns, w=_w: lambda: getattr(np_, w)(7))
P("poly", [P2], lambda np_, lax_, ns: lambda a: np_.poly(a))
P("polyadd", [P4, P2], lambda np_, lax_, ns: lambda a, b: np_.polyadd(a, b))
P("polysub", [P4, P2], lambda np_, lax_, ns: lambda a, b: np_.polysub(b, a))
P("polymul", [P4, P2], lambda np_, lax_, ns: lambda a, b: np_.polymul(a, b))
P("polydiv", [P4, P2], lambda np_, lax_, ns: lambda a, b: np_.polydiv(a, b))
P("polyder", [P4], lambda np_, lax_, ns: lambda a: np_.polyder(a, 2))
P("polyint", [P4], lambda np_, lax_, ns: lambda a: np_.polyint(a, 2, k=3.))
P("logspace", [], lambda np_, lax_, ns: lambda: np_.logspace(0., 2., 5))
P("geomspace", [], lambda np_, lax_, ns: lambda: np_.geomspace(1., 100., 3))
P("astype", [X], lambda np_, lax_, ns: lambda a: np_.astype(a, np.int32))
P("empty_like", [X], lambda np_, lax_, ns: lambda a: np_.empty_like(a, shape=(2,)))
P("i0", [X], lambda np_, lax_, ns: lambda a: np_.i0(a))
P("grad i0", [X], lambda np_, lax_, ns: ns.grad(lambda a: np_.i0(a).sum()))
P("window kaiser", [], lambda np_, lax_, ns: lambda: np_.kaiser(6, 2.5))
P("polyfit", [V], lambda np_, lax_, ns: lambda y: np_.polyfit(np.arange(20.), y, 2))
P("polyfit full", [V], lambda np_, lax_, ns: lambda y: np_.polyfit(np.arange(20.), y, 1, full=True))
P("roots no strip", [P4], lambda np_, lax_, ns: lambda p: np_.roots(p, strip_zeros=False))
P("poly matrix", [V3], lambda np_, lax_, ns: lambda a: np_.poly(a[:3]))
P("frompyfunc accumulate", [X], lambda np_, lax_, ns: lambda a: np_.frompyfunc(
    lambda p, q: p * q + 1, 2, 1).accumulate(a, axis=1))
P("frompyfunc reduceat", [X], lambda np_, lax_, ns: lambda a: np_.frompyfunc(
    lambda p, q: p * q + 1, 2, 1).reduceat(a, np.array([0, 2]), axis=1))
P("frompyfunc outer", [X], lambda np_, lax_, ns: lambda a: np_.frompyfunc(
    lambda p, q: p * q + 1, 2, 1).outer(a[0], a[1]))

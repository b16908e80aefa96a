"""The rest of ``jax.numpy`` (issue #16a) and the top_k / population_count / clz
primitives: a differential corpus against JAX (``tests/_numpy_rest_corpus.py``: jaxpr text
and jit results), numerics against NumPy (hypothesis where shapes vary), gradients by finite
differences, and trace-time errors.

Programs whose jaxpr cannot match yet are listed in ``KNOWN_DIFFERENCES`` (a reason each)
and run as ``xfail(strict=True)``. Run ``python tests/test_numpy_rest.py [substring ...]``
to print the two jaxprs of every differing program.
"""
from __future__ import annotations

import inspect
import io
import sys

import numpy as np
import pytest

from _corpus import compare_outputs, run_group
import _numpy_rest_corpus
from _numpy_rest_corpus import CORPUS
import traxla
import traxla.lax as tlax
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

KNOWN_DIFFERENCES: dict = {}
KNOWN_DIFFERENCES.update({
    "put clip": "the two hoisted constants are listed in the other order (JAX orders consts "
                "by when they became arrays, traxla by first use)",
    "frompyfunc accumulate": "JAX jits ufunc.accumulate (a fori_loop); traxla scans unjitted",
    "frompyfunc reduceat": "JAX jits ufunc.reduceat; traxla loops unjitted",
    "frompyfunc outer": "JAX jits ufunc.outer around the vmapped call",
    "polyfit": "jnp.linalg.lstsq (the linalg work) converts rcond after the copy, not before",
    "polyfit full": "jnp.linalg.lstsq (the linalg work) converts rcond after the copy, not before",
})


def _build(case, ns):
    return case.build(*ns)


TRAXLA = (tnp, tlax, traxla)
JAX = (jnp, jlax, jax)


def jaxpr_texts(case):
    want = str(jax.make_jaxpr(_build(case, JAX))(*case.args))
    got = str(traxla.make_jaxpr(_build(case, TRAXLA))(*case.args))
    return want, got


def test_corpus_size():
    assert len(CORPUS) >= 200
    assert set(KNOWN_DIFFERENCES) <= set(CORPUS)
    assert len(CORPUS) - len(KNOWN_DIFFERENCES) >= 120


@pytest.mark.parametrize("name", [
    pytest.param(n, id=n, marks=(pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[n]),)
                 if n in KNOWN_DIFFERENCES else ()) for n in CORPUS])
def test_jaxpr_text_matches_jax(name):
    want, got = jaxpr_texts(CORPUS[name])
    assert got == want, f"\n--- jax\n{want}\n--- traxla\n{got}"


# Numeric comparison of jit results: a program whose jaxpr prints as JAX's binds the same
# primitives with the same params, so its results differ from JAX's only if a lowering does;
# the lowerings of existing primitives are tested by their own files. So the programs run
# here are those whose jaxpr differs from JAX's and those that bind the new primitives
# (compiling all 210 programs under both would cost the CPU budget several times over).
_NEW_PRIMITIVES = ("top_k", "population_count", "clz", "le_to", "lt_to", "eq_to")


def _numeric_names():
    names = []
    for name, case in CORPUS.items():
        if name in KNOWN_DIFFERENCES or name.startswith("lax."):
            names.append(name)
            continue
        text = str(traxla.make_jaxpr(_build(case, TRAXLA))(*case.args))
        if any(p in text for p in _NEW_PRIMITIVES):
            names.append(name)
    return names


def test_jit_results_match_jax(jax_side):
    names = _numeric_names()
    assert len(names) >= 30  # shrinks as known differences get fixed
    fns = lambda ns: [_build(CORPUS[n], ns) for n in names]  # noqa: E731
    args = [CORPUS[n].args for n in names]
    # JAX's side stored (tests/_jax_stored.py), keyed also by the corpus and the names run
    want = jax_side(lambda: run_group(fns(JAX), args, jax.jit),
                    key=inspect.getsource(_numpy_rest_corpus) + "\n".join(names))
    got = run_group(fns(TRAXLA), args, traxla.jit)
    failures = []
    for name, g, w in zip(names, got, want):
        try:
            compare_outputs(name, g, w, CORPUS[name].rtol, CORPUS[name].atol)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


# == numerics against NumPy ===================================================================

# XLA on CPU flushes subnormals to zero, as JAX does there; NumPy does not
_floats = st.floats(-100, 100, allow_nan=False, allow_subnormal=False, width=32)


def _arrays(draw, shape):
    return np.asarray(draw(st.lists(_floats, min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape)))), np.float32).reshape(shape)


@st.composite
def _matrix_with_nans(draw):
    shape = (3, 4)  # one shape: the examples vary the data, not the compiled programs
    x = _arrays(draw, shape)
    mask = np.asarray(draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size))).reshape(shape)
    return np.where(mask & (np.arange(x.size).reshape(shape) % 3 == 0), np.nan, x).astype(np.float32)


@settings(max_examples=8, deadline=None)
@given(_matrix_with_nans(), st.sampled_from([None, 0, 1]))
def test_nan_reductions_match_numpy(x, axis):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("nansum", "nanmax", "nanmean", "nanvar", "nanmedian"):
            want = getattr(np, name)(x, axis=axis)
            got = np.asarray(getattr(tnp, name)(x, axis=axis))
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-3, err_msg=name)


@settings(max_examples=8, deadline=None)
@given(st.lists(_floats, min_size=7, max_size=7),
       st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]))
def test_quantile_matches_numpy(values, method):
    x = np.asarray(values, np.float32)
    q = np.array([0., 0.25, 0.5, 0.9, 1.], np.float32)
    # JAX's 'nearest' rounds a .5 position down where NumPy rounds to even: JAX is the oracle
    want = (jnp.quantile(x, q, method=method) if method == "nearest"
            else np.quantile(x, q, method=method).astype(np.float32))
    np.testing.assert_allclose(np.asarray(tnp.quantile(x, q, method=method)), np.asarray(want),
                               rtol=1e-5, atol=1e-4)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=8, max_size=8))
def test_unique_and_set_ops_match_numpy(values):
    a = np.asarray(values, np.int32)
    b = a[::2] + 1
    vals, idx, inv, counts = np.unique(a, return_index=True, return_inverse=True,
                                       return_counts=True)
    got = tnp.unique(a, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, (vals, idx, inv.ravel(), counts)):
        np.testing.assert_array_equal(np.asarray(g), w)
    n = len(vals)
    padded = tnp.unique(a, size=n + 2, fill_value=99)
    np.testing.assert_array_equal(np.asarray(padded), np.concatenate([vals, [99, 99]]))
    np.testing.assert_array_equal(np.asarray(tnp.union1d(a, b)), np.union1d(a, b))
    np.testing.assert_array_equal(np.asarray(tnp.intersect1d(a, b)), np.intersect1d(a, b))
    np.testing.assert_array_equal(np.asarray(tnp.setdiff1d(a, b)), np.setdiff1d(a, b))
    np.testing.assert_array_equal(np.asarray(tnp.setxor1d(a, b)), np.setxor1d(a, b))
    np.testing.assert_array_equal(np.asarray(tnp.isin(a, b)), np.isin(a, b))


@settings(max_examples=8, deadline=None)
@given(st.lists(_floats, min_size=6, max_size=6), st.lists(_floats, min_size=4, max_size=4),
       st.sampled_from(["left", "right"]), st.sampled_from(["scan", "compare_all", "sort"]))
def test_searchsorted_matches_numpy(a, v, side, method):
    a, v = np.sort(np.asarray(a, np.float32)), np.asarray(v, np.float32)
    np.testing.assert_array_equal(np.asarray(tnp.searchsorted(a, v, side=side, method=method)),
                                  np.searchsorted(a, v, side=side))


@settings(max_examples=5, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 3), st.integers(0, 3),
       st.sampled_from(["constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp",
                        "maximum", "minimum", "mean", "median"]))
def test_pad_matches_numpy(n, m, lo, hi, mode):
    x = np.arange(n * m, dtype=np.float32).reshape(n, m) * 1.5 - 2
    np.testing.assert_allclose(np.asarray(tnp.pad(x, ((lo, hi), (hi, lo)), mode=mode)),
                               np.pad(x, ((lo, hi), (hi, lo)), mode=mode), rtol=1e-6)


def test_misc_numerics_match_numpy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 6)).astype(np.float32)
    i = rng.integers(-50, 50, size=10).astype(np.int32)
    checks = [
        (tnp.histogram(x, bins=5)[0], np.histogram(x, bins=5)[0]),
        (tnp.histogram2d(x[0], x[1], bins=3)[0], np.histogram2d(x[0], x[1], bins=3)[0]),
        (tnp.bincount(np.abs(i)), np.bincount(np.abs(i))),
        (tnp.digitize(x, np.array([-1, 0, 1.])), np.digitize(x, [-1, 0, 1])),
        (tnp.interp(x, np.array([-1, 0, 2.]), np.array([0, 3, 1.])),
         np.interp(x, [-1, 0, 2], [0, 3, 1])),
        (tnp.gcd(i, 12), np.gcd(i, 12)), (tnp.lcm(i, 4), np.lcm(i, 4)),
        (tnp.frexp(x)[0], np.frexp(x)[0]), (tnp.frexp(x)[1], np.frexp(x)[1]),
        (tnp.ldexp(x, i[:6]), np.ldexp(x, i[:6])),
        (tnp.spacing(x), np.spacing(x)), (tnp.sinc(x), np.sinc(x)),
        (tnp.packbits(x > 0, axis=1), np.packbits(x > 0, axis=1)),
        (tnp.unpackbits(np.uint8([3, 255]), count=12), np.unpackbits(np.uint8([3, 255]), count=12)),
        (tnp.bitwise_count(i), np.bitwise_count(i) if hasattr(np, "bitwise_count") else
         np.array([bin(abs(int(v))).count("1") for v in i], np.uint8)),
        (tnp.cov(x), np.cov(x)), (tnp.corrcoef(x), np.corrcoef(x)),
        (tnp.gradient(x, axis=1), np.gradient(x, axis=1)), (tnp.unwrap(x * 3), np.unwrap(x * 3)),
        (tnp.trapezoid(x), np.trapezoid(x) if hasattr(np, "trapezoid") else np.trapz(x)),
        (tnp.kron(x[:2, :2], x[:3, :2]), np.kron(x[:2, :2], x[:3, :2])),
        (tnp.cross(x[:, :3], x[::-1, :3]), np.cross(x[:, :3], x[::-1, :3])),
        (tnp.vander(x[0], 4), np.vander(x[0], 4)), (tnp.rot90(x, 3), np.rot90(x, 3)),
        (tnp.insert(x, np.array([1, 4]), 9., axis=1), np.insert(x, [1, 4], 9., axis=1)),
        (tnp.delete(x, np.array([0, 2]), axis=1), np.delete(x, [0, 2], axis=1)),
        (tnp.resize(x, (5, 7)), np.resize(x, (5, 7))), (tnp.trim_zeros(np.array([0, 0, 3, 0, 4, 0])),
                                                        np.trim_zeros(np.array([0, 0, 3, 0, 4, 0]))),
        (tnp.partition(x, 2, axis=1)[:, 2], np.partition(x, 2, axis=1)[:, 2]),
        (tnp.lexsort((i, i % 3)), np.lexsort((i, i % 3))),
        (tnp.polyval(tnp.polyint(x[0]), 0.5), np.polyval(np.polyint(x[0]), 0.5)),
        (tnp.polydiv(x[0], x[1, :2])[0], np.polydiv(x[0], x[1, :2])[0]),
        (tnp.polymul(x[0], x[1, :3]), np.polymul(x[0], x[1, :3])),
        (tnp.poly(x[0, :3]), np.poly(x[0, :3])),
        (tnp.i0(x), np.i0(x)), (tnp.kaiser(6, 2.5), np.kaiser(6, 2.5)),
        (tnp.polyfit(np.arange(6.), x[0], 2), np.polyfit(np.arange(6.), x[0], 2)),
        (np.sort_complex(np.asarray(tnp.roots(np.array([1., -6., 11., -6.])))),
         np.sort_complex(np.roots([1., -6., 11., -6.]))),
        (tnp.hanning(6), np.hanning(6)), (tnp.blackman(6), np.blackman(6)),
        (tnp.bartlett(6), np.bartlett(6)), (tnp.hamming(6), np.hamming(6)),
        (tnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4)),
        (tnp.ravel_multi_index((np.array([1, 2]), np.array([3, 0])), (3, 4)),
         np.ravel_multi_index((np.array([1, 2]), np.array([3, 0])), (3, 4))),
        (tnp.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3]), (tnp.r_[1:4, 7], np.r_[1:4, 7]),
        (tnp.tril_indices(4, -1)[1], np.tril_indices(4, -1)[1]),
        (tnp.select([x > 0], [x], -1.), np.select([x > 0], [x], -1.)),
        (tnp.average(x, axis=1, weights=np.arange(6.)), np.average(x, axis=1, weights=np.arange(6.))),
    ]
    for k, (got, want) in enumerate(checks):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-5,
                                   err_msg=f"check {k}")


def test_dtype_names_and_io():
    assert tnp.int_(3).dtype == np.int32 and tnp.single(1).dtype == np.float32
    assert tnp.promote_types("int8", "uint8") == np.int16
    assert tnp.promote_types(tnp.bfloat16, np.float16) == np.float32
    assert tnp.issubdtype(tnp.bfloat16, np.floating) and tnp.issubdtype(tnp.int4, np.signedinteger)
    assert tnp.isdtype(np.float32, "real floating") and not tnp.isdtype(np.int8, "bool")
    assert tnp.int4.dtype == np.dtype("int4") and tnp.float8_e5m2.dtype.name == "float8_e5m2"
    buf = io.BytesIO()
    tnp.save(buf, np.arange(4.0))
    buf.seek(0)
    loaded = tnp.load(buf)
    assert isinstance(loaded, type(tnp.zeros(1))) and loaded.tolist() == [0, 1, 2, 3]
    with tnp.printoptions(precision=2):
        assert tnp.get_printoptions()["precision"] == 2
    assert tnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(NotImplementedError, match="fromiter"):
        tnp.fromiter(iter([1]))


def test_gradients_by_finite_differences():
    x = np.array([0.3, -1.2, 2.0, 0.7, 1.1], np.float32)
    eps = 1e-3
    fns = {
        "top_k": lambda v: tlax.top_k(v, 2)[0].sum() * 1.0,
        "sinc": lambda v: tnp.sinc(v).sum(),
        "quantile": lambda v: tnp.quantile(v, 0.3),
        "interp": lambda v: tnp.interp(v, np.array([-2., 0., 3.], np.float32),
                                       np.array([1., -1., 2.], np.float32)).sum(),
        "nanmean": lambda v: tnp.nanmean(v * v),
        "ldexp": lambda v: tnp.ldexp(v, np.int32(3)).sum(),
        "i0": lambda v: tnp.i0(v).sum(),
    }
    steps = eps * np.eye(len(x), dtype=np.float32)

    def grad_and_shifted_values(f):  # one compiled program per function (eagerly: dozens)
        return traxla.jit(lambda x, plus, minus: (
            traxla.grad(f)(x), [f(p) for p in plus], [f(m) for m in minus]))(
                x, x + steps, x - steps)
    for name, f in fns.items():
        g, plus, minus = grad_and_shifted_values(f)
        g = np.asarray(g)
        fd = np.array([(float(p) - float(m)) / (2 * eps) for p, m in zip(plus, minus)])
        np.testing.assert_allclose(g, fd, rtol=2e-2, atol=2e-2, err_msg=name)


def test_top_k_batching_and_rules(jax_side):
    x = np.random.default_rng(1).normal(size=(3, 6)).astype(np.float32)
    for axis in (0, 1):
        got = traxla.vmap(lambda v: tlax.top_k(v, 2), in_axes=axis)(x)
        want = jax_side(lambda: jax.vmap(lambda v: jlax.top_k(v, 2), in_axes=axis)(x))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    got = traxla.vmap(lambda v: tlax.approx_min_k(v, 2), in_axes=1)(x)
    want = jax_side(lambda: jax.vmap(lambda v: jlax.approx_min_k(v, 2), in_axes=1)(x))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    from traxla.cli.rule_coverage import coverage
    cov = coverage()
    for prim in ("top_k", "approx_top_k", "population_count", "clz"):
        assert cov[prim]["typing"] and cov[prim]["lowering"] and cov[prim]["batching"]
        # integer bit counts have no JVP rule in JAX either
        assert cov[prim]["jvp"] == (prim in ("top_k", "approx_top_k")), prim


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="k argument to top_k must be no larger"):
        tlax.top_k(np.ones(3, np.float32), 4)
    with pytest.raises(ValueError, match="top_k is not compatible with complex"):
        tlax.top_k(np.ones(3, np.complex64), 1)
    with pytest.raises(traxla.errors.ConcretizationTypeError, match="jnp.nonzero"):
        traxla.jit(lambda v: tnp.nonzero(v))(np.ones(3))
    with pytest.raises(traxla.errors.ConcretizationTypeError, match="jnp.unique"):
        traxla.jit(lambda v: tnp.unique(v))(np.ones(3))
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode"):
        tnp.pad(np.ones(3), 1, mode="bogus")
    with pytest.raises(ValueError, match="method can only be"):
        tnp.quantile(np.ones(3), 0.5, method="bogus")
    with pytest.raises(TypeError, match="population_count"):
        tlax.population_count(np.ones(3, np.float32))


def test_api_coverage_command():
    from traxla.cli.api_coverage import api_coverage, api_coverage_table
    rows = {label: (have, total, missing) for label, have, total, missing, _ in api_coverage()}
    for label in ("numpy", "numpy.linalg", "numpy.fft", "random", "nn", "nn.initializers",
                  "scipy.linalg", "scipy.stats", "export"):
        have, total, missing = rows[label]
        assert have == total and not missing, (label, missing)
    assert "numpy" in api_coverage_table(show_missing=False)


def test_api_coverage_snapshot_is_jax_0_10_2s_names():
    """The package never imports jax: its reference list is a snapshot, checked here."""
    import json
    import os
    import types
    import importlib
    import jax.scipy.stats
    from traxla.cli.api_coverage import SNAPSHOT
    with open(SNAPSHOT) as f:
        snap = json.load(f)
    assert snap["jax_version"] == jax.__version__
    modules = {label: importlib.import_module("jax" if label == "top level" else "jax." + label)
               for label in snap["namespaces"]}  # all imported first, as the tool does
    for label, entry in snap["namespaces"].items():
        module = modules[label]
        live = {n for n in dir(module) if not n.startswith("_")}
        assert set(entry["names"]) <= live, (label, set(entry["names"]) - live)
        # a submodule another test imported shows up as an attribute of its package
        extra = live - set(entry["names"])
        assert all(isinstance(getattr(module, n), types.ModuleType) for n in extra), extra
    stats = [n for n in dir(jax.scipy.stats) if isinstance(getattr(jax.scipy.stats, n),
                                                           types.ModuleType)]
    assert {f"scipy.stats.{n}" for n in stats} <= set(snap["namespaces"])
    assert os.path.basename(SNAPSHOT) == "jax_public_names.json"


if __name__ == "__main__":
    from _corpus import print_differences
    print_differences(CORPUS, KNOWN_DIFFERENCES, jaxpr_texts, sys.argv[1:])

"""Differential corpus (issue #16b): special-function primitives, random samplers, nn,
nn.initializers and scipy programs, each written once against a namespace ``ns`` (traxla's
modules or JAX's) and compared with JAX: ``make_jaxpr`` text and the jitted outputs (bit-exact
for the random samplers: ``rtol=atol=0``).

Run ``python tests/test_random_scipy_corpus.py [name-substring ...]`` to print the two jaxprs
of every differing program.
"""
from __future__ import annotations

import hashlib
import os
import sys
import types

import numpy as np
import pytest

from _corpus import compare_outputs, leaves, print_differences
import traxla
import traxla.lax
import traxla.nn
import traxla.numpy
import traxla.random
import traxla.scipy.special

jax = pytest.importorskip("jax")
import jax.lax  # noqa: E402
import jax.nn  # noqa: E402
import jax.numpy  # noqa: E402
import jax.random  # noqa: E402
import jax.scipy.special  # noqa: E402


def _namespace(root):
    import importlib
    mods = {}
    for name in ("lax", "numpy", "random", "nn", "scipy.special", "scipy.stats", "nn.initializers",
                 "scipy.stats.norm"):
        try:
            mods[name.replace(".", "_")] = importlib.import_module(f"{root.__name__}.{name}")
        except ImportError:
            pass
    return types.SimpleNamespace(root=root, **mods)


T, J = _namespace(traxla), _namespace(jax)

f32 = np.float32
A = np.array([0.5, 1., 2.5, 7.], f32)
X = np.array([0.3, 2., 1., 9.], f32)
U = np.array([0.1, 0.25, 0.5, 0.9], f32)
M = np.linspace(-3, 3, 12, dtype=f32).reshape(3, 4)

# name -> (program(ns) -> fn, args, exact). exact: outputs bit-equal to JAX's.
CORPUS: dict = {}


def case(name, args, exact=False, rtol=2e-6, atol=2e-6, more_args=()):
    """``more_args``: further argument tuples run through the same compiled program."""
    def register(program):
        CORPUS[name] = (program, args, exact, rtol, atol, tuple(more_args))
        return program
    return register


# name -> why traxla's jaxpr text differs (xfail, strict)
KNOWN_DIFFERENCES: dict = {}


# -- special-function primitives ------------------------------------------------------------------

for _fn in ("igamma", "igammac", "igamma_grad_a", "polygamma", "zeta"):
    case(f"lax.{_fn}", (A + 1, X))(lambda ns, _fn=_fn: getattr(ns.lax, _fn))
for _fn in ("bessel_i0e", "bessel_i1e", "digamma", "lgamma", "erf_inv"):
    case(f"lax.{_fn}", (U,))(lambda ns, _fn=_fn: getattr(ns.lax, _fn))
case("lax.betainc", (A, X, U))(lambda ns: ns.lax.betainc)
case("grad.igamma", (A, X))(lambda ns: ns.root.grad(lambda a, x: ns.lax.igamma(a, x).sum(), (0, 1)))
case("grad.igammac", (A, X))(lambda ns: ns.root.grad(lambda a, x: ns.lax.igammac(a, x).sum(), (0, 1)))
case("grad.digamma", (A,))(lambda ns: ns.root.grad(lambda a: ns.lax.digamma(a).sum()))
case("grad.polygamma", (A,))(lambda ns: ns.root.grad(
    lambda a: ns.lax.polygamma(ns.numpy.ones_like(a), a).sum()))
case("grad.bessel_i0e", (M,))(lambda ns: ns.root.grad(lambda a: ns.lax.bessel_i0e(a).sum()))
case("grad.bessel_i1e", (M,))(lambda ns: ns.root.grad(lambda a: ns.lax.bessel_i1e(a).sum()))
case("grad.betainc_x", (A, U), rtol=1e-6)(
    lambda ns: ns.root.grad(lambda a, u: ns.lax.betainc(a, a, u).sum(), 1))
case("vmap.igamma", (M + 4, M + 3.5))(lambda ns: ns.root.vmap(ns.lax.igamma))
case("vmap.betainc", (A, M + 3.5, U))(lambda ns: ns.root.vmap(ns.lax.betainc, (None, 0, None)))



# -- random samplers (bit-exact): raw uint32[2] keys, accepted by both libraries -------------------

K0 = np.array([0, 42], np.uint32)
K1 = np.array([7, 1234567], np.uint32)
P3 = np.array([0.2, 0.3, 0.5], f32)
_samplers = {
    "gamma": (lambda R, k, a: R.gamma(k, a), (A,)),
    "gamma_shape": (lambda R, k, a: R.gamma(k, a[0], (2, 3)), (A,)),
    "loggamma": (lambda R, k, a: R.loggamma(k, a), (A,)),
    "beta": (lambda R, k, a, b: R.beta(k, a, b), (A, X)),
    "dirichlet": (lambda R, k, a: R.dirichlet(k, a, (2,)), (A,)),
    "t": (lambda R, k, a: R.t(k, a), (A,)),
    "chisquare": (lambda R, k, a: R.chisquare(k, a), (A,)),
    "f": (lambda R, k, a, b: R.f(k, a, b), (A, X)),
    "cauchy": (lambda R, k: R.cauchy(k, (3, 2)), ()),
    "pareto": (lambda R, k, a: R.pareto(k, a), (A,)),
    "rademacher": (lambda R, k: R.rademacher(k, (5,)), ()),
    "maxwell": (lambda R, k: R.maxwell(k, (4,)), ()),
    "weibull_min": (lambda R, k, a: R.weibull_min(k, a, a, (4,)), (A,)),
    "generalized_normal": (lambda R, k: R.generalized_normal(k, 1.5, (4,)), ()),
    "ball": (lambda R, k: R.ball(k, 3, 2, (2,)), ()),
    "rayleigh": (lambda R, k, a: R.rayleigh(k, a), (A,)),
    "wald": (lambda R, k, a: R.wald(k, a), (A,)),
    "geometric": (lambda R, k, u: R.geometric(k, u), (U,)),
    "triangular": (lambda R, k: R.triangular(k, 0., 0.3, 1., (5,)), ()),
    "lognormal": (lambda R, k, a: R.lognormal(k, a), (A,)),
    "poisson": (lambda R, k, a: R.poisson(k, a * 3), (A,)),
    "binomial": (lambda R, k, a, u: R.binomial(k, a * 10, u), (A, U)),
    "multinomial": (lambda R, k, p: R.multinomial(k, 20., p), (P3,)),
    "clone": (lambda R, k: R.normal(R.clone(R.wrap_key_data(k)), (2,)), ()),
    "exponential_f16": (lambda R, k: R.exponential(k, (3,), np.float16), ()),
    "gamma_f16": (lambda R, k, a: R.gamma(k, a, dtype=np.float16), (A,)),
    "gumbel_high": (lambda R, k: R.gumbel(k, (3,), mode="high"), ()),
    "vmap_gamma": (lambda R, k, a: ns_vmap(R)(lambda kk: R.gamma(kk, a))(R.split(k, 3)), (A,)),
}
for _name, (_fn, _args) in _samplers.items():
    case(f"random.{_name}", (K0,) + _args, exact=True, more_args=[(K1,) + _args])(
        lambda ns, _fn=_fn: (lambda k, *a: _fn(ns.random, k, *a)))
case("grad.gamma", (K0, A))(lambda ns: ns.root.grad(lambda k, a: ns.random.gamma(k, a).sum(), 1))
case("grad.loggamma", (K0, A))(lambda ns: ns.root.grad(
    lambda k, a: ns.random.loggamma(k, a).sum(), 1))



# -- nn and nn.initializers ---------------------------------------------------------------------

_rng = np.random.RandomState(0)
Q = _rng.randn(2, 4, 4, 8).astype(f32)
KV = _rng.randn(2, 5, 2, 8).astype(f32)
BIAS = _rng.randn(2, 4, 4, 5).astype(f32)
MASK = _rng.rand(2, 4, 4, 5) > 0.3
for _fn in ("identity", "sparse_plus", "sparse_sigmoid", "glu", "log1mexp"):
    case(f"nn.{_fn}", (np.abs(M) + 0.1,))(lambda ns, _fn=_fn: getattr(ns.nn, _fn))
case("nn.logmeanexp", (M,))(lambda ns: lambda x: ns.nn.logmeanexp(x, axis=1))
case("nn.logmeanexp_where", (M, M > 0))(lambda ns: lambda x, w: ns.nn.logmeanexp(x, where=w))
case("grad.log1mexp", (np.abs(M) + 0.1,))(lambda ns: ns.root.grad(lambda x: ns.nn.log1mexp(x).sum()))
case("nn.dot_product_attention", (Q, KV, KV), rtol=1e-5, atol=1e-5)(
    lambda ns: ns.nn.dot_product_attention)
case("nn.dot_product_attention_bias_mask", (Q, KV, KV, BIAS, MASK), rtol=1e-5, atol=1e-5)(
    lambda ns: ns.nn.dot_product_attention)
case("nn.dot_product_attention_causal", (Q, KV, KV), rtol=1e-5, atol=1e-5)(
    lambda ns: lambda q, k, v: ns.nn.dot_product_attention(q, k, v, is_causal=True,
                                                           local_window_size=(1, 0)))
case("nn.dot_product_attention_seqlen", (Q, KV, KV), rtol=1e-5, atol=1e-5)(
    lambda ns: lambda q, k, v: ns.nn.dot_product_attention(
        q, k, v, query_seq_lengths=np.array([2, 4], np.int32),
        key_value_seq_lengths=np.array([3, 5], np.int32)))
_inits = {
    "glorot_uniform": lambda I: I.glorot_uniform(), "glorot_normal": lambda I: I.glorot_normal(),
    "lecun_uniform": lambda I: I.lecun_uniform(), "lecun_normal": lambda I: I.lecun_normal(),
    "he_uniform": lambda I: I.he_uniform(), "he_normal": lambda I: I.he_normal(),
    "uniform": lambda I: I.uniform(0.5), "normal": lambda I: I.normal(),
    "truncated_normal": lambda I: I.truncated_normal(),
    "constant": lambda I: I.constant(2.), "zeros": lambda I: I.zeros, "ones": lambda I: I.ones,
    "variance_scaling_fan_out": lambda I: I.variance_scaling(2., "fan_out", "normal"),
    "variance_scaling_conv": lambda I: I.variance_scaling(1., "fan_geo_avg", "uniform",
                                                          in_axis=-2, out_axis=-1),
    "variance_scaling_complex": lambda I: I.variance_scaling(1., "fan_in", "truncated_normal",
                                                             dtype=np.complex64),
}
for _name, _mk in _inits.items():
    case(f"nn.initializers.{_name}", (K0,), exact=True, more_args=[(K1,)])(
        lambda ns, _mk=_mk: (lambda k: _mk(ns.nn_initializers)(k, (3, 2, 4))))



# -- scipy.special and scipy.stats ------------------------------------------------------------------

XS = np.array([-2.5, -0.5, 0.3, 1., 2.5, 7.], f32)
AS = np.array([0.5, 1., 2.5, 7., 30., 3.], f32)
US = np.linspace(0.05, 0.95, 6).astype(f32)
for _fn, _args in {"gammasgn": (XS,), "gamma": (XS,), "loggamma": (AS,), "betaln": (AS, AS + 9),
                   "beta": (AS, XS), "factorial": (AS,), "comb": (AS * 3, AS), "betainc": (AS, AS, US),
                   "gammainc": (AS, AS * 1.2), "gammaincc": (AS, AS * 0.8), "boxcox": (AS, US),
                   "boxcox1p": (AS, US), "kl_div": (US, US[::-1]), "rel_entr": (US, US[::-1]),
                   "zeta": (AS + 1.5, US), "i0": (XS,), "i0e": (XS,), "i1": (XS,), "i1e": (XS,),
                   "poch": (AS, US), "erfcx": (XS,)}.items():
    case(f"scipy.special.{_fn}", _args, rtol=1e-5, atol=1e-6)(
        lambda ns, _fn=_fn: getattr(ns.scipy_special, _fn))
for _fn, _args in {"expi": (XS,), "spence": (AS,), "dawsn": (XS,)}.items():
    case(f"scipy.special.{_fn}", _args, rtol=1e-5, atol=1e-6)(
        lambda ns, _fn=_fn: getattr(ns.scipy_special, _fn))
case("scipy.special.bessel_jn", (AS,), rtol=1e-5)(
    lambda ns: lambda z: ns.scipy_special.bessel_jn(z, v=2))
case("scipy.special.multigammaln", (AS + 3,), rtol=1e-5)(
    lambda ns: lambda a: ns.scipy_special.multigammaln(a, 3))
case("scipy.special.polygamma", (np.array([0, 1, 2, 3, 1, 2], np.int32), AS), rtol=1e-5)(
    lambda ns: ns.scipy_special.polygamma)
case("grad.scipy.special.poch", (AS, US), rtol=1e-5)(
    lambda ns: ns.root.grad(lambda z, m: ns.scipy_special.poch(z, m).sum(), (0, 1)))

_P = {"a": 2.5, "b": 1.5, "df": 3.5, "loc": 0.1, "scale": 1.3, "p": 0.3, "n": 6., "mu": 2.5,
      "beta": 1.5, "kappa": 2., "c": 0.5}
_STATS = {
    "bernoulli": ("logpmf", "pmf", "cdf", "ppf"), "beta": ("logpdf", "cdf", "sf"),
    "betabinom": ("logpmf",), "binom": ("logpmf",), "cauchy": ("logpdf", "cdf", "ppf", "isf"),
    "chi2": ("logpdf", "cdf", "sf"), "expon": ("logpdf", "cdf", "ppf", "logsf"),
    "gamma": ("logpdf", "cdf", "sf"), "gennorm": ("logpdf", "cdf"), "geom": ("logpmf",),
    "gumbel_l": ("logpdf", "logcdf", "ppf", "logsf"), "gumbel_r": ("logpdf", "logcdf", "sf"),
    "laplace": ("logpdf", "cdf"), "logistic": ("logpdf", "cdf", "ppf", "isf"),
    "nbinom": ("logpmf",), "pareto": ("logpdf",), "poisson": ("logpmf", "cdf"),
    "t": ("logpdf",), "truncnorm": ("logpdf", "cdf", "logsf"), "uniform": ("logpdf", "cdf", "ppf"),
    "vonmises": ("logpdf",), "norm": ("logpdf", "cdf", "ppf"),
}
_DISCRETE = ("bernoulli", "betabinom", "binom", "geom", "nbinom", "poisson")


def _stats_program(dist, fn):
    import inspect
    jfn = getattr(getattr(J.scipy_stats, dist), fn)
    params = [n for n, p in inspect.signature(jfn).parameters.items()
              if p.default is inspect.Parameter.empty][1:]
    values = [np.float32(_P.get(n, 0.7)) for n in params]
    if dist == "truncnorm":
        values = [np.float32(-1.), np.float32(2.)]
    x = np.array([0., 1., 2., 3., 5.], f32) if dist in _DISCRETE and "pmf" in fn else US
    # Parameters are traced arguments (as in a real program), not constants to fold.
    return (lambda ns: getattr(getattr(ns.scipy_stats, dist), fn)), (x, *values)


for _dist, _fns in _STATS.items():
    for _fn in _fns:
        _prog, _args = _stats_program(_dist, _fn)
        case(f"scipy.stats.{_dist}.{_fn}", _args, rtol=1e-5, atol=1e-6)(_prog)
case("scipy.stats.sem", (M,), rtol=1e-6)(lambda ns: ns.scipy_stats.sem)
case("scipy.stats.dirichlet.logpdf", (np.array([0.2, 0.3, 0.5], f32), np.array([1., 2., 3.], f32)),
     rtol=1e-5)(lambda ns: ns.scipy_stats.dirichlet.logpdf)
case("scipy.stats.multinomial.logpmf", (np.array([1, 2, 3], np.int32), np.int32(6)), rtol=1e-5)(
    lambda ns: lambda x, n: ns.scipy_stats.multinomial.logpmf(x, n, np.array([.2, .3, .5], f32)))


# -- transformed: grad (JAX's linearize: custom_jvp rules, residuals, hoisted loop invariants)
# and vmap (batched jits shared) of the special functions, samplers, nn and stats --------------

_GRAD_VMAP_SPECIAL = {
    "erfcx": (XS,), "dawsn": (XS,), "expi": (AS,), "gamma": (XS,), "loggamma": (AS,),
    "i0": (XS,), "i1": (XS,), "i0e": (XS,), "i1e": (XS,), "gammaln": (AS,), "digamma": (AS,),
    "ndtri": (US,), "log_ndtr": (XS,), "ndtr": (XS,), "entr": (US,), "logit": (US,),
    "expit": (XS,), "xlogy": (XS, AS), "xlog1py": (XS, AS)}
for _fn, _args in _GRAD_VMAP_SPECIAL.items():
    case(f"grad.scipy.special.{_fn}", _args)(lambda ns, _fn=_fn: ns.root.grad(
        lambda *a: getattr(ns.scipy_special, _fn)(*a).sum()))
    case(f"vmap.scipy.special.{_fn}", tuple(np.stack([a, a[::-1]]) for a in _args))(
        lambda ns, _fn=_fn: ns.root.vmap(getattr(ns.scipy_special, _fn)))
case("grad.random.beta", (K0, A, A + 1))(lambda ns: ns.root.grad(
    lambda k, a, b: ns.random.beta(k, a, b).sum(), (1, 2)))
case("grad.random.dirichlet", (K0, A))(lambda ns: ns.root.grad(
    lambda k, a: ns.random.dirichlet(k, a).sum(), 1))
case("grad.random.chisquare", (K0, A))(lambda ns: ns.root.grad(
    lambda k, a: ns.random.chisquare(k, a).sum(), 1))
case("grad.random.t", (K0, A))(lambda ns: ns.root.grad(lambda k, a: ns.random.t(k, a).sum(), 1))
case("grad.nn.dot_product_attention", (Q, KV, KV))(lambda ns: ns.root.grad(
    lambda q, k, v: ns.nn.dot_product_attention(q, k, v).sum(), (0, 1, 2)))
case("grad.nn.logmeanexp", (M,))(lambda ns: ns.root.grad(lambda x: ns.nn.logmeanexp(x)))
case("grad.scipy.stats.t.logpdf", (US, f32(3.5)))(lambda ns: ns.root.grad(
    lambda x, d: ns.scipy_stats.t.logpdf(x, d).sum(), (0, 1)))
case("grad.scipy.stats.gamma.cdf", (US, f32(2.5)))(lambda ns: ns.root.grad(
    lambda x, a: ns.scipy_stats.gamma.cdf(x, a).sum(), (0, 1)))
case("grad.scipy.stats.beta.logpdf", (US, f32(2.5), f32(1.5)))(lambda ns: ns.root.grad(
    lambda x, a, b: ns.scipy_stats.beta.logpdf(x, a, b).sum(), (0, 1, 2)))
case("grad.scipy.stats.norm.cdf", (US,))(lambda ns: ns.root.grad(
    lambda x: ns.scipy_stats.norm.cdf(x).sum()))
case("grad.scipy.stats.norm.ppf", (US,))(lambda ns: ns.root.grad(
    lambda x: ns.scipy_stats.norm.ppf(x).sum()))
case("vmap.scipy.stats.poisson.logpmf", (np.stack([US * 5, US * 3]), f32(2.5)))(
    lambda ns: ns.root.vmap(ns.scipy_stats.poisson.logpmf, (0, None)))


def ns_vmap(random_module):
    return traxla.vmap if random_module.__name__.startswith("traxla") else jax.vmap


def _names():
    return list(CORPUS)


def _texts(name):
    program, args, *_ = CORPUS[name]
    return (str(jax.make_jaxpr(program(J))(*args)), str(traxla.make_jaxpr(program(T))(*args)))


GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "random_scipy_outputs.npz")
# JAX's outputs where they differ from GOLDEN on another processor (XLA's CPU code differs in
# the last bit between processors), keyed by the processor: there JAX's output is the reference,
# stored so that its programs are not compiled live. Add this processor's entries (JAX only, no
# traxla): ``python tests/test_random_scipy_corpus.py --store-cpu``.
GOLDEN_BY_CPU = os.path.join(os.path.dirname(__file__), "golden", "random_scipy_outputs_by_cpu.npz")


def _cpu_key():
    """This processor, as XLA's CPU code generation sees it: its model and feature flags."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = {line for line in f.read().splitlines()
                     if line.startswith(("model name", "flags"))}
    except OSError:
        return None
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()[:16] if lines else None


def _arg_sets(name):
    _, args, *_, more = CORPUS[name]
    return (args,) + more


# Outputs are compared for these programs (compiling costs ~0.25 CPU-s a program): every sampler
# (bit-exact), the nn programs and a sample of the scipy ones. The special-function primitives and
# their gradients (whose jaxprs match JAX's) are checked against SciPy and finite differences in
# test_random_scipy_numerics.py.
_SCIPY_NUMERIC = ("scipy.special.gammainc", "scipy.special.betainc", "scipy.special.zeta",
                  "scipy.special.i1", "scipy.stats.t.logpdf", "scipy.stats.gamma.cdf",
                  "scipy.stats.beta.cdf", "scipy.stats.poisson.cdf", "scipy.stats.chi2.sf")


def _numeric_names():
    return [n for n in _names() if not n.startswith(("scipy.", "grad.", "lax.", "vmap."))
            or n in _SCIPY_NUMERIC]


def _run_all(ns, jit, only=None):
    """Every program (or those named in ``only``), every argument set, as one jitted group
    (one compile: compiling dominates the cost, and the argument sets share shapes)."""
    names = [n for n in _numeric_names() if only is None or n in only]
    fns = [CORPUS[n][0](ns) for n in names]
    arity = [len(CORPUS[n][1]) for n in names]

    def group(*flat):
        outs, i = [], 0
        for fn, k in zip(fns, arity):
            outs.append(fn(*flat[i:i + k]))
            i += k
        return outs

    compiled = jit(group)
    results = {}
    for k in range(max(len(_arg_sets(n)) for n in names)):
        sets = [_arg_sets(n)[min(k, len(_arg_sets(n)) - 1)] for n in names]
        outs = compiled(*[a for args in sets for a in args])
        for n, o in zip(names, outs):
            if k < len(_arg_sets(n)):
                results[f"{n}|{k}"] = [np.asarray(x) for x in leaves(o)]
    return results


def _store_cpu_outputs():
    """JAX's outputs on this processor that differ from GOLDEN, under this processor's key
    (the other processors' entries kept)."""
    cpu = _cpu_key()
    golden = np.load(GOLDEN)
    kept = {}
    if os.path.exists(GOLDEN_BY_CPU):
        kept = {k: v for k, v in np.load(GOLDEN_BY_CPU).items() if not k.startswith(f"{cpu}|")}
    for key, values in _run_all(J, jax.jit).items():
        if any(not np.array_equal(v, golden[f"{key}|{i}"], equal_nan=True)
               for i, v in enumerate(values)):
            kept.update({f"{cpu}|{key}|{i}": v for i, v in enumerate(values)})
    np.savez_compressed(GOLDEN_BY_CPU, **kept)


def _write_golden():
    """JAX's outputs, stored: compiling the corpus twice (JAX and traxla) costs too much CPU
    for every test run. Regenerate with ``python tests/test_random_scipy_corpus.py --regen``."""
    results = _run_all(J, jax.jit)
    flat = {f"{key}|{i}": v for key, vs in results.items() for i, v in enumerate(vs)}
    os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
    np.savez_compressed(GOLDEN, **flat)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    reason=KNOWN_DIFFERENCES[n], strict=True))
    if n in KNOWN_DIFFERENCES else n for n in _names()])
def test_jaxpr_text_matches_jax(name):
    want, got = _texts(name)
    assert got == want


def test_outputs_match_jax():
    """Each program's outputs against JAX 0.10.2's (stored), bit-exact for the samplers."""
    golden = np.load(GOLDEN)
    by_cpu = np.load(GOLDEN_BY_CPU) if os.path.exists(GOLDEN_BY_CPU) else None
    cpu = _cpu_key()
    got = _run_all(T, traxla.jit)
    differing = []  # JAX runs here only the programs whose stored output differs
    for key, values in got.items():
        name = key.split("|")[0]
        _, _, exact, rtol, atol, _ = CORPUS[name]
        want = []
        while f"{key}|{len(want)}" in golden.files:
            want.append(golden[f"{key}|{len(want)}"])
        if by_cpu is not None and f"{cpu}|{key}|0" in by_cpu.files:
            # JAX's output on this processor differs from GOLDEN's: it is the reference
            want = [by_cpu[f"{cpu}|{key}|{i}"] for i in range(len(want))]
        assert want, f"{key}: no stored JAX output; run tests/test_random_scipy_corpus.py --regen"
        tol = (0, 0) if exact else (rtol, atol)
        try:
            compare_outputs(key, values, want, *tol)
        except AssertionError:
            differing.append((key, values, tol))
    if differing:
        # XLA's CPU code differs in the last bit between processors (the stored outputs are
        # from another machine): then JAX's output on this machine is the reference.
        live = _run_all(J, jax.jit, only={key.split("|")[0] for key, _, _ in differing})
        for key, values, tol in differing:
            compare_outputs(key, values, live[key], *tol)


if __name__ == "__main__":
    if "--regen" in sys.argv:
        _write_golden()
    elif "--store-cpu" in sys.argv:
        _store_cpu_outputs()
    else:
        print_differences({n: n for n in CORPUS}, KNOWN_DIFFERENCES, _texts, sys.argv[1:])

"""Differential corpus (issue #16b): special-function primitives, random samplers, nn,
nn.initializers and scipy programs, each written once against a namespace ``ns`` (traxla's
modules or JAX's) and compared with JAX: ``make_jaxpr`` text and the jitted outputs (bit-exact
for the random samplers: ``rtol=atol=0``).

Run ``python tests/test_random_scipy_corpus.py [name-substring ...]`` to print the two jaxprs
of every differing program.
"""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from _corpus import compare_outputs, print_differences, run_group
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
    for name in ("lax", "numpy", "random", "nn", "scipy.special", "scipy.stats", "nn.initializers"):
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


def case(name, args, exact=False, rtol=2e-6, atol=2e-6):
    def register(program):
        CORPUS[name] = (program, args, exact, rtol, atol)
        return program
    return register


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


def _names():
    return list(CORPUS)


def _texts(name):
    program, args, *_ = CORPUS[name]
    return (str(jax.make_jaxpr(program(J))(*args)), str(traxla.make_jaxpr(program(T))(*args)))


@pytest.mark.parametrize("name", _names())
def test_jaxpr_text_matches_jax(name):
    want, got = _texts(name)
    assert got == want


def test_outputs_match_jax():
    """All programs run as one jitted group per library (one compile each)."""
    names = _names()
    fns_t = [CORPUS[n][0](T) for n in names]
    fns_j = [CORPUS[n][0](J) for n in names]
    args = [CORPUS[n][1] for n in names]
    got = run_group(fns_t, args, traxla.jit)
    want = run_group(fns_j, args, jax.jit)
    for name, g, w in zip(names, got, want):
        _, _, exact, rtol, atol = CORPUS[name]
        compare_outputs(name, g, w, 0 if exact else rtol, 0 if exact else atol)


if __name__ == "__main__":
    print_differences({n: n for n in CORPUS}, {}, _texts, sys.argv[1:])

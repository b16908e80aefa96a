"""``lax.custom_linear_solve`` and ``lax.custom_root`` against JAX: values, gradients by
implicit differentiation, forward-mode Jacobians and vmap."""
from __future__ import annotations

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import lax as tlax

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

_rng = np.random.default_rng(0)
A = (_rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
B = _rng.standard_normal(3).astype(np.float32)


def _linear(ns, lax_):
    def f(a, b):
        return lax_.custom_linear_solve(lambda x: ns.dot(a, x), b,
                                        lambda mv, x: ns.linalg.solve(a, x),
                                        lambda vm, x: ns.linalg.solve(a.T, x))
    return f


def _symmetric(ns, lax_):
    def f(a, b):
        s = a @ a.T
        return lax_.custom_linear_solve(lambda x: ns.dot(s, x), b,
                                        lambda mv, x: ns.linalg.solve(s, x), symmetric=True)
    return f


def _root(ns, lax_):
    def f(c):
        return lax_.custom_root(lambda x: x * x - c, ns.ones_like(c),
                                lambda g, x0: lax_.fori_loop(0, 20, lambda i, x: x - g(x) / (2 * x), x0),
                                lambda g, y: y / g(1.0))
    return f


@pytest.mark.parametrize("make", [_linear, _symmetric])
def test_custom_linear_solve_matches_jax(make):
    ft, fj = make(tnp, tlax), make(jnp, jax.lax)
    bs = np.stack([B, 2 * B])

    def program(ns, f, grad, jvp, vmap):
        # value, reverse mode (implicit: transpose_solve), forward mode and vmap at once
        g = grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(A, B)
        t = jvp(f, (A, B), (A.T, B))[1]
        return [f(A, B), *g, t, vmap(f, in_axes=(None, 0))(A, bs)]

    got = traxla.jit(lambda: program(tnp, ft, traxla.grad, traxla.jvp, traxla.vmap))()
    want = jax.jit(lambda: program(jnp, fj, jax.grad, jax.jvp, jax.vmap))()
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)


def test_custom_root_value_and_implicit_gradient():
    ft, fj = _root(tnp, tlax), _root(jnp, jax.lax)
    c = np.float32(2.0)
    got = traxla.jit(lambda c: (ft(c), traxla.grad(ft)(c)))(c)
    want = jax.jit(lambda c: (fj(c), jax.grad(fj)(c)))(c)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got[1], 0.5 / np.sqrt(2.0), rtol=1e-6)


def test_custom_linear_solve_errors_as_jax():
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b"):
        tlax.custom_linear_solve(lambda x: x, B, lambda mv, x: x[:2])
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
        traxla.grad(lambda b: tlax.custom_linear_solve(lambda x: 2 * x, b,
                                                       lambda mv, x: x / 2).sum())(B)

"""vmap of custom_jvp / custom_vjp functions (``traxla/autodiff/custom_batch.py``): an
output that does not depend on a batched input stays unbatched, as in JAX (equinox's
loops refuse a batched step counter), and the rules batch alike; compared with JAX."""
from __future__ import annotations

import numpy as np
import pytest

import traxla

jax = pytest.importorskip("jax")


def _programs(ns):
    """custom_jvp ``f`` (an int output), custom_vjp ``g`` and programs vmapping them."""
    @ns.custom_jvp
    def f(x, n):
        return x * 2.0, n + 1

    @f.defjvp
    def f_jvp(p, t):
        (x, n), (tx, tn) = p, t
        return f(x, n), (tx * 2.0, tn)

    @ns.custom_vjp
    def g(x, y):
        return x * y, y + 1.0

    def g_bwd(r, ct):
        (x, y), (a, b) = r, ct
        return a * y, a * x + b
    g.defvjp(lambda x, y: (g(x, y), (x, y)), g_bwd)

    def h(x):
        a, n = f(x, 3)
        b, c = g(a, 2.0)
        return b, n, c

    def k(y, x):
        b, c = g(x, y)
        return (b + c).sum()
    xs = np.arange(3.0, dtype=np.float32)
    return {
        "vmap": lambda: ns.vmap(h)(xs),
        "vmap_jit": lambda: ns.vmap(ns.jit(h))(xs),
        "vmap_grad": lambda: ns.vmap(ns.grad(lambda x: h(x)[0]))(xs),
        "grad_vmap": lambda: ns.grad(lambda x: ns.vmap(h)(x)[0].sum())(xs),
        # the cotangent of an unbatched input is summed over the batch
        "grad_unbatched": lambda: ns.grad(
            lambda y: ns.vmap(k, in_axes=(None, 0))(y, xs).sum())(2.0),
        "vmap_grad_unbatched": lambda: ns.vmap(ns.grad(k), in_axes=(None, 0))(2.0, xs),
        "vmap_jvp": lambda: ns.vmap(lambda x: ns.jvp(lambda x: f(x, 3), (x,), (1.0,)))(xs),
        "jaxpr": lambda: str(ns.make_jaxpr(ns.vmap(h))(xs)),
    }


@pytest.mark.parametrize("name", list(_programs(traxla)))
def test_custom_functions_batched_as_jax(name):
    got, want = _programs(traxla)[name](), _programs(jax)[name]()
    if name == "jaxpr":  # n + 1 on the unbatched 3 stays an unbatched i32[]
        assert got == want
        return
    assert str(traxla.tree_util.tree_structure(got)) == str(jax.tree_util.tree_structure(want))
    for a, b in zip(traxla.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        if np.asarray(b).dtype != jax.dtypes.float0:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_linear_transpose_through_a_custom_jvp_function():
    # lineax's FunctionLinearOperator.transpose: linear_transpose of a function calling a
    # custom_jvp function transposes its primal function, as JAX does
    def run(ns):
        @ns.custom_jvp
        def f(x, c):
            return x * c

        @f.defjvp
        def f_jvp(p, t):
            return f(*p), t[0] * p[1]
        c = np.array([2.0, 3.0], np.float32)
        g = lambda x: f(x, c) + x  # noqa: E731
        t = ns.linear_transpose(g, np.ones(2, np.float32))
        return t(np.array([1.0, 5.0], np.float32)), ns.jit(t)(np.array([1.0, 5.0], np.float32))
    for a, b in zip(run(traxla), run(jax)):
        np.testing.assert_allclose(np.asarray(a[0]), np.asarray(b[0]))

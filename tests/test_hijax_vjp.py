"""``jax.experimental.hijax.VJPHiPrimitive`` (JAX's new-style hijax primitive, the page
``new_docs/301/custom-derivatives``): the same classes defined on JAX and on traxla give
the same values eagerly, under jit (and the same jaxpr), jvp, grad (its vjp rules, with
accumulators and symbolic-zero knowledge), linearize (its lin rules) and vmap (its
batch_dim_rule, or a batch rule of its own)."""
from __future__ import annotations

import jax
import jax.experimental.hijax as jax_hjx
import numpy as np
import pytest

import traxla
import traxla.experimental.hijax as tx_hjx


def make(jx, hjx):
    jnp = jx.numpy

    class SinTimesY(hjx.VJPHiPrimitive):
        def __init__(self, x_aval, y_aval):
            self.in_avals, self.out_aval, self.params = (x_aval, y_aval), x_aval, {}
            super().__init__()

        def expand(self, x, y):
            return jnp.sin(x) * y

        def vjp_fwd(self, nzs_in, x, y):
            x_nz, y_nz = nzs_in
            return self(x, y), (jnp.cos(x) if x_nz else None, jnp.sin(x), y)

        def vjp_bwd_retval(self, res, g):
            cos_x, sin_x, y = res
            return (None if cos_x is None else cos_x * g * y, sin_x * g)

        def jvp(self, primals, tangents):
            (x, y), (x_dot, y_dot) = primals, tangents
            return self(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot

        def lin(self, nzs_in, x, y):
            return self(x, y), (jnp.cos(x) * y, jnp.sin(x))

        def linearized(self, res, x_dot, y_dot):
            return res[0] * x_dot + res[1] * y_dot

        def batch_dim_rule(self, axis_data, in_dims):
            x_dim, y_dim = in_dims
            return y_dim if x_dim is None else x_dim

    class TakeElt(hjx.VJPHiPrimitive):  # vjp_bwd with accumulators, a pytree output
        def __init__(self, x_aval, i):
            self.in_avals = (x_aval,)
            self.out_aval = {"v": hjx.ShapedArray((), x_aval.dtype), "w": x_aval}
            self.params = dict(i=i)
            super().__init__()

        def expand(self, x):
            return {"v": x[self.i], "w": 2. * x}

        def vjp_fwd(self, nzs_in, x):
            return self(x), None

        def vjp_bwd(self, res, g, x_acc):
            x_acc.accum(jnp.zeros(x_acc.aval.shape, x_acc.aval.dtype).at[self.i].add(g["v"]))
            x_acc.accum(2. * g["w"])

    def f(x, y):
        return SinTimesY(jx.typeof(x), jx.typeof(y))(x, y)

    def take(x, i):
        return TakeElt(jx.typeof(x), i)(x)
    return f, take


F = {"jax": make(jax, jax_hjx), "traxla": make(traxla, tx_hjx)}


def _both(run):
    want, got = run(jax, *F["jax"]), run(traxla, *F["traxla"])
    for w, g in zip(jax.tree.leaves(want), traxla.tree.leaves(got)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    return want, got


def test_eager_jit_jvp_grad_linearize_vmap_match_jax():
    xs = np.arange(3., dtype=np.float32)

    def run(jx, f, take):
        return (f(2., 3.), jx.jit(f)(2., 3.), jx.jvp(f, (2., 3.), (1., .5)),
                jx.grad(f, (0, 1))(2., 3.), jx.linearize(f, 2., 3.)[1](1., .5),
                jx.vmap(f)(xs, xs + 1.), jx.vmap(jx.grad(f))(xs, xs + 1.),
                jx.grad(lambda xs: jx.vmap(f, (0, None))(xs, 2.).sum())(xs),
                jx.grad(lambda x: (lambda o: o["v"] + o["w"].sum())(take(x, 1)))(xs))
    _both(run)


def test_jaxprs_match_jax():
    for fun in (lambda jx, f, take: jx.jit(f).trace(2., 3.).jaxpr,
                lambda jx, f, take: jx.jit(jx.grad(f)).trace(2., 3.).jaxpr):
        assert str(fun(traxla, *F["traxla"])) == str(fun(jax, *F["jax"]))


def test_missing_rules_and_bad_subclasses_raise_as_in_jax():
    for jx, hjx in ((jax, jax_hjx), (traxla, tx_hjx)):
        class OnlyExpand(hjx.VJPHiPrimitive):
            def __init__(self, aval):
                self.in_avals, self.out_aval, self.params = (aval,), aval, {}
                super().__init__()

            def expand(self, x):
                return x * x

        class NoParams(hjx.VJPHiPrimitive):
            def __init__(self):
                self.in_avals, self.out_aval = (), None
                super().__init__()

        g = lambda x: OnlyExpand(jx.typeof(x))(x)  # noqa: E731
        assert float(g(3.)) == 9.
        with pytest.raises(NotImplementedError, match="must implement `vjp_fwd`"):
            jx.grad(g)(3.)
        with pytest.raises(NotImplementedError, match="must implement `jvp`"):
            jx.jvp(g, (3.,), (1.,))
        with pytest.raises(AttributeError, match="should set `self.params`"):
            NoParams()


def test_vjp_args_res_and_opaque_residuals_match_jax():
    """``VJP.args_res``: per argument, the leaves the backward pass keeps as given."""
    def run(jx, *_):
        jnp = jx.numpy
        W, x = jnp.ones((3, 3)), jnp.ones((2, 3))
        _, f1 = jx.vjp(lambda W, x: jnp.tanh(x @ W), W, x)
        _, f2 = jx.vjp(lambda d: jnp.sin(d["a"]) * 2., {"a": jnp.ones(2), "b": 2.})
        return [f1.args_res, len(f1.opaque_residuals), repr(f2.args_res)]
    want, got = run(jax), run(traxla)
    assert want[2] == got[2] == "[(NotNeeded(), NotNeeded())]"
    assert want[1] == got[1]  # (how many others is an implementation detail)
    np.testing.assert_array_equal(got[0][1], want[0][1])


def test_with_refs_skips_unwanted_cotangents_as_jax():
    """``VJP.with_refs``: an input given ``DontWant()`` costs nothing (one dot_general, not
    two)."""
    def run(jx):
        jnp = jx.numpy
        _, f_vjp = jx.vjp(lambda W, x: W @ x, jnp.ones((4, 4)), jnp.ones(4))
        both = jx.make_jaxpr(lambda: f_vjp(jnp.ones(4)))()
        only_w = jx.make_jaxpr(lambda: f_vjp.with_refs(jx.ad.GradValue(), jx.ad.DontWant())(
            jnp.ones(4)))()
        return str(both).count("dot_general"), str(only_w).count("dot_general")
    assert run(traxla) == run(jax) == (2, 1)

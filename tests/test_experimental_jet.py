"""``traxla.experimental.jet`` (Taylor-mode AD) against ``jax.experimental.jet`` on a set of
functions at orders 1-3, against nested ``jvp`` for the derivative terms, and its errors."""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jjnp
from jax import lax as jlax
from jax.experimental import jet as jjet

import traxla
import traxla.numpy as tjnp
from traxla import lax as tlax
from traxla.experimental import jet as tjet

X = np.array([0.3, 0.7, 1.2], np.float32)
TERMS = [np.array([1., -0.5, 0.25], np.float32), np.full(3, 0.5, np.float32),
         np.array([-0.2, 0.1, 0.3], np.float32)]


def _both(make):
    return make(tjnp, tlax, traxla), make(jjnp, jlax, jax)


FUNCTIONS = {
    "exp_log": lambda np_, lax, _: lambda x: np_.exp(x) * np_.log(x),
    "sin_cos": lambda np_, lax, _: lambda x: np_.sin(x) - np_.cos(2 * x),
    "sinh_cosh": lambda np_, lax, _: lambda x: np_.sinh(x) + np_.cosh(x) ** 2,
    "tanh_logistic": lambda np_, lax, j: lambda x: np_.tanh(x) * j.nn.sigmoid(x),
    "pow_sqrt_rsqrt": lambda np_, lax, _: lambda x: x ** 2.5 + np_.sqrt(x) + lax.rsqrt(x),
    "integer_pow_div": lambda np_, lax, _: lambda x: x ** 3 / (1 + x ** 2),
    "erf_expm1_log1p": lambda np_, lax, _: lambda x: lax.erf(x) + np_.expm1(x) * np_.log1p(x),
    "atan2_abs": lambda np_, lax, _: lambda x: np_.arctan2(x, 1 + x) * np_.abs(x - 0.5),
    "max_min_where": lambda np_, lax, _: lambda x: np_.maximum(x, 0.6) * np_.minimum(
        x, np_.full(3, 0.5)) + np_.where(x > 0.5, x ** 2, -x),
    "dot_transpose": lambda np_, lax, _: lambda x: np_.dot(np_.outer(x, x).T, np_.sin(x)),
    "reductions": lambda np_, lax, _: lambda x: np_.sum(x ** 2) * np_.max(np_.exp(x)) +
    np_.min(x),
    "shapes": lambda np_, lax, _: lambda x: np_.concatenate(
        [x[::-1], x[1:] * 2]).reshape(5, 1)[1:4, 0] + np_.broadcast_to(x[0], (3,)),
    "indexing": lambda np_, lax, _: lambda x: x[np_.array([2, 0])] * np_.cumsum(x)[:2] +
    x.at[1].add(x[0])[1:],
    "cumprod": lambda np_, lax, _: lambda x: np_.cumprod(1 + x),
    "jit_inside": lambda np_, lax, j: j.jit(lambda x: np_.sin(x) / (2 + np_.cos(x))),
    "norm": lambda np_, lax, _: lambda x: np_.linalg.norm(x) * x,
}


# (order 3's terms include orders 1 and 2's: the recurrences compute each from the lower ones;
# order 1 on its own checks the shortest series; the staged test below runs order 2)
@pytest.mark.parametrize("order", [1, 3])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jet_matches_jax(name, order, jax_side):
    ours_f, jax_f = _both(FUNCTIONS[name])
    series = (TERMS[:order],)
    p1, s1 = tjet.jet(ours_f, (X,), series)
    p2, s2 = jax_side(lambda: jjet.jet(jax_f, (X,), series))
    np.testing.assert_allclose(p1, p2, rtol=2e-6, atol=1e-6)
    assert len(s1) == len(s2) == order
    for a, b in zip(s1, s2):
        assert np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


# jaxprs differing from JAX's for reasons outside jet: traxla's jnp.minimum converts a weak
# operand before binding min (JAX's rule converts it), jnp.greater binds gt directly (JAX's
# is an inlined jit, whose jet instantiates the zero series of its boolean output)
_JAXPR_DIFFERS = {"max_min_where"}


@pytest.mark.filterwarnings("ignore::traxla.diagnostics.UnrolledLoopWarning")
@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - _JAXPR_DIFFERS))
def test_staged_jet_prints_jaxs_jaxpr(name, jax_side):
    ours_f, jax_f = _both(FUNCTIONS[name])
    ours = traxla.make_jaxpr(lambda x, v, w: tjet.jet(ours_f, (x,), ([v, w],)))(X, X, X)
    theirs = jax_side(lambda: str(jax.make_jaxpr(
        lambda x, v, w: jjet.jet(jax_f, (x,), ([v, w],)))(X, X, X)))
    assert str(ours) == str(theirs)


def test_minimum_with_a_scalar(jax_side):
    """JAX 0.10.2's min rule fails here (it does not broadcast, unlike its max rule); traxla
    broadcasts and gives what JAX gives for the broadcast operand."""
    ours = tjet.jet(lambda x: tjnp.minimum(x, 0.5), (X,), (TERMS[:2],))
    theirs = jax_side(lambda: jax.tree.leaves(
        jjet.jet(lambda x: jjnp.minimum(x, jjnp.full(3, 0.5)), (X,), (TERMS[:2],))))
    for a, b in zip(jax.tree.leaves(ours), theirs):
        np.testing.assert_allclose(a, b)
    ours = tjet.jet(lambda x: tjnp.clip(x, 0.4, 1.0) ** 2, (X,), (TERMS[:2],))
    theirs = jax_side(lambda: jax.tree.leaves(jjet.jet(
        lambda x: jjnp.clip(x, jjnp.full(3, 0.4), jjnp.full(3, 1.)) ** 2, (X,), (TERMS[:2],))))
    for a, b in zip(jax.tree.leaves(ours), theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_terms_are_derivatives_along_a_line():
    """With series (v, 0, 0) the k-th output term is the k-th directional derivative,
    which nested jvp computes too."""
    f = lambda x: tjnp.sin(x) * tjnp.exp(x / 2)  # noqa: E731
    v = np.array([1., 0.5, -1.], np.float32)
    zero = np.zeros(3, np.float32)
    _, (d1, d2, d3) = tjet.jet(f, (X,), ((v, zero, zero),))

    def deriv(g):
        return lambda x: traxla.jvp(g, (x,), (v,))[1]
    np.testing.assert_allclose(d1, deriv(f)(X), rtol=1e-5)
    np.testing.assert_allclose(d2, deriv(deriv(f))(X), rtol=1e-5)
    np.testing.assert_allclose(d3, deriv(deriv(deriv(f)))(X), rtol=1e-4, atol=1e-5)


def test_jet2_several_arguments_pytree_output_and_jit(jax_side):
    def f(np_):
        return lambda x, y: {"a": x * y, "b": (np_.exp(x) + y,)}
    primals = (X, np.float32(2.))
    series = ([TERMS[0], TERMS[1]], [np.float32(1.), np.float32(0.)])
    p1, s1 = traxla.jit(lambda *a: tjet.jet2(f(tjnp), *a))(primals, series)
    structure, leaves = jax_side(lambda: (lambda p2, s2: (
        str(jax.tree.structure(s2)), jax.tree.leaves((p2, s2))))(*jjet.jet2(f(jjnp), primals, series)))
    assert str(jax.tree.structure(s1)) == structure
    for a, b in zip(jax.tree.leaves((p1, s1)), leaves):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_constant_output_and_unused_input(jax_side):
    p1, s1 = tjet.jet(lambda x, y: (x * 0 + 1.0, y), (X, np.float32(1.)),
                      ([TERMS[0]], [np.float32(0.)]))
    theirs = jax_side(lambda: jax.tree.leaves(jjet.jet(
        lambda x, y: (x * 0 + 1.0, y), (X, np.float32(1.)), ([TERMS[0]], [np.float32(0.)]))))
    for a, b in zip(jax.tree.leaves((p1, s1)), theirs):
        np.testing.assert_allclose(a, b)


def test_custom_jvp_and_custom_vjp_expand_the_function_itself(jax_side):
    """JAX's jet means to ignore the custom rules and expand the function itself (its
    process_custom_jvp_call); in JAX 0.10.2 that path raises UnexpectedTracerError (e.g.
    jet of jax.nn.relu), so the reference here is JAX's jet of the undecorated function."""
    @traxla.custom_jvp
    def f(x):
        return tjnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), 100. * t[0]))

    @traxla.custom_vjp
    def g(x):
        return tjnp.exp(x)
    g.defvjp(lambda x: (g(x), x), lambda r, c: (100. * c,))
    p1, s1 = tjet.jet(lambda x: f(x) * g(x), (X,), (TERMS[:2],))
    p2, s2 = jax_side(lambda: jjet.jet(lambda x: jjnp.sin(x) * jjnp.exp(x), (X,), (TERMS[:2],)))
    for a, b in zip([p1, *s1], [p2, *s2]):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    p1, s1 = tjet.jet(traxla.nn.relu, (X - 0.5,), (TERMS[:2],))
    np.testing.assert_allclose(p1, np.maximum(X - 0.5, 0))
    np.testing.assert_allclose(s1[0], np.where(X > 0.5, TERMS[0], 0))


def test_primitive_without_rule_raises_keyerror_as_jax(jax_side):
    def f(lax, np_):
        return lambda x: lax.cond(x[0] > 0, np_.sin, np_.cos, x)
    assert jax_side.raises(lambda: jjet.jet(f(jlax, jjnp), (X,), ([TERMS[0]],))).type is KeyError
    with pytest.raises(KeyError, match="jet rule for primitive 'cond' not implemented"):
        tjet.jet(f(tlax, tjnp), (X,), ([TERMS[0]],))


def test_bad_series_raise_jaxs_errors():
    with pytest.raises(ValueError, match="jet terms have inconsistent lengths for different "
                                         "arguments"):
        tjet.jet(lambda x, y: x * y, (1., 2.), ([1.], [1., 2.]))
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        tjet.jet(lambda x: x, ((1., 2.),), ([1.],))
    with pytest.raises(ValueError, match="term 0 for argument 0 is not an array"):
        tjet.jet(lambda x: x, (1.,), ([(1., 2.)],))


def test_rule_helpers_extend_the_table(jax_side):
    """def_comp registers a rule as JAX's helper does: tan has none (in JAX neither)."""
    with pytest.raises(KeyError, match="'tan'"):
        tjet.jet(tjnp.tan, (X,), ([TERMS[0]],))
    tjet.def_comp(tlax.tan_p, lambda x: tlax.sin(x) / tlax.cos(x))
    try:
        ours = tjet.jet(tjnp.tan, (X,), (TERMS[:2],))
    finally:
        del tjet.jet_rules[tlax.tan_p]
    theirs = jax_side(lambda: jax.tree.leaves(
        jjet.jet(lambda x: jjnp.sin(x) / jjnp.cos(x), (X,), (TERMS[:2],))))
    for a, b in zip(jax.tree.leaves(ours), theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    assert tlax.sin_p in tjet.jet_rules and tlax.dot_general_p in tjet.jet_rules
    assert float(tjet.fact(3)) == pytest.approx(6.)


def test_jet_under_grad_vmap_and_nested_jet(jax_side):
    def term(jet, np_):
        return lambda x: jet(np_.sin, (x,), ([1., 0.],))[1][1]
    assert float(traxla.grad(term(tjet.jet, tjnp))(0.5)) == pytest.approx(
        jax_side(lambda: float(jax.grad(term(jjet.jet, jjnp))(0.5))), rel=1e-6)
    np.testing.assert_allclose(traxla.vmap(term(tjet.jet, tjnp))(X),
                               jax_side(lambda: jax.vmap(term(jjet.jet, jjnp))(X)), rtol=1e-6)
    ours = tjet.jet(lambda x: tjet.jet(tjnp.sin, (x,), ([1.],))[1][0], (0.5,), ([1.],))
    theirs = jax_side(lambda: jax.tree.leaves(
        jjet.jet(lambda x: jjet.jet(jjnp.sin, (x,), ([1.],))[1][0], (0.5,), ([1.],))))
    for a, b in zip(jax.tree.leaves(ours), theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_module_is_registered_in_api_coverage():
    from traxla.cli.api_coverage import api_coverage
    rows = {label: (have, total, missing, left) for label, have, total, missing, left
            in api_coverage()}
    have, total, missing, left = rows["experimental.jet"]
    assert not missing and have + len(left) == total

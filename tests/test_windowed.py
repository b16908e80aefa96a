"""Windowed reductions and the generic reduce (issue #14): numerics against a direct-loop
reference (hypothesis), pooling gradients against finite differences (float64), vmap
against stacking, and trace-time errors."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import _conv_reference as ref
from test_conv import x64
import traxla
import traxla.lax as tlax

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

MONOIDS = {"sum": (tlax.add, 0.0, np.sum), "max": (tlax.max, -np.inf, np.max),
           "min": (tlax.min, np.inf, np.min)}


@st.composite
def window_cases(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    dims = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    strides = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    base = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    wdil = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    padding = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(nd))
    monoid = draw(st.sampled_from(sorted(MONOIDS) + ["prod", "generic"]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    return shape, dims, strides, padding, base, wdil, monoid, dtype


@hypothesis.settings(max_examples=12, deadline=None)
@hypothesis.given(window_cases(), st.integers(0, 2**31 - 1))
def test_reduce_window_matches_direct_loop_reference(case, seed):
    shape, dims, strides, padding, base, wdil, monoid, dtype = case
    x = np.random.default_rng(seed).uniform(0.5, 1.5, shape).astype(dtype)
    if monoid == "prod":
        op, init, npop = tlax.mul, 1.0, np.prod
    elif monoid == "generic":  # a non-standard monoid: traced into the generic primitive
        op, init, npop = (lambda a, b: tlax.max(a, b) + 0 * b), 0.0, np.max
    else:
        op, init, npop = MONOIDS[monoid]
    with x64():
        got = tlax.reduce_window(x, dtype(init), op, dims, strides, padding, base, wdil)
    want = ref.reduce_window(x, dtype(init), npop, dims, strides, padding, base, wdil)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_generic_reduce_and_monoid_detection():
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    text = str(traxla.make_jaxpr(lambda x: tlax.reduce(x, -np.inf, tlax.max, (0,)))(x))
    assert "reduce_max[axes=(0,)]" in text
    got = tlax.reduce(x, 1.0, lambda a, b: a * b * 1.0, (1,))
    np.testing.assert_allclose(np.asarray(got), np.prod(x, 1), rtol=1e-6)
    a, b = tlax.reduce((x, x), (0.0, -np.inf), lambda p, q: (p[0] + q[0], tlax.max(p[1], q[1])),
                       (0,))
    np.testing.assert_allclose(np.asarray(a), x.sum(0))
    np.testing.assert_allclose(np.asarray(b), x.max(0))
    t = traxla.jvp(lambda x: tlax.reduce(x, 1.0, lambda a, b: a * b * 1.0, (1,)), (x,),
                   (np.ones_like(x),))[1]
    np.testing.assert_allclose(np.asarray(t), np.prod(x, 1) * np.sum(1 / x, 1), rtol=1e-5)
    v = traxla.vmap(lambda x: tlax.reduce(x, 1.0, lambda a, b: a * b * 1.0, (0,)))(x)
    np.testing.assert_allclose(np.asarray(v), np.prod(x, 1), rtol=1e-6)


def _max_pool(x):
    return tlax.reduce_window(x, -np.inf, tlax.max, (1, 2, 2, 1), (1, 2, 1, 1), "SAME")


def _avg_pool(x):
    return tlax.reduce_window(x, 0.0, tlax.add, (1, 3, 2, 1), (1, 1, 2, 1),
                              [(0, 0), (1, 1), (0, 1), (0, 0)]) / 6.0


def _min_pool_base_dilated(x):
    return tlax.reduce_window(x, np.inf, tlax.min, (1, 2, 2, 1), (1, 1, 1, 1), "VALID",
                              (1, 2, 1, 1))


def _sum_pool_dilated(x):
    return tlax.reduce_window(x, 0.0, tlax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID",
                              None, (1, 2, 1, 1))


def _numeric_vjp_check_jitted(f, x, rng, eps, tol=1e-6):
    """test_conv's _numeric_vjp_check for one argument, with f(x +- eps v), the JVP along v
    and the VJP of ct in one jitted program (eagerly, every primitive of the JVP and the
    transposed program compiles on its own)."""
    def run(x, plus, minus, v, ct):
        _, vjp = traxla.vjp(f, x)
        return f(plus), f(minus), traxla.jvp(f, (x,), (v,))[1], vjp(ct)[0]
    with x64():
        ct = rng.standard_normal(traxla.eval_shape(f, x).shape)
        v = rng.standard_normal(x.shape)
        plus, minus, tangent, grad = traxla.jit(run)(x, x + eps * v, x - eps * v, v, ct)
    fd = (np.asarray(plus) - np.asarray(minus)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), fd, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.vdot(np.asarray(grad), v), np.vdot(ct, fd), rtol=tol, atol=tol)


@pytest.mark.parametrize("pool", [_max_pool, _avg_pool, _min_pool_base_dilated,
                                  _sum_pool_dilated])
def test_pooling_gradients_match_finite_differences(pool):
    rng = np.random.default_rng(5)
    x = rng.permutation(2 * 5 * 6 * 2).reshape(2, 5, 6, 2) / 10.0  # distinct: max is unique
    _numeric_vjp_check_jitted(pool, x, rng, eps=1e-4)


def test_max_pool_second_derivative_matches_finite_differences():
    rng = np.random.default_rng(6)
    x = rng.permutation(2 * 4 * 4 * 1).reshape(2, 4, 4, 1) / 10.0

    def g(x):
        return traxla.grad(lambda x: (_max_pool(x) ** 3).sum())(x)
    _numeric_vjp_check_jitted(g, x, rng, eps=1e-4)


@functools.cache
def _pool_and_grad(pool):
    """The pool and its gradient, and their jits: shared by both axes' tests (the unbatched
    programs are the same for both, so they compile once)."""
    grad = traxla.grad(lambda x: (pool(x) ** 2).sum())
    return [(pool, traxla.jit(pool)), (grad, traxla.jit(grad))]


@pytest.mark.parametrize("pool", [_max_pool, _avg_pool])
@pytest.mark.parametrize("axis", [0, 2])
def test_vmap_pooling_and_its_gradient_equal_stacking(pool, axis):
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((3, 2, 5, 6, 2)).astype(np.float32)
    xs = np.moveaxis(xs, 0, axis)
    for f, jitted in _pool_and_grad(pool):
        got = traxla.jit(traxla.vmap(f, in_axes=axis))(xs)  # one program (eagerly: one each)
        want = np.stack([np.asarray(jitted(np.take(xs, i, axis))) for i in range(3)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_windowed_errors_are_clear():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(TypeError, match="wrong number of window_dimensions"):
        tlax.reduce_window(x, 0.0, tlax.add, (2,), (1,), "VALID")
    with pytest.raises(TypeError, match="window_dimensions must have every element be positive"):
        tlax.reduce_window(x, 0.0, tlax.add, (0, 1), (1, 1), "VALID")
    with pytest.raises(TypeError, match="inconsistent dtypes for operands and init_values"):
        tlax.reduce_window(x, np.int32(1), lambda a, b: a * b, (2, 2), (1, 1), "VALID")
    with pytest.raises(ValueError, match="same tree structure"):
        tlax.reduce_window((x, x), 0.0, tlax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="must have a number dtype"):
        tlax.reduce_window(x > 0, False, tlax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(ValueError, match="non-scalar initial value"):
        tlax.reduce(x, np.ones(2, np.float32), lambda a, b: a * b, (0,))
    # a window larger than the (padded) operand gives an empty result, as in JAX
    assert tlax.reduce_window(x, -np.inf, tlax.max, (5, 1), (1, 1), "VALID").shape == (0, 4)

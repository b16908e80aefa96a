"""``traxla.experimental.ode.odeint`` against ``jax.experimental.ode.odeint`` (values and
gradients), analytic solutions, finite differences, pytree states, jit and vmap. JAX's side
is stored (tests/_jax_stored.py): each JAX solve compiles its own programs, seconds each."""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jjnp
from jax.experimental import ode as jode

import traxla
import traxla.numpy as tjnp
from traxla.experimental import ode as tode


def _decay(y, t, k):
    return -k * y



def _osc(np_mod):
    return lambda y, t: np_mod.stack([y[1], -y[0]])


def _forced(np_mod):
    return lambda y, t, a, b: -a * y + b * np_mod.sin(t)


T = np.array([0., 0.3, 0.8, 1.5], np.float32)


def test_exponential_decay_matches_analytic_and_jax(jax_side):
    y0 = np.array([1., -2., 0.5], np.float32)
    k = np.float32(0.7)
    ours = np.asarray(tode.odeint(_decay, y0, T, k))
    assert ours.shape == (4, 3) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, np.exp(-0.7 * T)[:, None] * y0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours, jax_side(lambda: jode.odeint(_decay, y0, T, k)),
                               rtol=1e-6, atol=1e-7)


def test_harmonic_oscillator_float64_and_tolerances(jax_side):
    t = np.linspace(0., 3., 5)
    y0 = np.array([1., 0.])

    def theirs():
        with jax.enable_x64():
            return jode.odeint(_osc(jjnp), y0, t, rtol=1e-10, atol=1e-10)
    theirs = jax_side(theirs)
    assert theirs.dtype == np.float64
    with traxla.enable_x64():
        ours = tode.odeint(_osc(tjnp), y0, t, rtol=1e-10, atol=1e-10)
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours[:, 0], np.cos(t), atol=1e-8)
    np.testing.assert_allclose(ours[:, 1], -np.sin(t), atol=1e-8)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)


def test_pytree_state_args_and_jit(jax_side):
    def f(np_mod):
        return lambda s, t, a: {"x": s["v"], "v": -a * s["x"] - 0.1 * s["v"]}
    y0 = {"x": np.float32(1.), "v": np.float32(0.5)}
    a = np.float32(2.)
    ours = traxla.jit(lambda y0, a: tode.odeint(f(tjnp), y0, T, a))(y0, a)
    theirs = jax_side(lambda: jode.odeint(f(jjnp), y0, T, a))
    assert set(ours) == {"x", "v"} and ours["x"].shape == (4,)
    for name in ("x", "v"):
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6, atol=1e-6)


def test_several_args_and_mxstep_hmax(jax_side):
    y0 = np.array([1.], np.float32)
    args = (np.float32(0.5), np.float32(2.))
    ours = tode.odeint(_forced(tjnp), y0, T, *args, rtol=1e-5, atol=1e-5, hmax=0.05)
    theirs = jax_side(lambda: jode.odeint(_forced(jjnp), y0, T, *args, rtol=1e-5, atol=1e-5,
                                          hmax=0.05))
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    # mxstep stops each interval early, as JAX's does (the same truncated values)
    ours = tode.odeint(_forced(tjnp), y0, T, *args, mxstep=2)
    theirs = jax_side(lambda: jode.odeint(_forced(jjnp), y0, T, *args, mxstep=2))
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


def test_grad_matches_jax(jax_side):
    y0 = np.array([1., 2.], np.float32)
    args = (np.float32(0.5), np.float32(2.))

    def loss(odeint, np_mod):
        return lambda y0, t, a, b: np_mod.sum(odeint(_forced(np_mod), y0, t, a, b) ** 2)
    ours = traxla.grad(loss(tode.odeint, tjnp), (0, 1, 2, 3))(y0, T, *args)
    theirs = jax_side(lambda: jax.grad(loss(jode.odeint, jjnp), (0, 1, 2, 3))(y0, T, *args))
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def test_grad_float64_matches_finite_differences():
    t = np.array([0., 0.5, 1.])
    y0 = np.array([1., 0.3])

    def f(y, t, k):
        return tjnp.stack([y[1], -k * tjnp.sin(y[0])])

    @traxla.jit  # one program for the six finite-difference evaluations (op by op, the
    def loss(y0, k):  # slice, power and sum compiled one each, and the solver twice)
        return tjnp.sum(tode.odeint(f, y0, t, k, rtol=1e-10, atol=1e-10)[-1] ** 2)
    with traxla.enable_x64():
        g_y0, g_k = traxla.grad(loss, (0, 1))(y0, 1.5)
        eps = 1e-6
        fd_k = (loss(y0, 1.5 + eps) - loss(y0, 1.5 - eps)) / (2 * eps)
        fd_y0 = [(loss(y0 + eps * e, 1.5) - loss(y0 - eps * e, 1.5)) / (2 * eps)
                 for e in np.eye(2)]
    np.testing.assert_allclose(g_k, fd_k, rtol=1e-6)
    np.testing.assert_allclose(g_y0, fd_y0, rtol=1e-6)


def test_vmap_over_initial_conditions_equals_stacking():
    y0s = np.array([[1., 0.], [0., 1.], [2., -1.]], np.float32)
    t = T[:3]
    osc = _osc(tjnp)  # one function: the stacked solves share one compiled solver
    batched = traxla.vmap(lambda y0: tode.odeint(osc, y0, t))(y0s)
    stacked = np.stack([np.asarray(tode.odeint(osc, y0, t)) for y0 in y0s])
    assert batched.shape == (3, 3, 2)
    np.testing.assert_allclose(batched, stacked, rtol=1e-6, atol=1e-6)


def test_closure_over_traced_values_is_differentiated(jax_side):
    y0 = np.array([1.], np.float32)

    def loss(odeint, k):
        return odeint(lambda y, t: -k * y, y0, T)[-1, 0]
    ours = traxla.grad(lambda k: loss(tode.odeint, k))(np.float32(0.4))
    theirs = jax_side(lambda: jax.grad(lambda k: loss(jode.odeint, k))(np.float32(0.4)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    np.testing.assert_allclose(ours, -1.5 * np.exp(-0.4 * 1.5), rtol=1e-4)


def test_bad_inputs_raise_jaxs_errors():
    y0 = np.ones(2, np.float32)
    with pytest.raises(TypeError, match="The contents of odeint \\*args must be arrays or "
                                        "scalars, but got foo."):
        tode.odeint(lambda y, t, s: y, y0, T, "foo")
    with pytest.raises(TypeError, match="t must be an array of floats, but got"):
        tode.odeint(_decay, y0, np.arange(3), 1.)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # 0. ** -0.2, JAX too
def test_helpers_match_jax(jax_side):
    rng = np.random.RandomState(0)
    y0, y1, k = rng.randn(3).astype(np.float32), rng.randn(3).astype(np.float32), \
        rng.randn(7, 3).astype(np.float32)
    dt = np.float32(0.1)
    errs = (0., 0.3, 2.)
    f = lambda y, t: -y  # noqa: E731
    interp, steps, ratio, initial, theirs = jax_side(lambda: (
        jode.interp_fit_dopri(y0, y1, k, dt),
        [jode.optimal_step_size(np.float32(0.1), np.float32(err)) for err in errs],
        jode.mean_error_ratio(y0, 1e-3, 1e-3, y0, y1),
        jode.initial_step_size(f, np.float32(0.), y0, 4, 1e-6, 1e-6, -y0),
        jode.runge_kutta_step(f, y0, -y0, np.float32(0.), dt)))
    np.testing.assert_allclose(tode.interp_fit_dopri(y0, y1, k, dt), interp, rtol=1e-6, atol=1e-6)
    for err, step in zip(errs, steps, strict=True):
        np.testing.assert_allclose(tode.optimal_step_size(np.float32(0.1), np.float32(err)),
                                   step, rtol=1e-6)
    np.testing.assert_allclose(tode.mean_error_ratio(y0, 1e-3, 1e-3, y0, y1), ratio, rtol=1e-6)
    np.testing.assert_allclose(
        tode.initial_step_size(f, np.float32(0.), y0, 4, 1e-6, 1e-6, -y0), initial, rtol=1e-6)
    ours = tode.runge_kutta_step(f, y0, -y0, np.float32(0.), dt)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-7)


def test_module_is_registered_in_api_coverage():
    from traxla.cli.api_coverage import api_coverage
    rows = {label: (have, total, missing, left) for label, have, total, missing, left
            in api_coverage()}
    have, total, missing, left = rows["experimental.ode"]
    assert not missing and have + len(left) == total
    assert {"odeint", "ravel_first_arg", "runge_kutta_step", "optimal_step_size"} <= set(
        dir(tode))


def test_a_second_call_reuses_the_compiled_solver():
    calls = []

    def f(y, t, k):
        calls.append(None)
        return -k * y
    y0 = np.ones(2, np.float32)
    first = tode.odeint(f, y0, T, np.float32(0.5))
    n = len(calls)
    second = tode.odeint(f, 2 * y0, T, np.float32(0.25))  # same types: no new trace
    assert n > 0 and len(calls) == n
    np.testing.assert_allclose(second, 2 * np.exp(-0.25 * T)[:, None] * y0, rtol=1e-5)
    np.testing.assert_allclose(first, np.exp(-0.5 * T)[:, None] * y0, rtol=1e-5)


def test_complex_state_matches_jax(jax_side):
    y0 = np.array([1 + 0j], np.complex64)
    t = T[:3]
    ours = tode.odeint(lambda y, t: 1j * y, y0, t)
    theirs = jax_side(lambda: jode.odeint(lambda y, t: 1j * y, y0, t))
    assert ours.dtype == np.complex64
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours[:, 0], np.exp(1j * t), rtol=1e-5)

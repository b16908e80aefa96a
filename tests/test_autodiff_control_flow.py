"""Differentiating control flow (``traxla/autodiff/control_flow.py``): ``cond`` and
``switch``, ``scan`` (and ``fori_loop`` with static bounds, which is a scan) in both
modes, ``while_loop`` in forward mode only.

- numerical checks in float64 (central finite differences against ``jvp`` and
  ``grad``, and second order: forward-over-reverse and reverse-over-reverse);
- agreement with ``jax.grad`` on the same programs, and under ``jit(grad(f))``,
  ``grad(jit(f))``, ``vmap(grad(f))``;
- reverse mode through ``while`` raises JAX's error;
- the differentiated jaxprs print as JAX's. Where they cannot, the case is listed
  in ``KNOWN_DIFFERENCES`` (one-line reason) and runs as ``xfail(strict=True)``.
  The residual slots of a linearized ``cond`` are padded with ``empty2`` as in JAX.

Each program is written once against ``(np_, lax_)`` and instantiated with
``(traxla.numpy, traxla.lax)`` and ``(jax.numpy, jax.lax)``. Run
``python tests/test_autodiff_control_flow.py [name-substring ...]`` to print the
two jaxprs of differing cases.
"""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

TRAXLA = (traxla, tnp, tlax)
JAX = (jax, jnp, jlax)

F3 = np.array([0.5, -1.25, 2.0], np.float32)
F4 = np.array([0.3, -0.7, 1.1, 0.2], np.float32)
W3 = np.array([0.9, -0.4, 0.6], np.float32)
I1 = np.int32(1)


# -- programs ----------------------------------------------------------------------

def cond_sincos(np_, lax_):
    return lambda x: lax_.cond(x > 0, np_.sin, np_.cos, x)


def cond_linear(np_, lax_):
    return lambda x: lax_.cond(x > 0, lambda v: 2 * v, lambda v: -v, x)


def cond_two_ops(np_, lax_):
    return lambda x, y: lax_.cond(x > y, lambda a, b: a * b, lambda a, b: a + np_.sin(b), x, y)


def cond_zero_branch(np_, lax_):
    return lambda x, y: lax_.cond(x > 0, lambda a, b: a * 2., lambda a, b: b * 1., x, y)


def cond_tuple_out(np_, lax_):
    def f(x):
        a, b = lax_.cond(x > 0, lambda v: (np_.sin(v), v * 3.), lambda v: (v, np_.cos(v)), x)
        return a + b
    return f


def cond_vec_closure(np_, lax_):
    def f(x, w):
        out = lax_.cond(np_.sum(x) > 0, lambda v: v * w, lambda v: np_.exp(v) - w, x)
        return np_.sum(out * out)
    return f


def switch3(np_, lax_):
    def f(x, i):
        return np_.sum(lax_.switch(i, [np_.sin, np_.cos, lambda v: v * v], x))
    return f


def switch_scalar(np_, lax_):
    def f(x, y):
        def g(i):
            return lax_.switch(i, [lambda a, b: a * b, lambda a, b: np_.sin(a) + b,
                                   lambda a, b: a - b * b], x, y)
        return g(0) + g(1) + g(2)
    return f


def scan_basic(np_, lax_):
    def f(c0, xs):
        c, ys = lax_.scan(lambda c, x: (c * np_.sin(x) + x, np_.cos(c) * x), c0, xs)
        return c + np_.sum(ys)
    return f


def scan_reverse(np_, lax_):
    def f(c0, xs):
        c, ys = lax_.scan(lambda c, x: (np_.tanh(c + x), c * x), c0, xs, reverse=True)
        return c * 2. + np_.sum(ys * ys)
    return f


def scan_consts(np_, lax_):
    def f(w, c0, xs):
        def body(c, x):
            return c * np_.sin(w) + x * w, np_.cos(c)
        c, ys = lax_.scan(body, c0, xs)
        return c + np_.sum(ys)
    return f


def scan_pytree(np_, lax_):
    def f(a, b, xs):
        def body(carry, x):
            p, q = carry["p"], carry["q"]
            return {"p": p * q + x, "q": np_.sin(p) - x}, (p * x, q)
        carry, (y1, y2) = lax_.scan(body, {"p": a, "q": b}, xs)
        return carry["p"] * carry["q"] + np_.sum(y1) - np_.sum(y2 * y2)
    return f


def scan_xs_none(np_, lax_):
    def f(c0):
        c, ys = lax_.scan(lambda c, _: (np_.sin(c) * 1.5, c * c), c0, None, length=4)
        return c + np_.sum(ys)
    return f


def scan_vec_carry(np_, lax_):
    def f(c0, w):
        def body(c, x):
            return np_.tanh(c * w + x), np_.sum(c)
        c, ys = lax_.scan(body, c0, np_.ones((4,) + c0.shape, c0.dtype))
        return np_.sum(c) + np_.sum(ys)
    return f


def scan_reset(np_, lax_):  # the carry's tangent is zero after one step
    def f(c0, xs):
        c, ys = lax_.scan(lambda c, x: (x, c * c), c0, xs)
        return c + np_.sum(ys)
    return f


def scan_nested(np_, lax_):
    def f(c0, xs):
        def outer(c, x):
            inner = lax_.scan(lambda d, y: (d * y + np_.sin(d), d), c, xs)[0]
            return inner * x, inner
        c, ys = lax_.scan(outer, c0, xs)
        return c + np_.sum(ys)
    return f


_K = np.array([1.5, -0.5, 2.0], np.float32)


def scan_np_const(np_, lax_):  # a concrete array closed over by the body
    def f(c0):
        c, ys = lax_.scan(lambda c, x: (np_.sin(c * _K) + x, c * _K), c0,
                          np_.ones((3, 3), c0.dtype))
        return np_.sum(c) + np_.sum(ys)
    return f


def scan_unroll(np_, lax_):
    def f(c0, xs):
        c, ys = lax_.scan(lambda c, x: (c * x + np_.cos(c), c), c0, xs, unroll=2)
        return c + np_.sum(ys)
    return f


def scan_int_carry(np_, lax_):
    def f(c0, xs):
        def body(carry, x):
            i, c = carry
            return (i + 1, c * x + i), c * i
        (_, c), ys = lax_.scan(body, (0, c0), xs)
        return c + np_.sum(ys)
    return f


def fori_static(np_, lax_):
    return lambda c0: lax_.fori_loop(0, 3, lambda i, c: c * c + 1.0, c0)


def fori_static_vec(np_, lax_):
    def f(x, w):
        return np_.sum(lax_.fori_loop(0, 4, lambda i, c: np_.sin(c) * w + i, x))
    return f


def cond_in_scan(np_, lax_):
    def f(c0, xs):
        def body(c, x):
            c = lax_.cond(x > 0, lambda a: a * x, lambda a: np_.sin(a) + x, c)
            return c, c
        c, ys = lax_.scan(body, c0, xs)
        return c + np_.sum(ys)
    return f


def scan_in_cond(np_, lax_):
    def f(x):
        def branch(v):
            return lax_.scan(lambda c, _: (c * v + 1., None), v, None, length=3)[0]
        return lax_.cond(x > 0, branch, np_.cos, x)
    return f


def cond_closure(np_, lax_):  # differentiated w.r.t. a value the branches close over
    return lambda x, y: lax_.cond(x > 0, lambda v: v * y, lambda v: v, x)


def scan_const_only(np_, lax_):  # the carry's tangent comes from a const (a fixpoint)
    return lambda w, xs: lax_.scan(lambda c, x: (c * w + x, c), 1.0, xs)[0]


def scan_dead_code(np_, lax_):  # the body computes (and differentiates) an unused value
    def f(c0, xs):
        def body(c, x):
            unused = np_.sin(c) * np_.exp(x)  # noqa: F841
            return c * x + np_.cos(c), c
        c, ys = lax_.scan(body, c0, xs)
        return c + np_.sum(ys)
    return f


def scan_len0(np_, lax_):
    return lambda c: lax_.scan(lambda c, x: (c * x, c), c, np_.zeros((0,), c.dtype))[0] + c


def fori_in_cond_in_scan(np_, lax_):
    def f(c0, xs):
        def body(c, x):
            return lax_.cond(x > 0, lambda a: lax_.fori_loop(0, 2, lambda i, b: b * a, a),
                             np_.cos, c), None
        return lax_.scan(body, c0, xs)[0]
    return f


def while_fwd(np_, lax_):
    def f(x):
        return lax_.while_loop(lambda c: c[1] < 10., lambda c: (c[0] * c[1], c[1] + 1.),
                               (x, 1.))[0]
    return f


def while_counter(np_, lax_):
    def f(x):
        _, r = lax_.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, np_.sin(c[1]) * 2.),
                               (0, x))
        return r
    return f


def while_consts(np_, lax_):
    def f(x, w):
        return lax_.while_loop(lambda c: c[0] < 4,
                               lambda c: (c[0] + 1, c[1] * w + np_.sin(c[1])), (0, x))[1]
    return f


def fori_dynamic(np_, lax_):  # traced bounds: a while loop
    def f(x, n):
        return lax_.fori_loop(0, n, lambda i, c: c * 1.5 + np_.cos(c), x)
    return f


# name -> (program, args, argnums differentiated (None: all float args), reverse mode ok)
PROGRAMS = {
    "cond_sincos": (cond_sincos, (1.0,), (0,), True),
    "cond_linear": (cond_linear, (1.0,), (0,), True),
    "cond_two_ops": (cond_two_ops, (1.0, 2.0), (0, 1), True),
    "cond_zero_branch": (cond_zero_branch, (1.0, 2.0), (0,), True),
    "cond_tuple_out": (cond_tuple_out, (1.0,), (0,), True),
    "cond_vec_closure": (cond_vec_closure, (F3, W3), (0, 1), True),
    "switch3": (switch3, (F3, I1), (0,), True),
    "switch_scalar": (switch_scalar, (0.5, 1.5), (0, 1), True),
    "scan_basic": (scan_basic, (0.5, F4), (0, 1), True),
    "scan_reverse": (scan_reverse, (0.5, F4), (0, 1), True),
    "scan_consts": (scan_consts, (0.3, 1.0, F4), (0, 1, 2), True),
    "scan_pytree": (scan_pytree, (0.5, -0.3, F4), (0, 1, 2), True),
    "scan_xs_none": (scan_xs_none, (0.5,), (0,), True),
    "scan_vec_carry": (scan_vec_carry, (F3, W3), (0, 1), True),
    "scan_reset": (scan_reset, (0.5, F4), (0, 1), True),
    "scan_nested": (scan_nested, (0.5, F4 * 0.5), (0, 1), True),
    "scan_np_const": (scan_np_const, (F3,), (0,), True),
    "scan_unroll": (scan_unroll, (0.5, F4), (0, 1), True),
    "scan_int_carry": (scan_int_carry, (0.5, F4), (0, 1), True),
    "fori_static": (fori_static, (0.5,), (0,), True),
    "fori_static_vec": (fori_static_vec, (F3, W3), (0, 1), True),
    "cond_in_scan": (cond_in_scan, (0.5, F4), (0, 1), True),
    "scan_in_cond": (scan_in_cond, (0.5,), (0,), True),
    "cond_closure": (cond_closure, (0.5, 2.0), (1,), True),
    "scan_const_only": (scan_const_only, (0.5, F4), (0,), True),
    "scan_len0": (scan_len0, (np.float32(0.5),), (0,), True),
    "scan_dead_code": (scan_dead_code, (0.5, F4), (0, 1), True),
    "fori_in_cond_in_scan": (fori_in_cond_in_scan, (0.9, F4), (0, 1), True),
    "while_fwd": (while_fwd, (1.0,), (0,), False),
    "while_counter": (while_counter, (1.0,), (0,), False),
    "while_consts": (while_consts, (0.5, 1.2), (0, 1), False),
    "fori_dynamic": (fori_dynamic, (0.5, np.int32(3)), (0,), False),
}
REVERSE = [n for n, p in PROGRAMS.items() if p[3]]
FORWARD_ONLY = [n for n, p in PROGRAMS.items() if not p[3]]
# smooth (twice differentiable) at the test points
SECOND_ORDER = ["cond_sincos", "cond_two_ops", "scan_basic", "scan_consts", "scan_xs_none",
                "fori_static", "cond_in_scan", "scan_in_cond"]


def build(ns, name):
    return PROGRAMS[name][0](ns[1], ns[2])


def _with(args, nums, values):
    full = list(args)
    for i, v in zip(nums, values):
        full[i] = v
    return full


# -- numerical checks (float64) --------------------------------------------------------

@pytest.fixture
def x64():
    prev = traxla.config.read("enable_x64")
    traxla.config.update("enable_x64", True)
    try:
        yield
    finally:
        traxla.config.update("enable_x64", prev)


def _f64_case(name, seed=0):
    _, args, nums, _ = PROGRAMS[name]
    args = [np.asarray(a, np.float64) if i in nums else a for i, a in enumerate(args)]
    rng = np.random.default_rng(seed)
    dirs = [rng.standard_normal(np.shape(args[i])) for i in nums]
    return args, nums, dirs


def _partial(f, args, nums):
    return lambda *d: f(*_with(args, nums, d))


def _fd(g, primals, dirs, eps=1e-6):
    plus = g(*[p + eps * d for p, d in zip(primals, dirs)])
    minus = g(*[p - eps * d for p, d in zip(primals, dirs)])
    return (np.asarray(plus) - np.asarray(minus)) / (2 * eps)


def _close(got, want, rtol=2e-5):
    got, want = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=rtol)


def _dot(xs, ys):
    return sum(float(np.vdot(np.asarray(x), np.asarray(y))) for x, y in zip(xs, ys))


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_derivatives_match_finite_differences_and_jax(x64, name, jax_side):
    """jvp (and grad, where reverse mode applies) against central differences in
    float64; grad also against ``jax.grad`` (JAX computing in float32)."""
    args, nums, dirs = _f64_case(name)
    g = _partial(build(TRAXLA, name), args, nums)
    primals = [args[i] for i in nums]
    reverse = PROGRAMS[name][3]

    def run(*p):  # everything in one compiled program: g, g shifted both ways, jvp, grad
        eps = 1e-6  # (as _fd's)
        res = {"g": g(*p), "plus": g(*[a + eps * d for a, d in zip(p, dirs)]),
               "minus": g(*[a - eps * d for a, d in zip(p, dirs)]),
               "jvp": traxla.jvp(g, p, tuple(dirs))}
        if reverse:
            res["grads"] = traxla.grad(g, argnums=tuple(range(len(nums))))(*p)
        return res
    r = traxla.jit(run)(*primals)
    want = (np.asarray(r["plus"]) - np.asarray(r["minus"])) / (2 * 1e-6)
    out, tangent = r["jvp"]
    assert np.asarray(tangent).dtype == np.float64
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out, r["g"], rtol=1e-12)
    if not reverse:
        return
    grads = r["grads"]
    assert all(np.asarray(x).dtype == np.float64 for x in grads)
    np.testing.assert_allclose(_dot(grads, dirs), want, rtol=1e-6, atol=1e-7)
    _, args32, _, _ = PROGRAMS[name]
    _close(grads, jax_side(lambda: jax.jit(jax.grad(build(JAX, name), argnums=nums))(*args32)),
           rtol=1e-4)


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order_matches_finite_differences(x64, name):
    args, nums, dirs = _f64_case(name)
    _, _, ws = _f64_case(name, seed=1)
    g = _partial(build(TRAXLA, name), args, nums)
    primals = [args[i] for i in nums]
    argnums = tuple(range(len(nums)))
    grad_g = traxla.grad(g, argnums=argnums)

    def grad_dot_w(*p):  # <grad g(p), w>, a scalar
        return sum(tnp.vdot(a, w) for a, w in zip(grad_g(*p), ws))

    want = _fd(traxla.jit(grad_dot_w), primals, dirs, eps=1e-5)
    rev_rev = traxla.jit(traxla.grad(grad_dot_w, argnums=argnums))(*primals)
    np.testing.assert_allclose(_dot(rev_rev, dirs), want, rtol=1e-5, atol=1e-6)
    fwd_rev = traxla.jit(lambda *p: traxla.jvp(grad_g, p, tuple(dirs))[1])(*primals)
    np.testing.assert_allclose(_dot(fwd_rev, ws), want, rtol=1e-5, atol=1e-6)


def test_eager_grad_and_linearize(x64):
    args, nums, dirs = _f64_case("scan_consts")
    g = _partial(build(TRAXLA, "scan_consts"), args, nums)
    primals = [args[i] for i in nums]
    fd = _fd(traxla.jit(g), primals, dirs)  # one jit wrapper: a new one compiles g again
    grads = traxla.grad(g, argnums=(0, 1, 2))(*primals)
    np.testing.assert_allclose(_dot(grads, dirs), fd, rtol=1e-6)
    out, f_jvp = traxla.linearize(g, *primals)
    np.testing.assert_allclose(f_jvp(*dirs), fd, rtol=1e-6)
    grads = traxla.grad(traxla.jit(g), argnums=(0, 1, 2))(*primals)  # eager around the jit
    np.testing.assert_allclose(_dot(grads, dirs), fd, rtol=1e-6)


@pytest.mark.parametrize("name", ["while_fwd", "while_counter", "while_consts", "cond_in_scan"])
def test_linearize_matches_jvp(x64, name):
    args, nums, dirs = _f64_case(name)
    g = _partial(build(TRAXLA, name), args, nums)
    primals = [args[i] for i in nums]
    lin = traxla.jit(lambda *p: traxla.linearize(g, *p)[1](*dirs))(*primals)
    _, tangent = traxla.jit(lambda *p: traxla.jvp(g, p, tuple(dirs)))(*primals)
    np.testing.assert_allclose(lin, tangent, rtol=1e-12)


# -- agreement with JAX (float32) ----------------------------------------------------------

COMPOSED = ["cond_sincos", "switch3", "scan_consts", "scan_pytree", "cond_in_scan",
            "scan_in_cond"]


@pytest.mark.parametrize("name", COMPOSED)
def test_grad_of_jit_matches_jax(name, jax_side):
    _, args, nums, _ = PROGRAMS[name]
    # (the outer jit only makes it one compilation; grad still splits the inner jit)
    got = traxla.jit(traxla.grad(traxla.jit(build(TRAXLA, name)), argnums=nums))(*args)
    want = jax_side(lambda: jax.jit(jax.grad(build(JAX, name), argnums=nums))(*args))
    _close(got, want)


def _batched(name):
    """Args with a batch of 3 along a new leading axis for every differentiated arg."""
    _, args, nums, _ = PROGRAMS[name]
    scale = np.array([1.0, -0.5, 2.0], np.float32)
    batched = [np.stack([np.asarray(a, np.float32) * s for s in scale]) if i in nums else a
               for i, a in enumerate(args)]
    return batched, tuple(0 if i in nums else None for i in range(len(args)))


@pytest.mark.parametrize("name", COMPOSED)
def test_vmap_of_grad_matches_jax(name, jax_side):
    _, _, nums, _ = PROGRAMS[name]
    args, axes = _batched(name)
    got = traxla.jit(traxla.vmap(traxla.grad(build(TRAXLA, name), argnums=nums),
                                 in_axes=axes))(*args)
    want = jax_side(lambda: jax.jit(jax.vmap(jax.grad(build(JAX, name), argnums=nums),
                                            in_axes=axes))(*args))
    _close(got, want)


@pytest.mark.parametrize("name", FORWARD_ONLY)
def test_forward_mode_while_matches_jax(name):
    _, args, nums, _ = PROGRAMS[name]

    def run(ns):
        T, f = ns[0], build(ns, name)

        def tangent(*a):
            d = [a[i] for i in nums]
            return T.jvp(lambda *p: f(*_with(a, nums, p)), d, d)[1]
        return T.jit(tangent)(*args), T.jit(T.vmap(tangent))(*[np.stack([a, a]) for a in args])

    _close(run(TRAXLA), run(JAX))


# -- reverse mode through while -----------------------------------------------------------------

WHILE_ERROR = ("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
               "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
               "static start/stop.")


def _grad_error(ns, name):
    T, f = ns[0], build(ns, name)
    _, args, nums, _ = PROGRAMS[name]
    if name == "fori_dynamic":
        f = T.jit(f)  # the bound is a tracer
    with pytest.raises(ValueError) as info:
        T.grad(f, argnums=nums)(*args)
    return str(info.value)


@pytest.mark.parametrize("name", FORWARD_ONLY)
def test_while_reverse_mode_raises_jax_error(name):
    assert _grad_error(TRAXLA, name) == WHILE_ERROR == _grad_error(JAX, name)


def test_vjp_of_while_raises_when_pulled_back():
    f = build(TRAXLA, "while_fwd")
    out, pullback = traxla.vjp(f, 1.0)  # the forward pass (linearize) works
    np.testing.assert_allclose(out, jax.jit(build(JAX, "while_fwd"))(1.0), rtol=1e-6)
    with pytest.raises(ValueError, match=re.escape(WHILE_ERROR)):
        pullback(np.float32(1.0))


# -- jaxpr text vs JAX ------------------------------------------------------------------------

def _mode_fn(T, f, mode, nums, axes):
    if mode == "grad":
        return T.grad(f, argnums=nums)
    if mode == "jit(grad)":
        return T.jit(T.grad(f, argnums=nums))
    if mode == "grad(jit)":
        return T.grad(T.jit(f), argnums=nums)
    if mode == "grad(grad)":
        return T.grad(T.grad(f))
    if mode == "vmap(grad)":
        return T.vmap(T.grad(f, argnums=nums), in_axes=axes)

    def restricted(a, g):
        return lambda *d: g(*_with(a, nums, d))

    def run(*a):
        d = tuple(a[i] for i in nums)
        if mode == "jvp":
            return T.jvp(restricted(a, f), d, d)
        if mode == "linearize":
            return T.linearize(restricted(a, f), *d)[1](*d)
        if mode == "jvp(grad)":
            return T.jvp(T.grad(restricted(a, f), argnums=tuple(range(len(d)))), d, d)
        raise ValueError(mode)
    return run


def jaxpr_text(ns, case):
    name, mode = case.split(":")
    _, args, nums, _ = PROGRAMS[name]
    axes = None
    if mode.startswith("vmap"):
        args, axes = _batched(name)
    T = ns[0]
    return str(T.make_jaxpr(_mode_fn(T, build(ns, name), mode, nums, axes))(*args))


TEXT_CASES = ([f"{n}:jvp" for n in PROGRAMS]
              + [f"{n}:grad" for n in REVERSE]
              + ["while_fwd:linearize", "while_counter:linearize", "while_consts:linearize",
                 "scan_basic:linearize", "scan_consts:linearize", "cond_sincos:linearize",
                 "scan_xs_none:grad(grad)", "fori_static:grad(grad)", "cond_sincos:grad(grad)",
                 "scan_in_cond:grad(grad)",
                 "scan_basic:jvp(grad)", "scan_consts:jvp(grad)", "cond_sincos:jvp(grad)",
                 "cond_two_ops:jvp(grad)",
                 "scan_basic:jit(grad)", "scan_consts:jit(grad)", "cond_two_ops:jit(grad)",
                 "scan_basic:grad(jit)", "scan_consts:grad(jit)", "cond_sincos:grad(jit)",
                 "scan_basic:vmap(grad)", "cond_sincos:vmap(grad)", "scan_pytree:vmap(grad)"])

KNOWN_DIFFERENCES: dict[str, str] = {}


def _params(cases):
    return [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[c]))
            if c in KNOWN_DIFFERENCES else c for c in cases]


def test_corpus_consistency():
    assert set(KNOWN_DIFFERENCES) <= set(TEXT_CASES)
    assert len(TEXT_CASES) == len(set(TEXT_CASES))


@pytest.mark.parametrize("case", _params(TEXT_CASES))
def test_jaxpr_text_matches_jax(case):
    want, got = jaxpr_text(JAX, case), jaxpr_text(TRAXLA, case)
    assert got == want, f"\n--- jax\n{want}\n--- traxla\n{got}"


if __name__ == "__main__":  # print the differing cases
    for case in TEXT_CASES:
        if sys.argv[1:] and not any(s in case for s in sys.argv[1:]):
            continue
        want, got = jaxpr_text(JAX, case), jaxpr_text(TRAXLA, case)
        if want != got:
            print(f"=== {case}{'  (known)' if case in KNOWN_DIFFERENCES else ''}")
            print(f"--- jax\n{want}\n--- traxla\n{got}")

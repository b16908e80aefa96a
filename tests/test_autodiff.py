"""Automatic differentiation: jvp, vjp, grad, linearize, custom_jvp/custom_vjp and
jacfwd/jacrev/hessian, checked against JAX (printed jaxprs and numbers) and against
central finite differences in float64.

(a) the specification article's grad jaxpr, as golden text;
(b) a corpus of differentiated programs written once against a namespace and
    instantiated for traxla and for JAX; their jaxprs must print identically
    (``KNOWN_DIFFERENCES`` run as ``xfail(strict=True)``, one reason each);
(c) table-driven finite-difference checks of every differentiable primitive, in
    forward mode, reverse mode and (where twice differentiable) second order;
(d) compositions with jit and vmap, numerically against JAX;
(e) custom_jvp / custom_vjp; (f) jacfwd / jacrev / hessian; (g) errors.

Run ``python tests/test_autodiff.py [name-substring ...]`` to print the two jaxprs of
every corpus program that differs.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp
from traxla.autodiff import jvp_rules, transpose_rules
from traxla.ir import ALL_PRIMITIVES, Primitive, typing_rules
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.ad import MemorySpace

jax = pytest.importorskip("jax")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


@dataclass(frozen=True)
class NS:
    np: Any
    lax: Any
    jit: Callable
    grad: Callable
    value_and_grad: Callable
    jvp: Callable
    vjp: Callable
    vmap: Callable
    linearize: Callable
    jacfwd: Callable
    jacrev: Callable
    hessian: Callable
    custom_jvp: Any
    custom_vjp: Any
    make_jaxpr: Callable


def _ns(mod, np_, lax_):
    return NS(np_, lax_, mod.jit, mod.grad, mod.value_and_grad, mod.jvp, mod.vjp, mod.vmap,
              mod.linearize, mod.jacfwd, mod.jacrev, mod.hessian, mod.custom_jvp, mod.custom_vjp,
              mod.make_jaxpr)


T = _ns(traxla, tnp, tlax)
J = _ns(jax, jnp, jlax)

# -- inputs ------------------------------------------------------------------------------

_rng = np.random.default_rng(0)
F0 = np.float32(1.5)
F3 = np.array([0.5, -1.25, 2.0], np.float32)
G3 = np.array([1.5, 2.0, 3.25], np.float32)           # > 1: log, acosh, sqrt
U3 = np.array([0.25, -0.5, 0.75], np.float32)         # in (-1, 1): asin, atanh, erf_inv
F23 = np.array([[0.5, -1.5, 2.0], [3.25, -0.75, 1.0]], np.float32)
F34 = _rng.standard_normal((3, 4)).astype(np.float32)
F234 = _rng.standard_normal((2, 3, 4)).astype(np.float32)
F243 = _rng.standard_normal((2, 4, 3)).astype(np.float32)
W42 = _rng.standard_normal((4, 2)).astype(np.float32)
I3 = np.array([3, -2, 7], np.int32)
S3 = np.array([1, 2, 3], np.int32)
B3 = np.array([True, False, True])
IDX = np.int32(1)


# == (a) the article's grad jaxpr ========================================================

ARTICLE_GRAD_JAXPR = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = cos a
    d:f32[3] = integer_pow[y=2] b
    e:f32[3] = mul 2.0:f32[] b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
    f:f32[3] = broadcast_in_dim 1.0:f32[]
    g:f32[3] = mul f e
    h:f32[3] = mul g c
  in (h,) }"""


def test_article_grad_jaxpr():
    def g(x):
        return tnp.sum(tnp.sin(x) ** 2)
    assert str(traxla.make_jaxpr(traxla.grad(g))(tnp.ones((3,)))) == ARTICLE_GRAD_JAXPR


def test_article_grad_jaxpr_is_jaxs():
    def g(x):
        return jnp.sum(jnp.sin(x) ** 2)
    assert str(jax.make_jaxpr(jax.grad(g))(jnp.ones((3,)))) == ARTICLE_GRAD_JAXPR


# == (b) differentiated jaxprs print as JAX's =============================================

@dataclass
class Case:
    name: str
    build: Callable  # NS -> function to make_jaxpr
    args: tuple


CORPUS: dict[str, Case] = {}


def P(name, args, build):
    assert name not in CORPUS, name
    CORPUS[name] = Case(name, build, tuple(args))


def _sum_of(body):
    return lambda N: N.grad(lambda x: N.np.sum(body(N)(x)))


def _jvp_of(body):
    return lambda N: (lambda x: N.jvp(body(N), (x,), (N.np.ones_like(x),)))


_UNARY = {"sin": F3, "cos": F3, "tan": U3, "exp": F3, "exp2": F3, "log": G3, "log1p": G3,
          "expm1": F3, "tanh": F3, "logistic": F3, "asin": U3, "acos": U3, "atan": F3,
          "sinh": F3, "cosh": F3, "asinh": F3, "acosh": G3, "atanh": U3, "sqrt": G3,
          "rsqrt": G3, "cbrt": G3, "abs": F3, "erf": F3, "erf_inv": U3, "neg": F3, "sign": F3,
          "floor": F3, "ceil": F3, "round": F3, "square": F3, "reciprocal": G3,
          "stop_gradient": F3}
for _n, _x in _UNARY.items():
    P(f"grad.{_n}", [_x], _sum_of(lambda N, _n=_n: getattr(N.lax, _n)))
    P(f"jvp.{_n}", [_x], _jvp_of(lambda N, _n=_n: getattr(N.lax, _n)))

_BINARY = {"add": (F3, G3), "sub": (F3, G3), "mul": (F3, G3), "div": (F3, G3), "pow": (G3, F3),
           "max": (F3, U3), "min": (F3, U3), "atan2": (F3, G3), "rem": (F3, G3)}
for _n, (_a, _b) in _BINARY.items():
    P(f"grad2.{_n}", [_a, _b], lambda N, _n=_n: N.grad(
        lambda x, y: N.np.sum(getattr(N.lax, _n)(x, y)), argnums=(0, 1)))
    P(f"jvp2.{_n}", [_a, _b], lambda N, _n=_n: (lambda x, y: N.jvp(
        getattr(N.lax, _n), (x, y), (N.np.ones_like(x), N.np.ones_like(y)))))

P("grad.integer_pow3", [F3], lambda N: N.grad(lambda x: N.np.sum(N.lax.integer_pow(x, 3))))
P("grad.integer_pow-2", [G3], lambda N: N.grad(lambda x: N.np.sum(N.lax.integer_pow(x, -2))))
P("grad.x**3", [F3], lambda N: N.grad(lambda x: N.np.sum(x ** 3)))
P("grad.pow_int_exponent", [G3, S3], lambda N: N.grad(lambda x, y: N.np.sum(N.lax.pow(x, y))))
P("jvp.pow_int_exponent", [G3, S3],
  lambda N: lambda x, y: N.jvp(lambda x: N.lax.pow(x, y), (x,), (x,)))
P("grad.np.power", [G3, F3],
  lambda N: N.grad(lambda x, y: N.np.sum(N.np.power(x, y)), argnums=(0, 1)))
P("grad.matmul_tanh", [F34, F3],
  lambda N: N.grad(lambda w, x: N.np.sum(N.np.tanh(x @ w)), argnums=(0, 1)))
P("grad.reduce_max", [F234], lambda N: N.grad(lambda x: N.np.sum(N.np.max(x, axis=1))))
P("grad.reduce_min", [F234], lambda N: N.grad(lambda x: N.np.sum(N.lax.reduce_min(x, (0, 2)))))
P("grad.reduce_prod", [F234], lambda N: N.grad(lambda x: N.np.sum(N.lax.reduce_prod(x, (1,)))))
P("jvp.reduce_prod", [F3],
  lambda N: lambda x: N.jvp(lambda x: N.lax.reduce_prod(x, (0,)), (x,), (x,)))
P("grad.np.prod", [F3], lambda N: N.grad(lambda x: N.np.prod(x)))
P("grad.np.prod_axis", [F23], lambda N: N.grad(lambda x: N.np.sum(N.np.prod(x, axis=0))))
P("grad.np.min", [F23], lambda N: N.grad(lambda x: N.np.min(x)))
P("grad.mean", [F23], lambda N: N.grad(lambda x: N.np.mean(x ** 2)))
P("grad.transpose", [F234],
  lambda N: N.grad(lambda x: N.np.sum(N.np.sin(N.np.transpose(x, (2, 0, 1))))))
P("grad.x.T@x", [F23], lambda N: N.grad(lambda x: N.np.sum(x.T @ x)))
P("grad.reshape", [F234], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(x.reshape(6, 4)))))
P("grad.reshape_dimensions", [F23], lambda N: N.grad(
    lambda x: N.np.sum(N.np.sin(N.lax.reshape(x, (6,), dimensions=(1, 0))))))
P("grad.slice_strided", [F234], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(x[:, 1:, ::2]))))
P("grad.index", [F234], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(x[1]))))
P("grad.index_dynamic", [F34, np.int32(2)], lambda N: N.grad(lambda x, i: N.np.sum(x[i] ** 2)))
P("grad.slice_step", [F34], lambda N: N.grad(lambda x: N.np.sum(x[::2, 1:3] ** 2)))
P("grad.concatenate", [F3, G3], lambda N: N.grad(
    lambda x, y: N.np.sum(N.np.sin(N.np.concatenate([x, y]))), argnums=(0, 1)))
P("grad.pad", [F23], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(
    N.lax.pad(x, N.np.float32(0), [(1, 2, 0), (0, 1, 1)])))))
P("grad.pad_value", [F23, F0], lambda N: N.grad(lambda x, v: N.np.sum(N.np.sin(
    N.lax.pad(x, v, [(1, 2, 0), (0, -1, 1)]))), argnums=(0, 1)))
P("grad.rev", [F23], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(N.lax.rev(x, (0,))))))
P("grad.flip", [F23], lambda N: N.grad(lambda x: N.np.sum(N.np.flip(x, 1) * F23)))
P("grad.broadcast_add", [F3], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(x + F23))))
P("grad.expand_dims", [F3], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(x[None, :, None]))))
P("grad.squeeze", [F23[:1]], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(N.lax.squeeze(x, (0,))))))
P("grad.where", [F3], lambda N: N.grad(lambda x: N.np.sum(N.np.where(x > 0, x, 0.0))))
P("grad.select_bool", [B3, F3, G3], lambda N: N.grad(
    lambda c, a, b: N.np.sum(N.lax.select(c, a, b) ** 2), argnums=(1, 2)))
P("grad.select_n3", [np.array([0, 2, 1], np.int32), F3, G3, U3], lambda N: N.grad(
    lambda c, a, b, d: N.np.sum(N.lax.select_n(c, a, b, d)), argnums=(1, 2, 3)))
P("grad.clamp", [F3], lambda N: N.grad(lambda x: N.np.sum(
    N.lax.clamp(N.np.float32(-0.5), x, N.np.float32(1.0)))))
P("grad.clamp_arrays", [U3, F3, G3], lambda N: N.grad(
    lambda lo, x, hi: N.np.sum(N.lax.clamp(lo, x, hi)), argnums=(0, 1, 2)))
P("jvp.clamp", [F3], lambda N: lambda x: N.jvp(
    lambda x: N.lax.clamp(N.np.float32(-0.5), x, N.np.float32(1.0)), (x,), (x,)))
P("grad.np.clip", [F3], lambda N: N.grad(lambda x: N.np.sum(N.np.clip(x, -0.5, 1.0))))
P("grad.maximum_bcast", [F23, F3], lambda N: N.grad(
    lambda x, y: N.np.sum(N.np.maximum(x, y)), argnums=(0, 1)))
P("grad.relu", [F23], lambda N: N.grad(lambda x: N.np.sum(N.np.maximum(x, 0.0))))
P("grad.dynamic_slice", [F234, IDX], lambda N: N.grad(
    lambda x, i: N.np.sum(N.np.sin(N.lax.dynamic_slice(x, (i, 0, i), (1, 2, 2))))))
P("grad.dynamic_update_slice", [F23, F23[:1], IDX], lambda N: N.grad(
    lambda x, u, i: N.np.sum(N.np.sin(N.lax.dynamic_update_slice(x, u, (i, 0)))),
    argnums=(0, 1)))
P("grad.convert_f16", [F3], lambda N: N.grad(
    lambda x: N.np.sum(N.np.sin(x.astype(N.np.float16)).astype(N.np.float32))))
P("grad.convert_f16_twice", [F3], lambda N: N.grad(
    lambda x: N.np.sum(N.np.sin(x.astype(N.np.float16)) * 2).astype(N.np.float32)))
P("grad.int_cast", [F3], lambda N: N.grad(lambda x: N.np.sum(x * x.astype(N.np.int32))))
P("grad.x*stop_gradient", [F3], lambda N: N.grad(lambda x: N.np.sum(x * N.lax.stop_gradient(x))))
P("grad.argmax", [F23], lambda N: N.grad(
    lambda x: N.np.sum(x * N.np.argmax(x, axis=1)[:, None])))
P("grad.copy", [F3], lambda N: N.grad(lambda x: N.np.sum(N.np.sin(N.np.array(x, copy=True)))))
P("grad.dot_general_batch", [F234, F243], lambda N: N.grad(lambda a, b: N.np.sum(
    N.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))), argnums=(0, 1)))
P("grad.dot_pet", [F3, G3], lambda N: N.grad(
    lambda a, b: N.lax.dot(a, b, preferred_element_type=N.np.float32), argnums=(0, 1)))
P("grad.outer", [F3, G3], lambda N: N.grad(
    lambda a, b: N.np.sum(N.np.outer(a, b) ** 2), argnums=(0, 1)))
P("grad.matvec", [F34, F3], lambda N: N.grad(
    lambda w, x: N.np.sum(N.np.dot(x, w) ** 2), argnums=(0, 1)))
P("grad.batched_matmul", [F234, F34], lambda N: N.grad(
    lambda a, b: N.np.sum(N.np.matmul(a, b.T)), argnums=(0, 1)))
P("grad.scalar_times_vector", [np.float32(2.0), F3], lambda N: N.grad(
    lambda a, x: N.np.sum(a * x), argnums=(0, 1)))
P("grad.linear_combination", [F3], lambda N: N.grad(lambda x: N.np.sum(3.0 * x - x / 2.0 + 1.0)))
P("grad.x*x+x", [np.float32(3.0)], lambda N: N.grad(lambda x: x * x + x))
P("grad.logsumexp", [F3], lambda N: N.grad(
    lambda x: N.np.log(N.np.sum(N.np.exp(x - N.np.max(x)))) + N.np.max(x)))
P("grad.softmax_xent", [F23], lambda N: N.grad(lambda x: -N.np.sum(N.np.log(
    N.np.exp(x) / N.np.sum(N.np.exp(x), axis=1, keepdims=True)))))
P("grad.log_softmax", [F23], lambda N: N.grad(lambda x: N.np.sum(
    (x - N.np.log(N.np.sum(N.np.exp(x), axis=1, keepdims=True))) * F23)))
P("grad.mlp", [F34, W42, F23.T.copy()[:, :3].T.copy()], lambda N: N.grad(
    lambda w1, w2, x: N.np.mean((N.np.tanh(x @ w1) @ w2) ** 2), argnums=(0, 1)))
P("grad.erf_sum", [F3], lambda N: N.grad(lambda x: N.np.sum(N.lax.erf(x))))
P("grad.np.sqrt", [G3], lambda N: N.grad(lambda x: N.np.sum(N.np.sqrt(x))))
P("grad.np.arctanh", [U3], lambda N: N.grad(lambda x: N.np.sum(N.np.arctanh(x))))
P("grad.sinh*cosh", [F3], lambda N: N.grad(lambda x: N.np.sum(N.np.sinh(x) * N.np.cosh(x))))
P("grad.abs*x", [F3], lambda N: N.grad(lambda x: N.np.sum(N.np.abs(x) * x)))
P("grad.div_both", [F3, G3], lambda N: N.grad(lambda x, y: N.np.sum(x / y), argnums=(0, 1)))
P("grad.np.mod", [F3, G3], lambda N: N.grad(lambda x, y: N.np.sum(x % y), argnums=(0, 1)))
P("grad.where_log", [F3], lambda N: N.grad(
    lambda x: N.np.sum(N.np.where(x > 0, N.np.log(N.np.abs(x)), x))))
# transformations and their compositions
P("vjp.sin", [F3], lambda N: lambda x: N.vjp(N.np.sin, x)[1](x))
P("vjp.pytree_out", [F3], lambda N: lambda x: N.vjp(
    lambda x: {"a": N.np.sin(x), "b": x * 2}, x)[1]({"a": x, "b": x}))
P("jvp.pytree", [F3, G3], lambda N: lambda x, y: N.jvp(
    lambda d: d["a"] * N.np.cos(d["b"]), ({"a": x, "b": y},), ({"a": y, "b": x},)))
P("grad.pytree_in", [F3, G3], lambda N: lambda a, b: N.grad(
    lambda d: N.np.sum(d["a"] * N.np.sin(d["b"])))({"a": a, "b": b}))
P("value_and_grad", [F3], lambda N: N.value_and_grad(lambda x: N.np.sum(N.np.sin(x))))
P("grad.has_aux", [F3], lambda N: N.grad(lambda x: (N.np.sum(N.np.sin(x)), x * 2), has_aux=True))
P("grad.argnums_reversed", [F3, G3], lambda N: N.grad(
    lambda x, y: N.np.sum(x * y + N.np.sin(y)), argnums=(1, 0)))
P("grad.grad", [np.float32(3.0)], lambda N: N.grad(N.grad(lambda x: N.np.sin(x) * x)))
P("grad.grad_vector", [F3], lambda N: N.grad(
    lambda x: N.np.sum(N.grad(lambda y: N.np.sum(N.np.sin(y) * y))(x))))
P("jvp.grad", [F3], lambda N: lambda x: N.jvp(
    N.grad(lambda y: N.np.sum(N.np.tanh(y))), (x,), (x,)))
P("grad.jvp", [F3], lambda N: N.grad(lambda x: N.np.sum(N.jvp(N.np.sin, (x,), (x,))[1])))
P("grad.jit", [F3], lambda N: N.grad(N.jit(lambda x: N.np.sum(N.np.sin(x) ** 2))))
P("grad.jit_closure", [F3, G3], lambda N: N.grad(
    lambda x, y: N.np.sum(N.jit(lambda z: N.np.sin(z) * y)(x))))
P("grad.jit_twice", [F3], lambda N: N.grad(
    lambda x: N.np.sum(N.jit(N.np.sin)(x) * N.jit(N.np.sin)(x))))
P("grad.jit_shared", [F3], lambda N: (lambda s: N.grad(
    lambda x: N.np.sum(s(x) * s(x))))(N.jit(N.np.sin)))
P("grad.jit_where", [F3, G3], lambda N: N.grad(
    lambda x, y: N.np.sum(N.jit(lambda a, b: N.np.where(a > 0, a, b))(x, y)), argnums=(0, 1)))
P("jit.grad", [F3], lambda N: N.jit(N.grad(lambda x: N.np.sum(N.np.sin(x) ** 2))))
P("jvp.jit", [F3], lambda N: lambda x: N.jvp(N.jit(lambda x: N.np.sin(x) * x), (x,), (x,)))
P("vmap.grad", [F34], lambda N: N.vmap(N.grad(lambda r: N.np.sum(N.np.tanh(r) ** 2))))
P("grad.vmap", [F23], lambda N: N.grad(lambda x: N.np.sum(N.vmap(lambda r: N.np.sin(r) * 2)(x))))
P("jacfwd", [F3], lambda N: N.jacfwd(lambda x: N.np.sin(x) * x[0]))
P("jacrev", [F3], lambda N: N.jacrev(lambda x: N.np.sin(x) * x[0]))
P("hessian", [F3], lambda N: N.hessian(lambda x: N.np.sum(N.np.sin(x) * x)))


def _custom_sin(N):
    @N.custom_jvp
    def f(x):
        return N.np.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return f(x), 2.0 * N.np.cos(x) * t
    return f


def _custom_vjp_sin(N):
    @N.custom_vjp
    def h(x):
        return N.np.sin(x)

    def h_fwd(x):
        return N.np.sin(x), N.np.cos(x)

    def h_bwd(res, g):
        return (2 * res * g,)
    h.defvjp(h_fwd, h_bwd)
    return h


def _custom_defjvps(N):
    @N.custom_jvp
    def sp(x, y):
        return x * y
    sp.defjvps(lambda g, ans, x, y: g * y * 3, lambda g, ans, x, y: x * g * 5)
    return sp


P("custom_jvp.make_jaxpr", [F3], lambda N: _custom_sin(N))
P("custom_jvp.grad", [F3], lambda N: N.grad(lambda x: N.np.sum(_custom_sin(N)(x))))
P("custom_jvp.jvp", [F3], lambda N: lambda x: N.jvp(_custom_sin(N), (x,), (x,)))
P("custom_jvp.defjvps", [F3, G3], lambda N: N.grad(
    lambda x, y: N.np.sum(_custom_defjvps(N)(x, y)), argnums=(0, 1)))
P("custom_vjp.make_jaxpr", [F3], lambda N: _custom_vjp_sin(N))
P("custom_vjp.grad", [F3], lambda N: N.grad(lambda x: N.np.sum(_custom_vjp_sin(N)(x))))

_SQUARE = ("JAX's rule binds its `square` primitive; traxla has no square primitive "
           "(lax.square binds integer_pow[y=2]; ir/rules/elementwise.py, lowering, batching)")
_SQUARE_PROGRAMS = ([f"{kind}.{n}" for kind in ("grad", "jvp") for n in (
    "tan", "asin", "acos", "atan", "asinh", "acosh", "erf", "erf_inv", "square")]
    + ["grad2.atan2", "jvp2.atan2", "grad.erf_sum"])
KNOWN_DIFFERENCES = {
    **({} if "square" in ALL_PRIMITIVES else {n: _SQUARE for n in _SQUARE_PROGRAMS}),
    **{n: ("JAX ravels/unravels the jacobian's pytree (ravel_pytree: a one-piece `split` and a "
           "convert_element_type carrying a sharding); traxla's jac.py builds it directly")
       for n in ("jacfwd", "jacrev", "hessian")},
}


def _params(known):
    out = []
    for name in CORPUS:
        marks = [pytest.mark.xfail(strict=True, reason=known[name])] if name in known else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def jaxpr_texts(case: Case):
    want = str(J.make_jaxpr(case.build(J))(*case.args))
    got = str(T.make_jaxpr(case.build(T))(*case.args))
    return want, got


def test_corpus_size():
    assert set(KNOWN_DIFFERENCES) <= set(CORPUS)
    assert len(CORPUS) - len(KNOWN_DIFFERENCES) >= 40


@pytest.mark.parametrize("name", _params(KNOWN_DIFFERENCES))
def test_jaxpr_text_matches_jax(name):
    want, got = jaxpr_texts(CORPUS[name])
    assert got == want, f"\n--- jax\n{want}\n--- traxla\n{got}"


# == (c) finite differences in float64 ===================================================

@pytest.fixture
def x64():
    old = traxla.config.enable_x64
    traxla.config.update("enable_x64", True)
    try:
        yield
    finally:
        traxla.config.update("enable_x64", old)


def _call_bind(f, *args):
    """JAX's ``call_p`` bound on ``f`` (jax.extend.core.primitives)."""
    from traxla.extend.core.primitives import call_p
    from traxla.tracer.linear_util import wrap_init
    return call_p.bind(*args, subfuns=(wrap_init(f),))[0]


def _closed_call_bind(f, *args):
    """JAX's ``closed_call_p`` bound on the jaxpr of ``f`` at the arguments' types."""
    from traxla.extend.core.primitives import closed_call_p
    jaxpr = traxla.make_jaxpr(f)(*[traxla.ShapeDtypeStruct(np.shape(a), a.dtype)
                                   for a in args])
    return closed_call_p.bind(*args, **closed_call_p.get_bind_params({"call_jaxpr": jaxpr}))[0]


@dataclass
class FD:
    prims: tuple        # primitive names this case differentiates
    fn: Callable        # traxla function of float64 arrays -> one array
    args: tuple         # float64 inputs
    second: bool = True  # twice differentiable at args


_r = np.random.default_rng(1)


def _a(*shape, lo=-1.0, hi=1.0):
    return _r.uniform(lo, hi, shape).astype(np.float64)


X = _a(3, 4)
POS = _a(3, 4, lo=0.5, hi=2.0)
UNIT = _a(3, 4, lo=-0.8, hi=0.8)
GT1 = _a(3, 4, lo=1.2, hi=3.0)
Y = _a(3, 4)
V3 = _a(3)
ARGS_SORT = np.array([[0.3, -1.2, 0.8, 2.0], [1.5, 0.1, -0.4, 0.9], [-2.0, 0.7, 0.2, 1.1]])

FD_CASES = {
    "exp": FD(("exp",), tlax.exp, (X,)), "exp2": FD(("exp2",), tlax.exp2, (X,)),
    "log": FD(("log",), tlax.log, (POS,)), "log1p": FD(("log1p",), tlax.log1p, (POS,)),
    "expm1": FD(("expm1",), tlax.expm1, (X,)), "tanh": FD(("tanh",), tlax.tanh, (X,)),
    "logistic": FD(("logistic",), tlax.logistic, (X,)), "sin": FD(("sin",), tlax.sin, (X,)),
    "cos": FD(("cos",), tlax.cos, (X,)), "tan": FD(("tan",), tlax.tan, (UNIT,)),
    "asin": FD(("asin",), tlax.asin, (UNIT,)), "acos": FD(("acos",), tlax.acos, (UNIT,)),
    "atan": FD(("atan",), tlax.atan, (X,)), "sinh": FD(("sinh",), tlax.sinh, (X,)),
    "cosh": FD(("cosh",), tlax.cosh, (X,)), "asinh": FD(("asinh",), tlax.asinh, (X,)),
    "acosh": FD(("acosh",), tlax.acosh, (GT1,)), "atanh": FD(("atanh",), tlax.atanh, (UNIT,)),
    "sqrt": FD(("sqrt",), tlax.sqrt, (POS,)), "rsqrt": FD(("rsqrt",), tlax.rsqrt, (POS,)),
    "cbrt": FD(("cbrt",), tlax.cbrt, (POS,)), "abs": FD(("abs",), tlax.abs, (X,)),
    "erf": FD(("erf",), tlax.erf, (X,)), "erf_inv": FD(("erf_inv",), tlax.erf_inv, (UNIT,)),
    "neg": FD(("neg",), tlax.neg, (X,)),
    "integer_pow": FD(("integer_pow",), lambda x: tlax.integer_pow(x, 3), (X,)),
    "integer_pow_neg": FD(("integer_pow",), lambda x: tlax.integer_pow(x, -2), (POS,)),
    "square": FD(("integer_pow",) + (("square",) if "square" in ALL_PRIMITIVES else ()),
                 tlax.square, (X,)),
    "add": FD(("add",), tlax.add, (X, Y)), "sub": FD(("sub",), tlax.sub, (X, Y)),
    "mul": FD(("mul",), tlax.mul, (X, Y)), "div": FD(("div",), tlax.div, (X, POS)),
    "rem": FD(("rem",), tlax.rem, (GT1 * 3, POS)), "pow": FD(("pow",), tlax.pow, (POS, Y)),
    "pow_int": FD(("pow",), lambda x: tlax.pow(x, np.array(3, np.int32)), (POS,)),
    "atan2": FD(("atan2",), tlax.atan2, (X, POS)), "max": FD(("max",), tlax.max, (X, Y)),
    "min": FD(("min",), tlax.min, (X, Y)),
    "add_any": FD(("add_any",), lambda x, y: ALL_PRIMITIVES["add_any"].bind(x, y), (X, Y)),
    "convert_element_type": FD(("convert_element_type",),
                               lambda x: tlax.convert_element_type(x, np.float32) * 1.0, (X,),
                               second=False),
    "select_n": FD(("select_n",), lambda x, y: tlax.select(x > 0, x * y, tlax.sin(y)), (X, Y)),
    "clamp": FD(("clamp",), lambda lo, x, hi: tlax.clamp(lo, x, hi),
                (X - 0.7, X + np.where(np.abs(X) < 0.1, 0.3, 0), X + 0.7 + _a(3, 4, lo=0, hi=.1))),
    "clamp_active": FD(("clamp",), lambda lo, x: tlax.clamp(lo, x, lo + 0.5), (X + 0.5, X)),
    "reduce_sum": FD(("reduce_sum",), lambda x: tlax.reduce_sum(tlax.sin(x), (1,)), (X,)),
    "reduce_max": FD(("reduce_max",), lambda x: tlax.reduce_max(x, (0,)), (X,)),
    "reduce_min": FD(("reduce_min",), lambda x: tlax.reduce_min(x, (1,)), (X,)),
    "reduce_prod": FD(("reduce_prod",), lambda x: tlax.reduce_prod(x, (1,)), (X,)),
    "dot_general": FD(("dot_general", "transpose"),
                      lambda a, b: tlax.dot_general(a, b, (((1,), (1,)), ((), ()))), (X, Y)),
    "broadcast_in_dim": FD(("broadcast_in_dim",),
                           lambda v: tlax.broadcast_in_dim(v, (3, 2), (0,)) ** 2, (V3,)),
    "reshape": FD(("reshape",), lambda x: tlax.reshape(x, (4, 3), dimensions=(1, 0)) ** 2, (X,)),
    "squeeze": FD(("squeeze",), lambda x: tlax.squeeze(x[None], (0,)) ** 2, (X,)),
    "transpose": FD(("transpose",), lambda x: tlax.transpose(x, (1, 0)) ** 2, (X,)),
    "rev": FD(("rev",), lambda x: tlax.rev(x, (0, 1)) * x, (X,)),
    "concatenate": FD(("concatenate",), lambda x, y: tlax.concatenate([x, y * x], 1), (X, Y)),
    "stack": FD(("stack",), lambda x, y: tnp.stack([x, y * x], axis=1), (X, Y)),
    "unstack": FD(("unstack",), lambda x: tnp.unstack(x * x, axis=1)[2], (X,)),
    "split": FD(("split",), lambda x: tlax.split(x * x, (1, 3), axis=1)[1], (X,)),
    "pad": FD(("pad",), lambda x, v: tlax.pad(x * x, v[0, 0], [(1, -1, 1), (0, 2, 0)]), (X, Y)),
    "slice": FD(("slice",), lambda x: tlax.slice(x, (0, 1), (3, 4), (2, 2)) ** 2, (X,)),
    "dynamic_slice": FD(("dynamic_slice",),
                        lambda x: tlax.dynamic_slice(x, (np.int32(1), np.int32(1)), (2, 2)) ** 2,
                        (X,)),
    "dynamic_update_slice": FD(("dynamic_update_slice",), lambda x, u: tlax.dynamic_update_slice(
        x * x, u[:2, :2] ** 3, (np.int32(1), np.int32(2))), (X, Y)),
    "copy": FD(("copy",), lambda x: ALL_PRIMITIVES["copy"].bind(x) ** 2, (X,)),
    "jit": FD(("jit",), traxla.jit(lambda x, y: tnp.sin(x) * y), (X, Y)),
    "call": FD(("call",), lambda x, y: _call_bind(lambda a, b: [tnp.sin(a) * b], x, y), (X, Y)),
    "closed_call": FD(("closed_call",), lambda x, y: _closed_call_bind(
        lambda a, b: tnp.sin(a) * b + 1.5, x, y), (X, Y)),
}

_I = {n: ALL_PRIMITIVES[n] for n in ("gather", "scatter", "scatter-add", "scatter-mul",
                                     "scatter-max", "scatter-min", "sort", "cumsum", "cumprod",
                                     "cummax", "cummin", "cumlogsumexp") if n in ALL_PRIMITIVES}
if len(_I) == 12:
    from traxla.autodiff.rules import indexing as _R
    from traxla.ir.rules.indexing import GatherDimensionNumbers as _GDN
    from traxla.ir.rules.indexing import ScatterDimensionNumbers as _SDN
    _IDX = np.array([[2], [0], [1]], np.int32)
    _DUP = np.array([[2], [0], [2]], np.int32)
    _GD = _GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    _SD = _SDN(update_window_dims=(1,), inserted_window_dims=(0,),
               scatter_dims_to_operand_dims=(0,))

    def _scatter_with(name, idx, unique=False):
        prim = _I[name]
        jaxpr = None if name == "scatter" else _R._reduction_jaxpr(
            {"scatter-add": tlax.add, "scatter-mul": tlax.mul, "scatter-max": tlax.max,
             "scatter-min": tlax.min}[name], np.float64)[0]

        def f(x, u):
            return prim.bind(x * x, idx, u * 2, update_jaxpr=jaxpr, update_consts=(),
                             dimension_numbers=_SD, indices_are_sorted=False,
                             unique_indices=unique, mode=_R._Mode.FILL_OR_DROP)
        return f

    FD_CASES.update({
        "gather": FD(("gather",), lambda x: _R._gather(x * x, _DUP, _GD, (1, 4)), (X,)),
        "scatter-add": FD(("scatter-add",), _scatter_with("scatter-add", _DUP), (X, Y[:3])),
        "scatter": FD(("scatter",), _scatter_with("scatter", _IDX), (X, Y[:3])),
        "scatter_unique": FD(("scatter",), _scatter_with("scatter", _IDX, True), (X, Y[:3])),
        "scatter-mul": FD(("scatter-mul",), _scatter_with("scatter-mul", _IDX, True),
                          (X, Y[:3])),
        "scatter-max": FD(("scatter-max",), _scatter_with("scatter-max", _IDX), (X, Y[:3])),
        "scatter-min": FD(("scatter-min",), _scatter_with("scatter-min", _IDX), (X, Y[:3])),
        "sort": FD(("sort",), lambda x: _I["sort"].bind(x, dimension=1, is_stable=True,
                                                        num_keys=1)[0] ** 2, (ARGS_SORT,)),
        **{n: FD((n,), lambda x, n=n: _I[n].bind(tlax.sin(x), axis=1, reverse=False), (X,))
           for n in ("cumsum", "cumprod", "cumlogsumexp")},
        **{n: FD((n,), lambda x, n=n: _I[n].bind(x, axis=0, reverse=True), (ARGS_SORT,))
           for n in ("cummax", "cummin")},
    })

if "complex" in ALL_PRIMITIVES:
    FD_CASES.update({
        "erfc": FD(("erfc",), tlax.erfc, (X,)),
        "lgamma": FD(("lgamma",), tlax.lgamma, (POS,), second=False),  # needs polygamma
        "complex/real/imag/conj": FD(
            ("complex", "real", "imag", "conj"),
            lambda x, y: tlax.real(tlax.complex(x, y) * tlax.conj(tlax.complex(y * y, x)))
            + tlax.imag(tlax.complex(x, y) * tlax.complex(x, x * y)), (X, Y)),
        "tile": FD(("tile",), lambda x: tlax.tile(x, (2, 1)) ** 2 * tnp.arange(24.).reshape(6, 4),
                   (X,)),
    })
if "scatter-sub" in ALL_PRIMITIVES and len(_I) == 12:
    FD_CASES["scatter-sub"] = FD(("scatter-sub",), lambda x, u: ALL_PRIMITIVES["scatter-sub"].bind(
        x * x, _DUP, u * 2, update_jaxpr=None, update_consts=(), dimension_numbers=_SD,
        indices_are_sorted=False, unique_indices=False, mode=_R._Mode.FILL_OR_DROP), (X, Y[:3]))

if "top_k" in ALL_PRIMITIVES:  # issue #16a: top_k / approx_top_k gather the tangent
    FD_CASES.update({
        "top_k": FD(("top_k",), lambda x: tlax.top_k(x * x, 2)[0], (ARGS_SORT,)),
        "approx_top_k": FD(("approx_top_k",), lambda x: tlax.approx_max_k(x * x, 2)[0]
                           + tlax.approx_min_k(x, 2)[0], (ARGS_SORT,)),
    })

# Primitives whose derivative is zero (or whose inputs/outputs are integers or booleans).
ZERO_CASES = {
    "sign": lambda x: tlax.sign(x) * x, "floor": lambda x: tlax.floor(x) * 2.0,
    "ceil": lambda x: tlax.ceil(x) * 2.0, "round": lambda x: tlax.round(x) * 2.0,
    "is_finite": lambda x: tlax.select(tlax.is_finite(x), x, x * 0.0),
    "comparisons": lambda x: tlax.select(tlax.lt(x, 0.0) & tlax.le(x, 0.0) | tlax.gt(x, 0.0)
                                         & tlax.ge(x, 0.0) & tlax.ne(x, 0.5), x,
                                         tlax.select(tlax.eq(x, 0.0), x * 3.0, x * 2.0)),
    "argmax/argmin": lambda x: x * tlax.convert_element_type(
        tlax.argmax(x, 0, np.int32) + tlax.argmin(x, 0, np.int32), x.dtype),
    # the exponent bits: constant under small perturbations
    "bitcast_convert_type": lambda x: x * tlax.convert_element_type(tlax.shift_right_logical(
        tlax.bitcast_convert_type(x, np.int64), np.int64(52)), x.dtype),
    "integer ops": lambda x: x * tlax.convert_element_type(
        tlax.shift_left(tlax.bitwise_not(tlax.convert_element_type(x, np.int32)), np.int32(1))
        ^ tlax.shift_right_logical(tlax.convert_element_type(x, np.int32), np.int32(1))
        | tlax.shift_right_arithmetic(tlax.convert_element_type(x, np.int32), np.int32(1)),
        x.dtype),
    "reduce_and/or": lambda x: tlax.select(
        tlax.reduce_and(x > -5.0, (0,)) | tlax.reduce_or(x > 5.0, (0,)), x, x * 2.0),
    "iota": lambda x: x * tlax.iota(x.dtype, x.shape[0]),
    # an unspecified value (traxla lowers it to zero): its tangent is zero
    "empty2": lambda x: x * 2.0 + ALL_PRIMITIVES["empty2"].bind(
        dtype=x.dtype, memory_space=MemorySpace.Device),
}
ZERO_PRIMS = {"sign", "floor", "ceil", "round", "is_finite", "stop_gradient", "eq",
              "ne", "lt", "le", "gt", "ge", "argmax", "argmin", "bitcast_convert_type", "not",
              "and", "or", "xor", "shift_left", "shift_right_logical", "shift_right_arithmetic",
              "reduce_and", "reduce_or", "iota", "empty2"}
ZERO_PRIMS |= {"population_count", "clz", "eq_to", "lt_to", "le_to"}  # issue #16a
# differentiated elsewhere: control flow (tests/test_control_flow.py), the custom-derivative
# primitives (section e), random bits (traxla/random)
ELSEWHERE = {"cond", "while", "scan", "custom_jvp_call", "custom_vjp_call", "custom_lin",
             # collectives: differentiated inside shard_map in tests/test_sharding.py
             "psum", "pmax", "pmin", "all_gather", "reduce_scatter", "ppermute", "reshard",
             # against finite differences in tests/test_conv.py, test_windowed.py, test_fft.py
             "conv_general_dilated", "reduce_window_sum", "reduce_window_max",
             "reduce_window_min", "reduce_window", "reduce", "select_and_gather_add",
             "select_and_scatter_add", "fft"}
# random primitives: zero tangents, checked in tests/test_random.py
from traxla.ir.rules.random import P as _RANDOM_PRIMS  # noqa: E402
ELSEWHERE |= set(_RANDOM_PRIMS)
# checkpoint and the optimizer-steering primitives: tests/test_checkpoint.py
ELSEWHERE |= {"remat2", "name", "reduce_precision", "optimization_barrier"}
ELSEWHERE |= {"ffi_call"}  # refuses differentiation: tests/test_ffi.py
ELSEWHERE |= {"shard_map"}  # grad, jvp and jit(grad) of pmap against JAX: tests/test_pmap.py
ELSEWHERE |= {"pvary"}  # grad through check_vma's casts against JAX: tests/test_sharding_docs.py
# the free casts between varying, unreduced and reduced manual values: grad through them
# against JAX in tests/test_unreduced.py (preduced's transpose refuses)
ELSEWHERE |= {"vary_unreduced_cast_p", "reduced_vary_cast_p", "preduced"}
# Families whose JVPs are checked by finite differences (or as zero / refusing) in their own files
ELSEWHERE |= {"conv_general_dilated"}  # tests/test_conv.py
ELSEWHERE |= {"reduce", "reduce_window", "reduce_window_max", "reduce_window_min",
              "reduce_window_sum", "select_and_gather_add", "select_and_scatter_add"}  # test_windowed.py
ELSEWHERE |= {"fft"}  # tests/test_fft.py
# hijax VJPHiPrimitive (its jvp, and the linearized equation of its lin/vjp rules):
# grad, jvp, linearize and vmap of grad against JAX in tests/test_hijax_vjp.py
ELSEWHERE |= {"call_hi_primitive", "call_hi_primitive_linearized"}
ELSEWHERE |= {"cholesky", "eig", "eigh", "lu", "lu_pivots_to_permutation", "qr", "svd",
              "triangular_solve", "tridiagonal_solve"}  # tests/test_linalg_numeric.py
ELSEWHERE |= {"debug_callback", "debug_print", "io_callback", "pure_callback"}  # test_callbacks*.py
ELSEWHERE |= {"check"}  # tests/test_checkify.py
ELSEWHERE |= {"top_k", "approx_top_k", "population_count", "clz"}  # tests/test_numpy_rest.py
ELSEWHERE |= {"bessel_i0e", "bessel_i1e", "digamma", "igamma", "igammac", "polygamma", "zeta",
              "regularized_incomplete_beta", "random_gamma"}  # test_random_scipy_corpus.py, test_random.py
# linear algebra: finite differences in tests/test_linalg_numeric.py, test_linalg_solves.py
from traxla.ir.rules.linalg import P as _LINALG_PRIMS  # noqa: E402
ELSEWHERE |= set(_LINALG_PRIMS)
ELSEWHERE |= {"device_put"}  # linear, exact: grad and vmap in tests/test_sparse_linalg.py
ELSEWHERE |= {"get", "swap", "addupdate"}  # refs as primal inputs: tests/test_refs_gaps.py
ELSEWHERE |= {"custom_vmap_call"}  # its JVP is a custom_vmap_call: tests/test_custom_batching.py
# issue #31's lax names, against JAX's jvp/grad jaxprs (ragged_dot_general also by finite
# differences in float64): tests/test_lax_census_names.py
ELSEWHERE |= {"stage", "dce_sink", "ragged_dot_general"}
ELSEWHERE |= {"pallas_call"}  # the JVP kernel against JAX's: tests/test_pallas_mosaic.py
# conversions to and from a library's extended dtype: grad against JAX's, with the dtype's
# own sum of cotangents: tests/test_extended_dtype_rules.py
ELSEWHERE |= {"to_edtype", "from_edtype"}
# linear collectives and placements of the stop-29 census, transposed/differentiated in their
# own files: tests/test_pbroadcast.py, test_ragged_all_to_all.py, test_multihost_utils.py
ELSEWHERE |= {"pbroadcast", "ragged_all_to_all", "host_local_array_to_global_array",
              "global_array_to_host_local_array"}


def test_every_rule_is_exercised():
    """Every primitive with a JVP rule from traxla/autodiff is in a numeric table here."""
    covered = {p for case in FD_CASES.values() for p in case.prims} | ZERO_PRIMS | ELSEWHERE
    ours = {p.name for p, rule in jvp_rules.items()
            if getattr(rule, "__module__", "").startswith("traxla.autodiff")}
    assert ours - covered == set()


def _fd(f, args, vs, eps):
    plus = f(*[a + eps * v for a, v in zip(args, vs)])
    minus = f(*[a - eps * v for a, v in zip(args, vs)])
    return (np.asarray(plus) - np.asarray(minus)) / (2 * eps)


# reverse-over-reverse too (forward-over-reverse runs for every twice-differentiable case)
REV_REV = {"mul", "div", "sin", "exp", "pow", "max", "dot_general", "reduce_max", "reduce_prod",
           "select_n", "pad", "dynamic_update_slice", "concatenate", "jit", "gather",
           "scatter-add", "broadcast_in_dim", "integer_pow", "tanh"}


@pytest.mark.parametrize("name", list(FD_CASES))
def test_finite_differences(name, x64):
    """jvp, grad and (forward-over-reverse) Hessian-vector products against central
    differences, all in one compiled program per case."""
    case = FD_CASES[name]
    n = len(case.args)
    nums = tuple(range(n))
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    vs = [rng.standard_normal(np.shape(a)) for a in case.args]
    out_aval = traxla.make_jaxpr(case.fn)(*case.args).out_avals[0]
    w = rng.standard_normal(out_aval.shape)
    eps1 = 1e-6 if out_aval.dtype == np.float64 else 1e-2  # (float32 round-off)
    eps2 = 1e-5

    def loss(*a):
        return tnp.sum(case.fn(*a) * w)
    grad_fn = traxla.grad(loss, argnums=nums)
    rev_rev = case.second and any(p in REV_REV for p in case.prims)

    def check(*a):
        args, vs_ = a[:n], a[n:]

        def shifted(s):
            return [x + s * v for x, v in zip(args, vs_)]
        _, t_out = traxla.jvp(case.fn, tuple(args), tuple(vs_))
        fd = (case.fn(*shifted(eps1)) - case.fn(*shifted(-eps1))) / (2 * eps1)
        res = {"t": t_out, "fd": fd, "grads": grad_fn(*args)}
        if case.second:
            res["hvp"] = traxla.jvp(grad_fn, tuple(args), tuple(vs_))[1]
            res["fd2"] = [(p - m) / (2 * eps2) for p, m in
                          zip(grad_fn(*shifted(eps2)), grad_fn(*shifted(-eps2)))]
        if rev_rev:
            res["gg"] = traxla.grad(lambda *b: sum(tnp.sum(g * v) for g, v in
                                                   zip(grad_fn(*b), vs_)), argnums=nums)(*args)
        return res

    r = traxla.jit(check)(*case.args, *vs)
    tol = dict(rtol=1e-5, atol=1e-6) if eps1 == 1e-6 else dict(rtol=1e-3, atol=1e-3)
    fd = np.asarray(r["fd"])
    np.testing.assert_allclose(np.asarray(r["t"]), fd, **tol)
    # reverse mode: <grad L, v> is the directional derivative of L = sum(w * f)
    directional = sum(np.sum(np.asarray(g) * v) for g, v in zip(r["grads"], vs))
    np.testing.assert_allclose(directional, np.sum(w * fd), **tol)
    if case.second:
        for h, d in zip(r["hvp"], r["fd2"]):
            np.testing.assert_allclose(np.asarray(h), np.asarray(d), rtol=1e-4, atol=1e-5)
    if rev_rev:
        for h, g in zip(r["hvp"], r["gg"]):
            np.testing.assert_allclose(np.asarray(g), np.asarray(h), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", list(ZERO_CASES))
def test_zero_derivatives(name, x64):
    fn = ZERO_CASES[name]
    x = np.array([0.3, -1.7, 2.2, 4.1])
    rng = np.random.default_rng(0)
    v = rng.standard_normal(4)
    out, t = traxla.jvp(fn, (x,), (v,))
    fd = _fd(fn, (x,), (v,), 1e-6)
    np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-6, atol=1e-8)
    g = traxla.grad(lambda x: tnp.sum(fn(x)))(x)
    np.testing.assert_allclose(np.asarray(g) @ v, np.sum(fd), rtol=1e-6, atol=1e-8)


def test_stop_gradient_blocks_tangents(x64):
    x = np.array([0.3, -1.7, 2.2])
    v = np.array([1.0, 2.0, -1.0])
    _, t = traxla.jvp(lambda x: tlax.stop_gradient(x) * x, (x,), (v,))
    np.testing.assert_allclose(np.asarray(t), x * v)
    g = traxla.grad(lambda x: tnp.sum(tlax.stop_gradient(x) ** 2 + x))(x)
    np.testing.assert_allclose(np.asarray(g), np.ones(3))
    h = traxla.grad(traxla.grad(lambda s: tlax.stop_gradient(s) * s ** 2))(2.0)
    assert float(h) == 4.0


def test_integer_jvp_takes_and_returns_float0():
    float0 = jax.dtypes.float0
    x = np.array([1, 2, 3], np.int32)
    out, t = traxla.jvp(lambda x: x * 2 + 1, (x,), (np.zeros(3, float0),))
    np.testing.assert_array_equal(np.asarray(out), [3, 5, 7])
    assert t.dtype == float0 and t.shape == (3,)
    # mixed: the float output's tangent flows, the int input's is float0
    out, t = traxla.jvp(lambda x, i: x * i, (F3, x), (F3, np.zeros(3, float0)))
    np.testing.assert_allclose(np.asarray(t), F3 * x)


def test_grad_allow_int_returns_float0_zeros():
    g = traxla.grad(lambda x, i: tnp.sum(x * i), argnums=(0, 1), allow_int=True)(F3, I3)
    want = jax.grad(lambda x, i: jnp.sum(x * i), argnums=(0, 1), allow_int=True)(F3, I3)
    np.testing.assert_allclose(np.asarray(g[0]), np.asarray(want[0]))
    assert g[1].dtype == want[1].dtype == jax.dtypes.float0 and g[1].shape == (3,)


def test_vjp_of_integer_input_is_float0():
    out, f_vjp = traxla.vjp(lambda x, i: x * i, F3, I3)
    ct_x, ct_i = f_vjp(np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(ct_x), I3)
    assert ct_i.dtype == jax.dtypes.float0


def test_float0_values_come_back_as_typed_numpy_arrays_on_every_path():
    # JAX hands every float0 value back host-side, as a TypedNdArray (a NumPy array that
    # carries its aval): jit outputs (first and cached calls), Compiled, pmap, eager
    # gradients, vmap, jvp, custom_jvp rules' tangents, device_put, jnp.asarray, literals
    def paths(api, np_):
        grad0 = lambda x: api.grad(lambda i: 1.0, allow_int=True)(x)  # noqa: E731
        jitted = api.jit(grad0)
        pair = api.jit(lambda x: (x, grad0(x)))
        seen = []

        @api.custom_jvp
        def f(x, i):
            return x * i

        @f.defjvp
        def f_jvp(p, t):
            seen.append(t[1])
            return f(*p), t[0] * p[1]
        api.grad(f)(1.0, 2)
        z = np.zeros((2,), api.dtypes.float0)
        closed = api.make_jaxpr(grad0)(1)
        return [jitted(1), jitted(1), pair(1)[1], jitted.lower(1).compile()(1),
                api.pmap(grad0)(np_.arange(1)), grad0(1),
                api.vmap(grad0)(np_.arange(2)), api.jvp(lambda x: x, (1,), (z[:1].reshape(()),))[1],
                seen[0], api.device_put(z), np_.asarray(z), closed.jaxpr.outvars[0].val]

    for got, want in zip(paths(traxla, tnp), paths(jax, jnp), strict=True):
        assert type(got).__name__ == type(want).__name__ == "TypedNdArray"
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype == jax.dtypes.float0
        assert repr(got) == repr(want) and got.shape == want.shape
        assert got.aval == ShapedArray(want.shape, got.dtype, want.aval.weak_type)
        assert not isinstance(got, traxla.Array)
    # a float0 argument goes in as any NumPy array does; equal values compare as NumPy's
    out = traxla.jit(lambda t: t)(paths(traxla, tnp)[0])
    assert type(out).__name__ == "TypedNdArray" and bool(np.all(out == out))


def _jvp_passthrough_types(api, np_, lax_):
    # JAX's jnp functions are jitted: under an eager jvp, a primal or tangent they pass through
    # unchanged comes back an Array (of the primal's tangent type), as a program's outputs do;
    # lax.add is not jitted, and the identity function touches nothing
    fns = [lambda x: x + 0.0, lambda x: 0 + x, lambda x: x - 0, np_.real, np_.positive,
           np_.squeeze, np_.asarray, np_.conj, lambda x: lax_.add(x, 0.0), lambda x: x]
    out = []
    cases = [(f, 1.0, 1.0) for f in fns] + [(fns[0], np.float32(1.0), np.float64(1.0))]
    for f, p, t in cases:
        po, to = api.jvp(f, (p,), (t,))
        out.append([(type(v).__name__ == "ArrayImpl", str(np.result_type(v)),
                     getattr(v, "weak_type", None), float(v)) for v in (po, to)])
    return out


def test_jvp_of_jnp_functions_gives_array_tangents_for_python_and_numpy_ones():
    assert (_jvp_passthrough_types(traxla, tnp, tlax)
            == _jvp_passthrough_types(jax, jnp, jlax))


def test_linearize_matches_jvp():
    f = lambda x, y: tnp.sin(x) * y  # noqa: E731
    out, f_jvp = traxla.linearize(f, F3, G3)
    np.testing.assert_allclose(np.asarray(out), np.sin(F3) * G3, rtol=1e-6)
    _, t = traxla.jvp(f, (F3, G3), (U3, F3))
    np.testing.assert_allclose(np.asarray(f_jvp(U3, F3)), np.asarray(t), rtol=1e-6)


# == (d) compositions, numerically against JAX ===========================================

def _f_scalar(N):
    return lambda x: N.np.sum(N.np.tanh(x) * N.np.sin(x) ** 2 + x * N.np.cos(x))


def _f_row(N):
    return lambda r: N.np.sum(N.np.exp(-r ** 2) * r) + N.np.max(r)


COMPOSITIONS = {
    "jit(grad(vmap))": lambda N: N.jit(N.grad(lambda x: N.np.sum(N.vmap(_f_row(N))(x)))),
    "grad(jit)": lambda N: N.grad(N.jit(_f_scalar(N))),
    "grad(grad)": lambda N: N.vmap(N.grad(N.grad(lambda s: N.np.sin(s) * s ** 3))),
    "vmap(grad)": lambda N: N.vmap(N.grad(_f_row(N))),
    "vmap(jit(grad))": lambda N: N.vmap(N.jit(N.grad(_f_row(N)))),
    "grad(vmap(jit))": lambda N: N.grad(lambda x: N.np.sum(N.vmap(N.jit(_f_row(N)))(x))),
    "jvp(jit(grad))": lambda N: lambda x: N.jvp(N.jit(N.grad(_f_scalar(N))), (x,), (x,))[1],
    "grad(grad(jit))": lambda N: N.grad(lambda x: N.np.sum(N.grad(N.jit(_f_scalar(N)))(x) ** 2)),
    "vjp(vmap)": lambda N: lambda x: N.vjp(N.vmap(N.np.sin), x)[1](x),
    "grad(jit(vmap(grad)))": lambda N: N.grad(lambda x: N.np.sum(
        N.jit(N.vmap(N.grad(_f_row(N))))(x) ** 2)),
    "grad(scan-free loop)": lambda N: N.grad(lambda x: functools.reduce(
        lambda acc, i: acc * N.np.cos(acc + i), range(4), N.np.sum(x))),
}


# Evaluated eagerly (op by op); the others run under an outer jit, on both sides, as
# compiling one program is much cheaper than compiling every eager operation.
EAGER = {"grad(jit)", "vmap(grad)", "jvp.grad", "jvp.jvp", "vjp.grad", "vjp.grad(vmap)",
         "jacfwd", "jacrev", "jacfwd.has_aux"}


def _run(table, name, N, x):
    fn = table[name](N)
    return fn(x) if name in EAGER else N.jit(fn)(x)


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_compositions_match_jax(name, jax_side):
    x = F34 if name != "grad(grad)" else F3
    want = jax_side(lambda: _run(COMPOSITIONS, name, J, x))
    got = _run(COMPOSITIONS, name, T, x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-6)


# == (e) custom_jvp / custom_vjp ============================================================

def _log1pexp(N):
    """softplus with a stable derivative (sigmoid), where the naive one is inf/inf = nan."""
    @N.custom_jvp
    def log1pexp(x):
        return N.np.log(1.0 + N.np.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + N.np.exp(x)))
    return log1pexp


def _logsumexp(N):
    """logsumexp with a custom_vjp returning softmax (computed from the stable residuals)."""
    @N.custom_vjp
    def lse(x):
        m = N.lax.stop_gradient(N.np.max(x))
        return N.np.log(N.np.sum(N.np.exp(x - m))) + m

    def fwd(x):
        m = N.np.max(x)
        e = N.np.exp(x - m)
        s = N.np.sum(e)
        return N.np.log(s) + m, (e, s)

    def bwd(res, g):
        e, s = res
        return (g * e / s,)
    lse.defvjp(fwd, bwd)
    return lse


def _clip_gradient(N):
    from functools import partial

    @partial(N.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, None

    def bwd(lo, hi, _, g):
        return (N.np.clip(g, lo, hi),)
    clip_gradient.defvjp(fwd, bwd)
    return clip_gradient


def _pytree_custom_vjp(N):
    @N.custom_vjp
    def f(d, y):
        return {"s": N.np.sin(d["a"]) * y, "t": d["b"] * y}

    def fwd(d, y):
        return f(d, y), (N.np.cos(d["a"]), d["a"], d["b"], y)

    def bwd(res, g):
        cos_a, a, b, y = res
        return ({"a": g["s"] * cos_a * y, "b": g["t"] * y * 10.0},
                N.np.sum(g["s"] * N.np.sin(a) + g["t"] * b, axis=0))
    f.defvjp(fwd, bwd)
    return f


def _nondiff_custom_jvp(N):
    from functools import partial

    @partial(N.custom_jvp, nondiff_argnums=(0,))
    def app(fn, x):
        return fn(x)

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        x, = primals
        t, = tangents
        return app(fn, x), 3.0 * t * fn(x)
    return app


CUSTOM = {
    "jvp.grad": lambda N: N.grad(lambda x: N.np.sum(_custom_sin(N)(x))),
    "jvp.jvp": lambda N: lambda x: N.jvp(_custom_sin(N), (x,), (x,))[1],
    "jvp.jit(grad)": lambda N: N.jit(N.grad(lambda x: N.np.sum(_custom_sin(N)(x)))),
    "jvp.grad(jit)": lambda N: N.grad(N.jit(lambda x: N.np.sum(_custom_sin(N)(x)))),
    "jvp.vmap(grad)": lambda N: N.vmap(N.grad(lambda x: N.np.sum(_custom_sin(N)(x)))),
    "jvp.grad(vmap)": lambda N: N.grad(lambda x: N.np.sum(N.vmap(_custom_sin(N))(x))),
    "jvp.grad(vmap(jit))": lambda N: N.grad(
        lambda x: N.np.sum(N.vmap(N.jit(_custom_sin(N)))(x))),
    "jvp.jit(vmap)": lambda N: N.jit(N.vmap(_custom_sin(N))),
    "jvp.hessian": lambda N: N.vmap(N.hessian(lambda r: N.np.sum(_custom_sin(N)(r) * r))),
    "jvp.jacfwd": lambda N: N.vmap(N.jacfwd(_custom_sin(N))),
    "jvp.defjvps": lambda N: lambda x: N.grad(lambda x, y: N.np.sum(_custom_defjvps(N)(x, y)),
                                              argnums=(0, 1))(x, x + 1.0),
    "jvp.nondiff": lambda N: N.grad(lambda x: N.np.sum(_nondiff_custom_jvp(N)(N.np.sin, x))),
    "jvp.nondiff.vmap(jacfwd)": lambda N: N.vmap(N.jacfwd(
        lambda x: _nondiff_custom_jvp(N)(N.np.cos, x))),
    "vjp.grad": lambda N: N.grad(lambda x: N.np.sum(_custom_vjp_sin(N)(x))),
    "vjp.jit(grad)": lambda N: N.jit(N.grad(lambda x: N.np.sum(_custom_vjp_sin(N)(x)))),
    "vjp.grad(jit)": lambda N: N.grad(N.jit(lambda x: N.np.sum(_custom_vjp_sin(N)(x)))),
    "vjp.vmap(grad)": lambda N: N.vmap(N.grad(lambda x: N.np.sum(_custom_vjp_sin(N)(x)))),
    "vjp.grad(vmap)": lambda N: N.grad(lambda x: N.np.sum(N.vmap(_custom_vjp_sin(N))(x))),
    "vjp.grad(jit(vmap))": lambda N: N.grad(
        lambda x: N.np.sum(N.jit(N.vmap(_custom_vjp_sin(N)))(x))),
    "vjp.grad(vmap(jit))": lambda N: N.grad(
        lambda x: N.np.sum(N.vmap(N.jit(_custom_vjp_sin(N)))(x))),
    "vjp.jacrev": lambda N: N.jacrev(_custom_vjp_sin(N)),
    "vjp.hessian": lambda N: N.vmap(N.hessian(lambda r: N.np.sum(_custom_vjp_sin(N)(r) * r))),
    "vjp.grad(grad)": lambda N: N.vmap(N.vmap(N.grad(N.grad(
        lambda s: _custom_vjp_sin(N)(s) * s)))),
    "vjp.logsumexp": lambda N: N.grad(_logsumexp(N)),
    "vjp.vmap(grad(logsumexp))": lambda N: N.vmap(N.grad(_logsumexp(N))),
    "vjp.clip_gradient": lambda N: N.grad(
        lambda x: N.np.sum(_clip_gradient(N)(-0.1, 0.2, x) * x * 3.0)),
    "vjp.pytree": lambda N: lambda x: N.grad(
        lambda d, y: N.np.sum(_pytree_custom_vjp(N)(d, y)["s"] + _pytree_custom_vjp(N)(d, y)["t"]),
        argnums=(0, 1))({"a": x, "b": x * 2}, x[0]),
    "vjp.jit(vmap(grad(pytree)))": lambda N: N.jit(N.vmap(lambda x: N.grad(
        lambda d, y: N.np.sum(_pytree_custom_vjp(N)(d, y)["s"]),
        argnums=(0, 1))({"a": x, "b": x * 2}, x[1]))),
}


@pytest.mark.parametrize("name", list(CUSTOM))
def test_custom_rules_match_jax(name, jax_side):
    x = F34
    want = jax_side(lambda: _run(CUSTOM, name, J, x))
    got = _run(CUSTOM, name, T, x)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    g_leaves, g_tree = traxla.tree_util.tree_flatten(got)
    assert len(w_leaves) == len(g_leaves)
    for g, w in zip(g_leaves, w_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-6)


def test_custom_rule_is_used_not_the_primal():
    # the rule's factor 2 shows the custom JVP was applied in both modes and under jit
    x = np.float32(0.3)
    f = _custom_sin(T)
    assert np.isclose(traxla.grad(f)(x), 2 * np.cos(x))
    assert np.isclose(traxla.jvp(f, (x,), (np.float32(1),))[1], 2 * np.cos(x))
    assert np.isclose(traxla.grad(traxla.jit(f))(x), 2 * np.cos(x))
    assert np.isclose(traxla.grad(_custom_vjp_sin(T))(x), 2 * np.cos(x))
    np.testing.assert_allclose(np.asarray(f(F3)), np.sin(F3), rtol=1e-6)


def test_custom_jvp_gives_stable_gradient(jax_side):
    x = np.array([-30.0, 0.0, 50.0, 100.0], np.float32)
    naive = traxla.grad(lambda x: tnp.sum(tnp.log(1.0 + tnp.exp(x))))(x)
    assert np.isnan(np.asarray(naive)[-1])  # exp overflows: inf / inf
    stable = traxla.grad(lambda x: tnp.sum(_log1pexp(T)(x)))(x)
    want = jax_side(lambda: jax.grad(lambda x: jnp.sum(_log1pexp(J)(x)))(x))
    np.testing.assert_allclose(np.asarray(stable), np.asarray(want), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(stable), 1 / (1 + np.exp(-x.astype(np.float64))),
                               rtol=1e-6, atol=1e-7)
    big = np.array([1000.0, 1001.0, 999.0], np.float32)
    g = traxla.grad(_logsumexp(T))(big)
    assert np.all(np.isfinite(np.asarray(g)))
    np.testing.assert_allclose(np.asarray(g), jax_side(lambda: jax.nn.softmax(big)), rtol=1e-5)


def test_custom_vjp_forward_mode_is_refused():
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a "
                                        r"custom_vjp function."):
        traxla.jvp(_custom_vjp_sin(T), (F3,), (F3,))
    with pytest.raises(TypeError, match="can't apply forward-mode"):
        traxla.jvp(traxla.jit(_custom_vjp_sin(T)), (F3,), (F3,))


def _calls_before_the_refusal(N):
    """Custom_derivative_rules notebook: JAX runs the forward rule (which calls f) before
    refusing forward mode, eagerly and under jit alike."""
    calls = []

    @N.custom_vjp
    def f(x):
        calls.append("f")
        return N.np.sin(x)

    def f_fwd(x):
        calls.append("fwd")
        return f(x), N.np.cos(x)
    f.defvjp(f_fwd, lambda c, g: (c * g,))
    for run in (lambda: N.jvp(f, (3.0,), (1.0,)),
                lambda: N.jvp(N.jit(f), (3.0,), (1.0,))):
        try:
            run()
        except TypeError as e:
            calls.append(str(e))
    return calls


def test_custom_vjp_under_jvp_runs_the_forward_rule_first():
    got = _calls_before_the_refusal(T)
    assert got == _calls_before_the_refusal(J)
    assert got[:2] == ["fwd", "f"]


def test_custom_errors_match_jax():
    def messages(N):
        out = []

        @N.custom_jvp
        def f(x):
            return N.np.sin(x)

        @N.custom_vjp
        def h(x):
            return N.np.sin(x)
        for thunk in (lambda: f(F3), lambda: h(F3)):
            with pytest.raises(AttributeError) as e:
                thunk()
            out.append(str(e.value))
        f.defjvp(lambda p, t: (f(p[0]), t[0][:2]))
        h.defvjp(lambda x: (N.np.sin(x), N.np.cos(x)), lambda r, g: (2 * r * g, 1.0))
        for thunk in (lambda: N.jvp(f, (F3,), (F3,)), lambda: N.grad(lambda x: N.np.sum(h(x)))(F3)):
            with pytest.raises(TypeError) as e:
                thunk()
            out.append(str(e.value))
        return out
    assert messages(T) == messages(J)


def test_custom_jvp_jaxpr_under_jit_keeps_the_rule():
    f = _custom_sin(T)
    text = str(traxla.make_jaxpr(traxla.jit(f))(F3))
    assert "custom_jvp_call[" in text and "jvp=f_jvp" in text


# == (f) jacobians and hessians ===============================================================

def _fpt(N):
    return lambda d, y: {"u": N.np.sin(d["a"]) * y, "v": (d["b"] @ d["a"], N.np.sum(d["a"] ** 2))}


JAC = {
    "jacfwd": lambda N: N.jacfwd(lambda x: N.np.sin(x) * N.np.sum(x ** 2)),
    "jacrev": lambda N: N.jacrev(lambda x: N.np.sin(x) * N.np.sum(x ** 2)),
    "jacfwd.matrix": lambda N: N.jacfwd(lambda x: N.np.tanh(x @ x.T)),
    "jacrev.matrix": lambda N: N.jacrev(lambda x: N.np.tanh(x @ x.T)),
    "hessian": lambda N: N.hessian(lambda x: N.np.sum(N.np.sin(x) * x[0] ** 2)),
    "hessian.matrix": lambda N: N.hessian(lambda x: N.np.sum(N.np.tanh(x) ** 3)),
    "jacfwd.pytree": lambda N: lambda x: N.jacfwd(_fpt(N), argnums=(0, 1))(
        {"a": x[0], "b": x[1:3]}, x[2, 1]),
    "jacrev.pytree": lambda N: lambda x: N.jacrev(_fpt(N), argnums=(0, 1))(
        {"a": x[0], "b": x[1:3]}, x[2, 1]),
    "hessian.pytree": lambda N: lambda x: N.hessian(
        lambda d: N.np.sum(N.np.sin(d["a"]) * d["b"] ** 2))({"a": x[0], "b": x[1]}),
    "jacrev.has_aux": lambda N: N.jacrev(lambda x: (N.np.sin(x), x * 2), has_aux=True),
    "jacfwd.has_aux": lambda N: N.jacfwd(lambda x: (N.np.sin(x), {"k": x * 2}), has_aux=True),
    "jit(jacrev)": lambda N: N.jit(N.jacrev(lambda x: N.np.exp(x) * x[1])),
    "vmap(jacfwd)": lambda N: N.vmap(N.jacfwd(lambda r: N.np.outer(r, N.np.sin(r)))),
}


@pytest.mark.parametrize("name", list(JAC))
def test_jacobians_match_jax(name, jax_side):
    x = F34
    want = jax_side(lambda: _run(JAC, name, J, x))
    got = _run(JAC, name, T, x)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    g_leaves, g_tree = traxla.tree_util.tree_flatten(got)
    assert str(g_tree) == str(w_tree)
    for g, w in zip(g_leaves, w_leaves):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-6)


# == (g) errors ================================================================================

def _messages(thunk_t, thunk_j, exc):
    with pytest.raises(exc) as got:
        thunk_t()
    with pytest.raises(exc) as want:
        thunk_j()
    return str(got.value), str(want.value)


ERRORS = {
    "grad non-scalar": (lambda N: N.grad(lambda x: x * 2)(F3), TypeError),
    "grad of a tuple": (lambda N: N.grad(lambda x: (x, x))(F3), TypeError),
    "grad int input": (lambda N: N.grad(lambda x: N.np.sum(x))(I3), TypeError),
    "grad int output": (lambda N: N.grad(lambda x: N.np.sum(x).astype(N.np.int32))(F3), TypeError),
    "grad argnums": (lambda N: N.grad(lambda x, y: N.np.sum(x), argnums=2)(F3, F3), TypeError),
    "grad has_aux not a pair": (lambda N: N.grad(lambda x: N.np.sum(x), has_aux=True)(F3),
                                TypeError),
    "jvp int tangent": (lambda N: N.jvp(lambda x: x * 2, (I3,), (I3,)), TypeError),
    "jvp shape": (lambda N: N.jvp(lambda x: x * 2, (F3,), (F3[:2],)), ValueError),
    "jvp not tuples": (lambda N: N.jvp(lambda x: x * 2, F3, F3), TypeError),
    "vjp cotangent shape": (lambda N: N.vjp(lambda x: x * 2, F3)[1](F3[:2]), ValueError),
    "jacfwd int": (lambda N: N.jacfwd(lambda x: x)(I3), TypeError),
    "jacrev int": (lambda N: N.jacrev(lambda x: x)(I3), TypeError),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_messages_match_jax(name):
    fn, exc = ERRORS[name]
    got, want = _messages(lambda: fn(T), lambda: fn(J), exc)
    if name == "grad has_aux not a pair":  # the tracer's class and repr differ
        want, got = want.split(" but got type")[0], got.split(" but got type")[0]
    if name == "grad of a tuple":  # JAX's constant arrays print as TypedNdArray(...)
        want, got = want.split(" Output was")[0], got.split(" Output was")[0]
    assert got == want


def test_grad_non_scalar_message():
    with pytest.raises(TypeError) as info:  # str(e): match= also reads the traceback note
        traxla.grad(lambda x: x * 2)(F3)
    assert str(info.value) == ("Gradient only defined for scalar-output functions. "
                               "Output had shape: (3,).")


def test_vjp_cotangent_tree_mismatch():
    _, f_vjp = traxla.vjp(lambda x: x * 2, F3)
    with pytest.raises(ValueError, match="unexpected tree structure"):
        f_vjp((F3,))


@pytest.fixture
def throwaway():
    """A primitive with typing and printing only; removed from every registry afterwards."""
    prim = Primitive("throwaway_test_op")
    typing_rules[prim] = lambda x: ShapedArray(x.shape, x.dtype, x.weak_type)
    try:
        yield prim
    finally:
        typing_rules.pop(prim, None)
        jvp_rules.pop(prim, None)
        transpose_rules.pop(prim, None)
        ALL_PRIMITIVES.pop(prim.name, None)


def test_missing_jvp_rule_names_the_primitive(throwaway):
    with pytest.raises(NotImplementedError,
                       match="Differentiation rule for 'throwaway_test_op' not implemented(?s:.)*JVP"):
        traxla.make_jaxpr(traxla.grad(lambda x: tnp.sum(throwaway.bind(x))))(F3)
    with pytest.raises(NotImplementedError, match="'throwaway_test_op'"):
        traxla.make_jaxpr(lambda x: traxla.jvp(throwaway.bind, (x,), (x,)))(F3)


def test_missing_transpose_rule_names_the_primitive(throwaway):
    def jvp(primals, tangents):
        return throwaway.bind(primals[0]), throwaway.bind(tangents[0])
    jvp_rules[throwaway] = jvp
    # forward mode works; reverse mode needs the missing transpose rule
    traxla.make_jaxpr(lambda x: traxla.jvp(throwaway.bind, (x,), (x,)))(F3)
    with pytest.raises(NotImplementedError,
                       match="Transpose rule .*for 'throwaway_test_op' not implemented"):
        traxla.make_jaxpr(traxla.grad(lambda x: tnp.sum(throwaway.bind(x))))(F3)


def test_leaked_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return tnp.sum(x)
    traxla.grad(f)(F3)
    with pytest.raises(traxla.errors.UnexpectedTracerError):
        tnp.sin(leaked[0])


def test_registry_sizes():
    assert len(jvp_rules) >= 100 and len(transpose_rules) >= 30


if __name__ == "__main__":
    from _corpus import print_differences
    print_differences(CORPUS, KNOWN_DIFFERENCES, jaxpr_texts, sys.argv[1:])


def test_grad_through_a_jit_with_integer_outputs():
    """A jit whose outputs all have zero tangents records no linear equation."""
    f = lambda x: (x * traxla.jit(lambda y: (y > 1).astype(np.int32))(x)).sum()  # noqa: E731
    np.testing.assert_array_equal(np.asarray(traxla.grad(f)(np.arange(3.0, dtype=np.float32))),
                                  [0.0, 0.0, 1.0])
    g = lambda x: (x * traxla.numpy.argsort(x)).sum()  # noqa: E731
    np.testing.assert_array_equal(np.asarray(traxla.grad(g)(np.array([3.0, 1.0, 2.0], np.float32))),
                                  [1.0, 2.0, 0.0])


# The lax and custom_derivatives primitives of issue #12b, differentiated (or refusing, as
# JAX) in tests/test_lax_extra.py, tests/test_lax_collectives_extra.py and
# tests/test_autodiff_api.py; read by test_every_rule_is_exercised when it runs.
ELSEWHERE |= {"mulhi", "reduce_xor", "composite", "all_to_all", "sharding_constraint",
              "linear_call"}


def _tracer_classes(N):
    """The primitives page tells tracers apart by class name: jvp's is a JVPTracer, grad's,
    vjp's and linearize's (tangent staged) a LinearizeTracer printing as GradTracer."""
    seen = []

    def f(x):
        seen.append(f"{type(x).__name__} {x}")
        return x * x
    N.grad(f)(2.0)
    N.jvp(f, (2.0,), (1.0,))
    N.vjp(f, 2.0)
    N.linearize(f, 2.0)
    return seen


def test_tracer_classes_of_jvp_and_grad_match_jax():
    assert _tracer_classes(T) == _tracer_classes(J)

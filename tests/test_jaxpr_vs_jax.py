"""traxla's jaxprs must print character-for-character as JAX's.

Each corpus program is written once against a namespace ``(np_, lax_, jit_)``
and instantiated twice: with ``(traxla.numpy, traxla.lax, traxla.jit)`` and
with ``(jax.numpy, jax.lax, jax.jit)``. The test compares
``str(make_jaxpr(f)(*args))`` as text, and separately runs ``jit(f)`` under
both on the same inputs and compares the results numerically.

Programs that cannot match without changes outside the numpy/lax layers are
listed in ``KNOWN_DIFFERENCES`` (one-line reason each) and run as
``xfail(strict=True)``, so they flip to failures once fixed.

Run ``python tests/test_jaxpr_vs_jax.py [name-substring ...]`` to print the
two jaxprs of every differing program.
"""
from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

from _corpus import compare_outputs, run_group
import traxla
import traxla.lax as tlax
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


# -- inputs ------------------------------------------------------------------------

_rng = np.random.default_rng(0)
F0 = np.float32(1.5)
F3 = np.array([0.5, -1.25, 2.0], np.float32)
F4 = np.array([0.25, -0.5, 1.5, 3.0], np.float32)
F23 = np.array([[0.5, -1.5, 2.0], [3.25, -0.75, 1.0]], np.float32)
F32 = _rng.standard_normal((3, 2)).astype(np.float32)
F34 = _rng.standard_normal((3, 4)).astype(np.float32)
F234 = _rng.standard_normal((2, 3, 4)).astype(np.float32)
F243 = _rng.standard_normal((2, 4, 3)).astype(np.float32)
F13 = np.array([[1.0, 2.0, 3.0]], np.float32)
F31 = np.array([[1.0], [2.0], [3.0]], np.float32)
U3 = np.array([0.25, -0.5, 0.75], np.float32)        # in (-1, 1): arcsin, arctanh, erf_inv
G3 = np.array([1.5, 2.0, 3.25], np.float32)          # > 1: arccosh, log
I0 = np.int32(1)
I3 = np.array([3, -2, 7], np.int32)
J3 = np.array([2, 5, -3], np.int32)
S3 = np.array([1, 2, 3], np.int32)                   # small positive: shifts
I23 = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
B3 = np.array([True, False, True])
C3 = np.array([False, False, True])
IDX = np.int32(1)
NIDX = np.int32(-1)

# A concrete array closed over by programs (becomes a constvar).
CONST3 = np.array([1.0, 2.0, 3.0], np.float32)


@dataclass(frozen=True)
class NS:
    np: Any
    lax: Any
    jit: Any
    make_jaxpr: Callable


TRAXLA = NS(tnp, tlax, traxla.jit, traxla.make_jaxpr)
JAX = NS(jnp, jlax, jax.jit, jax.make_jaxpr)


@dataclass
class Case:
    name: str
    build: Callable  # (np_, lax_, jit_) -> function
    args: tuple
    rtol: float = 1e-6


CORPUS: dict[str, Case] = {}


def P(name, args, build, rtol=1e-6):
    assert name not in CORPUS, name
    CORPUS[name] = Case(name, build, tuple(args), rtol)


# == jnp: elementwise math =========================================================

_UNARY_FLOAT = {
    "exp": F3, "exp2": F3, "log": G3, "log1p": G3, "expm1": F3, "tanh": F3, "sin": F3,
    "cos": F3, "tan": U3, "arcsin": U3, "arccos": U3, "arctan": F3, "sinh": F3, "cosh": F3,
    "arcsinh": F3, "arccosh": G3, "arctanh": U3, "sqrt": G3, "cbrt": F3, "negative": F3,
    "sign": F3, "abs": F3, "absolute": F3, "floor": F23, "ceil": F23, "rint": F23,
    "round": F23, "square": F3, "reciprocal": G3, "isfinite": F3, "positive": F3,
    "asin": U3, "acos": U3, "atan": F3, "asinh": F3, "acosh": G3, "atanh": U3,
}
for _n, _x in _UNARY_FLOAT.items():
    P(f"np.{_n}", [_x], lambda np_, lax_, jit_, _n=_n: lambda x: getattr(np_, _n)(x))

# integer inputs: promotion to float, or integer-preserving ops
for _n in ("exp", "sin", "sqrt", "negative", "sign", "abs", "floor", "square", "reciprocal",
           "round", "isfinite", "invert", "cbrt", "tanh", "arctan"):
    P(f"np.{_n}[int]", [S3], lambda np_, lax_, jit_, _n=_n: lambda x: getattr(np_, _n)(x))
P("np.logical_not[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.logical_not(x))
P("np.logical_not[f32]", [F3], lambda np_, lax_, jit_: lambda x: np_.logical_not(x))
P("np.invert[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.invert(x))
P("np.abs[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.abs(x))
P("np.round[decimals]", [F23], lambda np_, lax_, jit_: lambda x: np_.round(x, 2))
P("np.sin[scalar]", [2.0], lambda np_, lax_, jit_: lambda x: np_.sin(x))
P("np.exp[pyint]", [3], lambda np_, lax_, jit_: lambda x: np_.exp(x))

_BINARY = {
    "add": (F3, F3), "subtract": (F3, G3), "multiply": (F23, F3), "divide": (F3, G3),
    "true_divide": (I3, J3), "maximum": (F3, U3), "minimum": (F3, U3), "power": (G3, F3),
    "pow": (G3, F3), "arctan2": (F3, G3), "atan2": (F3, G3), "nextafter": (F3, G3),
    "equal": (F3, U3), "not_equal": (I3, J3), "less": (F3, U3), "less_equal": (I3, J3),
    "greater": (F3, U3), "greater_equal": (I3, J3), "bitwise_and": (I3, J3),
    "bitwise_or": (B3, C3), "bitwise_xor": (I3, J3), "logical_and": (B3, C3),
    "logical_or": (F3, U3), "logical_xor": (I3, B3), "left_shift": (I3, S3),
    "right_shift": (I3, S3), "floor_divide": (I3, J3), "remainder": (I3, J3),
    "mod": (F3, G3),
}
for _n, (_a, _b) in _BINARY.items():
    P(f"np.{_n}", [_a, _b], lambda np_, lax_, jit_, _n=_n: lambda x, y: getattr(np_, _n)(x, y))
P("np.floor_divide[f32]", [F3, G3], lambda np_, lax_, jit_: lambda x, y: np_.floor_divide(x, y))
P("np.remainder[f32]", [F3, G3], lambda np_, lax_, jit_: lambda x, y: np_.remainder(x, y))
P("np.power[int,int]", [S3, S3], lambda np_, lax_, jit_: lambda x, y: np_.power(x, y))
P("np.maximum[int,float]", [I3, F3], lambda np_, lax_, jit_: lambda x, y: np_.maximum(x, y))
P("np.add[bool,bool]", [B3, C3], lambda np_, lax_, jit_: lambda x, y: np_.add(x, y))
P("np.multiply[bcast]", [F31, F13], lambda np_, lax_, jit_: lambda x, y: np_.multiply(x, y))
P("np.where", [B3, F3, U3], lambda np_, lax_, jit_: lambda c, x, y: np_.where(c, x, y))
P("np.where[scalar]", [F3], lambda np_, lax_, jit_: lambda x: np_.where(x > 0, x, 0.0))
P("np.where[int cond]", [I3, F3], lambda np_, lax_, jit_: lambda c, x: np_.where(c, x, 1))
P("np.where[bcast]", [F23, F3], lambda np_, lax_, jit_: lambda x, y: np_.where(x > 1, x, y))
P("np.clip", [F23], lambda np_, lax_, jit_: lambda x: np_.clip(x, 0, 1))
P("np.clip[float bounds]", [F23], lambda np_, lax_, jit_: lambda x: np_.clip(x, -0.5, 0.5))
P("np.clip[max only]", [F23], lambda np_, lax_, jit_: lambda x: np_.clip(x, max=1.0))
P("np.clip[array bounds]", [F3, U3, G3], lambda np_, lax_, jit_: lambda x, a, b: np_.clip(x, a, b))
P("np.clip[int]", [I3], lambda np_, lax_, jit_: lambda x: np_.clip(x, 0, 4))
P("x.clip", [F23], lambda np_, lax_, jit_: lambda x: x.clip(0.0, 1.0))
P("x.round", [F23], lambda np_, lax_, jit_: lambda x: x.round())

# == Python operators and weak-type promotion ======================================

_OPS = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "truediv": lambda x, y: x / y, "floordiv": lambda x, y: x // y, "mod": lambda x, y: x % y,
    "pow": lambda x, y: x ** y, "lt": lambda x, y: x < y, "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y, "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
}
for _n, _op in _OPS.items():
    P(f"op.{_n}[f32,f32]", [F3, G3], lambda np_, lax_, jit_, _op=_op: _op)
for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "lt", "eq"):
    P(f"op.{_n}[i32,i32]", [I3, J3], lambda np_, lax_, jit_, _op=_OPS[_n]: _op)
for _n, _op in {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
                "lshift": lambda x, y: x << y, "rshift": lambda x, y: x >> y}.items():
    P(f"op.{_n}[i32]", [I3, S3], lambda np_, lax_, jit_, _op=_op: _op)
P("op.and[bool]", [B3, C3], lambda np_, lax_, jit_: lambda x, y: x & y)
P("op.invert[bool]", [B3], lambda np_, lax_, jit_: lambda x: ~x)
P("op.invert[i32]", [I3], lambda np_, lax_, jit_: lambda x: ~x)
P("op.neg", [F3], lambda np_, lax_, jit_: lambda x: -x)
P("op.pos", [F3], lambda np_, lax_, jit_: lambda x: +x)
P("op.abs", [I3], lambda np_, lax_, jit_: lambda x: abs(x))
# reflected operators with Python scalars
P("op.radd", [F3], lambda np_, lax_, jit_: lambda x: 1 + x)
P("op.rsub", [F3], lambda np_, lax_, jit_: lambda x: 1.5 - x)
P("op.rmul[int]", [I3], lambda np_, lax_, jit_: lambda x: 3 * x)
P("op.rtruediv", [F3], lambda np_, lax_, jit_: lambda x: 1.0 / x)
P("op.rtruediv[int]", [I3], lambda np_, lax_, jit_: lambda x: 1 / x)
P("op.rfloordiv", [I3], lambda np_, lax_, jit_: lambda x: 7 // x)
P("op.rmod", [F3], lambda np_, lax_, jit_: lambda x: 5.0 % x)
P("op.rpow", [F3], lambda np_, lax_, jit_: lambda x: 2 ** x)
P("op.rpow[int]", [S3], lambda np_, lax_, jit_: lambda x: 2 ** x)
P("op.rand[bool]", [B3], lambda np_, lax_, jit_: lambda x: True & x)
P("op.ror[int]", [I3], lambda np_, lax_, jit_: lambda x: 4 | x)
P("op.rlshift", [S3], lambda np_, lax_, jit_: lambda x: 1 << x)
P("op.rgt", [F3], lambda np_, lax_, jit_: lambda x: 0.5 > x)
# weak types
P("weak.mul2[f32]", [F3], lambda np_, lax_, jit_: lambda x: x * 2)
P("weak.mul2[i32]", [I3], lambda np_, lax_, jit_: lambda x: x * 2)
P("weak.mul2.5[i32]", [I3], lambda np_, lax_, jit_: lambda x: x * 2.5)
P("weak.div2[i32]", [I3], lambda np_, lax_, jit_: lambda x: x / 2)
P("weak.pow2", [F3], lambda np_, lax_, jit_: lambda x: x ** 2)
P("weak.pow-1", [F3], lambda np_, lax_, jit_: lambda x: x ** -1)
P("weak.pow0.5", [G3], lambda np_, lax_, jit_: lambda x: x ** 0.5)
P("weak.pow3[i32]", [I3], lambda np_, lax_, jit_: lambda x: x ** 3)
P("weak.add_bool_int", [B3], lambda np_, lax_, jit_: lambda x: x + 1)
P("weak.mul_bool_float", [B3], lambda np_, lax_, jit_: lambda x: x * 1.5)
P("weak.int+float args", [3, 2.0], lambda np_, lax_, jit_: lambda a, b: a + b)
P("weak.float arg*array", [2.0, I3], lambda np_, lax_, jit_: lambda a, x: a * x)
P("weak.bool arg", [True, F3], lambda np_, lax_, jit_: lambda b, x: np_.where(b, x, -x))
P("weak.pyscalar args", [2.0, 3.0], lambda np_, lax_, jit_: lambda a, b: a * b + 1)
P("weak.scalar f32 arg", [F0, F3], lambda np_, lax_, jit_: lambda a, x: a * x)
P("weak.int32 scalar + i array", [I0, F3], lambda np_, lax_, jit_: lambda i, x: i + x)
P("weak.chain", [F3], lambda np_, lax_, jit_: lambda x: (x * 2 + 1) / 3 - 0.5)
P("op.matmul", [F23, F34], lambda np_, lax_, jit_: lambda a, b: a @ b)
P("op.rmatmul[np const]", [F3], lambda np_, lax_, jit_: lambda x: F23 @ x)

# == array creation inside traced functions ========================================

P("np.zeros", [F23], lambda np_, lax_, jit_: lambda x: x + np_.zeros((2, 3)))
P("np.ones[int]", [I3], lambda np_, lax_, jit_: lambda x: x + np_.ones(3, np_.int32))
P("np.full", [F23], lambda np_, lax_, jit_: lambda x: x * np_.full((2, 3), 2.5))
P("np.full[int fill]", [F3], lambda np_, lax_, jit_: lambda x: x + np_.full((3,), 4))
P("np.full[traced fill]", [F0], lambda np_, lax_, jit_: lambda v: np_.full((2, 2), v))
P("np.full[dtype]", [F3], lambda np_, lax_, jit_: lambda x: np_.full((3,), 7, np_.float32) - x)
P("np.zeros_like", [F23], lambda np_, lax_, jit_: lambda x: np_.zeros_like(x) + x)
P("np.ones_like[int]", [I3], lambda np_, lax_, jit_: lambda x: np_.ones_like(x))
P("np.ones_like[dtype]", [I3], lambda np_, lax_, jit_: lambda x: np_.ones_like(x, np_.float32))
P("np.full_like", [F3], lambda np_, lax_, jit_: lambda x: np_.full_like(x, 0.5))
P("np.full_like[traced]", [F3, F0], lambda np_, lax_, jit_: lambda x, v: np_.full_like(x, v))
P("np.arange", [F4], lambda np_, lax_, jit_: lambda x: x * np_.arange(4))
P("np.arange[start,stop,step]", [F3], lambda np_, lax_, jit_: lambda x: x + np_.arange(1, 7, 2))
P("np.arange[float]", [F4], lambda np_, lax_, jit_: lambda x: x + np_.arange(0.0, 2.0, 0.5))
P("np.arange[dtype]", [F4], lambda np_, lax_, jit_: lambda x: x + np_.arange(4, dtype=np_.float32))
P("np.linspace", [F4], lambda np_, lax_, jit_: lambda x: x + np_.linspace(0.0, 1.0, 4))
P("np.linspace[int]", [F4], lambda np_, lax_, jit_: lambda x: x + np_.linspace(0, 3, 4))
P("np.linspace[no endpoint]", [F4],
  lambda np_, lax_, jit_: lambda x: x + np_.linspace(0.0, 1.0, 4, endpoint=False))
P("np.eye", [F3], lambda np_, lax_, jit_: lambda x: np_.eye(3) @ x)
P("np.eye[k,M]", [F34], lambda np_, lax_, jit_: lambda x: x * np_.eye(3, 4, k=1))
P("np.identity", [F3], lambda np_, lax_, jit_: lambda x: np_.identity(3, np_.int32))
P("np.array[list of tracers]", [F0, F0],
  lambda np_, lax_, jit_: lambda a, b: np_.array([a, b, 1.0]))
P("np.array[np const]", [F3], lambda np_, lax_, jit_: lambda x: x + np_.array([1.0, 2.0, 3.0]))
P("np.asarray[tracer]", [F3], lambda np_, lax_, jit_: lambda x: np_.asarray(x) * 2)
P("np.asarray[dtype]", [I3], lambda np_, lax_, jit_: lambda x: np_.asarray(x, np_.float32))
P("np.float32(x)", [I3], lambda np_, lax_, jit_: lambda x: np_.float32(x))
P("np.empty", [F3], lambda np_, lax_, jit_: lambda x: np_.empty(3).shape[0] + x)

# == contractions ==================================================================

P("np.matmul[1d,1d]", [F3, G3], lambda np_, lax_, jit_: lambda a, b: np_.matmul(a, b))
P("np.matmul[2d,1d]", [F23, F3], lambda np_, lax_, jit_: lambda a, b: np_.matmul(a, b))
P("np.matmul[1d,2d]", [F3, F34], lambda np_, lax_, jit_: lambda a, b: np_.matmul(a, b))
P("np.matmul[2d,2d]", [F23, F34], lambda np_, lax_, jit_: lambda a, b: np_.matmul(a, b))
P("np.matmul[batched]", [F234, F243], lambda np_, lax_, jit_: lambda a, b: a @ b)
P("np.matmul[batched,2d]", [F234, F4[:, None] * F4[None, :3]],
  lambda np_, lax_, jit_: lambda a, b: a @ b)
P("np.matmul[2d,batched]", [F23, F34[None].repeat(2, 0)],
  lambda np_, lax_, jit_: lambda a, b: a @ b)
P("np.matmul[batched,1d]", [F234, F4], lambda np_, lax_, jit_: lambda a, b: a @ b)
P("np.matmul[int,float]", [I23, F34], lambda np_, lax_, jit_: lambda a, b: a @ b)
P("np.matmul[pet]", [F23, F34],
  lambda np_, lax_, jit_: lambda a, b: np_.matmul(a, b, preferred_element_type=np_.float32))
P("np.dot[1d,1d]", [F3, G3], lambda np_, lax_, jit_: lambda a, b: np_.dot(a, b))
P("np.dot[2d,2d]", [F23, F34], lambda np_, lax_, jit_: lambda a, b: np_.dot(a, b))
P("np.dot[scalar]", [F3], lambda np_, lax_, jit_: lambda a: np_.dot(a, 2.0))
P("np.dot[3d,2d]", [F234, F4[:, None] * F4[None, :3]], lambda np_, lax_, jit_: lambda a, b: np_.dot(a, b))
P("x.dot", [F23, F3], lambda np_, lax_, jit_: lambda a, b: a.dot(b))
P("np.vdot", [F23, F32.T.copy()], lambda np_, lax_, jit_: lambda a, b: np_.vdot(a, b))
P("np.inner", [F23, F3], lambda np_, lax_, jit_: lambda a, b: np_.inner(a, b))
P("np.outer", [F3, F4], lambda np_, lax_, jit_: lambda a, b: np_.outer(a, b))

# == reductions ====================================================================

for _n in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all", "amax", "amin"):
    P(f"np.{_n}", [F23], lambda np_, lax_, jit_, _n=_n: lambda x: getattr(np_, _n)(x))
    P(f"np.{_n}[axis=1]", [F23], lambda np_, lax_, jit_, _n=_n: lambda x: getattr(np_, _n)(x, axis=1))
    P(f"np.{_n}[axis=0,keepdims]", [F23],
      lambda np_, lax_, jit_, _n=_n: lambda x: getattr(np_, _n)(x, axis=0, keepdims=True))
for _n in ("sum", "max", "prod", "argmax", "any", "mean"):
    P(f"np.{_n}[int]", [I23], lambda np_, lax_, jit_, _n=_n: lambda x: getattr(np_, _n)(x, axis=-1))
P("np.sum[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.sum(x))
P("np.all[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.all(x))
P("np.sum[axis tuple]", [F234], lambda np_, lax_, jit_: lambda x: np_.sum(x, axis=(0, 2)))
P("np.sum[dtype]", [I23], lambda np_, lax_, jit_: lambda x: np_.sum(x, dtype=np_.float32))
P("np.mean[axis tuple,keepdims]", [F234],
  lambda np_, lax_, jit_: lambda x: np_.mean(x, axis=(1, 2), keepdims=True))
P("x.sum", [F23], lambda np_, lax_, jit_: lambda x: x.sum(axis=0))
P("x.max", [F23], lambda np_, lax_, jit_: lambda x: x.max())
P("x.mean", [F23], lambda np_, lax_, jit_: lambda x: x.mean(1))
P("x.argmax", [F23], lambda np_, lax_, jit_: lambda x: x.argmax(axis=1))
P("np.sum[scalar]", [F0], lambda np_, lax_, jit_: lambda x: np_.sum(x))

# == shape manipulation ============================================================

P("np.reshape", [F23], lambda np_, lax_, jit_: lambda x: np_.reshape(x, (3, 2)))
P("np.reshape[-1]", [F234], lambda np_, lax_, jit_: lambda x: np_.reshape(x, (4, -1)))
P("x.reshape", [F23], lambda np_, lax_, jit_: lambda x: x.reshape(6))
P("x.reshape[varargs]", [F23], lambda np_, lax_, jit_: lambda x: x.reshape(1, 6))
P("np.ravel", [F23], lambda np_, lax_, jit_: lambda x: np_.ravel(x))
P("x.flatten", [F23], lambda np_, lax_, jit_: lambda x: x.flatten())
P("np.transpose", [F234], lambda np_, lax_, jit_: lambda x: np_.transpose(x))
P("np.transpose[axes]", [F234], lambda np_, lax_, jit_: lambda x: np_.transpose(x, (1, 0, 2)))
P("np.permute_dims", [F234], lambda np_, lax_, jit_: lambda x: np_.permute_dims(x, (2, 0, 1)))
P("x.T", [F23], lambda np_, lax_, jit_: lambda x: x.T)
P("x.mT", [F234], lambda np_, lax_, jit_: lambda x: x.mT)
P("x.transpose", [F234], lambda np_, lax_, jit_: lambda x: x.transpose(2, 1, 0))
P("np.matrix_transpose", [F234], lambda np_, lax_, jit_: lambda x: np_.matrix_transpose(x))
P("np.swapaxes", [F234], lambda np_, lax_, jit_: lambda x: np_.swapaxes(x, 0, 2))
P("x.swapaxes", [F234], lambda np_, lax_, jit_: lambda x: x.swapaxes(-1, 1))
P("np.moveaxis", [F234], lambda np_, lax_, jit_: lambda x: np_.moveaxis(x, 0, -1))
P("np.moveaxis[multi]", [F234], lambda np_, lax_, jit_: lambda x: np_.moveaxis(x, (0, 1), (2, 0)))
P("np.expand_dims", [F23], lambda np_, lax_, jit_: lambda x: np_.expand_dims(x, 1))
P("np.expand_dims[tuple]", [F23], lambda np_, lax_, jit_: lambda x: np_.expand_dims(x, (0, -1)))
P("np.squeeze", [F13], lambda np_, lax_, jit_: lambda x: np_.squeeze(x))
P("np.squeeze[axis]", [F31], lambda np_, lax_, jit_: lambda x: np_.squeeze(x, axis=1))
P("x.squeeze", [F13], lambda np_, lax_, jit_: lambda x: x.squeeze(0))
P("np.broadcast_to", [F3], lambda np_, lax_, jit_: lambda x: np_.broadcast_to(x, (2, 3)))
P("np.broadcast_to[size-1]", [F31], lambda np_, lax_, jit_: lambda x: np_.broadcast_to(x, (2, 3, 4)))
P("np.broadcast_arrays", [F31, F13], lambda np_, lax_, jit_: lambda x, y: np_.broadcast_arrays(x, y))
P("np.concatenate", [F23, F23], lambda np_, lax_, jit_: lambda x, y: np_.concatenate([x, y]))
P("np.concatenate[axis=1,mixed]", [F23, I23],
  lambda np_, lax_, jit_: lambda x, y: np_.concatenate([x, y], axis=1))
P("np.concatenate[axis=None]", [F23, F3],
  lambda np_, lax_, jit_: lambda x, y: np_.concatenate([x, y], axis=None))
P("np.concat", [F3, G3], lambda np_, lax_, jit_: lambda x, y: np_.concat([x, y]))
P("np.stack", [F3, G3], lambda np_, lax_, jit_: lambda x, y: np_.stack([x, y]))
P("np.stack[axis=-1]", [F23, F23], lambda np_, lax_, jit_: lambda x, y: np_.stack([x, y], -1))
P("np.vstack", [F3, G3], lambda np_, lax_, jit_: lambda x, y: np_.vstack([x, y]))
P("np.hstack", [F3, G3], lambda np_, lax_, jit_: lambda x, y: np_.hstack([x, y]))
P("np.atleast_1d", [F0], lambda np_, lax_, jit_: lambda x: np_.atleast_1d(x))
P("np.split", [F234], lambda np_, lax_, jit_: lambda x: np_.split(x, 2, axis=2))
P("np.split[indices]", [F4], lambda np_, lax_, jit_: lambda x: np_.split(x, [1, 3]))
P("np.flip", [F23], lambda np_, lax_, jit_: lambda x: np_.flip(x))
P("np.flip[axis]", [F23], lambda np_, lax_, jit_: lambda x: np_.flip(x, 1))
P("np.shape/ndim/size", [F23],
  lambda np_, lax_, jit_: lambda x: x * (np_.ndim(x) + np_.size(x) + np_.shape(x)[0]))

# == indexing ======================================================================

P("idx[1:3]", [F4], lambda np_, lax_, jit_: lambda x: x[1:3])
P("idx[:,0]", [F23], lambda np_, lax_, jit_: lambda x: x[:, 0])
P("idx[::2]", [F4], lambda np_, lax_, jit_: lambda x: x[::2])
P("idx[::-1]", [F4], lambda np_, lax_, jit_: lambda x: x[::-1])
P("idx[None]", [F3], lambda np_, lax_, jit_: lambda x: x[None])
P("idx[...,1]", [F234], lambda np_, lax_, jit_: lambda x: x[..., 1])
P("idx[1]", [F23], lambda np_, lax_, jit_: lambda x: x[1])
P("idx[-1]", [F23], lambda np_, lax_, jit_: lambda x: x[-1])
P("idx[:,None,1:]", [F23], lambda np_, lax_, jit_: lambda x: x[:, None, 1:])
P("idx[1,::-2]", [F234], lambda np_, lax_, jit_: lambda x: x[1, ::-2])
P("idx[:]", [F3], lambda np_, lax_, jit_: lambda x: x[:])
P("idx[i]", [F23, IDX], lambda np_, lax_, jit_: lambda x, i: x[i])
P("idx[i,1]", [F23, IDX], lambda np_, lax_, jit_: lambda x, i: x[i, 1])
P("idx[:,i]", [F23, IDX], lambda np_, lax_, jit_: lambda x, i: x[:, i])
P("idx[i][neg]", [F4, NIDX], lambda np_, lax_, jit_: lambda x, i: x[i])

# == composite programs ============================================================


def _softmax(np_, lax_, jit_):
    def f(x):
        z = x - np_.max(x, axis=-1, keepdims=True)
        e = np_.exp(z)
        return e / np_.sum(e, axis=-1, keepdims=True)
    return f


def _mlp(np_, lax_, jit_):
    def f(w, x):
        h = np_.maximum(x @ w, 0.0)
        return np_.mean(h ** 2)
    return f


def _logsumexp(np_, lax_, jit_):
    def f(x):
        m = np_.max(x)
        return m + np_.log(np_.sum(np_.exp(x - m)))
    return f


P("prog.softmax", [F23], _softmax)
P("prog.mlp", [F34, F23], _mlp)
P("prog.logsumexp", [F23], _logsumexp)
P("prog.sum_sin_sq", [F23], lambda np_, lax_, jit_: lambda x: np_.sum(np_.sin(x) ** 2))
P("prog.normalize", [F23],
  lambda np_, lax_, jit_: lambda x: (x - x.mean(0)) / np_.sqrt(np_.mean(x * x, 0) + 1e-5))
P("prog.astype", [F23], lambda np_, lax_, jit_: lambda x: (x > 0).astype(np_.float32) * x)
P("prog.astype[int]", [F23], lambda np_, lax_, jit_: lambda x: x.astype(np_.int32) + 1)
P("prog.multi output", [F3], lambda np_, lax_, jit_: lambda x: (x + 1, {"a": x * 2, "b": [x]}))


# == nested jit and closures =======================================================

def _nested_jit(np_, lax_, jit_):
    def helper(y):
        return np_.sin(y) * 2.0

    h = jit_(helper)

    def f(x):
        return h(x) + 1.0
    return f


def _nested_jit_twice(np_, lax_, jit_):
    def helper(y):
        return np_.cos(y) + y

    h = jit_(helper)

    def f(x):
        return h(h(x))
    return f


def _nested_jit_two_types(np_, lax_, jit_):
    def helper(y):
        return y * 2

    h = jit_(helper)

    def f(x, i):
        return h(x), h(i), h(x)
    return f


def _nested_jit_static(np_, lax_, jit_):
    def power(y, n):
        return y ** n

    h = jit_(power, static_argnums=1)

    def f(x):
        return h(x, 3) - h(x, 2)
    return f


def _nested_jit_pyscalar(np_, lax_, jit_):
    def scale(y, s):
        return y * s

    h = jit_(scale)

    def f(x):
        return h(x, 2.0)
    return f


def _closure_over_tracer(np_, lax_, jit_):
    def f(x):
        def inner(y):
            return x * y + 1.0
        return jit_(inner)(np_.cos(x))
    return f


def _closure_over_const(np_, lax_, jit_):
    c = np_.asarray(CONST3)

    def f(x):
        return x * c + CONST3
    return f


def _closure_const_in_jit(np_, lax_, jit_):
    c = np_.asarray(CONST3)

    def inner(y):
        return y - c

    def f(x):
        return jit_(inner)(x) * 2
    return f


def _nested_jit_nested(np_, lax_, jit_):
    @jit_
    def g(y):
        return y + 1

    @jit_
    def outer_fn(y):
        return g(y) * g(y)

    def f(x):
        return outer_fn(x)
    return f


def _jit_of_jnp_clip(np_, lax_, jit_):
    def f(x):
        return np_.clip(x, 0.0, 1.0) + np_.clip(x, -1.0, 0.0)
    return f


P("jit.nested", [F3], _nested_jit)
P("jit.twice", [F3], _nested_jit_twice)
P("jit.two types", [F3, I3], _nested_jit_two_types)
P("jit.static", [F3], _nested_jit_static)
P("jit.pyscalar arg", [F3], _nested_jit_pyscalar)
P("jit.nested2", [F3], _nested_jit_nested)
P("jit.clip twice", [F3], _jit_of_jnp_clip)
P("closure.tracer", [F3], _closure_over_tracer)
P("closure.const", [F3], _closure_over_const)
P("closure.const in jit", [F3], _closure_const_in_jit)

# == lax ===========================================================================

_LAX_UNARY = {
    "neg": F3, "sign": F3, "floor": F3, "ceil": F3, "is_finite": F3, "asin": U3, "acos": U3,
    "atan": F3, "sinh": F3, "cosh": F3, "asinh": F3, "acosh": G3, "atanh": U3, "abs": F3,
    "erf": F3, "erf_inv": U3, "exp": F3, "exp2": F3, "log": G3, "log1p": G3, "expm1": F3,
    "tanh": F3, "logistic": F3, "sin": F3, "cos": F3, "tan": U3, "sqrt": G3, "rsqrt": G3,
    "cbrt": F3, "square": F3, "reciprocal": G3, "stop_gradient": F3,
}
for _n, _x in _LAX_UNARY.items():
    P(f"lax.{_n}", [_x], lambda np_, lax_, jit_, _n=_n: lambda x: getattr(lax_, _n)(x))
P("lax.bitwise_not", [I3], lambda np_, lax_, jit_: lambda x: lax_.bitwise_not(x))
P("lax.exp[accuracy]", [F3], lambda np_, lax_, jit_: lambda x: lax_.exp(x, accuracy=None))

_LAX_BINARY = {
    "add": (F3, G3), "sub": (F3, G3), "mul": (F3, G3), "div": (F3, G3), "rem": (I3, J3),
    "pow": (G3, F3), "max": (F3, G3), "min": (F3, G3), "atan2": (F3, G3),
    "nextafter": (F3, G3), "bitwise_and": (I3, J3), "bitwise_or": (B3, C3),
    "bitwise_xor": (I3, J3), "shift_left": (I3, S3), "shift_right_logical": (I3, S3),
    "shift_right_arithmetic": (I3, S3), "eq": (F3, G3), "ne": (I3, J3), "lt": (F3, G3),
    "le": (F3, G3), "gt": (I3, J3), "ge": (I3, J3),
}
for _n, (_a, _b) in _LAX_BINARY.items():
    P(f"lax.{_n}", [_a, _b], lambda np_, lax_, jit_, _n=_n: lambda x, y: getattr(lax_, _n)(x, y))
P("lax.div[int]", [I3, J3], lambda np_, lax_, jit_: lambda x, y: lax_.div(x, y))
P("lax.add[weak scalar]", [F3], lambda np_, lax_, jit_: lambda x: lax_.add(x, 2.0))
P("lax.pow[int exponent]", [G3, S3], lambda np_, lax_, jit_: lambda x, y: lax_.pow(x, y))
P("lax.round", [F23], lambda np_, lax_, jit_: lambda x: lax_.round(x))
P("lax.round[even]", [F23],
  lambda np_, lax_, jit_: lambda x: lax_.round(x, lax_.RoundingMethod.TO_NEAREST_EVEN))
P("lax.integer_pow", [F3], lambda np_, lax_, jit_: lambda x: lax_.integer_pow(x, 3))
P("lax.integer_pow[neg]", [G3], lambda np_, lax_, jit_: lambda x: lax_.integer_pow(x, -2))
P("lax.select_n", [B3, F3, G3], lambda np_, lax_, jit_: lambda c, a, b: lax_.select_n(c, a, b))
P("lax.select_n[int which]", [np.array([0, 2, 1], np.int32), F3, G3, U3],
  lambda np_, lax_, jit_: lambda c, a, b, d: lax_.select_n(c, a, b, d))
P("lax.select", [B3, F3, G3], lambda np_, lax_, jit_: lambda c, a, b: lax_.select(c, a, b))
P("lax.clamp", [F3], lambda np_, lax_, jit_: lambda x: lax_.clamp(np_.float32(-0.5), x, np_.float32(1.0)))
P("lax.clamp[arrays]", [U3, F3, G3], lambda np_, lax_, jit_: lambda lo, x, hi: lax_.clamp(lo, x, hi))
P("lax.convert_element_type", [F3],
  lambda np_, lax_, jit_: lambda x: lax_.convert_element_type(x, np_.int32))
P("lax.convert_element_type[bool]", [I3],
  lambda np_, lax_, jit_: lambda x: lax_.convert_element_type(x, np.bool_))
P("lax.convert_element_type[same]", [F3],
  lambda np_, lax_, jit_: lambda x: lax_.convert_element_type(x, np.float32))
P("lax.bitcast_convert_type", [F3],
  lambda np_, lax_, jit_: lambda x: lax_.bitcast_convert_type(x, np.int32))
P("lax.bitcast_convert_type[narrow]", [F3],
  lambda np_, lax_, jit_: lambda x: lax_.bitcast_convert_type(x, np.uint8))
P("lax.broadcast_in_dim", [F3],
  lambda np_, lax_, jit_: lambda x: lax_.broadcast_in_dim(x, (2, 3), (1,)))
P("lax.broadcast", [F3], lambda np_, lax_, jit_: lambda x: lax_.broadcast(x, (4,)))
P("lax.broadcast_to_rank", [F3], lambda np_, lax_, jit_: lambda x: lax_.broadcast_to_rank(x, 3))
P("lax.reshape", [F23], lambda np_, lax_, jit_: lambda x: lax_.reshape(x, (3, 2)))
P("lax.reshape[dimensions]", [F23],
  lambda np_, lax_, jit_: lambda x: lax_.reshape(x, (6,), dimensions=(1, 0)))
P("lax.squeeze", [F13], lambda np_, lax_, jit_: lambda x: lax_.squeeze(x, (0,)))
P("lax.expand_dims", [F3], lambda np_, lax_, jit_: lambda x: lax_.expand_dims(x, (0, 2)))
P("lax.transpose", [F234], lambda np_, lax_, jit_: lambda x: lax_.transpose(x, (2, 0, 1)))
P("lax.rev", [F23], lambda np_, lax_, jit_: lambda x: lax_.rev(x, (0, 1)))
P("lax.concatenate", [F23, F23], lambda np_, lax_, jit_: lambda x, y: lax_.concatenate([x, y], 1))
P("lax.pad", [F23],
  lambda np_, lax_, jit_: lambda x: lax_.pad(x, np_.float32(0), [(1, 2, 0), (0, 1, 1)]))
P("lax.pad[negative]", [F23],
  lambda np_, lax_, jit_: lambda x: lax_.pad(x, np_.float32(-1), [(0, 0, 0), (-1, 1, 0)]))
P("lax.slice", [F234],
  lambda np_, lax_, jit_: lambda x: lax_.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)))
P("lax.slice_in_dim", [F23], lambda np_, lax_, jit_: lambda x: lax_.slice_in_dim(x, 1, 3, axis=1))
P("lax.index_in_dim", [F23],
  lambda np_, lax_, jit_: lambda x: lax_.index_in_dim(x, -1, axis=1, keepdims=False))
P("lax.dynamic_slice[traced]", [F234, IDX],
  lambda np_, lax_, jit_: lambda x, i: lax_.dynamic_slice(x, (i, 0, i), (1, 2, 2)))
P("lax.dynamic_slice[static]", [F234],
  lambda np_, lax_, jit_: lambda x: lax_.dynamic_slice(x, (1, 0, 2), (1, 2, 2)))
P("lax.dynamic_update_slice", [F23, F13, IDX],
  lambda np_, lax_, jit_: lambda x, u, i: lax_.dynamic_update_slice(x, u, (i, 0)))
P("lax.dynamic_slice_in_dim", [F23, IDX],
  lambda np_, lax_, jit_: lambda x, i: lax_.dynamic_slice_in_dim(x, i, 2, axis=1))
P("lax.dynamic_index_in_dim", [F23, IDX],
  lambda np_, lax_, jit_: lambda x, i: lax_.dynamic_index_in_dim(x, i, 0, keepdims=False))
P("lax.dynamic_update_slice_in_dim", [F23, F31[:2], IDX],
  lambda np_, lax_, jit_: lambda x, u, i: lax_.dynamic_update_slice_in_dim(x, u, i, axis=1))
P("lax.iota", [F4], lambda np_, lax_, jit_: lambda x: x + lax_.iota(np.float32, 4))
P("lax.broadcasted_iota", [I23],
  lambda np_, lax_, jit_: lambda x: x * lax_.broadcasted_iota(np.int32, (2, 3), 1))
P("lax.dot_general", [F234, F243],
  lambda np_, lax_, jit_: lambda a, b: lax_.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))))
P("lax.dot_general[pet]", [I23, I23],
  lambda np_, lax_, jit_: lambda a, b: lax_.dot_general(
      a, b, (((1,), (1,)), ((), ())), preferred_element_type=np.float32))
P("lax.dot", [F23, F34], lambda np_, lax_, jit_: lambda a, b: lax_.dot(a, b))
P("lax.dot[pet]", [F3, G3],
  lambda np_, lax_, jit_: lambda a, b: lax_.dot(a, b, preferred_element_type=np.float32))
for _n in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
    P(f"lax.{_n}", [F234], lambda np_, lax_, jit_, _n=_n: lambda x: getattr(lax_, _n)(x, (0, 2)))
P("lax.reduce_and", [B3], lambda np_, lax_, jit_: lambda x: lax_.reduce_and(x, (0,)))
P("lax.reduce_or", [B3], lambda np_, lax_, jit_: lambda x: lax_.reduce_or(x, (0,)))
P("lax.argmax", [F23], lambda np_, lax_, jit_: lambda x: lax_.argmax(x, 1, np.int32))
P("lax.argmin", [F23], lambda np_, lax_, jit_: lambda x: lax_.argmin(x, 0, np.int32))
P("lax.full", [F23], lambda np_, lax_, jit_: lambda x: x + lax_.full((2, 3), 1.5))
P("lax.full[dtype]", [I23], lambda np_, lax_, jit_: lambda x: x + lax_.full((2, 3), 2, np.int32))
P("lax.full_like", [F23], lambda np_, lax_, jit_: lambda x: lax_.full_like(x, 3))


# == more edge cases ===============================================================

# creation
P("np.array[copy]", [F3], lambda np_, lax_, jit_: lambda x: np_.array(x))
P("np.array[dtype]", [F3], lambda np_, lax_, jit_: lambda x: np_.array(x, dtype=np_.int32))
P("np.array[ndmin]", [F3], lambda np_, lax_, jit_: lambda x: np_.array(x, ndmin=3))
P("np.array[stack tracers]", [F3], lambda np_, lax_, jit_: lambda x: np_.array([x, 2 * x]))
P("np.array[scalar]", [F3], lambda np_, lax_, jit_: lambda x: np_.array(2.0) * x)
P("np.array[int list]", [F3], lambda np_, lax_, jit_: lambda x: np_.array([1, 2, 3]) * x)
P("np.int32(x)", [F3], lambda np_, lax_, jit_: lambda x: np_.int32(x))
P("np.float32(3)", [F3], lambda np_, lax_, jit_: lambda x: np_.float32(3) * x)
P("np.zeros_like[scalar]", [F0], lambda np_, lax_, jit_: lambda x: np_.zeros_like(x) + x)
P("np.full[array fill]", [F3], lambda np_, lax_, jit_: lambda x: np_.full((2, 3), x))
P("np.full_like[array fill]", [F23, F3],
  lambda np_, lax_, jit_: lambda x, v: np_.full_like(x, v))
P("np.zeros_like[shape,dtype]", [F3],
  lambda np_, lax_, jit_: lambda x: np_.zeros_like(x, np_.int32, (2, 2)))
P("np.arange[start,stop]", [F3], lambda np_, lax_, jit_: lambda x: x * np_.arange(2, 5))
P("np.arange[neg step]", [F3], lambda np_, lax_, jit_: lambda x: x * np_.arange(5, 2, -1))
P("np.linspace[retstep]", [F4],
  lambda np_, lax_, jit_: lambda x: np_.linspace(0.0, 1.0, 4, retstep=True))
P("np.linspace[num=1]", [F3], lambda np_, lax_, jit_: lambda x: x + np_.linspace(2.0, 3.0, 1))
P("np.linspace[traced]", [F0, F0], lambda np_, lax_, jit_: lambda a, b: np_.linspace(a, b, 5))
P("np.linspace[dtype int]", [F3],
  lambda np_, lax_, jit_: lambda x: np_.linspace(0, 10, 3, dtype=np_.int32))
P("np.eye[int]", [I3], lambda np_, lax_, jit_: lambda x: np_.eye(3, dtype=np_.int32) @ x)
P("np.finfo/iinfo", [F3],
  lambda np_, lax_, jit_: lambda x: x * np_.finfo(np_.float32).eps + np_.iinfo(np_.int32).max)
P("np.result_type/isscalar", [F3, I3],
  lambda np_, lax_, jit_: lambda x, i: i.astype(np_.result_type(x, i)) * np_.isscalar(x))
# elementwise
P("np.around", [F23], lambda np_, lax_, jit_: lambda x: np_.around(x, 1))
P("np.round[twice]", [F23], lambda np_, lax_, jit_: lambda x: np_.round(x) + np_.round(2 * x))
P("np.where[twice]", [B3, F3, U3],
  lambda np_, lax_, jit_: lambda c, x, y: np_.where(c, x, y) * np_.where(c, y, x))
P("np.where[scalars]", [B3], lambda np_, lax_, jit_: lambda c: np_.where(c, 1.0, 0))
P("np.where[int,float]", [B3, I3, F3], lambda np_, lax_, jit_: lambda c, x, y: np_.where(c, x, y))
P("np.power[f32,i32]", [G3, S3], lambda np_, lax_, jit_: lambda x, y: np_.power(x, y))
P("np.power[i32,f32]", [S3, F3], lambda np_, lax_, jit_: lambda x, y: x ** y)
P("np.remainder[i32,f32]", [I3, G3], lambda np_, lax_, jit_: lambda x, y: x % y)
P("np.floor_divide[scalar]", [I3], lambda np_, lax_, jit_: lambda x: x // 2)
P("np.clip[int,float bounds]", [I3], lambda np_, lax_, jit_: lambda x: np_.clip(x, 0.5, 2.5))
P("np.logical_and[scalar]", [F3], lambda np_, lax_, jit_: lambda x: np_.logical_and(x, True))
P("np.maximum[scalar]", [I3], lambda np_, lax_, jit_: lambda x: np_.maximum(x, 0))
P("np.ceil[int]", [I3], lambda np_, lax_, jit_: lambda x: np_.ceil(x))
P("np.floor[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.floor(x))
P("np.rint[int]", [I3], lambda np_, lax_, jit_: lambda x: np_.rint(x))
P("np.multiply[bool]", [B3, C3], lambda np_, lax_, jit_: lambda x, y: x * y)
P("np.isfinite[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.isfinite(x))
P("np.exp2[scalar arg]", [3], lambda np_, lax_, jit_: lambda x: np_.exp2(x))
P("op.pow[bool exponent]", [F3], lambda np_, lax_, jit_: lambda x: x ** True)
P("lax.add[py float]", [F3], lambda np_, lax_, jit_: lambda x: lax_.add(x, 2.0))
P("lax.clamp[py floats]", [F3], lambda np_, lax_, jit_: lambda x: lax_.clamp(0.0, x, 1.0))
# reductions
P("np.sum[keepdims,axis=None]", [F23], lambda np_, lax_, jit_: lambda x: np_.sum(x, keepdims=True))
P("np.argmax[keepdims,axis=None]", [F23],
  lambda np_, lax_, jit_: lambda x: np_.argmax(x, keepdims=True))
P("np.argmin[neg axis]", [F234], lambda np_, lax_, jit_: lambda x: np_.argmin(x, axis=-2))
P("np.mean[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.mean(x))
P("np.prod[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.prod(x))
P("np.max[bool]", [B3], lambda np_, lax_, jit_: lambda x: np_.max(x))
P("np.any[axis tuple]", [F234], lambda np_, lax_, jit_: lambda x: np_.any(x > 0, axis=(0, 1)))
P("np.min[int,keepdims]", [I23], lambda np_, lax_, jit_: lambda x: np_.min(x, 1, keepdims=True))
P("np.sum[pyscalar]", [2.0], lambda np_, lax_, jit_: lambda x: np_.sum(x))
# contractions
P("np.matmul[1d,batched]", [F4, F243], lambda np_, lax_, jit_: lambda a, b: a @ b)
P("np.matmul[bcast batch]", [F234[:1], F243],
  lambda np_, lax_, jit_: lambda a, b: a @ b)
P("np.dot[1d,2d]", [F3, F34], lambda np_, lax_, jit_: lambda a, b: np_.dot(a, b))
P("np.dot[2d,1d]", [F23, F3], lambda np_, lax_, jit_: lambda a, b: np_.dot(a, b))
P("np.dot[int,float]", [I3, F3], lambda np_, lax_, jit_: lambda a, b: np_.dot(a, b))
P("np.outer[2d]", [F23, F3], lambda np_, lax_, jit_: lambda a, b: np_.outer(a, b))
P("np.inner[2d,2d]", [F23, F23], lambda np_, lax_, jit_: lambda a, b: np_.inner(a, b))
P("np.inner[scalar]", [F3], lambda np_, lax_, jit_: lambda a: np_.inner(a, 2.0))
# shapes
P("np.atleast_2d", [F3], lambda np_, lax_, jit_: lambda x: np_.atleast_2d(x))
P("np.atleast_1d[many]", [F0, F3], lambda np_, lax_, jit_: lambda x, y: np_.atleast_1d(x, y))
P("np.vstack[2d]", [F23, F13], lambda np_, lax_, jit_: lambda x, y: np_.vstack([x, y]))
P("np.hstack[2d]", [F23, F23], lambda np_, lax_, jit_: lambda x, y: np_.hstack([x, y]))
P("np.concatenate[three,dtype]", [F3, I3, B3],
  lambda np_, lax_, jit_: lambda x, y, z: np_.concatenate([x, y, z], dtype=np_.float32))
P("np.concatenate[single]", [F3], lambda np_, lax_, jit_: lambda x: np_.concatenate([x]))
P("np.transpose[neg axes]", [F234], lambda np_, lax_, jit_: lambda x: np_.transpose(x, (-1, 0, 1)))
P("np.squeeze[all]", [np.ones((1, 3, 1), np.float32)], lambda np_, lax_, jit_: lambda x: np_.squeeze(x))
P("np.expand_dims[neg]", [F23], lambda np_, lax_, jit_: lambda x: np_.expand_dims(x, -1))
P("np.broadcast_to[scalar]", [F0], lambda np_, lax_, jit_: lambda x: np_.broadcast_to(x, (2, 2)))
P("np.broadcast_to[pyscalar]", [F3], lambda np_, lax_, jit_: lambda x: np_.broadcast_to(1.0, (3,)) + x)
P("np.moveaxis[neg]", [F234], lambda np_, lax_, jit_: lambda x: np_.moveaxis(x, -1, 0))
P("np.reshape[scalar]", [F0], lambda np_, lax_, jit_: lambda x: np_.reshape(x, (1, 1)))
P("np.ravel[scalar]", [F0], lambda np_, lax_, jit_: lambda x: np_.ravel(x))
P("np.flip[neg axis tuple]", [F234], lambda np_, lax_, jit_: lambda x: np_.flip(x, (0, -1)))
# indexing
P("idx[...,None]", [F23], lambda np_, lax_, jit_: lambda x: x[..., None])
P("idx[1,...,::2]", [F234], lambda np_, lax_, jit_: lambda x: x[1, ..., ::2])
P("idx[-2:,:-1]", [F34], lambda np_, lax_, jit_: lambda x: x[-2:, :-1])
P("idx[::3]", [np.arange(10, dtype=np.float32)], lambda np_, lax_, jit_: lambda x: x[1::3])
P("idx[empty]", [F4], lambda np_, lax_, jit_: lambda x: x[3:1])
P("idx[::-2]", [np.arange(7, dtype=np.float32)], lambda np_, lax_, jit_: lambda x: x[5::-2])
P("idx[i,::-1]", [F23, IDX], lambda np_, lax_, jit_: lambda x, i: x[i, ::-1])
P("idx[1:,i]", [F34, IDX], lambda np_, lax_, jit_: lambda x, i: x[1:, i])
P("idx[None,i]", [F23, IDX], lambda np_, lax_, jit_: lambda x, i: x[None, i])
P("idx[i,...,None]", [F234, IDX], lambda np_, lax_, jit_: lambda x, i: x[i, ..., None])
P("idx[i,j]", [F23, IDX, NIDX], lambda np_, lax_, jit_: lambda x, i, j: x[i, j])
# lax
P("lax.dynamic_update_index_in_dim", [F23, F3, IDX],
  lambda np_, lax_, jit_: lambda x, u, i: lax_.dynamic_update_index_in_dim(x, u, i, 0))
P("lax.dynamic_slice[neg static]", [F234],
  lambda np_, lax_, jit_: lambda x: lax_.dynamic_slice(x, (-1, 0, -2), (1, 2, 2)))
P("lax.dynamic_slice_in_dim[int]", [F23],
  lambda np_, lax_, jit_: lambda x: lax_.dynamic_slice_in_dim(x, 1, 2, axis=1))
P("lax.full[scalar shape]", [F0], lambda np_, lax_, jit_: lambda x: lax_.full((), 2.0) + x)
P("lax.reshape[scalar]", [F0], lambda np_, lax_, jit_: lambda x: lax_.reshape(x, ()))
P("lax.broadcast_in_dim[size-1]", [F31],
  lambda np_, lax_, jit_: lambda x: lax_.broadcast_in_dim(x, (2, 3, 4), (1, 2)))
P("lax.full_like[dtype,shape]", [F23],
  lambda np_, lax_, jit_: lambda x: lax_.full_like(x, 1, np.int32, (4,)))


# more nested jit and closures

def _jit_kwargs(np_, lax_, jit_):
    def affine(x, *, scale, shift=0.0):
        return x * scale + shift

    h = jit_(affine)

    def f(x, s):
        return h(x, scale=s, shift=1.0), h(x, scale=s)
    return f


def _jit_lambda(np_, lax_, jit_):
    h = jit_(lambda y: (y + 1, y - 1))

    def f(x):
        a, b = h(x)
        return a * b
    return f


def _jit_const_inside(np_, lax_, jit_):
    table = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)

    def lookup(y):
        return y @ table.T

    h = jit_(lookup)

    def f(x):
        return h(x) + h(2 * x)
    return f


def _closure_tracer_twice(np_, lax_, jit_):
    def f(x, y):
        def inner(z):
            return z * x
        g = jit_(inner)
        return g(y) + g(y + 1)
    return f


def _jit_pyscalar_twice(np_, lax_, jit_):
    def scale(y, s):
        return y * s

    h = jit_(scale)

    def f(x):
        return h(x, 2.0) + h(x, 3.0)
    return f


def _jit_calls_jnp_jit(np_, lax_, jit_):
    def body(y):
        return np_.where(y > 0, np_.clip(y, 0.0, 1.0), np_.round(y))

    h = jit_(body)

    def f(x):
        return h(x)
    return f


def _relu_layernorm(np_, lax_, jit_):
    def f(x, w):
        h = np_.maximum(x @ w, 0)
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        return (h - mu) * lax_.rsqrt(var + 1e-5)
    return f


def _cross_entropy(np_, lax_, jit_):
    def f(logits, labels):
        logp = logits - np_.log(np_.sum(np_.exp(logits), axis=-1, keepdims=True))
        onehot = (labels[:, None] == np_.arange(logits.shape[-1])).astype(logits.dtype)
        return -np_.mean(np_.sum(onehot * logp, axis=-1))
    return f


def _dynamic_update(np_, lax_, jit_):
    def f(buf, x, i):
        row = lax_.dynamic_index_in_dim(buf, i, 0, keepdims=False) + x
        return lax_.dynamic_update_index_in_dim(buf, row, i, 0)
    return f


P("jit.kwargs", [F3, F0], _jit_kwargs)
P("jit.lambda", [F3], _jit_lambda)
P("jit.const inside", [F23], _jit_const_inside)
P("jit.pyscalar twice", [F3], _jit_pyscalar_twice)
P("jit.calls jnp jits", [F3], _jit_calls_jnp_jit)
P("closure.tracer twice", [F3, G3], _closure_tracer_twice)
P("prog.relu_layernorm", [F23, F34], _relu_layernorm)
P("prog.cross_entropy", [F23, np.array([0, 2], np.int32)], _cross_entropy)
P("prog.dynamic_update", [F23, F3, IDX], _dynamic_update)


# == known differences ============================================================
# name -> why traxla's text cannot match JAX's without changes outside
# traxla/numpy and traxla/lax.

_WIDTH = ("printer: a jaxpr whose one-line form is exactly 81 chars prints flat; JAX's group "
          "includes the closing ' }' (ir/jaxpr_printer.py _skeleton)")

KNOWN_DIFFERENCES: dict[str, str] = {
}

# programs whose numerical results may legitimately differ (none expected).
KNOWN_NUMERIC: dict[str, str] = {}


# == machinery ====================================================================

def _build(case: Case, ns: NS):
    return case.build(ns.np, ns.lax, ns.jit)


def jaxpr_texts(case: Case) -> tuple[str, str]:
    want = str(JAX.make_jaxpr(_build(case, JAX))(*case.args))
    got = str(TRAXLA.make_jaxpr(_build(case, TRAXLA))(*case.args))
    return want, got


def _params(known: dict):
    out = []
    for name in CORPUS:
        marks = ()
        if name in known:
            marks = (pytest.mark.xfail(strict=True, reason=known[name]),)
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def test_known_differences_are_in_corpus():
    assert set(KNOWN_DIFFERENCES) <= set(CORPUS)
    assert set(KNOWN_NUMERIC) <= set(CORPUS)
    assert len(CORPUS) >= 120


@pytest.mark.parametrize("name", _params(KNOWN_DIFFERENCES))
def test_jaxpr_text_matches_jax(name):
    want, got = jaxpr_texts(CORPUS[name])
    assert got == want, f"\n--- jax\n{want}\n--- traxla\n{got}"


# Numerical agreement. Compiling costs tens of milliseconds per program in each
# framework, so programs are checked in groups: one jit per group, whose
# function runs every program of the group on its own arguments. A failing
# group names the programs whose results differ.
NUMERIC_GROUP_SIZE = 32


def _numeric_groups():
    names = [n for n in CORPUS if n not in KNOWN_NUMERIC]
    groups = [names[i:i + NUMERIC_GROUP_SIZE] for i in range(0, len(names), NUMERIC_GROUP_SIZE)]
    params = [pytest.param(tuple(g), id=f"{g[0]}..{g[-1]}") for g in groups]
    params += [pytest.param((n,), id=n, marks=pytest.mark.xfail(strict=True, reason=r))
               for n, r in KNOWN_NUMERIC.items()]
    return params


def _run_group(ns: NS, names):
    return run_group([_build(CORPUS[n], ns) for n in names],
                     [CORPUS[n].args for n in names], ns.jit)


def _compare(name, got, want):
    case = CORPUS[name]
    compare_outputs(name, got, want, case.rtol, 1e-6)


@pytest.mark.parametrize("names", _numeric_groups())
def test_results_match_jax(names, jax_side):
    want = jax_side(lambda: _run_group(JAX, names), key=inspect.getsource(run_group))
    try:
        got = _run_group(TRAXLA, names)
    except Exception:  # noqa: BLE001 - localize which program fails to run
        for name in names:
            _compare(name, _run_group(TRAXLA, (name,)), _run_group(JAX, (name,)))
        raise
    failures = []
    for name, g, w in zip(names, got, want):
        try:
            _compare(name, g, w)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


if __name__ == "__main__":
    from _corpus import print_differences
    print_differences(CORPUS, KNOWN_DIFFERENCES, jaxpr_texts, sys.argv[1:])

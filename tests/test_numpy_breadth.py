"""NumPy / lax breadth (issue #3): a differential corpus against JAX, property tests
against NumPy, indexing / scatter semantics, and trace-time error messages.

Each corpus program is written once against ``(np_, lax_, ns)`` and instantiated with
``(traxla.numpy, traxla.lax, traxla)`` and ``(jax.numpy, jax.lax, jax)``. For every
program the test compares ``str(make_jaxpr(f)(*args))`` as text, its ``jit`` results and
its eager (op-by-op) results with JAX's.

Programs that cannot match are listed in ``KNOWN_DIFFERENCES`` (a reason each) and run
as ``xfail(strict=True)``.

Run ``python tests/test_numpy_breadth.py [name-substring ...]`` to print the two jaxprs
of every differing program.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

from _corpus import compare_outputs, leaves as _leaves, run_group
import traxla
import traxla.lax as tlax
import traxla.nn  # noqa: F401
import traxla.numpy as tnp
import traxla.scipy.special  # noqa: F401
import traxla.scipy.stats.norm  # noqa: F401

jax = pytest.importorskip("jax")
import jax.lax as jlax  # noqa: E402
import jax.nn  # noqa: E402,F401
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special  # noqa: E402,F401
import jax.scipy.stats.norm  # noqa: E402,F401

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

# -- inputs ------------------------------------------------------------------------------------

_rng = np.random.default_rng(0)


def _f(*shape, lo=-2.0, hi=2.0):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


X53 = np.arange(15, dtype=np.float32).reshape(5, 3)
X456 = _f(4, 5, 6)
A23, B34, C45, D52 = _f(2, 3), _f(3, 4), _f(4, 5), _f(5, 2)
S33 = _f(3, 3)
T234, U245 = _f(2, 3, 4), _f(2, 4, 5)
V3, W4 = _f(3), _f(4)
R45 = _f(4, 5, lo=-4, hi=4)
IDX = np.array([0, 2, -1, 7], np.int32)          # includes negative and out-of-range
REP = np.array([0, 2, 2, 4, 2], np.int32)         # repeated indices
I23 = np.array([[3, 1, 2], [0, -5, 4]], np.int32)
I5 = np.arange(5, dtype=np.int32)
ISC = np.int32(1)
SPECIAL = np.array([1.0, np.inf, -np.inf, np.nan, -2.5, 0.0], np.float32)
G6 = np.array([0.5, 2.0, 3.0, 1.5, -1.0, 0.0], np.float32)
POS6 = np.abs(G6) + 0.5
U6 = _rng.uniform(0.05, 0.95, (6,)).astype(np.float32)
C3 = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j], np.complex64)
C3B = np.array([0.5 - 1j, -2 + 0.5j, 1 + 1j], np.complex64)
B3 = np.array([True, False, True])
LAB = np.array([0, 3, 1, 9], np.int32)
LOGITS = _f(4, 10, lo=-3, hi=3)


@dataclass(frozen=True)
class NS:
    np: Any
    lax: Any
    top: Any


TRAXLA = NS(tnp, tlax, traxla)
JAX = NS(jnp, jlax, jax)


@dataclass
class Case:
    name: str
    build: Callable   # (np_, lax_, ns) -> function
    args: tuple
    rtol: float = 2e-6
    atol: float = 1e-6


CORPUS: dict[str, Case] = {}


def P(name, args, build, rtol=2e-6, atol=1e-6):
    assert name not in CORPUS, name
    CORPUS[name] = Case(name, build, tuple(args), rtol, atol)


def _fn(expr):
    """A corpus builder from a lambda over (np_, lax_, ns) returning the program."""
    return expr


# == indexing: advanced (gather), dynamic, static, .at[] (scatter) ============================

P("idx.x[i]", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x[i])
P("idx.x[:, i]", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x[:, i])
P("idx.x[i, j]", [X53, IDX, IDX], lambda np_, lax_, ns: lambda x, i, j: x[i, j])
P("idx.x[i, 1]", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x[i, 1])
P("idx.x[np array]", [X53], lambda np_, lax_, ns: lambda x: x[np.array([0, 2])])
P("idx.x[list]", [X53], lambda np_, lax_, ns: lambda x: x[[0, -1], 1])
P("idx.x[bool mask const]", [X53],
  lambda np_, lax_, ns: lambda x: x[np.array([True, False, True, False, True])])
P("idx.x[traced int, 1:]", [X53, ISC], lambda np_, lax_, ns: lambda x, i: x[i, 1:])
P("idx.x[traced int]", [X53, ISC], lambda np_, lax_, ns: lambda x, i: x[i])
P("idx.x[static strided]", [X53], lambda np_, lax_, ns: lambda x: x[1:4:2, ::-1])
P("idx.x[out of range int]", [X53], lambda np_, lax_, ns: lambda x: x[10])
P("idx.x[i, ::2]", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x[i, ::2])
P("idx.x[None, i, None]", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x[None, i, None])
P("idx.x[i, :, i]", [X456, IDX], lambda np_, lax_, ns: lambda x, i: x[i, :, i])
P("idx.x[..., i]", [X456, IDX], lambda np_, lax_, ns: lambda x, i: x[..., i])
P("idx.x[2d index]", [X53, np.array([[0, 1], [2, 3]], np.int32)],
  lambda np_, lax_, ns: lambda x, i: x[i])
P("idx.x[i, j broadcast]", [X456, np.array([[0], [3]], np.int32), np.array([1, 2, 4], np.int32)],
  lambda np_, lax_, ns: lambda x, i, j: x[i, j])
P("idx.x[1, i, ::-1]", [X456, IDX], lambda np_, lax_, ns: lambda x, i: x[1, i, ::-1])
P("idx.x[i][j]", [X53, IDX, np.int32(2)], lambda np_, lax_, ns: lambda x, i, j: x[i][j])
P("idx.x[i] int64 idx", [X53, IDX.astype(np.int64)], lambda np_, lax_, ns: lambda x, i: x[i])
P("idx.x[i] uint idx", [X53, np.array([0, 4, 2], np.uint32)],
  lambda np_, lax_, ns: lambda x, i: x[i])
P("idx.x[i] int data", [I5, IDX], lambda np_, lax_, ns: lambda x, i: x[i])
P("at.set", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x.at[i].set(1.0))
P("at.set rows", [X53, IDX, _f(4, 3)], lambda np_, lax_, ns: lambda x, i, v: x.at[i].set(v))
P("at.add repeated x2", [X53, REP],
  lambda np_, lax_, ns: lambda x, i: x.at[i].add(1.0).at[i].add(2.0))
P("at.add values", [I5, REP, np.array([1, 2, 3, 4, 5], np.int32)],
  lambda np_, lax_, ns: lambda x, i, v: x.at[i].add(v))
P("at.multiply", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x.at[i, 1].multiply(3.0))
P("at.min", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x.at[i].min(2.0))
P("at.max", [X53], lambda np_, lax_, ns: lambda x: x.at[:, 0].max(7.0))
P("at.get fill", [X53, IDX],
  lambda np_, lax_, ns: lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0))
P("at.get clip", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x.at[i].get(mode="clip"))
P("at.subtract", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x.at[i].subtract(1.0))
P("at.divide", [X53, IDX], lambda np_, lax_, ns: lambda x, i: x.at[i].divide(2.0))
P("at.set int", [I5, IDX], lambda np_, lax_, ns: lambda x, i: x.at[i].set(3))
P("at.set scalar index", [X53], lambda np_, lax_, ns: lambda x: x.at[1].set(0.0))
P("at.set strided slice", [X53],
  lambda np_, lax_, ns: lambda x: x.at[1:3, ::2].set(np.ones((2, 2), np.float32)))
P("at.set traced index", [X53, ISC], lambda np_, lax_, ns: lambda x, i: x.at[i].set(-1.0))
P("at.add clip mode", [X53, IDX],
  lambda np_, lax_, ns: lambda x, i: x.at[i].add(1.0, mode="clip"))
P("idx.x[1, :, array]", [X456], lambda np_, lax_, ns: lambda x: x[1, :, np.array([0, 3])])
P("idx.x[2d bool mask]", [X456[:, :2, 0]],
  lambda np_, lax_, ns: lambda x: x[np.array([[True, False], [False, True], [True, True],
                                               [False, False]])])
P("idx.x[::-1, array]", [X53], lambda np_, lax_, ns: lambda x: x[::-1, np.array([0, 2])])
P("idx.x[empty array]", [X53], lambda np_, lax_, ns: lambda x: x[np.array([], np.int32)])
P("idx.x[:, arange]", [X53], lambda np_, lax_, ns: lambda x: x[:, np_.arange(3)])
P("at.power", [X53], lambda np_, lax_, ns: lambda x: x.at[1].power(2.0))
P("at.set reversed slice", [X53],
  lambda np_, lax_, ns: lambda x: x.at[:, ::-1].set(np.arange(15, dtype=np.float32).reshape(5, 3)))
P("at.add ellipsis", [X456], lambda np_, lax_, ns: lambda x: x.at[..., 0].add(1.0))
P("at.set traced 2d", [X53, ISC], lambda np_, lax_, ns: lambda x, i: x.at[i, 0].set(5.0))
P("at.get clip out of range", [X53], lambda np_, lax_, ns: lambda x: x.at[9].get(mode="clip"))
P("take axis0", [X53, IDX], lambda np_, lax_, ns: lambda x, i: np_.take(x, i, axis=0))
P("take flat", [X53, IDX], lambda np_, lax_, ns: lambda x, i: np_.take(x, i))
P("take clip", [X53, IDX], lambda np_, lax_, ns: lambda x, i: np_.take(x, i, axis=1, mode="clip"))
P("take wrap", [X53, IDX], lambda np_, lax_, ns: lambda x, i: np_.take(x, i, axis=0, mode="wrap"))
P("take_along_axis 1", [X53, np.array([[0, 2, 1]] * 5, np.int32)],
  lambda np_, lax_, ns: lambda x, i: np_.take_along_axis(x, i, axis=1))
P("take_along_axis 0", [X53, np.array([[0, 2, 1]], np.int32)],
  lambda np_, lax_, ns: lambda x, i: np_.take_along_axis(x, i, axis=0))
P("take_along_axis argsort", [R45],
  lambda np_, lax_, ns: lambda x: np_.take_along_axis(x, np_.argsort(x, axis=1), axis=1))
P("lax.dynamic_slice traced", [X53, ISC, ISC],
  lambda np_, lax_, ns: lambda x, i, j: lax_.dynamic_slice(x, (i, j), (2, 2)))
P("lax.dynamic_update_slice", [X53, _f(2, 2), ISC],
  lambda np_, lax_, ns: lambda x, u, i: lax_.dynamic_update_slice(x, u, (i, 0)))
P("lax.gather fill", [X53, np.array([[0], [2], [7]], np.int32)],
  lambda np_, lax_, ns: lambda x, i: lax_.gather(
      x, i, lax_.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                        start_index_map=(0,)), (1, 3), mode="fill"))
P("lax.scatter_add", [X53, np.array([[0], [2], [2]], np.int32), _f(3, 3)],
  lambda np_, lax_, ns: lambda x, i, u: lax_.scatter_add(
      x, i, u, lax_.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))))
P("lax.scatter_max", [X53, np.array([[0], [2], [2]], np.int32), _f(3, 3, lo=0, hi=20)],
  lambda np_, lax_, ns: lambda x, i, u: lax_.scatter_max(
      x, i, u, lax_.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))))

# == sorting and cumulative reductions ========================================================

for _kw in [{}, {"axis": 0}, {"axis": None}, {"descending": True}]:
    P(f"sort{_kw}", [R45], lambda np_, lax_, ns, kw=_kw: lambda x: np_.sort(x, **kw))
    P(f"argsort{_kw}", [R45], lambda np_, lax_, ns, kw=_kw: lambda x: np_.argsort(x, **kw))
P("sort[int]", [I23], lambda np_, lax_, ns: lambda x: np_.sort(x))
P("argsort[int]", [I23], lambda np_, lax_, ns: lambda x: np_.argsort(x))
P("x.sort method", [R45], lambda np_, lax_, ns: lambda x: x.sort(axis=0))
P("lax.sort multi-operand", [R45, R45],
  lambda np_, lax_, ns: lambda x, y: lax_.sort((x, y), dimension=0, num_keys=2))
P("lax.sort_key_val", [V3, np.array([2, 0, 1], np.int32)],
  lambda np_, lax_, ns: lambda k, v: lax_.sort_key_val(k, v))
for _kw in [{}, {"axis": 1}, {"axis": -1, "dtype": np.float32}]:
    P(f"cumsum{_kw}", [R45], lambda np_, lax_, ns, kw=_kw: lambda x: np_.cumsum(x, **kw))
P("cumprod axis0", [R45], lambda np_, lax_, ns: lambda x: np_.cumprod(x, axis=0))
P("cumsum[int]", [I23], lambda np_, lax_, ns: lambda x: np_.cumsum(x, axis=1))
P("cumsum[bool]", [B3], lambda np_, lax_, ns: lambda x: np_.cumsum(x))
P("nancumsum", [SPECIAL], lambda np_, lax_, ns: lambda x: np_.nancumsum(x))
P("lax.cummax/cummin/cumlogsumexp", [R45], lambda np_, lax_, ns: lambda x: (
    lax_.cummax(x, axis=1), lax_.cummin(x, axis=0, reverse=True), lax_.cumlogsumexp(x, 1),
    lax_.cumsum(x, 1), lax_.cumprod(x, 0)))

# == contractions =============================================================================

_EINSUMS = [("ij,jk->ik", [A23, B34]), ("ij->j", [A23]), ("ij->ji", [A23]), ("bij->b", [T234]),
            ("ij,jk,kl->il", [A23, B34, C45]), ("bij,bjk->bik", [T234, U245]),
            ("i,i->", [V3, V3]), ("i,j->ij", [V3, W4]), ("...j,jk->...k", [T234, C45]),
            ("ij,ij->ij", [A23, A23]), ("ijk,ikl->jl", [T234, U245]), ("ij,kj", [A23, A23]),
            ("i,i,i->i", [V3, V3, V3]), ("ab,bc,cd,de->ae", [A23, B34, C45, D52]),
            ("ii->i", [S33]), ("ii", [S33]),
            ("ab,bc,ca,cd,da->b", [_f(3, 4), _f(4, 5), _f(5, 3), _f(5, 2), _f(2, 3)]),
            ("ab,bc,cd,de,ef,fg->ag", [A23, B34, C45, D52, _f(2, 6), _f(6, 2)]),
            ("...i1,j1->...ij", [np.ones((2, 3, 1), np.float32), np.ones((4, 1), np.float32)])]
for _s, _a in _EINSUMS:
    P(f"einsum {_s}", _a, lambda np_, lax_, ns, s=_s: lambda *a: np_.einsum(s, *a), rtol=1e-5)
P("einsum interleaved", [A23, B34],
  lambda np_, lax_, ns: lambda a, b: np_.einsum(a, [0, 1], b, [1, 2], [0, 2]), rtol=1e-5)
P("einsum int", [I23, I23], lambda np_, lax_, ns: lambda a, b: np_.einsum("ij,kj->ik", a, b))
P("einsum preferred f32", [A23, B34], lambda np_, lax_, ns: lambda a, b: np_.einsum(
    "ij,jk->ik", a, b, preferred_element_type=np.float32), rtol=1e-5)
for _ax, _a in [(2, [T234, np.ones((3, 4, 2), np.float32)]), (1, [T234, C45]), (0, [V3, W4]),
                (((1,), (0,)), [T234, np.ones((3, 2), np.float32)]),
                (([2, 1], [1, 0]), [T234, np.ascontiguousarray(T234.transpose(1, 2, 0))]),
                ((2, 1), [T234, U245])]:
    P(f"tensordot {_ax}", _a, lambda np_, lax_, ns, ax=_ax: lambda a, b: np_.tensordot(a, b, ax),
      rtol=1e-5)
P("inner 2d", [A23, A23], lambda np_, lax_, ns: lambda a, b: np_.inner(a, b), rtol=1e-5)
P("inner 1d", [V3, V3], lambda np_, lax_, ns: lambda a, b: np_.inner(a, b), rtol=1e-5)
P("outer", [V3, W4], lambda np_, lax_, ns: lambda a, b: np_.outer(a, b))
P("outer 2d", [A23, V3], lambda np_, lax_, ns: lambda a, b: np_.outer(a, b))

# == array manipulation =======================================================================

P("trace", [S33], lambda np_, lax_, ns: lambda a: np_.trace(a))
P("trace offset axes", [T234], lambda np_, lax_, ns: lambda a: np_.trace(a, 1, axis1=1, axis2=2))
P("trace int", [I23], lambda np_, lax_, ns: lambda a: np_.trace(a))
P("diagonal rect", [A23], lambda np_, lax_, ns: lambda a: np_.diagonal(a))
P("diagonal offset", [S33], lambda np_, lax_, ns: lambda a: np_.diagonal(a, 1))
P("diagonal negative", [S33], lambda np_, lax_, ns: lambda a: np_.diagonal(a, -1))
P("diagonal 3d", [T234], lambda np_, lax_, ns: lambda a: np_.diagonal(a, 0, 1, 2))
P("diagonal square", [S33], lambda np_, lax_, ns: lambda a: np_.diagonal(a))
P("tril", [S33], lambda np_, lax_, ns: lambda a: np_.tril(a))
P("triu k=1", [S33], lambda np_, lax_, ns: lambda a: np_.triu(a, 1))
P("tril 3d", [T234], lambda np_, lax_, ns: lambda a: np_.tril(a, -1))
P("tri", [], lambda np_, lax_, ns: lambda: np_.tri(3, 4, 1))
P("roll flat", [A23], lambda np_, lax_, ns: lambda a: np_.roll(a, 1))
P("roll axis", [A23], lambda np_, lax_, ns: lambda a: np_.roll(a, -1, axis=1))
P("roll multi", [T234], lambda np_, lax_, ns: lambda a: np_.roll(a, (1, 2), axis=(0, 2)))
P("roll traced shift", [A23, np.int32(2)], lambda np_, lax_, ns: lambda a, s: np_.roll(a, s, axis=1))
P("tile", [A23], lambda np_, lax_, ns: lambda a: np_.tile(a, (2, 1)))
P("tile int", [V3], lambda np_, lax_, ns: lambda a: np_.tile(a, 3))
P("tile rank up", [V3], lambda np_, lax_, ns: lambda a: np_.tile(a, (2, 2)))
P("lax.tile", [A23], lambda np_, lax_, ns: lambda a: lax_.tile(a, (1, 3)))
P("repeat flat", [A23], lambda np_, lax_, ns: lambda a: np_.repeat(a, 2))
P("repeat axis", [A23], lambda np_, lax_, ns: lambda a: np_.repeat(a, 3, axis=1))
P("repeat array", [A23], lambda np_, lax_, ns: lambda a: np_.repeat(a, np.array([1, 2]), axis=0))
P("meshgrid", [V3, W4], lambda np_, lax_, ns: lambda a, b: np_.meshgrid(a, b))
P("meshgrid ij", [V3, W4], lambda np_, lax_, ns: lambda a, b: np_.meshgrid(a, b, indexing="ij"))
P("meshgrid sparse", [V3, W4], lambda np_, lax_, ns: lambda a, b: np_.meshgrid(a, b, sparse=True))
P("where 3-arg", [B3, V3, V3 * 2], lambda np_, lax_, ns: lambda c, x, y: np_.where(c, x, y))

# == statistics ===============================================================================

for _n, _kw in [("var", {}), ("var", {"axis": 1}), ("var", {"axis": 0, "ddof": 1}),
                ("var", {"axis": 1, "keepdims": True}), ("std", {}), ("std", {"axis": 0}),
                ("std", {"axis": (0, 1), "ddof": 1}), ("ptp", {"axis": 1})]:
    P(f"{_n}{_kw}", [R45], lambda np_, lax_, ns, n=_n, kw=_kw: lambda x: getattr(np_, n)(x, **kw),
      rtol=1e-5)
P("var[int]", [I23], lambda np_, lax_, ns: lambda x: np_.var(x), rtol=1e-5)
P("var[c64]", [C3], lambda np_, lax_, ns: lambda x: np_.var(x), rtol=1e-5)
P("var where", [R45], lambda np_, lax_, ns: lambda x: np_.var(x, where=x > 0), rtol=1e-5)
P("x.std method", [R45], lambda np_, lax_, ns: lambda x: x.std(axis=1), rtol=1e-5)

# == elementwise ==============================================================================

for _n in ["isnan", "isinf", "isposinf", "isneginf", "isfinite", "nan_to_num", "deg2rad",
           "rad2deg", "real", "imag", "conj", "angle", "signbit", "square", "reciprocal", "round",
           "fabs"]:
    P(f"np.{_n}", [SPECIAL], lambda np_, lax_, ns, n=_n: lambda x: getattr(np_, n)(x))
for _n in ["log2", "log10", "sqrt", "arcsinh", "arccosh", "cosh", "sinh", "tan", "arctan"]:
    P(f"np.{_n}", [POS6 + 0.6], lambda np_, lax_, ns, n=_n: lambda x: getattr(np_, n)(x), rtol=1e-5)
for _n in ["arcsin", "arccos", "arctanh"]:
    P(f"np.{_n}", [U6], lambda np_, lax_, ns, n=_n: lambda x: getattr(np_, n)(x), rtol=1e-5)
for _n in ["hypot", "logaddexp", "float_power", "fmod", "heaviside", "copysign", "arctan2",
           "power", "floor_divide", "mod"]:
    P(f"np.{_n}", [G6, POS6], lambda np_, lax_, ns, n=_n: lambda x, y: getattr(np_, n)(x, y),
      rtol=1e-5)
# complex inputs (softplus of complex parameters, in optimistix's tests): JAX's wrapped branch
P("np.logaddexp[complex]", [C3, C3[::-1] * 2], lambda np_, lax_, ns: lambda x, y: (
    np_.logaddexp(x, y), np_.logaddexp2(x, y), ns.jvp(np_.logaddexp, (x, y), (y, x))), rtol=1e-5)
P("np.divmod[int]", [np.array([3, -2, 7], np.int32), np.array([2, 3, -4], np.int32)],
  lambda np_, lax_, ns: lambda x, y: np_.divmod(x, y))
P("np.nan_to_num args", [SPECIAL],
  lambda np_, lax_, ns: lambda x: np_.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0))
P("np.isnan[int]", [I23], lambda np_, lax_, ns: lambda x: (np_.isnan(x), np_.isinf(x)))
P("np.round decimals", [G6 * 3.333], lambda np_, lax_, ns: lambda x: np_.round(x, 2))
P("np.angle deg", [C3], lambda np_, lax_, ns: lambda x: np_.angle(x, deg=True), rtol=1e-5)
P("np.angle[int]", [I23], lambda np_, lax_, ns: lambda x: np_.angle(x))
P("np.arccosh[c64]", [C3], lambda np_, lax_, ns: lambda x: np_.arccosh(x), rtol=1e-5)

# == complex numbers ==========================================================================

for _n in ["isnan", "isinf", "isfinite", "real", "imag", "conj", "angle", "abs", "exp", "log",
           "sqrt", "sin", "cos", "tanh", "square", "negative", "log2", "log10", "nan_to_num",
           "sign"]:
    P(f"np.{_n}[c64]", [C3], lambda np_, lax_, ns, n=_n: lambda x: getattr(np_, n)(x), rtol=1e-5)
P("complex arithmetic", [C3, C3B],
  lambda np_, lax_, ns: lambda x, y: (x * y + 1j, x / y, x - 2 * y, x ** 2), rtol=1e-5)
P("complex reductions", [C3],
  lambda np_, lax_, ns: lambda x: (x.sum(), np_.mean(x), np_.prod(x)), rtol=1e-5)
P("lax.complex", [G6, POS6], lambda np_, lax_, ns: lambda x, y: lax_.complex(x, y) * 2)
P("lax.real/imag/conj", [C3], lambda np_, lax_, ns: lambda x: (
    lax_.real(x), lax_.imag(x), lax_.conj(x), lax_.conj(lax_.real(x))))
P("x.real/x.imag", [C3], lambda np_, lax_, ns: lambda x: (x.real, x.imag, x.conj()))
P("complex matmul", [C3, C3B], lambda np_, lax_, ns: lambda x, y: np_.outer(x, y) @ y, rtol=1e-5)

# == special functions: lax, nn, scipy ========================================================

P("lax.lgamma/digamma/erfc", [POS6],
  lambda np_, lax_, ns: lambda x: (lax_.lgamma(x), lax_.digamma(x), lax_.erfc(x)), rtol=1e-5)
P("lax.square", [G6], lambda np_, lax_, ns: lambda x: lax_.square(x))
for _n in ["relu", "relu6", "gelu", "silu", "swish", "sigmoid", "softplus", "softmax",
           "log_softmax", "logsumexp", "leaky_relu", "elu", "celu", "selu", "log_sigmoid",
           "soft_sign", "hard_tanh", "hard_sigmoid", "hard_silu", "standardize"]:
    P(f"nn.{_n}", [LOGITS], lambda np_, lax_, ns, n=_n: lambda x: getattr(ns.nn, n)(x),
      rtol=1e-5)
P("nn.gelu exact", [LOGITS], lambda np_, lax_, ns: lambda x: ns.nn.gelu(x, approximate=False),
  rtol=1e-5)
P("nn.softmax axis0", [LOGITS], lambda np_, lax_, ns: lambda x: ns.nn.softmax(x, axis=0), rtol=1e-5)
P("nn.log_softmax axis0", [LOGITS], lambda np_, lax_, ns: lambda x: ns.nn.log_softmax(x, 0),
  rtol=1e-5)
P("nn.logsumexp keepdims", [LOGITS],
  lambda np_, lax_, ns: lambda x: ns.nn.logsumexp(x, axis=1, keepdims=True), rtol=1e-5)
P("nn.logsumexp b", [LOGITS, LOGITS],
  lambda np_, lax_, ns: lambda x, b: ns.nn.logsumexp(x, axis=1, b=b), rtol=1e-5)
P("nn.logsumexp return_sign", [LOGITS],
  lambda np_, lax_, ns: lambda x: ns.nn.logsumexp(x, axis=0, return_sign=True), rtol=1e-5)
P("nn.one_hot", [LAB], lambda np_, lax_, ns: lambda lab: ns.nn.one_hot(lab, 10))
P("nn.one_hot axis0 int", [LAB],
  lambda np_, lax_, ns: lambda lab: ns.nn.one_hot(lab, 4, axis=0, dtype=np_.int32))
for _n, _a in [("gammaln", POS6), ("digamma", POS6), ("erf", G6), ("erfc", G6),
               ("erfinv", U6 * 2 - 1), ("expit", G6), ("logit", U6), ("entr", U6), ("ndtr", G6),
               ("ndtri", U6), ("log_ndtr", LOGITS)]:
    P(f"special.{_n}", [_a], lambda np_, lax_, ns, n=_n: lambda x: getattr(ns.scipy.special, n)(x),
      rtol=2e-5, atol=2e-6)
P("special.xlogy", [U6, POS6], lambda np_, lax_, ns: lambda x, y: ns.scipy.special.xlogy(x, y),
  rtol=1e-5)
P("special.xlog1py", [U6, POS6],
  lambda np_, lax_, ns: lambda x, y: ns.scipy.special.xlog1py(x, y), rtol=1e-5)
P("special.logsumexp", [LOGITS], lambda np_, lax_, ns: lambda x: ns.scipy.special.logsumexp(x),
  rtol=1e-5)
P("special.softmax", [LOGITS],
  lambda np_, lax_, ns: lambda x: ns.scipy.special.softmax(x, axis=1), rtol=1e-5)
P("special.log_softmax", [LOGITS],
  lambda np_, lax_, ns: lambda x: ns.scipy.special.log_softmax(x, axis=1), rtol=1e-5)
for _n in ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"]:
    P(f"norm.{_n}", [LOGITS], lambda np_, lax_, ns, n=_n: lambda x: getattr(
        ns.scipy.stats.norm, n)(x), rtol=2e-5, atol=2e-6)
    P(f"norm.{_n} loc scale", [LOGITS], lambda np_, lax_, ns, n=_n: lambda x: getattr(
        ns.scipy.stats.norm, n)(x, 1.0, 2.0), rtol=2e-5, atol=2e-6)
P("norm.ppf", [U6], lambda np_, lax_, ns: lambda q: ns.scipy.stats.norm.ppf(q), rtol=2e-5)
P("norm.isf", [U6], lambda np_, lax_, ns: lambda q: ns.scipy.stats.norm.isf(q, 0.5, 2.0),
  rtol=2e-5)
P("polyval", [np.array([1., 2., 3.], np.float32), A23],
  lambda np_, lax_, ns: lambda p, x: np_.polyval(p, x), rtol=1e-5)

# == whole programs ===========================================================================


def _classifier(np_, lax_, ns):
    def f(w, b, x, labels):
        logits = np_.dot(np_.tanh(x), w) + b
        logp = logits - ns.scipy.special.logsumexp(logits, axis=1, keepdims=True)
        onehot = ns.nn.one_hot(labels, 4)
        loss = -np_.mean(np_.sum(logp * onehot, axis=1))
        acc = np_.mean(np_.argmax(logp, axis=1) == labels)
        return loss, acc
    return f


P("prog.classifier", [_f(5, 4), _f(4), _f(3, 5), np.array([0, 3, 1], np.int32)], _classifier,
  rtol=1e-5)


def _histogram(np_, lax_, ns):
    def f(x):
        bins = np_.clip((x * 2).astype(np_.int32) + 4, 0, 7)
        return np_.zeros(8, np_.float32).at[bins].add(1.0)
    return f


P("prog.histogram", [_f(20)], _histogram)


def _topk_mask(np_, lax_, ns):
    def f(x):
        order = np_.argsort(-x, axis=-1)
        ranks = np_.argsort(order, axis=-1)
        return np_.where(ranks < 2, x, 0.0)
    return f


P("prog.top2 mask", [R45], _topk_mask)


# == known differences ========================================================================

KNOWN_DIFFERENCES: dict[str, str] = {}

# programs whose eager (op-by-op) results may differ from JAX's jit results
KNOWN_NUMERIC: dict[str, str] = {}


# == machinery ================================================================================

def _build(case: Case, ns: NS):
    return case.build(ns.np, ns.lax, ns.top)


def jaxpr_texts(case: Case):
    want = str(jax.make_jaxpr(_build(case, JAX))(*case.args))
    got = str(traxla.make_jaxpr(_build(case, TRAXLA))(*case.args))
    return want, got


def test_corpus_size_and_known_differences():
    assert len(CORPUS) >= 150
    assert set(KNOWN_DIFFERENCES) <= set(CORPUS)
    assert len(CORPUS) - len(KNOWN_DIFFERENCES) >= 150


def _params(known):
    return [pytest.param(n, id=n, marks=(pytest.mark.xfail(strict=True, reason=known[n]),)
                         if n in known else ()) for n in CORPUS]


# Tracing is cheap; one test per program keeps failures readable.
@pytest.mark.parametrize("name", _params(KNOWN_DIFFERENCES))
def test_jaxpr_text_matches_jax(name):
    want, got = jaxpr_texts(CORPUS[name])
    assert got == want, f"\n--- jax\n{want}\n--- traxla\n{got}"


GROUP = 40


def _groups():
    names = list(CORPUS)
    return [pytest.param(tuple(names[i:i + GROUP]), id=f"{names[i]}..{names[min(i + GROUP, len(names)) - 1]}")
            for i in range(0, len(names), GROUP)]


def _run_group(ns: NS, names):
    return run_group([_build(CORPUS[n], ns) for n in names],
                     [CORPUS[n].args for n in names], ns.top.jit)


def _compare(name, got, want):
    case = CORPUS[name]
    compare_outputs(name, got, want, case.rtol, case.atol)


def _check_all(names, got, want):
    failures = []
    for name, g, w in zip(names, got, want):
        try:
            _compare(name, g, w)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def _jax_results(names, jax_side):
    """JAX's jit results of a group, stored (tests/_jax_stored.py)."""
    return jax_side(lambda: _run_group(JAX, names), key=inspect.getsource(run_group))


@pytest.mark.parametrize("names", _groups())
def test_jit_results_match_jax(names, jax_side):
    want = _jax_results(names, jax_side)
    try:
        got = _run_group(TRAXLA, names)
    except Exception:  # noqa: BLE001 - localize the program that fails
        for name in names:
            _compare(name, _run_group(TRAXLA, (name,)), _run_group(JAX, (name,)))
        raise
    _check_all(names, got, want)


def _eager_args(args):
    return [tnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("names", _groups())
def test_eager_results_match_jax(names, jax_side):
    """Every program run op by op (no jit around it) against JAX's jit results."""
    want = _jax_results(names, jax_side)
    got = [_build(CORPUS[n], TRAXLA)(*_eager_args(CORPUS[n].args)) for n in names]
    _check_all(names, got, want)


# == x64 mode: f64 / i64 arrays and literals, end to end ========================================

X64_CASES = ["idx.x[i]", "at.add repeated x2", "sort{}", "argsort{}", "cumsum{}",
             "einsum ij,jk->ik", "var{}", "np.hypot", "complex arithmetic", "nn.softmax",
             "special.gammaln", "tensordot 1", "take axis0", "roll traced shift"]


@contextlib.contextmanager
def _x64():
    with traxla.config.flag("enable_x64", True), jax.enable_x64(True):
        yield


def _as64(args):
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and a.dtype == np.float32:
            a = a.astype(np.float64)
        elif isinstance(a, np.ndarray) and a.dtype == np.int32:
            a = a.astype(np.int64)
        elif isinstance(a, np.ndarray) and a.dtype == np.complex64:
            a = a.astype(np.complex128)
        elif isinstance(a, np.int32):
            a = np.int64(a)
        out.append(a)
    return tuple(out)


def test_x64_mode_matches_jax():
    with _x64():
        failures = []
        for name in X64_CASES:
            case = CORPUS[name]
            args = _as64(case.args)
            want = str(jax.make_jaxpr(_build(case, JAX))(*args))
            got = str(traxla.make_jaxpr(_build(case, TRAXLA))(*args))
            if got != want:
                failures.append(f"{name}\n--- jax\n{want}\n--- traxla\n{got}")
            assert "f64" in got or "i64" in got or "c128" in got, got
        assert not failures, "\n".join(failures)
        fns = {n: (_build(CORPUS[n], TRAXLA), _build(CORPUS[n], JAX)) for n in X64_CASES}

        def run(ns_index, top):
            def group(*flat):
                outs, i = [], 0
                for n in X64_CASES:
                    k = len(CORPUS[n].args)
                    outs.append(fns[n][ns_index](*flat[i:i + k]))
                    i += k
                return outs
            flat = [a for n in X64_CASES for a in _as64(CORPUS[n].args)]
            return top.jit(group)(*flat)

        got, want = run(0, traxla), run(1, jax)
        for name, g, w in zip(X64_CASES, got, want):
            for gl, wl in zip(_leaves(g), _leaves(w)):
                gl, wl = np.asarray(gl), np.asarray(wl)
                assert gl.dtype == wl.dtype, (name, gl.dtype, wl.dtype)
                np.testing.assert_allclose(gl, wl, rtol=1e-10, atol=1e-12, err_msg=name)


def test_x64_literals_print_64_bit():
    with _x64():
        text = str(traxla.make_jaxpr(lambda x, i: (x * 2.5, i + 3))(np.ones(3), np.arange(3)))
        assert "f64[3]" in text and "2.5:f64[]" in text and "3:i64[]" in text, text


# == semantics: repeated indices, clamping, dropping ========================================

def test_at_add_repeated_indices_accumulate():
    x = tnp.zeros(5)
    idx = np.array([0, 2, 2, 2, 4, 0], np.int32)
    got = np.asarray(x.at[idx].add(1.0))
    want = np.zeros(5, np.float32)
    np.add.at(want, idx, 1.0)
    np.testing.assert_array_equal(got, want)
    got_jit = np.asarray(traxla.jit(lambda x, i, v: x.at[i].add(v))(
        x, idx, np.arange(6, dtype=np.float32)))
    want = np.zeros(5, np.float32)
    np.add.at(want, idx, np.arange(6, dtype=np.float32))
    np.testing.assert_array_equal(got_jit, want)
    np.testing.assert_array_equal(
        np.asarray(tnp.ones(5).at[idx].multiply(2.0)), np.array([4, 1, 8, 1, 2], np.float32))


def test_out_of_bounds_gathers_clamp_and_scatters_drop():
    x = tnp.arange(5.0)
    # gather (x[i]): indices clamp into range, as XLA's gather (JAX's default for indexing)
    np.testing.assert_array_equal(np.asarray(x[np.array([7, -1, -9], np.int32)]),
                                  [4.0, 4.0, 0.0])
    np.testing.assert_array_equal(np.asarray(traxla.jit(lambda x, i: x[i])(x, np.int32(11))),
                                  4.0)
    # scatter (x.at[i].set/add): out-of-bounds updates are dropped (FILL_OR_DROP)
    np.testing.assert_array_equal(np.asarray(x.at[np.array([1, 9], np.int32)].set(-1.0)),
                                  [0, -1, 2, 3, 4])
    np.testing.assert_array_equal(np.asarray(x.at[np.array([5, -6], np.int32)].add(10.0)),
                                  [0, 1, 2, 3, 4])
    # jnp.take defaults to mode="fill": out-of-bounds reads give NaN (ints: the minimum)
    got = np.asarray(tnp.take(x, np.array([0, 9], np.int32)))
    assert got[0] == 0 and np.isnan(got[1])
    assert np.asarray(tnp.take(tnp.arange(3), np.array([5], np.int32)))[0] == np.iinfo(np.int32).min
    # negative indices count from the end
    np.testing.assert_array_equal(np.asarray(x.at[-1].set(9.0)), [0, 1, 2, 3, 9])


def test_concrete_boolean_mask_and_traced_mask_error():
    x = tnp.arange(6.0)
    np.testing.assert_array_equal(np.asarray(x[np.asarray(x) > 2.5]), [3, 4, 5])
    with pytest.raises(IndexError, match=r"Array boolean indices must be concrete; got bool\[6\]"):
        traxla.jit(lambda x: x[x > 2])(x)
    with pytest.raises(IndexError, match="boolean indices must be concrete"):
        traxla.make_jaxpr(lambda x: x.at[x > 2].set(0.0))(x)


# == errors at trace time ======================================================================

def _trace_error(fn, *args):
    with pytest.raises(Exception) as info:
        traxla.make_jaxpr(fn)(*args)
    return info


def test_error_einsum_mismatched_subscripts():
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    e = _trace_error(lambda a, b: tnp.einsum("ij,jk->ik", a, b), a, b)
    msg = str(e.value)
    assert e.type is ValueError and "einsum" in msg and "(3" in msg and "(4, 5)" in msg, msg
    e = _trace_error(lambda a: tnp.einsum("ijk->i", a), a)
    assert "einsum" in str(e.value) and "(2, 3)" in str(e.value), str(e.value)
    e = _trace_error(lambda a: tnp.einsum("ij,jk->ik", a), a)
    assert "einsum" in str(e.value) and "operands" in str(e.value), str(e.value)
    e = _trace_error(lambda a: tnp.einsum("ij->iz", a), a)
    assert "einsum" in str(e.value) and "'z'" in str(e.value), str(e.value)


def test_error_wrong_number_of_indices():
    e = _trace_error(lambda x: x[1, 2, 3], X53)
    msg = str(e.value)
    assert e.type is IndexError and "Too many indices" in msg and "(5, 3)" in msg, msg
    e = _trace_error(lambda x: x.at[0, 0, 0].set(1.0), X53)
    assert "Too many indices" in str(e.value), str(e.value)
    e = _trace_error(lambda x: x[..., 0, ...], X53)
    assert "single ellipsis" in str(e.value)


def test_error_non_integer_index_arrays():
    e = _trace_error(lambda x, i: x[i], X53, np.array([0.0, 1.0], np.float32))
    msg = str(e.value)
    assert e.type is TypeError and "integer or boolean type" in msg and "float32" in msg
    assert "(5, 3)" in msg, msg
    e = _trace_error(lambda x: x[1.5], X53)
    assert "integer or boolean type" in str(e.value)
    e = _trace_error(lambda x, i: tnp.take(x, i), X53, np.array([0.5], np.float32))
    assert "take" in str(e.value) and "float32" in str(e.value)
    e = _trace_error(lambda x, i: tnp.take_along_axis(x, i, axis=1), X53, np.ones((5, 3), np.float32))
    assert "take_along_axis" in str(e.value)


def test_error_concatenating_incompatible_shapes():
    e = _trace_error(lambda a, b: tnp.concatenate([a, b]), np.ones((2, 3), np.float32),
                     np.ones((2, 4), np.float32))
    msg = str(e.value)
    assert "concatenate" in msg and "(2, 3)" in msg and "(2, 4)" in msg, msg
    e = _trace_error(lambda a, b: tnp.stack([a, b]), np.ones((2, 3), np.float32),
                     np.ones((3,), np.float32))
    assert "stack" in str(e.value) and "(2, 3)" in str(e.value), str(e.value)


def test_error_misc():
    e = _trace_error(lambda a, b: tnp.tensordot(a, b, 1), np.ones((2, 3)), np.ones((4, 5)))
    assert "tensordot" in str(e.value) and "(2, 3)" in str(e.value)
    e = _trace_error(lambda x: tnp.take_along_axis(x, np.zeros((5,), np.int32), axis=0), X53)
    assert "same number of dimensions" in str(e.value)
    e = _trace_error(lambda x: tnp.tril(x), V3)
    assert "tril" in str(e.value)
    e = _trace_error(lambda x: tnp.hypot(x, x), C3)
    assert "hypot" in str(e.value)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        tnp.var(R45, axis=(0, 0))


# == batching of the new primitives (vmap against a loop) ====================================

def test_vmap_of_new_primitives_matches_loop():
    x = _f(3, 4, lo=0.5, hi=3)
    c = (x + 1j * x[::-1]).astype(np.complex64)
    idx = np.array([[0, 3], [1, 1], [2, 0]], np.int32)
    cases = [
        (lambda v: tnp.tile(v, 2), (x,)),
        (lambda v: (traxla.scipy.special.gammaln(v), traxla.scipy.special.digamma(v),
                    tlax.erfc(v), tlax.square(v)), (x,)),
        (lambda v: (tnp.real(v), tnp.imag(v), tnp.conj(v), tnp.angle(v)), (c,)),
        (lambda a, b: tlax.complex(a, b), (x, x[::-1].copy())),
        (lambda v, i: v[i], (x, idx)),
        (lambda v, i: v.at[i].add(1.0), (x, idx)),
        (lambda v: (tnp.sort(v), tnp.argsort(v), tnp.cumsum(v)), (x,)),
        (lambda v: tnp.einsum("i,j->ij", v, v), (x,)),
    ]
    for fn, args in cases:
        batched = traxla.vmap(fn)(*args)
        looped = [fn(*[tnp.asarray(a[k]) for a in args]) for k in range(3)]
        for b_leaf, *l_leaves in zip(_leaves(batched), *[_leaves(o) for o in looped]):
            np.testing.assert_allclose(np.asarray(b_leaf), np.stack([np.asarray(v) for v in l_leaves]),
                                       rtol=1e-5, atol=1e-6)


# == property tests against NumPy (shapes and dtypes) =========================================

_SHAPES = st.sampled_from([(5,), (3, 4), (2, 3, 4)])
_FLOATS = st.sampled_from([np.float32, np.int32])


def _rand(shape, dtype, seed):
    r = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return r.integers(-20, 20, shape).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


_SETTINGS = settings(max_examples=8, deadline=None, derandomize=True)
# The programs of the property tests are module-level jitted functions, so an example that
# re-draws an already compiled shape/dtype reuses the executable (a jit per example compiled
# every example).


@traxla.jit
def _indexing_and_scatter(x, i):
    return x[i], x.at[i].add(x[0]), x[..., ::-1][i], tnp.take(x, i, axis=0)


@_SETTINGS
@given(shape=_SHAPES, dtype=_FLOATS, seed=st.integers(0, 100))
def test_property_indexing_and_scatter(shape, dtype, seed):
    x = _rand(shape, dtype, seed)
    r = np.random.default_rng(seed + 1)
    n = shape[0]
    idx = r.integers(-n, n, (4,)).astype(np.int32)
    g, s, rv, t = _indexing_and_scatter(x, idx)
    np.testing.assert_array_equal(np.asarray(g), x[idx])
    want = x.copy()
    np.add.at(want, idx, x[0])
    np.testing.assert_allclose(np.asarray(s), want, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(rv), x[..., ::-1][idx])
    np.testing.assert_array_equal(np.asarray(t), np.take(x, idx, axis=0))


@functools.partial(traxla.jit, static_argnums=1)
def _sort_cumulative_statistics(x, axis):
    return (tnp.sort(x, axis=axis), tnp.argsort(x, axis=axis), tnp.cumsum(x, axis=axis),
            tnp.cumprod(tnp.sign(x), axis=axis), tnp.var(x, axis=axis), tnp.std(x),
            tnp.roll(x, 2, axis=axis), tnp.repeat(x, 2, axis=axis), tnp.tile(x, 2))


@_SETTINGS
@given(shape=_SHAPES, dtype=_FLOATS, seed=st.integers(0, 100), axis=st.integers(-1, 0))
def test_property_sort_cumulative_statistics(shape, dtype, seed, axis):
    x = _rand(shape, dtype, seed)
    outs = _sort_cumulative_statistics(x, axis)
    wants = (np.sort(x, axis=axis, kind="stable"), np.argsort(x, axis=axis, kind="stable"),
             np.cumsum(x, axis=axis), np.cumprod(np.sign(x), axis=axis), np.var(x, axis=axis),
             np.std(x), np.roll(x, 2, axis=axis), np.repeat(x, 2, axis=axis), np.tile(x, 2))
    for got, want in zip(outs, wants):
        got = np.asarray(got)
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5)


@traxla.jit
def _contractions(a, b):
    return (tnp.einsum("ij,jk->ik", a, b), tnp.einsum("ij->j", a), tnp.tensordot(a, b, 1),
            tnp.einsum("ij,ij->i", a, a), tnp.outer(a, b), tnp.trace(a), tnp.tril(a),
            tnp.triu(b, 1), tnp.diagonal(a))


@_SETTINGS
@given(m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4), seed=st.integers(0, 50),
       dtype=_FLOATS)
def test_property_contractions(m, k, n, seed, dtype):
    a, b = _rand((m, k), dtype, seed), _rand((k, n), dtype, seed + 1)
    outs = _contractions(a, b)
    wants = (a @ b, a.sum(0), np.tensordot(a, b, 1), np.einsum("ij,ij->i", a, a), np.outer(a, b),
             np.trace(a), np.tril(a), np.triu(b, 1), np.diagonal(a))
    for got, want in zip(outs, wants):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@traxla.jit
def _elementwise_and_special(x, y):
    return (tnp.isnan(x), tnp.nan_to_num(x), tnp.hypot(x, y), tnp.log2(y), tnp.log10(y),
            traxla.scipy.special.gammaln(y), traxla.scipy.special.logsumexp(y),
            traxla.nn.softmax(y), traxla.scipy.stats.norm.cdf(y), tnp.floor_divide(x, y),
            tnp.mod(x, y), tnp.power(y, 1.5), tnp.arctanh(tnp.tanh(y)))


@_SETTINGS
@given(shape=_SHAPES, seed=st.integers(0, 100))
def test_property_elementwise_and_special(shape, seed):
    import scipy.special as sps
    import scipy.stats as spst
    x = _rand(shape, np.float32, seed)
    x.flat[0] = np.nan
    y = np.abs(_rand(shape, np.float32, seed + 3)) + 0.1
    outs = _elementwise_and_special(x, y)
    wants = (np.isnan(x), np.nan_to_num(x, posinf=np.finfo(np.float32).max,
                                        neginf=np.finfo(np.float32).min),
             np.hypot(x, y), np.log2(y), np.log10(y), sps.gammaln(y), sps.logsumexp(y),
             sps.softmax(y, axis=-1), spst.norm.cdf(y), np.floor_divide(x, y), np.mod(x, y),
             np.power(y, 1.5), np.arctanh(np.tanh(y)))
    for got, want in zip(outs, wants):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-5)


@traxla.jit
def _complex(z, w):
    return (z * w, z / w, z + 2.5, tnp.abs(z), tnp.angle(z), tnp.real(z), tnp.imag(z),
            tnp.conj(z), tnp.exp(z), tnp.sum(z * w))


@_SETTINGS
@given(n=st.integers(1, 6), seed=st.integers(0, 100))
def test_property_complex(n, seed):
    r = np.random.default_rng(seed)
    z = (r.standard_normal(n) + 1j * r.standard_normal(n)).astype(np.complex64)
    w = (r.standard_normal(n) + 1j * r.standard_normal(n)).astype(np.complex64)
    outs = _complex(z, w)
    wants = (z * w, z / w, z + 2.5, np.abs(z), np.angle(z), z.real, z.imag, np.conj(z), np.exp(z),
             np.sum(z * w))
    for got, want in zip(outs, wants):
        got = np.asarray(got)
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    from _corpus import print_differences
    print_differences(CORPUS, KNOWN_DIFFERENCES, jaxpr_texts, sys.argv[1:])

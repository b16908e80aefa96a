"""vmap: golden jaxprs from the article, a batching test for every primitive
against a per-example loop, jaxpr-text equality with JAX on a corpus of vmapped
programs, composition with jit, and vmap's error messages.

Run ``python tests/test_vmap.py [name-substring ...]`` to print traxla's and
JAX's jaxprs for every corpus program that differs.
"""
from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp
from traxla.batching import batching_rules
from traxla.ir import ALL_PRIMITIVES

jax = pytest.importorskip("jax")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.tree_util as jtu  # noqa: E402
from traxla.ir.rules.ad import MemorySpace as _MemorySpace, empty2_p as _empty2_p  # noqa: E402

B = 3  # the mapped size used by the per-primitive table
_rng = np.random.default_rng(0)


def _f(*shape, lo=-2.0, hi=2.0):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


def _i(*shape, lo=-5, hi=6):
    return _rng.integers(lo, hi, shape).astype(np.int32)


def _b(*shape):
    return _rng.integers(0, 2, shape).astype(np.bool_)


def _assert_same(actual, expected, rtol=1e-5, atol=1e-6):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if np.issubdtype(expected.dtype, np.inexact):
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def _assert_trees_same(actual, expected, **kw):
    a_leaves, a_tree = jtu.tree_flatten(actual)
    e_leaves, e_tree = jtu.tree_flatten(expected)
    assert a_tree == e_tree, (a_tree, e_tree)
    for a, e in zip(a_leaves, e_leaves):
        _assert_same(a, e, **kw)


# == 1. the article's two vmap jaxprs ==================================================

ARTICLE_DOT = """\
{ lambda ; a:f32[32,5] b:f32[32,5]. let
    c:f32[32] = dot_general[
      dimension_numbers=(([1], [1]), ([0], [0]))
      preferred_element_type=float32
    ] a b
  in (c,) }"""

ARTICLE_COND = """\
{ lambda ; a:f32[4]. let
    b:bool[4] = gt a 0.0:f32[]
    c:i32[4] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:bool[4] = eq c 0:i32[]
    e:f32[4] = stop_gradient a
    f:f32[4] = select_n d e a
    g:f32[4] = sub f 10.0:f32[]
    h:bool[4] = eq c 1:i32[]
    i:f32[4] = stop_gradient a
    j:f32[4] = select_n h i a
    k:f32[4] = mul j 10.0:f32[]
    l:f32[4] = select_n c g k
  in (l,) }"""


def test_article_vmap_dot_adds_a_batch_dimension():
    ones = np.ones((32, 5), np.float32)
    unbatched = str(traxla.make_jaxpr(tnp.dot)(np.ones(5, np.float32), np.ones(5, np.float32)))
    assert "dimension_numbers=(([0], [0]), ([], []))" in unbatched
    text = str(traxla.make_jaxpr(traxla.vmap(lambda a, b: tnp.dot(a, b)))(ones, ones))
    assert "dimension_numbers=(([1], [1]), ([0], [0]))" in text
    assert text == ARTICLE_DOT
    assert text == str(jax.make_jaxpr(jax.vmap(lambda a, b: jnp.dot(a, b)))(ones, ones))


def test_article_vmap_of_cond_becomes_select_n():
    x = np.arange(4, dtype=np.float32)
    text = str(traxla.make_jaxpr(traxla.vmap(
        lambda x: tlax.cond(x > 0, lambda v: v * 10, lambda v: v - 10, x)))(x))
    assert "cond" not in text
    assert text == ARTICLE_COND
    assert text == str(jax.make_jaxpr(jax.vmap(
        lambda x: jlax.cond(x > 0, lambda v: v * 10, lambda v: v - 10, x)))(x))
    out = traxla.vmap(lambda x: tlax.cond(x > 0, lambda v: v * 10, lambda v: v - 10, x))(x - 1)
    _assert_same(out, np.array([-11.0, -10.0, 10.0, 20.0], np.float32))


# == 2. every primitive: vmap(f)(xs) == stack([f(x) for x in xs]) ===========================

@dataclass
class PCase:
    prim: str      # the primitive whose batching rule the case exercises
    label: str
    fun: Callable
    args: tuple
    in_axes: Any = 0
    out_axes: Any = 0
    shape_only: bool = False  # cannot run outside its context: compare output types only


PRIM_CASES: list[PCase] = []


def _call_p():
    from traxla.extend.core.primitives import call_p
    return call_p


def _wrap_init(f):
    from traxla.tracer.linear_util import wrap_init
    return wrap_init(f)


def _closed_call_tanh(x):
    """JAX's ``closed_call_p`` on a jaxpr with a constant (``tanh(x) + c``)."""
    from traxla.extend.core.primitives import closed_call_p
    c = np.arange(2, dtype=np.float32)
    jaxpr = traxla.make_jaxpr(lambda a: tlax.tanh(a) + c)(
        traxla.ShapeDtypeStruct(np.shape(x), x.dtype))
    return closed_call_p.bind(x, **closed_call_p.get_bind_params({"call_jaxpr": jaxpr}))[0]


def C(prim, label, fun, args, in_axes=0, out_axes=0, shape_only=False):
    PRIM_CASES.append(PCase(prim, label, fun, tuple(args), in_axes, out_axes, shape_only))


def _take(x, ax, i):
    return x if ax is None else np.take(np.asarray(x), i, axis=ax)


def _examples(case, size=B):
    """The per-example arguments: mapped leaves indexed along their in_axes."""
    in_axes = case.in_axes
    if not isinstance(in_axes, (tuple, list)):
        in_axes = (in_axes,) * len(case.args)
    return [[jtu.tree_map(lambda ax, x, i=i: jtu.tree_map(lambda y: _take(y, ax, i), x),
                          a, arg, is_leaf=lambda z: z is None)
             for a, arg in zip(in_axes, case.args)] for i in range(size)]


def _stack(outs, out_axes):
    """``np.stack`` of per-example output trees along ``out_axes`` (None: all equal)."""
    outs = [jtu.tree_map(np.asarray, o) for o in outs]
    leaves0, tree = jtu.tree_flatten(outs[0])
    per_leaf = list(zip(*[jtu.tree_leaves(o) for o in outs]))
    if isinstance(out_axes, int) or out_axes is None:
        flat_out_axes = [out_axes] * len(leaves0)
    else:
        flat_out_axes = jtu.tree_leaves(
            jtu.tree_map(lambda ax, sub: jtu.tree_map(lambda _: ax, sub), out_axes, outs[0],
                         is_leaf=lambda z: z is None), is_leaf=lambda z: z is None)
    stacked = []
    for vals, ax in zip(per_leaf, flat_out_axes):
        if ax is None:
            for v in vals[1:]:
                _assert_same(v, vals[0], rtol=0, atol=0)
            stacked.append(vals[0])
        else:
            stacked.append(np.stack(vals, axis=ax))
    return jtu.tree_unflatten(tree, stacked)


def _vmap_and_loop(cases):
    """For each case, ``vmap(f)(*args)`` and ``stack([f(*x) for x in examples])``. All
    the cases of a table share two compiles: one jit of every vmapped function, one
    jit of every unbatched function (called once per example)."""
    vmapped = traxla.jit(lambda all_args: [
        traxla.vmap(c.fun, in_axes=c.in_axes, out_axes=c.out_axes)(*args)
        for c, args in zip(cases, all_args)])([list(c.args) for c in cases])
    unbatched = traxla.jit(lambda all_args: [c.fun(*args) for c, args in zip(cases, all_args)])
    examples = [_examples(c) for c in cases]
    per_example = [unbatched([ex[i] for ex in examples]) for i in range(B)]
    return [(v, _stack([outs[k] for outs in per_example], c.out_axes))
            for k, (c, v) in enumerate(zip(cases, vmapped))]


def _check_output_types(case, batched_jaxpr):
    """The vmapped function's output types are the per-example ones with the mapped axis
    inserted at out_axes (an int here)."""
    per_example = traxla.make_jaxpr(case.fun)(*_examples(case)[0]).out_avals
    expected = []
    for aval in per_example:
        shape = list(aval.shape)
        shape.insert(case.out_axes % (len(shape) + 1), B)
        expected.append((tuple(shape), aval.dtype))
    got = [(tuple(a.shape), a.dtype) for a in batched_jaxpr.out_avals]
    assert got == expected, (case.label, got, expected)


@contextlib.contextmanager
def _record_batching(prim_name):
    """Records the batch dims each call of ``prim_name``'s batching rule receives."""
    prim = ALL_PRIMITIVES[prim_name]
    calls = []
    original = batching_rules[prim]

    def recording(size, vals, dims, **params):
        calls.append(list(dims))
        return original(size, vals, dims, **params)

    batching_rules[prim] = recording
    try:
        yield calls
    finally:
        batching_rules[prim] = original


# -- elementwise unary: (domain, function)
_POS = dict(lo=0.1, hi=3.0)
_UNIT = dict(lo=-0.9, hi=0.9)
_UNARY = {
    "neg": ({}, tlax.neg), "sign": ({}, tlax.sign), "floor": ({}, tlax.floor),
    "ceil": ({}, tlax.ceil), "is_finite": ({}, tlax.is_finite), "exp": ({}, tlax.exp),
    "exp2": ({}, tlax.exp2), "log": (_POS, tlax.log), "log1p": (_POS, tlax.log1p),
    "expm1": ({}, tlax.expm1), "tanh": ({}, tlax.tanh), "logistic": ({}, tlax.logistic),
    "sin": ({}, tlax.sin), "cos": ({}, tlax.cos), "tan": (_UNIT, tlax.tan),
    "asin": (_UNIT, tlax.asin), "acos": (_UNIT, tlax.acos), "atan": ({}, tlax.atan),
    "sinh": ({}, tlax.sinh), "cosh": ({}, tlax.cosh), "asinh": ({}, tlax.asinh),
    "acosh": (dict(lo=1.1, hi=3.0), tlax.acosh), "atanh": (_UNIT, tlax.atanh),
    "sqrt": (_POS, tlax.sqrt), "rsqrt": (_POS, tlax.rsqrt), "cbrt": ({}, tlax.cbrt),
    "abs": ({}, tlax.abs), "erf": ({}, tlax.erf), "erf_inv": (_UNIT, tlax.erf_inv),
    "stop_gradient": ({}, tlax.stop_gradient), "copy": ({}, tlax.copy_p_bind),
    "integer_pow": ({}, lambda x: tlax.integer_pow(x, 3)),
    "round": ({}, lambda x: tlax.round(x, tlax.RoundingMethod.TO_NEAREST_EVEN)),
    "not": ("int", tlax.bitwise_not),
    # special functions and complex parts (lax wrappers bind their own primitives)
    "lgamma": (_POS, getattr(tlax, "lgamma", None)), "digamma": (_POS, getattr(tlax, "digamma", None)),
    "erfc": ({}, getattr(tlax, "erfc", None)), "square": ({}, getattr(tlax, "square", None)),
    "real": ("complex", getattr(tlax, "real", None)), "imag": ("complex", getattr(tlax, "imag", None)),
    "conj": ("complex", getattr(tlax, "conj", None)),
}


def _c(*shape):
    return (_f(*shape) + 1j * _f(*shape)).astype(np.complex64)


for _name, (_dom, _fn) in _UNARY.items():
    if _fn is None or _name not in ALL_PRIMITIVES:
        continue
    _mk = {"int": _i, "complex": _c}.get(_dom) if isinstance(_dom, str) else (
        lambda *s, _d=_dom: _f(*s, **_d))
    C(_name, "in0", _fn, [_mk(B, 2)])
    C(_name, "in1.out1", _fn, [_mk(2, B)], in_axes=1, out_axes=1)
    C(_name, "scalar.in-1.out-1", _fn, [_mk(B)], in_axes=-1, out_axes=-1)

# -- elementwise binary: (x maker, y maker, function)
_F = lambda *s: _f(*s)  # noqa: E731
_NZ = lambda *s: _f(*s, lo=0.5, hi=2.0)  # noqa: E731
_I = lambda *s: _i(*s)  # noqa: E731
_IPOS = lambda *s: _i(*s, lo=1, hi=6)  # noqa: E731
_SH = lambda *s: _i(*s, lo=0, hi=5)  # noqa: E731
_BINARY = {
    "add": (_F, _F, tlax.add), "sub": (_F, _F, tlax.sub), "mul": (_F, _F, tlax.mul),
    "div": (_F, _NZ, tlax.div), "rem": (_I, _IPOS, tlax.rem), "pow": (_NZ, _F, tlax.pow),
    "max": (_F, _F, tlax.max), "min": (_F, _F, tlax.min), "atan2": (_F, _NZ, tlax.atan2),
    "nextafter": (_F, _F, tlax.nextafter), "and": (_I, _I, tlax.bitwise_and),
    "or": (_I, _I, tlax.bitwise_or), "xor": (_I, _I, tlax.bitwise_xor),
    "shift_left": (_I, _SH, tlax.shift_left),
    "shift_right_logical": (_I, _SH, tlax.shift_right_logical),
    "shift_right_arithmetic": (_I, _SH, tlax.shift_right_arithmetic),
    "eq": (_I, _I, tlax.eq), "ne": (_I, _I, tlax.ne), "lt": (_F, _F, tlax.lt),
    "le": (_F, _F, tlax.le), "gt": (_F, _F, tlax.gt), "ge": (_F, _F, tlax.ge),
    "complex": (_F, _F, getattr(tlax, "complex", None)),
}
for _name, (_mx, _my, _fn) in _BINARY.items():
    if _fn is None or _name not in ALL_PRIMITIVES:
        continue
    C(_name, "both0", _fn, [_mx(B, 2), _my(B, 2)])
    C(_name, "dims_differ.out1", _fn, [_mx(2, B), _my(B, 2)], in_axes=(1, 0), out_axes=1)
    C(_name, "y_unbatched.out-1", _fn, [_mx(B, 2), _my(2)], in_axes=(0, None), out_axes=-1)
    C(_name, "x_unbatched_scalar", _fn, [_mx(), _my(2, B)], in_axes=(None, 1))
    C(_name, "x_batched_scalar", _fn, [_mx(B), _my(2, 3, B)], in_axes=(0, 2), out_axes=1)
if "add_any" in ALL_PRIMITIVES:  # autodiff's sum of cotangents: the broadcasting rule
    _add_any = lambda x, y: ALL_PRIMITIVES["add_any"].bind(x, y)  # noqa: E731
    C("add_any", "dims_differ", _add_any, [_f(2, B), _f(B, 2)], in_axes=(1, 0))
    C("add_any", "y_unbatched", _add_any, [_f(B, 2), _f(2)], in_axes=(0, None), out_axes=1)
C("mul", "python_scalar", lambda x: tlax.mul(x, 2.0), [_f(2, B)], in_axes=1)
C("eq", "size1_broadcast", tlax.eq, [_i(B, 1, 2, lo=0, hi=2), _i(2, 1, lo=0, hi=2)],
  in_axes=(0, None))

# -- select_n, clamp, conversions
C("select_n", "all_batched", lambda p, a, b: tlax.select(p, a, b), [_b(B, 2), _f(B, 2), _f(B, 2)])
C("select_n", "pred_batched_cases_not", lambda p, a, b: tlax.select(p, a, b),
  [_b(2, B), _f(2), _f(2)], in_axes=(1, None, None), out_axes=1)
C("select_n", "scalar_pred_batched", lambda p, a, b: tlax.select(p, a, b),
  [_b(B), _f(B, 2), _f(2, B)], in_axes=(0, 0, 1))
C("select_n", "scalar_pred_unbatched", lambda p, a, b: tlax.select(p, a, b),
  [np.bool_(True), _f(B, 2), _f(2, B)], in_axes=(None, 0, 1))
C("select_n", "int_which_three_cases", lambda w, a, b, c: tlax.select_n(w, a, b, c),
  [_i(B, 2, lo=0, hi=3), _f(2), _f(B, 2), _f(2)], in_axes=(0, None, 0, None))
C("select_n", "batched_scalar_pred_scalar_cases", lambda p, a, b: tlax.select(p, a, b),
  [_b(B), np.float32(1.0), np.float32(-1.0)], in_axes=(0, None, None))
C("clamp", "scalar_bounds", lambda x: tlax.clamp(-1.0, x, 1.0), [_f(2, B)], in_axes=1, out_axes=1)
C("clamp", "all_batched", tlax.clamp, [_f(B, 2, lo=-2, hi=-1), _f(B, 2), _f(B, 2, lo=1, hi=2)])
C("clamp", "batched_scalar_bounds", tlax.clamp, [_f(B, lo=-2, hi=0), _f(B, 2), _f(B, lo=0, hi=2)],
  in_axes=(0, 0, 0))
C("clamp", "x_unbatched", tlax.clamp, [_f(B, lo=-2, hi=0), _f(2), np.float32(0.5)],
  in_axes=(0, None, None), out_axes=-1)
C("clamp", "bounds_unbatched_arrays", tlax.clamp, [_f(2, lo=-2, hi=0), _f(2, B), _f(2, lo=0, hi=2)],
  in_axes=(None, 1, None))
C("clamp", "scalar_x_batched_lo", tlax.clamp, [_f(B, lo=-2, hi=0), np.float32(-0.5), np.float32(1.0)],
  in_axes=(0, None, None))
C("convert_element_type", "f32_to_i32", lambda x: tlax.convert_element_type(x * 3, np.int32),
  [_f(2, B)], in_axes=1)
C("convert_element_type", "bool_to_f32", lambda x: tlax.convert_element_type(x, np.float32),
  [_b(B, 2)], out_axes=1)
C("bitcast_convert_type", "f32_to_i32", lambda x: tlax.bitcast_convert_type(x, np.int32),
  [_f(2, B)], in_axes=1, out_axes=1)
C("bitcast_convert_type", "narrowing_last_dim",
  lambda x: tlax.bitcast_convert_type(x, np.float32), [_f(2, B).astype(np.float16)], in_axes=1)
C("bitcast_convert_type", "widening", lambda x: tlax.bitcast_convert_type(x, np.float16),
  [_f(B, 2)], out_axes=-1)

# -- shapes
C("broadcast_in_dim", "in1", lambda x: tlax.broadcast_in_dim(x, (2, 4), (0,)), [_f(2, B)],
  in_axes=1, out_axes=2)
C("broadcast_in_dim", "scalar", lambda x: tlax.broadcast_in_dim(x, (2, 3), ()), [_f(B)],
  out_axes=1)
C("reshape", "in1", lambda x: tlax.reshape(x, (6,)), [_f(2, B, 3)], in_axes=1)
C("reshape", "dimensions", lambda x: tlax.reshape(x, (3, 2), (1, 0)), [_f(2, 3, B)], in_axes=-1,
  out_axes=-1)
C("reshape", "to_scalar", lambda x: tlax.reshape(x, ()), [_f(1, B)], in_axes=1)
C("squeeze", "in1", lambda x: tlax.squeeze(x, (0, 2)), [_f(1, B, 2, 1)], in_axes=1)
C("squeeze", "in0.out1", lambda x: tlax.squeeze(x, (1,)), [_f(B, 2, 1)], out_axes=1)
C("transpose", "in1.out2", lambda x: tlax.transpose(x, (2, 0, 1)), [_f(2, B, 3, 4)], in_axes=1,
  out_axes=2)
C("transpose", "in-1", lambda x: tlax.transpose(x, (1, 0)), [_f(2, 3, B)], in_axes=-1)
C("rev", "in1", lambda x: tlax.rev(x, (0, 1)), [_f(2, B, 3)], in_axes=1)
C("rev", "in0.out-1", lambda x: tlax.rev(x, (1,)), [_f(B, 2, 3)], out_axes=-1)
C("concatenate", "mixed", lambda x, y: tlax.concatenate([x, y, x], 0), [_f(B, 2), _f(3)],
  in_axes=(0, None))
C("concatenate", "dims_differ", lambda x, y: tlax.concatenate([x, y], 1), [_f(2, B, 3), _f(B, 2, 1)],
  in_axes=(1, 0), out_axes=2)
C("pad", "value_unbatched", lambda x: tlax.pad(x, np.float32(9.0), [(1, 2, 1)]), [_f(3, B)],
  in_axes=1)
C("stack", "same_dims", lambda x, y: tnp.stack([x, y], axis=1), [_f(B, 2, 3), _f(B, 2, 3)])
C("stack", "mixed", lambda x, y: tnp.stack([x, y], axis=0), [_f(3, B), _f(3)], in_axes=(1, None))
C("unstack", "in1", lambda x: tnp.unstack(x, axis=0), [_f(3, B, 2)], in_axes=1)
C("unstack", "after", lambda x: tnp.unstack(x, axis=1), [_f(B, 2, 3)], out_axes=1)
C("split", "in0", lambda x: tlax.split(x, (1, 2), axis=0), [_f(B, 3, 2)])
C("split", "in1", lambda x: tlax.split(x, (2, 2), axis=0), [_f(4, B)], in_axes=1)

C("pad", "negative_and_interior", lambda x, v: tlax.pad(x, v, [(-1, 1, 0), (0, 2, 1)]),
  [_f(B, 3, 2), np.float32(5.0)], in_axes=(0, None), out_axes=1)
C("pad", "value_batched", lambda x, v: tlax.pad(x, v, [(1, -1, 1)]), [_f(3, B), _f(B)],
  in_axes=(1, 0))
C("pad", "operand_unbatched", lambda x, v: tlax.pad(x, v, [(2, 1, 0)]), [_f(3), _f(B)],
  in_axes=(None, 0), out_axes=-1)
C("slice", "strided.in1", lambda x: tlax.slice(x, (1, 0), (4, 3), (2, 2)), [_f(5, B, 3)],
  in_axes=1)
C("slice", "no_strides.out1", lambda x: tlax.slice(x, (1,), (3,)), [_f(B, 4)], out_axes=1)
C("dynamic_slice", "static_index", lambda x: tlax.dynamic_slice(x, (2, 0), (2, 2)), [_f(B, 5, 3)])
C("dynamic_slice", "unbatched_traced_index.in1",
  lambda x, i: tlax.dynamic_slice(x, (i,), (3,)), [_f(6, B), np.int32(-2)], in_axes=(1, None),
  out_axes=1)
C("dynamic_update_slice", "operand_batched",
  lambda x, u: tlax.dynamic_update_slice(x, u, (1, 0)), [_f(B, 4, 2), _f(2, 2)], in_axes=(0, None))
C("dynamic_update_slice", "update_batched.in1",
  lambda x, u, i: tlax.dynamic_update_slice(x, u, (i,)), [_f(5), _f(2, B), np.int32(2)],
  in_axes=(None, 1, None), out_axes=1)
C("dynamic_slice", "batched_index", lambda x, i: tlax.dynamic_slice(x, (i, 1), (2, 2)),
  [_f(B, 5, 3), np.array([0, 4, -1], np.int32)], out_axes=1)
C("dynamic_slice", "index_batched_operand_not", lambda x, i: tlax.dynamic_slice(x, (i,), (2,)),
  [_f(5), np.array([3, 1, 9], np.int32)], in_axes=(None, 0))
C("dynamic_update_slice", "batched_index",
  lambda x, u, i: tlax.dynamic_update_slice(x, u, (i, 0)),
  [_f(B, 4, 2), _f(2, 2, B), np.array([0, 3, 1], np.int32)], in_axes=(0, 2, 0))
if hasattr(tlax, "tile") and "tile" in ALL_PRIMITIVES:
    C("tile", "in1", lambda x: tlax.tile(x, (2, 1)), [_f(2, B, 3)], in_axes=1)
    C("tile", "vector.out1", lambda x: tlax.tile(x, (3,)), [_i(B, 2)], out_axes=1)
C("iota", "added_to_batched", lambda x: x + tlax.iota(np.float32, 3), [_f(B, 3)])
C("empty2", "added_to_batched", lambda x: x * 0 + _empty2_p.bind(
  dtype=np.float32, memory_space=_MemorySpace.Device), [_f(B, 3)], shape_only=True)  # the value is unspecified: only its shape can be compared
C("iota", "broadcasted_in_dim1", lambda x: tlax.broadcasted_iota(np.int32, (2, 3), 1) * x,
  [_i(2, B, 3)], in_axes=1, out_axes=-1)

# -- indexing primitives (bound directly: their lax wrappers are not needed here)
_PRIM = ALL_PRIMITIVES.get
if "gather" in ALL_PRIMITIVES:
    from traxla.ir.rules.indexing import (GatherDimensionNumbers, GatherScatterMode,
                                          ScatterDimensionNumbers)

    def _rows(mode, fill_value=None):
        dn = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
        return lambda x, i: _PRIM("gather").bind(
            x, i, dimension_numbers=dn, slice_sizes=(1, 2), indices_are_sorted=False,
            unique_indices=False, mode=mode, fill_value=fill_value)

    _IDX = lambda *s: _i(*s, 1, lo=0, hi=4)  # noqa: E731
    C("gather", "operand_batched", _rows(GatherScatterMode.CLIP), [_f(4, B, 2), _IDX(3)],
      in_axes=(1, None))
    C("gather", "indices_batched", _rows(GatherScatterMode.PROMISE_IN_BOUNDS), [_f(4, 2), _IDX(B, 3)],
      in_axes=(None, 0), out_axes=1)
    C("gather", "both_batched_fill", _rows(GatherScatterMode.FILL_OR_DROP, -1.0),
      [_f(B, 4, 2), _i(3, B, 1, lo=-1, hi=6)], in_axes=(0, 1))

    def _scatter(name):
        dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
        return lambda x, i, u: _PRIM(name).bind(
            x, i, u, dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
            mode=GatherScatterMode.FILL_OR_DROP, update_jaxpr=None, update_consts=())

    for _name in [n for n in ALL_PRIMITIVES if n == "scatter" or n.startswith("scatter-")]:
        _unique = np.array([[3], [0]], np.int32)  # scatter (overwrite) needs unique indices
        C(_name, "operand_batched", _scatter(_name), [_f(B, 5), _unique, _f(2)],
          in_axes=(0, None, None))
        C(_name, "updates_batched", _scatter(_name), [_f(5), _unique, _f(2, B)],
          in_axes=(None, None, 1), out_axes=1)
        C(_name, "indices_batched", _scatter(_name),
          [_f(B, 5), np.array([[[1], [4]], [[0], [2]], [[4], [7]]], np.int32), _f(B, 2)])
    for _name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
        _cum = lambda axis, rev, _name=_name: lambda x: _PRIM(_name).bind(x, axis=axis, reverse=rev)
        C(_name, "axis0.in1", _cum(0, False), [_f(4, B, 2)], in_axes=1)
        C(_name, "axis1.reverse.out-1", _cum(1, True), [_f(B, 2, 4)], out_axes=-1)
    _sort = lambda dim, nk: lambda *xs: _PRIM("sort").bind(  # noqa: E731
        *xs, dimension=dim, is_stable=True, num_keys=nk)
    C("sort", "one_operand.in1", _sort(0, 1), [_f(4, B)], in_axes=1, out_axes=1)
    C("sort", "keys_batched_values_not", _sort(1, 1), [_f(B, 2, 4), _i(2, 4)], in_axes=(0, None))
    C("sort", "two_keys.dim0", _sort(0, 2), [_i(4, B, lo=0, hi=2), _f(B, 4)], in_axes=(1, 0))

# -- issue #16a: top_k, approx_top_k, population_count, clz, total-order comparisons
if "top_k" in ALL_PRIMITIVES:
    C("top_k", "last_axis", lambda x: tlax.top_k(x, 2), [_f(B, 5)])
    C("top_k", "axis0.in1", lambda x: tlax.top_k(x, 2, axis=0), [_f(4, B, 3)], in_axes=1)
    C("approx_top_k", "max.in1", lambda x: tlax.approx_max_k(x, 2), [_f(5, B)], in_axes=1)
    C("approx_top_k", "min", lambda x: tlax.approx_min_k(x, 3, reduction_dimension=0),
      [_f(B, 4, 2)])
    C("population_count", "int32", tlax.population_count, [_i(B, 4)])
    C("clz", "uint8.in1", lambda x: tlax.clz(x.astype(np.uint8)), [_i(4, B, lo=0, hi=200)],
      in_axes=1)
    for _name in ("eq_to", "lt_to", "le_to"):
        C(_name, "x_batched", lambda x, y, _n=_name: _PRIM(_n).bind(x, y), [_f(B, 4), _f(4)],
          in_axes=(0, None))

# -- random keys (raw uint32 key data, wrapped inside so every key primitive is batched)
if "random_seed" in ALL_PRIMITIVES:
    import traxla.random as trandom

    _KD = lambda *s: _rng.integers(0, 2**32, s + (2,), dtype=np.uint32)  # noqa: E731
    _wrap = trandom.wrap_key_data
    C("random_seed", "seeds", lambda s: trandom.key_data(trandom.key(s)),
      [np.array([0, 7, -3], np.int32)])
    for _name in ("random_wrap", "random_split", "random_unwrap"):
        C(_name, "split.in1", lambda k: trandom.key_data(trandom.split(_wrap(k), 3)), [_KD(B).T],
          in_axes=1, out_axes=1)
    C("random_unwrap", "wrap_unwrap", lambda k: trandom.key_data(_wrap(k)), [_KD(B)])
    C("random_fold_in", "data_batched", lambda k, i: trandom.key_data(trandom.fold_in(_wrap(k), i)),
      [_KD(), np.array([0, 1, 99], np.uint32)], in_axes=(None, 0))
    C("random_fold_in", "both_batched", lambda k, i: trandom.key_data(trandom.fold_in(_wrap(k), i)),
      [_KD(B), np.array([5, 1, 2], np.uint32)], out_axes=-1)
    C("random_bits", "key_batched", lambda k: trandom.bits(_wrap(k), (2,)), [_KD(B)], out_axes=1)
    C("random_bits", "uniform", lambda k: trandom.uniform(_wrap(k), (2, 2)), [_KD(B)])
    _U32 = lambda *s: _rng.integers(0, 2**32, s, dtype=np.uint32)  # noqa: E731
    C("threefry2x32", "key_half_batched", lambda a, b, c: trandom.threefry_2x32((a, b), c),
      [_U32(B), _U32(), _U32(B, 4)], in_axes=(0, None, 0))
    C("threefry2x32", "count_batched_only", lambda a, b, c: trandom.threefry_2x32((a, b), c),
      [_U32(), _U32(), _U32(3, B)], in_axes=(None, None, 1), out_axes=1)

# -- custom derivatives: vmap of jit stages the custom call, then batches it
if "custom_jvp_call" in ALL_PRIMITIVES:
    _cj = traxla.custom_jvp(lambda x: tnp.sin(x) * 2)
    _cj.defjvp(lambda p, t: (_cj(p[0]), 2 * tnp.cos(p[0]) * t[0]))
    _cv = traxla.custom_vjp(lambda x, y: tnp.sin(x) * y)
    _cv.defvjp(lambda x, y: (_cv(x, y), (x, y)),
               lambda r, ct: (tnp.cos(r[0]) * r[1] * ct, tnp.sin(r[0]) * ct))
    C("custom_jvp_call", "jit.in1", traxla.jit(_cj), [_f(2, B)], in_axes=1)
    C("custom_jvp_call", "jit_grad", traxla.jit(traxla.grad(lambda x: _cj(x).sum())), [_f(B, 2)])
    C("custom_vjp_call", "jit.y_unbatched", traxla.jit(_cv), [_f(B, 2), _f(2)], in_axes=(0, None))
    C("custom_vjp_call", "jit_grad", traxla.jit(traxla.grad(lambda x, y: _cv(x, y).sum())),
      [_f(2, B), _f(B, 2)], in_axes=(1, 0), out_axes=1)

# -- collectives: they run only inside shard_map, so these cases compare output types
#    (the per-example type with the mapped axis inserted at out_axes)
if "psum" in ALL_PRIMITIVES:
    for _name in ("psum", "pmax", "pmin"):
        C(_name, "in1", lambda x, _n=_name: ALL_PRIMITIVES[_n].bind(
            x, axes=("i",), axis_index_groups=None), [_f(2, B)], in_axes=1, shape_only=True)
    C("ppermute", "in0", lambda x: ALL_PRIMITIVES["ppermute"].bind(
        x, axis_name="i", perm=((0, 1), (1, 0))), [_f(B, 2)], out_axes=1, shape_only=True)
    _gather = lambda dim, tiled: lambda x: ALL_PRIMITIVES["all_gather"].bind(  # noqa: E731
        x, all_gather_dimension=dim, axis_name="i", axis_size=4, tiled=tiled)
    C("all_gather", "untiled.batch_after", _gather(0, False), [_f(3, B)], in_axes=1,
      out_axes=-1, shape_only=True)
    C("all_gather", "tiled.batch_before", _gather(0, True), [_f(B, 3)], shape_only=True)
    _scatter_sum = lambda dim, size, tiled: lambda x: ALL_PRIMITIVES["reduce_scatter"].bind(  # noqa: E731
        x, scatter_dimension=dim, axis_name="i", axis_size=size, tiled=tiled)
    C("reduce_scatter", "untiled.batch_after", _scatter_sum(0, 4, False), [_f(4, B, 3)],
      in_axes=1, shape_only=True)
    C("reduce_scatter", "tiled.batch_before", _scatter_sum(1, 3, True), [_f(B, 4, 3)],
      out_axes=2, shape_only=True)
    from traxla.ir.sharding import PartitionSpec as _P
    from traxla.sharding.shard_map import shard_map as _shard_map

    _mesh = traxla.make_mesh((1,), ("i",))
    # (Auto axes: the arguments are not placed as the in_specs split them)
    _auto = traxla.make_mesh((1,), ("i",), axis_types=(traxla.sharding.AxisType.Auto,))
    C("shard_map", "psum_body.in1", _shard_map(lambda x: tlax.psum(x, "i"), mesh=_auto,
                                               in_specs=_P("i"), out_specs=_P()),
      [_f(4, B)], in_axes=1, shape_only=True)
    C("shard_map", "two_args_one_batched", _shard_map(lambda x, y: (x * y, y), mesh=_auto,
                                                      in_specs=(_P("i"), _P()), out_specs=_P("i")),
      [_f(B, 4), _f(4)], in_axes=(0, None), out_axes=1, shape_only=True)
    C("pvary", "pcast_in_body", _shard_map(lambda x: tlax.pcast(x, "i", to="varying") * 2,
                                           mesh=_auto, in_specs=_P(), out_specs=_P("i")),
      [_f(4, B)], in_axes=1, shape_only=True)
    if "reshard" in ALL_PRIMITIVES:
        _replicated = traxla.NamedSharding(_mesh, _P())
        C("reshard", "in1", lambda x: traxla.sharding.reshard(x * 2, _replicated), [_f(2, B)],
          in_axes=1, shape_only=True)
    C("axis_index", "added_to_batched", lambda x: x + ALL_PRIMITIVES["axis_index"].bind(
        axis_name="i"), [_i(B, 2)], shape_only=True)

# -- reductions and contractions
for _name, _mk in [("reduce_sum", _F), ("reduce_max", _F), ("reduce_min", _F), ("reduce_prod", _F),
                   ("reduce_and", _b), ("reduce_or", _b)]:
    _red = getattr(tlax, _name)
    C(_name, "axis0.in1", lambda x, _red=_red: _red(x, (0,)), [_mk(2, B, 3)], in_axes=1)
    C(_name, "all_axes.in-1", lambda x, _red=_red: _red(x, (0, 1)), [_mk(2, 3, B)], in_axes=-1)
    C(_name, "axis1.out1", lambda x, _red=_red: _red(x, (1,)), [_mk(B, 2, 3)], out_axes=1)
for _name in ("argmax", "argmin"):
    _arg = getattr(tlax, _name)
    C(_name, "axis1.in0", lambda x, _arg=_arg: _arg(x, 1, np.int32), [_f(B, 2, 3)])
    C(_name, "axis0.in1", lambda x, _arg=_arg: _arg(x, 0, np.int32), [_f(3, B, 2)], in_axes=1,
      out_axes=1)
_DG = lambda dn: lambda a, b: tlax.dot_general(a, b, dn)  # noqa: E731
C("dot_general", "vecvec.both", _DG((((0,), (0,)), ((), ()))), [_f(B, 3), _f(3, B)], in_axes=(0, 1))
C("dot_general", "matmul.lhs_only", _DG((((1,), (0,)), ((), ()))), [_f(2, 3, B), _f(3, 4)],
  in_axes=(2, None), out_axes=1)
C("dot_general", "matmul.rhs_only", _DG((((1,), (0,)), ((), ()))), [_f(2, 3), _f(3, B, 4)],
  in_axes=(None, 1), out_axes=-1)
C("dot_general", "existing_batch_dims", _DG((((2,), (1,)), ((0,), (0,)))),
  [_f(2, B, 4, 3), _f(2, 3, 5)], in_axes=(1, None))
C("dot_general", "existing_batch_both", _DG((((2,), (1,)), ((0,), (0,)))),
  [_f(B, 2, 4, 3), _f(2, 3, B, 5)], in_axes=(0, 2), out_axes=3)
C("dot_general", "int_preferred", lambda a, b: tlax.dot_general(
    a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.float32), [_i(B, 2, 3), _i(3, 2)],
  in_axes=(0, None))

# -- control flow and jit
C("cond", "batched_pred", lambda x: tlax.cond(x.sum() > 0, lambda v: v * 10, lambda v: v - 10, x),
  [_f(B, 2)])
C("cond", "unbatched_pred_in1", lambda p, x: tlax.cond(p > 0, lambda v: tlax.sin(v), lambda v: v, x),
  [np.float32(1.0), _f(2, B)], in_axes=(None, 1), out_axes=1)
C("cond", "unbatched_pred_mixed_outputs",
  lambda p, x, y: tlax.cond(p > 0, lambda a, b: (a, b), lambda a, b: (b * 2, b), x, y),
  [np.float32(-1.0), _f(B, 2), _f(2)], in_axes=(None, 0, None), out_axes=(0, None))
C("cond", "switch_batched_index",
  lambda i, x: tlax.switch(i, [lambda a: a, lambda a: a * 2, tlax.cos], x),
  [np.array([0, 2, 7], np.int32), _f(2)], in_axes=(0, None))
C("cond", "batched_pred_batched_const",
  lambda p, x, w: tlax.cond(p > 0, lambda a: a * w, lambda a: a + 1, x),
  [_f(B), _f(2), _f(B, 2)], in_axes=(0, None, 0), out_axes=1)
C("while", "unbatched_pred",
  lambda x: tlax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))[1],
  [_f(B, 2)])
C("while", "batched_pred", lambda x: tlax.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2, x),
  [_f(2, B, lo=0.5, hi=3)], in_axes=1, out_axes=1)
C("while", "batched_bound_counter",
  lambda n, x: tlax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + 1.0), (0, x)),
  [np.array([1, 3, 0], np.int32), _f(2)], in_axes=(0, None))
C("while", "fori_loop_traced_bounds",
  lambda lo, hi, x: tlax.fori_loop(lo, hi, lambda i, c: c * 2 + i.astype(np.float32), x),
  [np.int32(1), np.array([2, 4, 1], np.int32), _f(B)], in_axes=(None, 0, 0))
C("scan", "batched_xs", lambda xs: tlax.scan(lambda c, x: (c + x, c * x), 0.0, xs), [_f(4, B)],
  in_axes=1, out_axes=(0, 1))
C("scan", "batched_carry", lambda c0, xs: tlax.scan(lambda c, x: (c * x, c), c0, xs),
  [_f(B, 2), _f(4, 2)], in_axes=(0, None))
C("scan", "batched_consts", lambda w, xs: tlax.scan(lambda c, x: (c + w * x, c), 0.0, xs),
  [_f(B), _f(4)], in_axes=(0, None), out_axes=-1)
C("scan", "fori_loop_static", lambda x: tlax.fori_loop(0, 3, lambda i, c: c * 2 + i, x),
  [_f(2, B)], in_axes=1)
C("scan", "reverse_carry_and_xs_batched",
  lambda c0, xs: tlax.scan(lambda c, x: (c + x, c.sum()), c0, xs, reverse=True),
  [_f(2, B), _f(4, 2, B)], in_axes=(1, 2), out_axes=(0, 1))
C("jit", "mixed_in_axes", lambda x, y: traxla.jit(lambda a, b: tlax.tanh(a) * b)(x, y),
  [_f(B, 2), _f(2)], in_axes=(0, None))
C("jit", "natural_out_dims",
  lambda x, y: traxla.jit(lambda a, b: (a * b, b + 1.0, a.T))(x, y),
  [_f(2, 3, B), _f(B)], in_axes=(2, 0), out_axes=(1, 0, -1))
C("call", "mixed_in_axes", lambda x, y: _call_p().bind(x, y, subfuns=(_wrap_init(
    lambda a, b: [tlax.tanh(a) * b, b]),))[0], [_f(B, 2), _f(2)], in_axes=(0, None))
C("closed_call", "batched_const_operand", lambda x: _closed_call_tanh(x),
  [_f(2, B)], in_axes=1)
C("jit", "nested_jit", lambda x: traxla.jit(lambda a: traxla.jit(lambda z: z * 2)(a) + 1.0)(x),
  [_f(2, B)], in_axes=1)
# checkpoint and the optimizer-steering primitives (tests/test_checkpoint.py)
C("remat2", "mixed_in_axes", lambda x, y: traxla.checkpoint(lambda a, b: tlax.sin(a) * b)(x, y),
  [_f(2, B), _f(2)], in_axes=(1, None))
C("name", "batched", lambda x: traxla.checkpoint(
    lambda a: traxla.ad_checkpoint.checkpoint_name(a * 2.0, "h"))(x), [_f(B, 2)])
C("reduce_precision", "batched", lambda x: tlax.reduce_precision(x, 5, 10), [_f(2, B)], in_axes=1)
C("optimization_barrier", "mixed", lambda x, y: tlax.optimization_barrier((x, y)),
  [_f(B, 2), _f(2)], in_axes=(0, None), out_axes=(0, None))
C("mulhi", "scalar_operand", lambda x: tlax.mulhi(x, np.uint32(3000000000)),
  [np.arange(2 * B, dtype=np.uint32).reshape(B, 2) * 1000003], in_axes=0)
C("reduce_xor", "batched", lambda x: tlax.reduce_xor(x, (0,)),
  [np.arange(3 * B, dtype=np.int32).reshape(3, B)], in_axes=1)
C("composite", "batched", lambda x, y: tlax.composite(lambda a, b: tlax.sin(a) * b, "t.op")(x, y),
  [_f(B, 2), _f(2)], in_axes=(0, None))
C("platform_index", "in_a_batched_program",
  lambda x: tlax.platform_dependent(x, cpu=tlax.sin, default=tlax.cos), [_f(B)])
C("rng_bit_generator", "batched_keys",
  lambda k: tlax.rng_bit_generator(k, (2,))[0], [np.arange(4 * B, dtype=np.uint32).reshape(B, 4)],
  shape_only=True)
C("rng_uniform", "batched_bounds", lambda a: tlax.rng_uniform(a, a + 1.0, (2,)), [_f(B)],
  shape_only=True)
C("linear_call", "batched_residual", lambda x, y: traxla.custom_derivatives.linear_call(
    lambda r, v: v / r, lambda r, t: t / r, y, x), [_f(B, 2), _f(B, lo=1, hi=2)])
C("sharding_constraint", "batched", lambda x: tlax.with_sharding_constraint(
    x * 2.0, traxla.NamedSharding(traxla.make_mesh((1,), ("i",)), traxla.sharding.P("i"))),
  [_f(4, B)], in_axes=1)
C("all_to_all", "batch_before_split", lambda x: ALL_PRIMITIVES["all_to_all"].bind(
    x, axis_name="i", split_axis=0, concat_axis=1, axis_index_groups=None, tiled=True,
    axis_size=2), [_f(B, 4, 3)], shape_only=True)


# convolution, windowed reductions, fft (issue #14; more in tests/test_conv.py, test_windowed.py)
def _maxpool(x):
    return tlax.reduce_window(x, -np.inf, tlax.max, (2, 2), (1, 2), "SAME")


C("conv_general_dilated", "lhs_batched", lambda x, w: tlax.conv(x, w, (1,), "SAME"),
  [_f(B, 2, 3, 6), _f(4, 3, 2)], in_axes=(0, None))
C("conv_general_dilated", "rhs_batched_groups", lambda x, w: tlax.conv_general_dilated(
    x, w, (1,), "VALID", feature_group_count=3), [_f(2, 3, 6), _f(6, 1, 2, B)],
  in_axes=(None, 3))
C("conv_general_dilated", "both_batched_nwc", lambda x, w: tlax.conv_general_dilated(
    x, w, (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")), [_f(2, 5, 3, B), _f(B, 2, 3, 4)],
  in_axes=(3, 0))
C("fft", "rfft", lambda x: tlax.fft(x, "rfft", (3, 4)), [_f(2, B, 3, 4)], in_axes=1)
C("fft", "ifft", lambda x: tlax.fft(x, "ifft", (4,)),
  [(_f(B, 3, 4) + 1j * _f(B, 3, 4)).astype(np.complex64)])
C("reduce_window_sum", "strided", lambda x: tlax.reduce_window(x, 0.0, tlax.add, (2, 2), (2, 1),
                                                               "SAME"), [_f(4, B, 5)], in_axes=1)
C("reduce_window_max", "pool", _maxpool, [_f(B, 4, 5)])
C("reduce_window_min", "dilated", lambda x: tlax.reduce_window(
    x, np.inf, tlax.min, (2, 2), (1, 1), "VALID", (1, 2), (2, 1)), [_f(4, 5, B)], in_axes=2)
C("reduce_window", "generic_monoid", lambda x: tlax.reduce_window(
    x, 1.0, tlax.mul, (2, 1), (1, 1), "SAME"), [_f(B, 4, 5)])
C("reduce", "generic_monoid", lambda x: tlax.reduce(x, 1.0, lambda a, b: a * b + 0.0, (1,)),
  [_f(4, B, 5)], in_axes=1)
C("select_and_gather_add", "maxpool_jvp", lambda x, t: traxla.jvp(_maxpool, (x,), (t,))[1],
  [_f(B, 4, 5), _f(B, 4, 5)])
C("select_and_scatter_add", "maxpool_grad",
  lambda x: traxla.grad(lambda x: (_maxpool(x) ** 2).sum())(x), [_f(4, 5, B)], in_axes=2)
# linear algebra (issue #13): batch dims lead; a vmapped axis moves to the front
_TL = tlax.linalg


def _spd(*batch, n=3):
    a = _f(*batch, n, n)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


C("cholesky", "batched", lambda x: _TL.cholesky(x), [_spd(B)])
C("cholesky_update", "batched", lambda r, w: _TL.cholesky_update(r, w),
  [np.triu(_spd(B)) + 3 * np.eye(3, dtype=np.float32), _f(B, 3)])
C("triangular_solve", "both_batched", lambda a, b: _TL.triangular_solve(a, b, left_side=True),
  [_spd(B), _f(B, 3, 2)])
C("triangular_solve", "rhs_only", lambda a, b: _TL.triangular_solve(a, b, lower=True),
  [_spd(), _f(2, 3, B)], in_axes=(None, 2), out_axes=1)
C("lu", "batched", lambda x: _TL.lu(x), [_f(3, 4, B)], in_axes=2)
C("lu_pivots_to_permutation", "batched", lambda p: _TL.lu_pivots_to_permutation(p, 4),
  [np.array([[1, 2, 3], [3, 1, 2], [0, 1, 2]], np.int32)])
C("qr", "batched", lambda x: _TL.qr(x, full_matrices=False), [_f(B, 4, 3)])
C("geqrf", "batched", lambda x: _TL.geqrf(x), [_f(B, 4, 3)])
C("geqp3", "batched", lambda x, p: _TL.geqp3(x, p), [_f(B, 4, 3), np.zeros((B, 3), np.int32)])
C("qr", "pivoting", lambda x: _TL.qr(x, pivoting=True), [_f(B, 4, 3)])
C("householder_product", "batched", lambda a, t: _TL.householder_product(a, t),
  [_f(B, 4, 3), _f(B, 3)])
C("ormqr", "batched_c", lambda a, t, c: _TL.ormqr(a, t, c), [_f(4, 3), _f(3), _f(B, 4, 2)],
  in_axes=(None, None, 0))
C("eigh", "batched", lambda x: _TL.eigh(x), [_spd(B)])
C("svd", "batched", lambda x: _TL.svd(x, full_matrices=False), [_f(B, 4, 3)])
C("eig", "batched", lambda x: _TL.eig(x, compute_left_eigenvectors=False), [_spd(B)])
C("schur", "batched", lambda x: _TL.schur(x), [_spd(B)])
C("hessenberg", "batched", lambda x: _TL.hessenberg(x), [_f(B, 3, 3)])
C("tridiagonal", "batched", lambda x: _TL.tridiagonal(x), [_spd(B)])
C("tridiagonal_solve", "rhs_batched",
  lambda dl, d, du, b: _TL.tridiagonal_solve(dl, d, du, b),
  [_f(3), _f(3, lo=4, hi=5), _f(3), _f(B, 3, 2)], in_axes=(None, None, None, 0))
C("symmetric_product", "batched", lambda a, c: _TL.symmetric_product(a, c), [_f(B, 3, 2), _spd(B)])
C("custom_linear_solve", "rhs_batched",
  lambda a, b: tlax.custom_linear_solve(lambda x: a * x, b, lambda mv, x: x / a, symmetric=True),
  [_f(3, lo=1, hi=2), _f(B, 3)], in_axes=(None, 0))

# Primitives whose batching rule no public API reaches from vmap; each has its own test.
SPECIAL_CASES = {
    "custom_lin": "test_custom_lin_batching_rule",  # only in linear jaxprs, which get transposed
    # host callbacks: vmapped against JAX's call shapes and printed output
    "debug_print": "test_callbacks.py::test_debug_print_matches_jax[vmap*]",
    "debug_callback": "test_callbacks.py::test_debug_print_matches_jax[vmap_callback]",
    "pure_callback": "test_callbacks_pure.py::test_vmap_methods_match_jax",
    "io_callback": "test_callbacks_pure.py::test_unordered_io_callback_under_vmap_runs_per_lane",
    "check": "test_checkify.py::test_unfunctionalized_check_under_vmap_names_first_failing_lane",
}
SPECIAL_CASES["ffi_call"] = "tests/test_ffi.py::test_vmap_each_method_matches_stacking"  # needs built kernels
# Families whose vmap-versus-stacking tests live in their own files
SPECIAL_CASES.update(dict.fromkeys(["conv_general_dilated"], "tests/test_conv.py"))
SPECIAL_CASES.update(dict.fromkeys(
    ["reduce", "reduce_window", "reduce_window_max", "reduce_window_min", "reduce_window_sum",
     "select_and_gather_add", "select_and_scatter_add"], "tests/test_windowed.py"))
SPECIAL_CASES.update(dict.fromkeys(["fft"], "tests/test_fft.py"))
# conversions to and from a library's extended dtype (flax's fp8_meta32)
SPECIAL_CASES.update(dict.fromkeys(["to_edtype", "from_edtype"],
                                   "tests/test_extended_dtype_rules.py::test_vmap_matches_jax"))
SPECIAL_CASES.update(dict.fromkeys(
    ["cholesky", "cholesky_update", "eig", "eigh", "geqrf", "hessenberg", "householder_product",
     "lu", "lu_pivots_to_permutation", "qr", "schur", "svd", "triangular_solve", "tridiagonal",
     "tridiagonal_solve"], "tests/test_linalg_numeric.py"))
SPECIAL_CASES.update(dict.fromkeys(["debug_callback", "debug_print", "io_callback",
                                    "pure_callback"], "tests/test_callbacks*.py"))
SPECIAL_CASES.update(dict.fromkeys(["check"], "tests/test_checkify.py"))
# a hijax primitive's linearized equation is only in linear jaxprs (transposed, as
# custom_lin): vmap of grad against JAX in tests/test_hijax_vjp.py
SPECIAL_CASES["call_hi_primitive_linearized"] = (
    "tests/test_hijax_vjp.py::test_eager_jit_jvp_grad_linearize_vmap_match_jax")
SPECIAL_CASES.update(dict.fromkeys(["top_k", "approx_top_k", "population_count", "clz"],
                                   "tests/test_numpy_rest.py"))
SPECIAL_CASES.update(dict.fromkeys(
    ["bessel_i0e", "bessel_i1e", "igamma", "igamma_grad_a", "igammac", "polygamma", "zeta",
     "regularized_incomplete_beta"], "tests/test_random_scipy_corpus.py"))
SPECIAL_CASES.update(dict.fromkeys(["random_gamma", "random_clone"], "tests/test_random.py"))
SPECIAL_CASES.update(dict.fromkeys(["call_exported", "dim_as_value"], "tests/test_export.py"))
SPECIAL_CASES.update(dict.fromkeys(["scaled_matmul_wrapper"], "tests/test_nn_scaled.py"))
SPECIAL_CASES.update(dict.fromkeys(["device_put"], "tests/test_sparse_linalg.py"))
SPECIAL_CASES.update(dict.fromkeys(["custom_vmap_call"], "tests/test_custom_batching.py"))
# issue #31's lax names: vmapped against JAX (jaxprs, values) or a per-example loop there
SPECIAL_CASES.update(dict.fromkeys(["dce_sink", "empty", "ragged_dot_general",
                                    "select_and_scatter", "stage", "create_token", "after_all"],
                                   "tests/test_lax_census_names.py"))
# the census of JAX 0.10.2's names (stop 29): vmapped against JAX in their own files
SPECIAL_CASES.update({"scaled_dot": "tests/test_scaled_dot.py",
                      "pbroadcast": "tests/test_pbroadcast.py",
                      "ragged_all_to_all": "tests/test_ragged_all_to_all.py",
                      "psend": "tests/test_psend_precv.py", "precv": "tests/test_psend_precv.py",
                      "host_local_array_to_global_array": "tests/test_multihost_utils.py",
                      "global_array_to_host_local_array": "tests/test_multihost_utils.py"})
# a compiled Pallas kernel: vmap as a grid axis, its Mosaic module compared with JAX's
SPECIAL_CASES.update({"pallas_call": "tests/test_pallas_mosaic.py"})
# Primitives with neither a batching rule nor a test yet, each with the reason.
PENDING: dict[str, str] = {}
PENDING.update(dict.fromkeys(
    ["new_ref", "empty_ref", "get", "swap", "addupdate", "freeze", "free_ref"],
    "array refs never reach vmap: outside staging a ref is a Ref object, and a jaxpr holding "
    "refs is discharged first (tests/test_refs.py vmaps ref programs against JAX)"))

# the unreduced/reduced casts: vmap refuses them, as JAX's batchers do
SPECIAL_CASES.update(dict.fromkeys(
    ["vary_unreduced_cast_p", "reduced_vary_cast_p", "preduced"],
    "tests/test_unreduced.py::test_vmap_of_the_unreduced_casts_refuses_as_jax"))


def test_every_primitive_has_batching_cases():
    covered = {c.prim for c in PRIM_CASES} | {p for p in SPECIAL_CASES if p in ALL_PRIMITIVES}
    missing = sorted(set(ALL_PRIMITIVES) - covered - set(PENDING))
    assert not missing, f"primitives without a vmap test case in PRIM_CASES: {missing}"
    no_rule = sorted(n for n, p in ALL_PRIMITIVES.items()
                     if p not in batching_rules and n not in PENDING)
    assert not no_rule, f"primitives without a batching rule: {no_rule}"
    stale = sorted(n for n in PENDING if n in covered or ALL_PRIMITIVES.get(n) in batching_rules)
    assert not stale, f"PENDING entries that now have a rule or a test: {stale}"


_BATCHING_PRIMS = sorted({c.prim for c in PRIM_CASES})
_CHUNK = 16  # primitives whose cases run together
_SHARED_RESULTS: dict = {}


def _shared_results(prim):
    """``_vmap_and_loop`` of the runnable cases of ``prim`` and of the next primitives (16
    in all, alphabetically), computed on first use in a process: two compiled programs per 16
    primitives instead of two per primitive (the compiles were most of this test's time;
    chunks, so that the two xdist workers seldom both compile the same cases).
    {id(case): (vmapped, expected)}; None where the cases cannot run together (each
    primitive's test then runs its own cases)."""
    chunk = _BATCHING_PRIMS.index(prim) // _CHUNK
    if chunk not in _SHARED_RESULTS:
        prims = set(_BATCHING_PRIMS[chunk * _CHUNK:(chunk + 1) * _CHUNK])
        cases = [c for c in PRIM_CASES if c.prim in prims and not c.shape_only]
        try:
            _SHARED_RESULTS[chunk] = dict(zip(map(id, cases), _vmap_and_loop(cases)))
        except Exception:  # noqa: BLE001 - the failing primitive's own test reports it
            _SHARED_RESULTS[chunk] = None
        # the transformation caches now hold these cases' batched jaxprs: emptied, so that
        # each test's make_jaxpr still runs (and records) its primitive's batching rule
        traxla.clear_caches()
    return _SHARED_RESULTS[chunk]


@pytest.mark.parametrize("prim", _BATCHING_PRIMS)
def test_primitive_batching_matches_per_example_loop(prim):
    cases = [c for c in PRIM_CASES if c.prim == prim]
    for case in cases:
        vf = traxla.vmap(case.fun, in_axes=case.in_axes, out_axes=case.out_axes)
        with _record_batching(prim) as calls:
            jaxpr = traxla.make_jaxpr(vf)(*case.args)
        if prim in ("iota", "axis_index", "empty2", "platform_index"):  # no operands: never batched
            assert prim in str(jaxpr), case.label
        else:
            assert any(any(d is not None for d in dims) for dims in calls), (
                f"{case.label}: {prim}'s batching rule never saw a batched operand")
        if case.shape_only:
            _check_output_types(case, jaxpr)
    cases = [c for c in cases if not c.shape_only]
    if not cases:
        return
    shared = _shared_results(prim)
    results = [shared[id(c)] for c in cases] if shared else _vmap_and_loop(cases)
    for case, (vmapped, expected) in zip(cases, results):
        try:
            _assert_trees_same(vmapped, expected)
        except AssertionError as e:
            raise AssertionError(f"{prim} case {case.label} (in_axes={case.in_axes}, "
                                 f"out_axes={case.out_axes}): {e}") from None


@pytest.mark.skipif("custom_lin" not in ALL_PRIMITIVES, reason="no custom_lin primitive")
def test_custom_lin_batching_rule():
    """custom_lin (the linear part of a linearized custom_vjp call) batched: the batched
    equation's bwd rule, applied to batched residuals and cotangents, equals bwd per example."""
    from traxla.ir.avals import ShapedArray

    prim = ALL_PRIMITIVES["custom_lin"]
    aval = ShapedArray((2,), np.dtype(np.float32), False)

    def bwd(res, cts):
        return [tnp.cos(res[0]) * cts[0]]

    def f(r, t):
        return prim.bind(r, t, num_res=1, bwd=bwd, out_avals=(aval,), in_avals=(aval,),
                         lin_mask=(True,), out_mask=(True,))

    res, t, cts = _f(2, B), _f(2), _f(B, 2)
    with _record_batching("custom_lin") as calls:
        jaxpr = traxla.make_jaxpr(traxla.vmap(f, in_axes=(1, None)))(res, t)
    assert calls == [[1, None]]
    eqn, = [e for e in jaxpr.jaxpr.eqns if e.primitive is prim]
    assert [v.aval.shape for v in eqn.outvars] == [(B, 2)]
    batched_bwd = eqn.params["bwd"]
    got = traxla.jit(lambda r, c: batched_bwd([r], [c]))(res.T, cts)
    jb = traxla.jit(bwd)
    _assert_trees_same(got, [np.stack([np.asarray(jb([res[:, i]], [cts[i]])[0]) for i in range(B)])])


# == 3. jaxpr text equal to JAX's on a corpus of vmapped programs ========================
#
# Each program is written once against a namespace (np_, lax_, vmap_, jit_) and built
# twice: with traxla's and with JAX's. The test compares str(make_jaxpr(program)(*args))
# and runs both programs on the same inputs.

@dataclass(frozen=True)
class NS:
    np: Any
    lax: Any
    vmap: Any
    jit: Any
    make_jaxpr: Callable


TRAXLA = NS(tnp, tlax, traxla.vmap, traxla.jit, traxla.make_jaxpr)
JAX = NS(jnp, jlax, jax.vmap, jax.jit, jax.make_jaxpr)


@dataclass
class Case:
    name: str
    build: Callable  # (np_, lax_, vmap_, jit_) -> the (vmapped) program
    args: tuple


CORPUS: dict[str, Case] = {}


def V(name, args, build):
    assert name not in CORPUS, name
    CORPUS[name] = Case(name, build, tuple(args))


def _program(ns: NS, case: Case):
    return case.build(ns.np, ns.lax, ns.vmap, ns.jit)


V("article.dot", [np.ones((32, 5), np.float32), np.ones((32, 5), np.float32)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda a, b: np_.dot(a, b)))
V("article.cond", [np.arange(4, dtype=np.float32)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.cond(x > 0, lambda v: v * 10, lambda v: v - 10, x)))
# elementwise
V("unary.sin.in1.out1", [_f(3, 4)], lambda np_, lax_, vmap_, jit_: vmap_(np_.sin, in_axes=1, out_axes=1))
V("unary.exp.neg_axes", [_f(3, 4)], lambda np_, lax_, vmap_, jit_: vmap_(np_.exp, in_axes=-1, out_axes=-1))
V("binary.add.x_unbatched", [_f(3), _f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: x + y, in_axes=(None, 0)))
V("binary.mul.dims_differ", [_f(4, 3), _f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: x * y, in_axes=(0, 1)))
V("binary.sub.scalar_batched", [_f(4, 3), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, s: x - s))
V("binary.pyscalar", [_f(4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: 2.0 * x + 1.0))
V("binary.bcast_rank", [_f(4, 3), _f(2, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: np_.maximum(x, y), in_axes=(0, None)))
V("binary.lax.atan2", [_f(4, 3), _f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lax_.atan2, in_axes=(0, 1), out_axes=1))
V("compare.lt_where", [_f(4, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: np_.where(x < y, x, y), in_axes=(0, None)))
V("select_n.pred_batched", [np.array([True, False, True, False]), _f(3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, a, b: lax_.select(p, a, b), in_axes=(0, None, None)))
V("select_n.cases_batched", [np.array([True, False, True]), _f(4, 3), _f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, a, b: lax_.select(p, a, b), in_axes=(None, 0, 1)))
V("select_n.int_which", [_i(4, 3, lo=0, hi=3), _f(4, 3), _f(4, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda w, a, b, c: lax_.select_n(w, a, b, c), in_axes=(0, 0, 0, None)))
V("where.scalar_pred", [_f(4), _f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda s, x: np_.where(s > 0, x, -x)))
V("clamp.scalar_bounds", [_f(4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.clamp(-1.0, x, 1.0)))
V("clamp.batched_bounds", [_f(4), _f(4, 3), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda lo, x, hi: lax_.clamp(lo, x, hi), in_axes=(0, 0, 0)))
V("clamp.x_unbatched", [_f(4), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda lo, x: lax_.clamp(lo, x, 5.0), in_axes=(0, None)))
V("convert.in1", [_f(3, 4)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: x.astype(np_.int32), in_axes=1))
V("integer_pow", [_f(4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: x ** 3))
V("iota.add", [_f(4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: x + lax_.iota(np_.float32, 3)))
# reductions
V("reduce.sum.axis0.in1", [_f(3, 4, 2)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.sum(x, axis=0), in_axes=1))
V("reduce.max.all.in2", [_f(3, 2, 4)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.max(x), in_axes=2))
V("reduce.mean.axis1", [_f(4, 2, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.mean(x, axis=1)))
V("reduce.argmax.in1", [_f(3, 4)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.argmax(x), in_axes=1))
V("reduce.lax.min_prod", [_f(2, 4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: (lax_.reduce_min(x, (1,)), lax_.reduce_prod(x, (0, 1))),
                   in_axes=1, out_axes=(0, -1)))
V("reduce.any", [_f(4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.any(x > 0)))
# contractions
V("dot.matvec.lhs_batched", [_f(4, 2, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda a, v: a @ v, in_axes=(0, None)))
V("dot.matmul.rhs_batched", [_f(2, 3), _f(4, 3, 5)],
  lambda np_, lax_, vmap_, jit_: vmap_(np_.matmul, in_axes=(None, 0)))
V("dot.matmul.rhs_batched_axis1", [_f(2, 3), _f(3, 4, 5)],
  lambda np_, lax_, vmap_, jit_: vmap_(np_.matmul, in_axes=(None, 1)))
V("dot.matmul.lhs_axis2", [_f(2, 3, 4), _f(3, 5)],
  lambda np_, lax_, vmap_, jit_: vmap_(np_.matmul, in_axes=(2, None)))
V("dot.both_batched_dims_differ", [_f(4, 2, 3), _f(3, 4, 5)],
  lambda np_, lax_, vmap_, jit_: vmap_(np_.matmul, in_axes=(0, 1)))
V("dot_general.existing_batch", [_f(2, 4, 3, 5), _f(2, 5, 6)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda a, b: lax_.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                   in_axes=(1, None)))
V("dot.vdot_out1", [_f(4, 3), _f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda a, b: np_.outer(a, b), out_axes=1))
# shapes
V("reshape.in1", [_f(2, 4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: x.reshape(6), in_axes=1))
V("reshape.ravel", [_f(4, 2, 3)], lambda np_, lax_, vmap_, jit_: vmap_(np_.ravel))
V("transpose.in1.out2", [_f(2, 4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: x.T, in_axes=1, out_axes=2))
V("concatenate.mixed", [_f(4, 3), _f(2)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: np_.concatenate([x, y, x]), in_axes=(0, None)))
V("concatenate.dims_differ", [_f(4, 2, 3), _f(2, 4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: np_.concatenate([x, y], axis=1), in_axes=(0, 1)))
V("pad.unbatched_value", [_f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.pad(x, 0.0, [(1, 2, 1)]), in_axes=1))
V("pad.batched_value", [_f(4, 3), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, v: lax_.pad(x, v, [(1, 0, 0)])))
V("slice.basic.in1", [_f(5, 4)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: x[1:4:2], in_axes=1))
V("slice.lax_2d", [_f(4, 3, 5)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.slice(x, (0, 1), (3, 5), (2, 2)), in_axes=0, out_axes=-1))
V("dynamic_slice.static", [_f(4, 6)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.dynamic_slice(x, (2,), (3,))))
V("dynamic_slice.unbatched_index", [_f(6, 4), np.int32(1)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, i: lax_.dynamic_slice(x, (i,), (3,)), in_axes=(1, None)))
V("dynamic_update_slice.static", [_f(4, 6), _f(2)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, u: lax_.dynamic_update_slice(x, u, (1,)), in_axes=(0, None)))
V("dynamic_update_slice.upd_batched", [_f(6), _f(2, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, u: lax_.dynamic_update_slice(x, u, (1,)), in_axes=(None, 1)))
V("dynamic_slice.batched_index", [_f(5, 4, 3), np.array([0, 2, 3, -1], np.int32)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, i: lax_.dynamic_slice(x, (i, 0), (2, 2)),
                                       in_axes=(1, 0)))
V("dynamic_slice.index_only_batched", [_f(6), np.array([0, 2, 3, 5], np.int32)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, i: lax_.dynamic_slice(x, (i,), (3,)),
                                       in_axes=(None, 0)))
V("dynamic_update_slice.batched_index", [_f(4, 6), _f(2, 4), np.array([0, 1, 4, 5], np.int32)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, u, i: lax_.dynamic_update_slice(x, u, (i,)),
                                       in_axes=(0, 1, 0)))
V("dynamic_index_in_dim", [_f(4, 5, 3), np.int32(2)],
  lambda np_, lax_, vmap_, jit_: vmap_(
      lambda x, i: lax_.dynamic_index_in_dim(x, i, axis=1, keepdims=False), in_axes=(0, None)))
V("rev.in1", [_f(3, 4, 2)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.rev(x, (0, 1)), in_axes=1))
V("broadcast_to", [_f(4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.broadcast_to(x, (2, 3))))
V("expand_squeeze", [_f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.squeeze(np_.expand_dims(x, 0), 0) * 2, out_axes=1))
V("stack", [_f(4, 3), _f(3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: np_.stack([x, y]), in_axes=(0, None)))
# in/out axes variants
V("axes.dict_tree", [{"a": _f(4, 3), "b": _f(3, 4)}],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda d: d["a"] * d["b"], in_axes=({"a": 0, "b": 1},)))
V("axes.tuple_tree_none", [(_f(4, 3), _f(3)), _f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, z: p[0] * p[1] + z, in_axes=((0, None), 1)))
V("axes.out_tree", [_f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: {"s": x.sum(), "m": x * 2}, out_axes={"s": 0, "m": 1}))
V("axes.out_none_unbatched", [_f(4, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: (x + y, y * 2), in_axes=(0, None), out_axes=(0, None)))
V("axes.unbatched_output_bcast", [_f(4, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, y: (x, y * 2), in_axes=(0, None), out_axes=1))
V("axes.axis_size_all_none", [_f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: x * 2, in_axes=None, axis_size=5))
# composition
V("nested.vmap_vmap", [_f(4, 5, 3)], lambda np_, lax_, vmap_, jit_: vmap_(vmap_(lambda x: np_.sin(x).sum())))
V("nested.inner_in1", [_f(4, 3, 5), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(vmap_(lambda x, y: x * y, in_axes=(1, None)), in_axes=(0, None)))
V("nested.outer_dot", [_f(4, 3), _f(5, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(vmap_(np_.dot, in_axes=(None, 0)), in_axes=(0, None)))
V("vmap_of_jit", [_f(4, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(jit_(lambda x, y: np_.tanh(x) * y), in_axes=(0, None)))
V("vmap_of_jit.nested_jit", [_f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(jit_(lambda x: jit_(lambda z: z * 2)(x) + 1.0), in_axes=0))
V("jit_of_vmap", [_f(4, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: jit_(vmap_(lambda x, y: np_.tanh(x) * y, in_axes=(0, None))))
V("vmap_of_jit.out1", [_f(3, 4)], lambda np_, lax_, vmap_, jit_: vmap_(jit_(lambda x: x.sum()), in_axes=1))
# control flow
V("cond.batched_pred.two_operands", [_f(4), _f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, x: lax_.cond(p > 0, lambda a: a * 2, lambda a: a + 1, x)))
V("cond.unbatched_pred", [np.float32(1.0), _f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, x: lax_.cond(p > 0, lambda a: np_.sin(a), lambda a: a, x),
                   in_axes=(None, 0)))
V("cond.unbatched_pred_mixed_outs", [np.float32(1.0), _f(4, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, x, y: lax_.cond(p > 0, lambda a, b: (a, b), lambda a, b: (b, b * 2), x, y),
                   in_axes=(None, 0, None)))
V("switch.batched_index", [np.array([0, 1, 2, 5], np.int32), _f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda i, x: lax_.switch(i, [lambda a: a, lambda a: a * 2, np_.cos], x)))
V("switch.unbatched_index", [np.int32(1), _f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda i, x: lax_.switch(i, [lambda a: a, lambda a: a * 2, np_.cos], x),
                   in_axes=(None, 0)))
V("while.unbatched_pred", [_f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2),
                                              (0, x))[1]))
V("while.batched_pred", [_f(4, lo=1, hi=3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.while_loop(lambda c: c < 10.0, lambda c: c * 2, x)))
V("while.batched_pred_counter", [np.array([1, 3, 0, 2], np.int32), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda n, x: lax_.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + 1.0),
                                                 (0, x))[1], in_axes=(0, None)))
V("fori_loop.static", [_f(4, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.fori_loop(0, 3, lambda i, c: c * 2 + i, x)))
V("fori_loop.batched_bound", [np.array([1, 3, 0, 2], np.int32), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda n, x: lax_.fori_loop(0, n, lambda i, c: c + 1.0, x)))
V("scan.batched_xs", [_f(4, 5)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda xs: lax_.scan(lambda c, x: (c + x, c * x), 0.0, xs)))
V("scan.batched_xs_in1", [_f(5, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda xs: lax_.scan(lambda c, x: (c + x, c * x), 0.0, xs), in_axes=1))
V("scan.batched_carry", [_f(4), _f(5)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda c0, xs: lax_.scan(lambda c, x: (c * x, c), c0, xs), in_axes=(0, None)))
V("scan.batched_consts", [_f(4), _f(5)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda w, xs: lax_.scan(lambda c, x: (c + w * x, c), 0.0, xs), in_axes=(0, None)))
V("scan.ys_only_batched", [_f(5), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda xs, w: lax_.scan(lambda c, x: (c + x, x * w), 0.0, xs), in_axes=(None, 0)))
V("vmap_of_jit.natural_dim", [_f(3, 4)], lambda np_, lax_, vmap_, jit_: vmap_(jit_(lambda x: x * 2), in_axes=1))
V("vmap_of_jit.natural_dim_out1", [_f(3, 4), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(jit_(lambda x, y: (x * y, y + 1.0, x.T)), in_axes=(1, 0), out_axes=(1, 0, -1)))
V("cond.unbatched_pred_in1", [np.float32(-1.0), _f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, x: lax_.cond(p > 0, lambda a: a * 2, lambda a: a - 1, x),
                   in_axes=(None, 1)))
V("pad.batched_value_in1", [_f(3, 4), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, v: lax_.pad(x, v, [(1, -1, 1)]), in_axes=(1, 0)))
V("pad.unbatched_operand", [_f(3), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, v: lax_.pad(x, v, [(2, 1, 0)]), in_axes=(None, 0)))
V("select_n.scalar_which_cases_dims_differ", [np.True_, _f(4, 3), _f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, a, b: lax_.select_n(p, a, b), in_axes=(None, 0, 1)))
V("cond.batched_pred_consts", [_f(4), _f(4, 3), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda p, x, w: lax_.cond(p > 0, lambda a: a * w, lambda a: a + 1, x),
                   in_axes=(0, 0, None)))
V("switch.unbatched_index_batched_const", [np.int32(2), _f(4, 3), _f(4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda i, x, w: lax_.switch(i, [lambda a: a, lambda a: a * w, lambda a: a - w], x),
                   in_axes=(None, 0, 0)))
V("while.unbatched_pred_batched_const", [_f(4), _f(3)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda w, x: lax_.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * w),
                                                 (0, x))[1], in_axes=(0, None)))
V("scan.reverse_batched_carry_ys", [_f(3, 5), _f(5)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda c0, xs: lax_.scan(lambda c, x: (c + x, c.sum()), c0, xs, reverse=True),
                   in_axes=(1, None), out_axes=(0, 1)))
V("nested.vmap_of_scan", [_f(2, 3, 5)],
  lambda np_, lax_, vmap_, jit_: vmap_(vmap_(lambda xs: lax_.scan(lambda c, x: (c * x, c), 1.0, xs)[0]), in_axes=1))
V("nested.vmap_of_cond", [_f(2, 3)],
  lambda np_, lax_, vmap_, jit_: vmap_(vmap_(lambda x: lax_.cond(x > 0, lambda v: v * 10, lambda v: v - 10, x)),
                   in_axes=1))
V("jit_of_vmap_of_jit", [_f(4, 3)],
  lambda np_, lax_, vmap_, jit_: jit_(vmap_(jit_(lambda x: np_.sum(x * x)))))
V("kwargs", [_f(4, 3)], lambda np_, lax_, vmap_, jit_: (lambda x: vmap_(lambda a, *, b: a * b)(x, b=x)))
V("bitcast", [_f(4, 3)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.bitcast_convert_type(x, np_.int32), in_axes=1))
V("shifts", [_i(4, 3, lo=0, hi=100), _i(3, lo=0, hi=4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, s: lax_.shift_left(x, s) | lax_.shift_right_logical(x, s), in_axes=(0, None)))
V("broadcast_in_dim.in1", [_f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: lax_.broadcast_in_dim(x, (2, 3, 5), (1,)), in_axes=1, out_axes=2))
V("argmin.axis1", [_f(3, 4, 2)], lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.argmin(x, axis=1), in_axes=2))
V("reduce.and_or", [_f(3, 4)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: (np_.all(x > 0, axis=0), np_.any(x > 1)), in_axes=1))
V("logsumexp_like", [_f(4, 5)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x: np_.log(np_.sum(np_.exp(x - np_.max(x))))))
# an empty batch: the batched gather's operand batching dimension has slice size 0
V("gather.empty_batch", [np.zeros((0, 3), np.float32), np.zeros((0,), np.int32)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, i: x[i]))
V("scatter.empty_batch", [np.zeros((0, 3), np.float32), np.zeros((0,), np.int32)],
  lambda np_, lax_, vmap_, jit_: vmap_(lambda x, i: x.at[i].set(1.0)))

KNOWN_DIFFERENCES: dict[str, str] = {}


def _corpus_params():
    out = []
    for name in CORPUS:
        marks = ()
        if name in KNOWN_DIFFERENCES:
            marks = (pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[name]),)
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def test_corpus_size_and_known_differences():
    assert len(CORPUS) >= 40
    assert set(KNOWN_DIFFERENCES) <= set(CORPUS)


@pytest.mark.parametrize("name", _corpus_params())
def test_vmap_jaxpr_text_equals_jax(name):
    case = CORPUS[name]
    expected = str(jax.make_jaxpr(_program(JAX, case))(*case.args))
    assert str(traxla.make_jaxpr(_program(TRAXLA, case))(*case.args)) == expected


_CORPUS_CHUNK = 16  # corpus programs jitted together
_CORPUS_SHARED: dict = {}


def _corpus_shared(name):
    """{name: output} of ``jit`` of the corpus programs of the chunk holding ``name`` (16
    in all, in table order), all in ONE jitted program, computed on first use in a process:
    one compile per chunk instead of one per program. None where the chunk cannot run
    together (each program's test then jits it alone)."""
    names = list(CORPUS)
    chunk = names.index(name) // _CORPUS_CHUNK
    if chunk not in _CORPUS_SHARED:
        cases = [CORPUS[n] for n in names[chunk * _CORPUS_CHUNK:(chunk + 1) * _CORPUS_CHUNK]]
        try:
            outs = traxla.jit(lambda all_args: [_program(TRAXLA, c)(*a) for c, a in
                                                zip(cases, all_args)])([c.args for c in cases])
            _CORPUS_SHARED[chunk] = {c.name: o for c, o in zip(cases, outs)}
        except Exception:  # noqa: BLE001 - the failing program's own test reports it
            _CORPUS_SHARED[chunk] = None
    return _CORPUS_SHARED[chunk]


@pytest.mark.parametrize("name", list(CORPUS))
def test_vmap_corpus_runs_like_jax(name, jax_side):
    case = CORPUS[name]
    expected = jax_side(lambda: jtu.tree_map(np.asarray, jax.jit(_program(JAX, case))(*case.args)))
    shared = _corpus_shared(name)
    got = shared[name] if shared is not None else traxla.jit(_program(TRAXLA, case))(*case.args)
    _assert_trees_same(got, expected, rtol=2e-5)


# == 4. composition, axis_size, errors ===============================================

def _layer(np_):
    def f(x, w, b):
        return np_.tanh(x @ w + b).sum(), x * 2
    return f


_LX, _LW, _LB = _f(4, 3), _f(3, 2), _f(2)


def test_jit_of_vmap_and_vmap_of_jit_agree(jax_side):
    f = _layer(tnp)
    in_axes = (0, None, None)
    a = traxla.jit(traxla.vmap(f, in_axes=in_axes))(_LX, _LW, _LB)
    b = traxla.vmap(traxla.jit(f), in_axes=in_axes)(_LX, _LW, _LB)
    c = traxla.vmap(f, in_axes=in_axes)(_LX, _LW, _LB)  # eager
    expected = jax_side(lambda: jax.vmap(_layer(jnp), in_axes=in_axes)(_LX, _LW, _LB))
    for out in (a, b, c):
        _assert_trees_same(out, expected)
    jj = traxla.jit(traxla.vmap(traxla.jit(f), in_axes=in_axes))(_LX, _LW, _LB)
    _assert_trees_same(jj, a)


def test_vmap_of_jit_keeps_one_jit_equation():
    f = traxla.jit(lambda x: tnp.sin(x) * 2)
    text = str(traxla.make_jaxpr(traxla.vmap(f, in_axes=1))(_f(3, 4)))
    assert text.count("jit[") == 1 and "f32[3,4]" in text


def test_nested_vmap_matches_double_loop():
    x, y = _f(4, 3, 2), _f(3, 2)

    def f(a, b):
        return tnp.dot(a, b) + a.sum()

    out = traxla.vmap(traxla.vmap(f, in_axes=(0, 0)), in_axes=(0, None))(x, y)
    jf = traxla.jit(f)
    expected = np.stack([np.stack([np.asarray(jf(x[i, j], y[j])) for j in range(3)])
                         for i in range(4)])
    _assert_same(out, expected)
    # the inner vmap over axis 1 of each example, the outer one over axis 2 of the input
    z = _f(2, 3, 4)
    out = traxla.vmap(traxla.vmap(tnp.sum, in_axes=1), in_axes=2)(z)
    _assert_same(out, np.transpose(z, (2, 1, 0)).sum(axis=2))


def test_axis_size_when_nothing_is_batched():
    x = _f(3)
    out = traxla.vmap(lambda v: v * 2, in_axes=None, axis_size=5)(x)
    _assert_same(out, np.broadcast_to(x * 2, (5, 3)))
    out = traxla.vmap(lambda v: v + 1, in_axes=None, axis_size=2, out_axes=1)(x)
    _assert_same(out, np.broadcast_to((x + 1)[:, None], (3, 2)))
    out = traxla.vmap(lambda: tnp.ones(2), axis_size=4)()
    _assert_same(out, np.ones((4, 2), np.float32))
    # axis_size agreeing with the mapped arguments is accepted
    _assert_same(traxla.vmap(lambda v: v, axis_size=3)(_LX[:3]), _LX[:3])


def test_keyword_arguments_are_mapped_over_axis_0():
    x = _f(4, 3)
    out = traxla.vmap(lambda a, *, b: a * b, in_axes=(None,))(x[0], b=x)
    _assert_same(out, x[0] * x)


def test_unbatched_outputs_and_out_axes_none():
    x, y = _f(4, 3), _f(3)
    s, u = traxla.vmap(lambda a, b: (a.sum(), b * 2), in_axes=(0, None), out_axes=(0, None))(x, y)
    _assert_same(s, x.sum(axis=1))
    _assert_same(u, y * 2)
    out = traxla.vmap(lambda a: 1.0)(x)  # a Python scalar output is broadcast
    _assert_same(out, np.ones(4, np.float32))
    out = traxla.vmap(lambda a: {"k": (a, None)}, out_axes={"k": (1, None)})(x)
    _assert_same(out["k"][0], x.T)
    assert out["k"][1] is None


def test_leaked_batch_tracer_is_reported():
    leaked = []
    traxla.vmap(lambda x: leaked.append(x * 2) or x)(_f(3))
    with pytest.raises(traxla.errors.UnexpectedTracerError, match="vmap"):
        traxla.jit(lambda y: y + leaked[0])(np.float32(1))


# -- errors -------------------------------------------------------------------------------

def _both_raise(exc, build, *args):
    """Runs build(vmap) with traxla's and JAX's vmap; returns both messages."""
    with pytest.raises(exc) as t:
        build(traxla.vmap)(*args)
    with pytest.raises(exc) as j:
        build(jax.vmap)(*args)
    return str(t.value), str(j.value).split("\n--------------------\n")[0]


def test_inconsistent_sizes_name_the_arguments():
    def f(x, y):
        return x + y

    x3, y4 = np.ones(3, np.float32), np.ones(4, np.float32)
    t, j = _both_raise(ValueError, lambda vmap: vmap(f), x3, y4)
    assert t == ("vmap got inconsistent sizes for array axes to be mapped:\n"
                 "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
                 "  * one axis had size 4: axis 0 of argument y of type float32[4]")
    assert t == j
    # pytree leaves, *args, the axis_size argument, and counts of agreeing axes
    cases = [
        (lambda vmap: vmap(lambda x, y: x + y["k"]), (x3, {"k": y4})),
        (lambda vmap: vmap(lambda *a: a[0] + a[1]), (x3, y4)),
        (lambda vmap: vmap(lambda x, y: x, in_axes=(0, None), axis_size=4),
         (np.ones((3, 2), np.float32), 1.0)),
        (lambda vmap: vmap(lambda a, b, c: a, in_axes=(0, 1, 0)),
         (np.ones((3, 2), np.float32), np.ones((2, 3), np.float32), y4)),
        (lambda vmap: vmap(lambda a, b, c, d: a),
         (x3, y4, np.ones((4, 1), np.int32), x3[:1])),
    ]
    for build, args in cases:
        t, j = _both_raise(ValueError, build, *args)
        assert t == j


def test_in_axes_that_do_not_match_the_arguments():
    x = np.ones(3, np.float32)
    t, j = _both_raise(ValueError, lambda vmap: vmap(lambda a, b: a, in_axes=(0, 0, 0)), x, x)
    assert t == j == ("vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                      "the positional arguments passed to the function, but got len(in_axes)=3, "
                      "len(args)=2")
    with pytest.raises(ValueError, match=r"in_axes specification must be a tree prefix.*in_axes\[0\]"):
        traxla.vmap(lambda a, b: a, in_axes=({"a": 0}, 0))(x, x)
    with pytest.raises(ValueError, match=r"tree prefix.*keys \['a', 'b'\].*keys \['a'\]"):
        traxla.vmap(lambda d: d["a"], in_axes=({"a": 0, "b": 0},))({"a": x})
    with pytest.raises(ValueError, match="out_axes specification must be a tree prefix"):
        traxla.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(x)
    with pytest.raises(TypeError, match="in_axes must be an int, None, or a tuple"):
        traxla.vmap(lambda a: a, in_axes=0.5)
    with pytest.raises(TypeError, match="out_axes must be an int, None, or .nested. container"):
        traxla.vmap(lambda a: a, out_axes=(0, "x"))


def test_axis_out_of_range():
    x = np.ones((3, 4), np.float32)
    for axes in [(2, 0), (-3, 0)]:
        t, j = _both_raise(ValueError, lambda vmap, axes=axes: vmap(lambda a, b: a, in_axes=axes),
                           x, x[:, 0])
        assert t == j
    assert "rank should be at least 3, but is only 2 (its shape is (3, 4))" in t
    t, j = _both_raise(ValueError, lambda vmap: vmap(lambda a: a), np.float32(1))
    assert t == j
    t, j = _both_raise(ValueError, lambda vmap: vmap(lambda a: a, out_axes=2), x)
    assert t == j == "axis 2 is out of bounds for array of dimension 2"
    t, j = _both_raise(ValueError, lambda vmap: vmap(lambda a: a, out_axes=None), x)
    assert t == j == "at vmap out_axes, got axis spec None but output was batched on axis 0"


def test_all_none_in_axes_without_axis_size():
    x = np.ones(3, np.float32)
    t, j = _both_raise(ValueError, lambda vmap: vmap(lambda a, b: a, in_axes=None), x, x)
    assert t == j == ("vmap must have at least one non-None value in in_axes or axis_size must "
                      "be specified")
    t, j = _both_raise(ValueError, lambda vmap: vmap(lambda a, b: a, in_axes=(None, None)), x, x)
    assert t == j
    t, j = _both_raise(ValueError, lambda vmap: vmap(lambda: 1.0))
    assert t == j


def test_primitive_without_batching_rule_names_it():
    from traxla.ir.avals import ShapedArray
    from traxla.ir.primitive import Primitive, def_typing, typing_rules

    prim = Primitive("vmap_test_no_rule")
    def_typing(prim, lambda x: ShapedArray(x.shape, x.dtype, x.weak_type))
    try:
        text = str(traxla.make_jaxpr(lambda x: prim.bind(x))(np.ones(3, np.float32)))
        assert "vmap_test_no_rule" in text
        # unbatched operands need no rule
        traxla.make_jaxpr(traxla.vmap(lambda x, y: prim.bind(y), in_axes=(0, None)))(
            np.ones(3, np.float32), np.ones(2, np.float32))
        with pytest.raises(NotImplementedError, match="Batching rule for 'vmap_test_no_rule'"):
            traxla.make_jaxpr(traxla.vmap(lambda x: prim.bind(x)))(np.ones((2, 3), np.float32))
    finally:
        typing_rules.pop(prim, None)
        ALL_PRIMITIVES.pop("vmap_test_no_rule", None)


# -- printing the differences -------------------------------------------------------------

if __name__ == "__main__":
    from _corpus import print_differences
    print_differences(CORPUS, KNOWN_DIFFERENCES, lambda case: (str(jax.make_jaxpr(_program(JAX, case))(*case.args)),
                          str(traxla.make_jaxpr(_program(TRAXLA, case))(*case.args))), sys.argv[1:])

"""JVP and transpose rules, by family, written to bind the same equations in the
same order (and with the same parameter values, down to NumPy integer types) as
JAX's rules in ``jax/_src/lax/lax.py``, ``slicing.py`` and ``special.py``, so
that differentiated jaxprs print the same."""
from __future__ import annotations

import functools
import itertools

import numpy as np

from .. import lax
from ..ir import dtypes
from ..ir.rules.ad import add_any_p, empty2_p
from ..ir.rules.elementwise import P as E
from ..ir.rules.reduction import P as R, dot_general_p
from ..ir.rules import shape as S
from .core import (Zero, add_tangents, instantiate, is_undefined, jvp_flat, jvp_rules,
                   transpose_rules, zero_of)


# -- helpers to define rules (JAX's ad.defjvp, defjvp2, deflinear2, ...) -----------------------

def _convert(x, new_dtype, weak_type):
    """``convert_element_type``, folding a concrete scalar into a constant as JAX's staging
    does (and handing back an array, not a literal, when evaluated eagerly)."""
    out = lax._convert_element_type(x, new_dtype, weak_type)
    lift = getattr(lax, "_lift", None)
    return lift(out) if lift is not None else out


def _const(x, value):
    """JAX's ``_const``: a scalar constant of ``x``'s dtype (a literal when staged)."""
    return lax._convert_element_type(value, lax.dtype_of(x), False)


def _one(x):
    """JAX's ``_one``: ``full_like(x, 1, shape=())``."""
    return lax.full_like(x, 1, shape=())


def _zero(x):
    return lax.full_like(x, 0, shape=())


def _ones(x):
    return lax.full_like(x, 1)


def _zeros(x):
    return lax.full_like(x, 0)


def _twos(x):
    return lax.full_like(x, 2)


def _square(x):
    # JAX binds its ``square`` primitive; traxla's lax.square is whatever lax provides
    return lax.square(x)


def defjvp(prim, *rules):
    """Each rule maps one operand's tangent to its contribution: ``rule(t, *primals, **params)``."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        contributions = [rule(t, *primals, **params) for rule, t in zip(rules, tangents)
                         if rule is not None and type(t) is not Zero]
        return out, functools.reduce(add_tangents, contributions, zero_of(out))
    jvp_rules[prim] = jvp


def defjvp2(prim, *rules):
    """Like defjvp, with the primal output available: ``rule(t, ans, *primals, **params)``."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        contributions = [rule(t, out, *primals, **params) for rule, t in zip(rules, tangents)
                         if rule is not None and type(t) is not Zero]
        return out, functools.reduce(add_tangents, contributions, zero_of(out))
    jvp_rules[prim] = jvp


def defjvp_zero(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [zero_of(o) for o in out]
        return out, zero_of(out)
    jvp_rules[prim] = jvp


def linear_jvp(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, ([zero_of(o) for o in out] if prim.multiple_results else zero_of(out))
        return out, prim.bind(*[instantiate(t) for t in tangents], **params)
    return jvp


def deflinear2(prim, transpose):
    """A primitive linear in all its operands; ``transpose(ct, *operands, **params)``."""
    def transpose_rule(ct, *args, **params):
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined(a) else None for a in args]
        return transpose(ct, *args, **params)
    jvp_rules[prim] = linear_jvp(prim)
    transpose_rules[prim] = transpose_rule


deflinear = deflinear2  # traxla's rules all take the operands (JAX's ``deflinear2`` form)


def _aval(x):
    return x.aval if is_undefined(x) else lax.aval_of(x)


def unbroadcast(aval, x):
    """JAX's ``_unbroadcast``: sums ``x`` down to ``aval``'s shape (the transpose of lax's
    implicit broadcasting)."""
    x_shape = lax.shape_of(x)
    if tuple(aval.shape) == tuple(x_shape):
        return x
    if not aval.shape:
        return lax.reduce_sum(x, list(range(len(x_shape))))
    dims = [i for i, (a, b) in enumerate(zip(x_shape, aval.shape)) if a != b]
    x = lax.reduce_sum(x, dims) if dims else x
    return lax.reshape(x, aval.shape)


def maybe_broadcast(target_shape, x):
    """JAX's ``_maybe_broadcast``."""
    x_shape = lax.shape_of(x)
    if tuple(x_shape) == tuple(target_shape):
        return x
    if not x_shape:
        return lax.broadcast_in_dim(x, target_shape, ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, target_shape)) if a == b]
    squeeze_shape = [x_shape[i] for i in dims]
    return lax.broadcast_in_dim(lax.reshape(x, squeeze_shape), target_shape, dims)


def _broadcast_shapes(*shapes):
    """lax's implicit broadcasting of scalars and size-1 dimensions."""
    shapes = [tuple(s) for s in shapes]
    arrays = [s for s in shapes if s]
    if not arrays:
        return ()
    return tuple(max(dims) if 1 in dims or len(set(dims)) == 1 else dims[0]
                 for dims in zip(*arrays))


def _tuple_delete(t, idx):
    """JAX's ``util.tuple_delete``: plain Python values."""
    idx = set(idx)
    return tuple(x for i, x in enumerate(t) if i not in idx)


def _eq_meet(a, b):
    a_dtype, b_dtype = lax.dtype_of(a), lax.dtype_of(b)
    if a_dtype != b_dtype:
        higher = np.promote_types(a_dtype, b_dtype)
        if higher == a_dtype:
            a = lax.convert_element_type(a, b_dtype)
        else:
            b = lax.convert_element_type(b, a_dtype)
    return lax.eq(a, b)


# -- elementwise: zero derivatives -----------------------------------------------------------------

for _name in ("sign", "floor", "ceil", "round", "is_finite", "not", "and", "or", "xor",
              "shift_left", "shift_right_logical", "shift_right_arithmetic",
              "eq", "ne", "lt", "le", "gt", "ge", "bitcast_convert_type"):
    defjvp_zero(E[_name])
for _name in ("argmax", "argmin", "reduce_and", "reduce_or"):
    defjvp_zero(R[_name])
defjvp_zero(S.iota_p)
defjvp_zero(empty2_p)

# -- elementwise: unary math ---------------------------------------------------------------------

deflinear2(E["neg"], lambda t, x: [lax.neg(t)])
defjvp2(E["exp"], lambda g, ans, x, **kw: lax.mul(g, ans))
defjvp2(E["exp2"], lambda g, ans, x, **kw: lax.mul(lax.log(_const(x, 2)), lax.mul(g, ans)))
defjvp(E["log"], lambda g, x, **kw: lax.div(g, x))
defjvp(E["log1p"], lambda g, x, **kw: lax.div(g, lax.add(x, _one(x))))
defjvp2(E["expm1"], lambda g, ans, x, **kw: lax.mul(g, lax.add(ans, _one(ans))))
defjvp2(E["tanh"], lambda g, ans, x, **kw: lax.mul(lax.add(g, lax.mul(g, ans)),
                                                   lax.sub(_one(x), ans)))
defjvp2(E["logistic"], lambda g, ans, x, **kw: lax.mul(g, lax.mul(ans, lax.sub(_one(ans), ans))))
defjvp(E["sin"], lambda g, x, accuracy=None: lax.mul(g, lax.cos(x, accuracy=accuracy)))
defjvp(E["cos"], lambda g, x, accuracy=None: lax.neg(lax.mul(g, lax.sin(x, accuracy=accuracy))))
defjvp2(E["tan"], lambda g, ans, x, **kw: lax.mul(g, lax.add(_const(x, 1), _square(ans))))
defjvp(E["asin"], lambda g, x: lax.mul(g, lax.rsqrt(lax.sub(_const(x, 1), _square(x)))))
defjvp(E["acos"], lambda g, x: lax.mul(g, lax.neg(lax.rsqrt(lax.sub(_const(x, 1), _square(x))))))
defjvp(E["atan"], lambda g, x: lax.div(g, lax.add(_const(x, 1), _square(x))))
defjvp(E["sinh"], lambda g, x: lax.mul(g, lax.cosh(x)))
defjvp(E["cosh"], lambda g, x: lax.mul(g, lax.sinh(x)))
defjvp(E["asinh"], lambda g, x: lax.mul(g, lax.rsqrt(lax.add(_square(x), _one(x)))))
defjvp(E["acosh"], lambda g, x: lax.mul(g, lax.rsqrt(lax.sub(_square(x), _one(x)))))
defjvp(E["atanh"], lambda g, x: lax.mul(lax.reciprocal(lax.add(_one(x), x)),
                                        lax.div(g, lax.sub(_one(x), x))))
defjvp2(E["sqrt"], lambda g, ans, x, **kw: lax.mul(g, lax.div(_const(x, 0.5), ans)))
defjvp2(E["rsqrt"], lambda g, ans, x, **kw: lax.mul(g, lax.mul(_const(x, -0.5), lax.div(ans, x))))
defjvp2(E["cbrt"], lambda g, ans, x, **kw: lax.mul(g, lax.mul(_const(x, 1 / 3),
                                                              lax.integer_pow(ans, -2))))
defjvp2(E["abs"], lambda g, ans, x: lax.select(lax.ge(x, _zero(x)), g, lax.neg(g)))
defjvp(E["erf"], lambda g, x: lax.mul(_const(x, 2. / np.sqrt(np.pi)),
                                      lax.mul(g, lax.exp(lax.neg(_square(x))))))
defjvp2(E["erf_inv"], lambda g, ans, x: lax.mul(_const(x, np.sqrt(np.pi) / 2.),
                                                lax.mul(g, lax.exp(_square(ans)))))
if "square" in E:  # should lax grow JAX's ``square`` primitive
    defjvp2(E["square"], lambda g, ans, x: lax.mul(g, lax.mul(_const(x, 2), x)))


def _integer_pow_jvp(g, x, *, y):
    if y == 0:
        return _zeros(g)
    if y == 1:
        return g
    if y == 2:
        return lax.mul(g, lax.mul(_const(x, y), x))
    return lax.mul(g, lax.mul(_const(x, y), lax.integer_pow(x, y - 1)))


defjvp(E["integer_pow"], _integer_pow_jvp)


def _replace_zero(x):
    return lax.select(lax.eq(x, _const(x, 0)), _ones(x), x)


def _pow_jvp_lhs(g, ans, x, y):
    y_dtype = lax.dtype_of(y)
    result_dtype = lax.dtype_of(x)  # pow's first operand is inexact; an int exponent promotes
    x = lax.convert_element_type(x, result_dtype)
    y = lax.convert_element_type(y, result_dtype)
    if dtypes.is_int(y_dtype):
        if lax.shape_of(x) != lax.shape_of(y):
            shape = _broadcast_shapes(lax.shape_of(x), lax.shape_of(y))
            x = maybe_broadcast(shape, x)
            y = maybe_broadcast(shape, y)
        jac = lax.select(lax.eq(y, _const(y, 0)), _zeros(y),
                         lax.mul(_replace_zero(y), lax.pow(x, lax.sub(y, _ones(y)))))
    else:
        jac = lax.mul(y, lax.pow(x, lax.sub(y, _ones(y))))
    return lax.mul(g, jac)


def _pow_jvp_rhs(g, ans, x, y):
    y_dtype = lax.dtype_of(y)
    return lax.convert_element_type(lax.mul(g, lax.mul(lax.log(_replace_zero(x)), ans)), y_dtype)


defjvp2(E["pow"], _pow_jvp_lhs, _pow_jvp_rhs)
defjvp(E["atan2"],
       lambda g, x, y: lax.mul(g, lax.div(y, lax.add(_square(x), _square(y)))),
       lambda g, x, y: lax.mul(g, lax.div(lax.neg(x), lax.add(_square(x), _square(y)))))
# JAX defines no JVP for nextafter; nextafter(x, y) is x moved by one ulp, so its derivative
# is 1 in x and 0 in y (almost everywhere), as rem's in x
defjvp(E["nextafter"],
       lambda g, x, y: maybe_broadcast(_broadcast_shapes(lax.shape_of(x), lax.shape_of(y)), g),
       None)
defjvp(E["rem"],
       lambda g, x, y: maybe_broadcast(_broadcast_shapes(lax.shape_of(x), lax.shape_of(y)), g),
       lambda g, x, y: lax.mul(lax.neg(g), lax.mul(lax.sign(lax.div(x, y)),
                                                   lax.floor(lax.abs(lax.div(x, y))))))


def _balanced_eq(x, z, y):
    return lax.div(lax.select(_eq_meet(x, z), _ones(z), _zeros(z)),
                   lax.select(_eq_meet(y, z), _twos(z), _ones(z)))


defjvp2(E["max"],
        lambda g, ans, x, y: lax.mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: lax.mul(g, _balanced_eq(y, ans, x)))
defjvp2(E["min"],
        lambda g, ans, x, y: lax.mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: lax.mul(g, _balanced_eq(y, ans, x)))

# -- elementwise: arithmetic -------------------------------------------------------------------------


def _additive(op, negate_second):
    """JVP and transpose of add (``negate_second=False``) and sub (True), as JAX writes them:
    a lone nonzero tangent is broadcast to the output; cotangents are unbroadcast."""
    second = lax.neg if negate_second else (lambda t: t)

    def jvp(primals, tangents):
        x, y = primals
        xdot, ydot = tangents
        out = op(x, y)
        if type(xdot) is Zero and type(ydot) is Zero:
            return out, zero_of(out)
        if type(xdot) is Zero:
            return out, maybe_broadcast(lax.shape_of(out), second(ydot))
        if type(ydot) is Zero:
            return out, maybe_broadcast(lax.shape_of(out), xdot)
        return out, op(xdot, ydot)

    def transpose(t, x, y):
        xa, ya = _aval(x), _aval(y)
        if type(t) is Zero:
            return [Zero(xa), Zero(ya)]
        return [unbroadcast(xa, t), unbroadcast(ya, second(t))]

    return jvp, transpose


jvp_rules[E["add"]], transpose_rules[E["add"]] = _additive(lax.add, negate_second=False)
jvp_rules[E["sub"]], transpose_rules[E["sub"]] = _additive(lax.sub, negate_second=True)

defjvp(E["mul"], lambda xdot, x, y: lax.mul(xdot, y), lambda ydot, x, y: lax.mul(x, ydot))


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise ValueError("Transpose rule for 'mul': the product of two linear values is not "
                         "linear, so it cannot be transposed.")
    if is_undefined(x):
        if type(ct) is Zero:
            return [Zero(x.aval), None]
        return [unbroadcast(x.aval, lax.mul(ct, y)), None]
    if type(ct) is Zero:
        return [None, Zero(y.aval)]
    return [None, unbroadcast(y.aval, lax.mul(x, ct))]


transpose_rules[E["mul"]] = _mul_transpose

defjvp(E["div"], lambda g, x, y: lax.div(g, y),
       lambda g, x, y: lax.mul(lax.mul(lax.neg(g), x), lax.integer_pow(y, -2)))


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise ValueError("Transpose rule for 'div': the divisor is not linear (nonlinear div "
                         "can't be transposed).")
    if type(ct) is Zero:
        return [Zero(x.aval), None]
    return [unbroadcast(x.aval, lax.div(ct, y)), None]


transpose_rules[E["div"]] = _div_transpose

# add_any (JAX's add_jaxvals): linear in both operands
deflinear2(add_any_p, lambda t, x, y: [t, t])


def _add_any_jvp(primals, tangents):
    x, y = primals
    out = add_any_p.bind(x, y)
    if all(type(t) is Zero for t in tangents):
        return out, zero_of(out)
    return out, add_any_p.bind(*[instantiate(t) for t in tangents])


jvp_rules[add_any_p] = _add_any_jvp

# -- dtype conversions, stop_gradient, copy, select, clamp --------------------------------------------


def _convert_jvp(primals, tangents, *, new_dtype, weak_type, sharding=None):
    x, = primals
    t, = tangents
    prim = E["convert_element_type"]
    out = prim.bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
    new_tangent_dtype = dtypes.tangent_dtype(new_dtype)
    if type(t) is Zero or new_tangent_dtype == dtypes.float0:
        return out, zero_of(out)
    return out, _convert(t, new_tangent_dtype, weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type, sharding=None):
    old_dtype = x.aval.dtype
    if type(ct) is Zero:
        return [Zero(x.aval)]
    if dtypes.tangent_dtype(old_dtype) == dtypes.float0:
        return [Zero(_float0_aval(x.aval))]
    return [_convert(ct, old_dtype, x.aval.weak_type)]


def _float0_aval(aval):
    from ..ir.avals import ShapedArray
    return ShapedArray(aval.shape, dtypes.float0, False)


jvp_rules[E["convert_element_type"]] = _convert_jvp
transpose_rules[E["convert_element_type"]] = _convert_transpose


def _stop_gradient_jvp(primals, tangents):
    # binding stop_gradient again (not returning x) peels off only this level of tracer
    x, = primals
    return E["stop_gradient"].bind(x), zero_of(x)


jvp_rules[E["stop_gradient"]] = _stop_gradient_jvp
deflinear2(E["copy"], lambda t, x: [E["copy"].bind(t)])


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    case_t = tangents[1:]
    out = lax.select_n(which, *cases)
    if all(type(t) is Zero for t in case_t):
        return out, Zero(case_t[0].aval)
    z = _zeros(next(t for t in case_t if type(t) is not Zero))
    case_t = [z if type(t) is Zero else t for t in case_t]
    return out, lax.select_n(which, *case_t)


def _select_n_transpose(ct, which, *cases):
    if is_undefined(which):
        raise ValueError("Transpose rule for 'select_n': the predicate is not linear.")
    if type(ct) is Zero:
        return [None] + [Zero(c.aval) if is_undefined(c) else None for c in cases]
    zeros = lax.full_like(ct, 0)
    if lax.dtype_of(which) == np.dtype(np.bool_):
        ct0 = lax.select(which, zeros, ct) if is_undefined(cases[0]) else None
        ct1 = lax.select(which, ct, zeros) if len(cases) > 1 and is_undefined(cases[1]) else None
        return [None, ct0] + ([ct1] if len(cases) > 1 else [])
    return [None] + [lax.select(lax.eq(which, _const(which, i)), ct, zeros)
                     if is_undefined(c) else None for i, c in enumerate(cases)]


jvp_rules[E["select_n"]] = _select_n_jvp
transpose_rules[E["select_n"]] = _select_n_transpose


def _clamp_select(pred, g, operand):
    out_shape = lax.shape_of(operand)
    if lax.shape_of(g) != out_shape:  # a scalar bound of an array operand
        g = lax.broadcast_in_dim(g, out_shape, ())
    return lax.select(pred, g, _zeros(operand))


defjvp(E["clamp"],
       lambda g, lo, x, hi: _clamp_select(lax.bitwise_and(lax.gt(lo, x), lax.lt(lo, hi)), g, x),
       lambda g, lo, x, hi: _clamp_select(lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi)), g, x),
       lambda g, lo, x, hi: _clamp_select(lax.lt(hi, x), g, x))


# -- shapes ---------------------------------------------------------------------------------------

def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
    shape = x.aval.shape
    # NumPy integers, as JAX's rule builds them (they print as np.int64(...))
    dims = tuple(np.delete(np.arange(len(shape)), axes))
    return [lax.broadcast_in_dim(ct, shape, dims)]


deflinear2(R["reduce_sum"], _reduce_sum_transpose)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding=None):
    if not is_undefined(x):
        return [None]
    unit = [i for i, s in enumerate(x.aval.shape) if s == 1]
    bdims = _tuple_delete(broadcast_dimensions, unit)
    axes = _tuple_delete(tuple(range(len(shape))), bdims)
    return [lax.expand_dims(lax.reduce_sum(ct, axes), unit)]


deflinear2(S.broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _reshape_transpose(ct, x, *, new_sizes, dimensions, sharding=None):
    if dimensions is None:
        return [lax.reshape(ct, x.aval.shape)]
    sizes = tuple(x.aval.shape[d] for d in dimensions)
    return [lax.transpose(lax.reshape(ct, sizes), np.argsort(dimensions))]


deflinear2(S.reshape_p, _reshape_transpose)
deflinear2(S.squeeze_p, lambda ct, x, *, dimensions: [lax.expand_dims(ct, dimensions)])
deflinear2(S.transpose_p, lambda ct, x, *, permutation: [lax.transpose(ct, np.argsort(permutation))])
deflinear2(S.rev_p, lambda ct, x, *, dimensions: [lax.rev(ct, dimensions)])


def _concatenate_transpose(ct, *xs, dimension):
    sizes = tuple(_aval(x).shape[dimension] for x in xs)
    return S.split_p.bind(ct, sizes=sizes, axis=dimension)


def _stack_transpose(ct, *xs, axis):
    return S.unstack_p.bind(ct, axis=axis)


def _unstack_transpose(cts, x, *, axis):
    if all(type(c) is Zero for c in cts):
        return [Zero(x.aval)]
    return [S.stack_p.bind(*[instantiate(c) for c in cts], axis=axis)]


def _split_transpose(cts, x, *, sizes, axis):
    if all(type(c) is Zero for c in cts):
        return [Zero(x.aval)]
    return [lax.concatenate([instantiate(c) for c in cts], axis)]


deflinear2(S.concatenate_p, _concatenate_transpose)
deflinear2(S.stack_p, _stack_transpose)
deflinear2(S.unstack_p, _unstack_transpose)
deflinear2(S.split_p, _split_transpose)


def _pad_transpose(t, operand, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    ndim = len(lax.shape_of(t))

    def total(x):
        return lax.reduce_sum(x, list(range(ndim)))

    def t_op():
        unpad_config = tuple(zip(np.negative(lo), np.negative(hi), np.zeros_like(interior)))
        unpadded = S.pad_p.bind(t, _const(t, 0.), padding_config=unpad_config)
        shape = lax.shape_of(unpadded)
        return S.slice_p.bind(unpadded, start_indices=tuple(np.zeros_like(lo)),
                              limit_indices=tuple(int(d) for d in shape),
                              strides=tuple(np.add(interior, 1)))

    t_operand = t_op() if is_undefined(operand) else None
    t_padv = lax.sub(total(t), total(t_operand)) if is_undefined(padding_value) else None
    return [t_operand, t_padv]


deflinear2(S.pad_p, _pad_transpose)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    if strides is None or np.all(np.equal(strides, 1)):
        pads = zip(start_indices, np.subtract(shape, limit_indices), (0,) * len(start_indices))
    else:
        ct_shape = lax.shape_of(ct)
        real_limits = np.add(start_indices, np.where(
            np.array(ct_shape) == 0, 0, np.add(1, np.multiply(np.subtract(ct_shape, 1), strides))))
        pads = zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1))
    return [S.pad_p.bind(ct, _const(ct, 0), padding_config=tuple(pads))]


deflinear2(S.slice_p, _slice_transpose)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *idx = primals
    tx = tangents[0]
    if type(tx) is not Zero:
        tx = S.dynamic_slice_p.bind(tx, *idx, slice_sizes=slice_sizes)
    out = S.dynamic_slice_p.bind(x, *idx, slice_sizes=slice_sizes)
    return out, (zero_of(out) if type(tx) is Zero else tx)


def _dynamic_slice_transpose(ct, x, *idx, slice_sizes):
    if type(ct) is Zero or not is_undefined(x):
        return [Zero(x.aval) if is_undefined(x) else None] + [None] * len(idx)
    zeros = lax.full(x.aval.shape, 0, x.aval.dtype)
    return [S.dynamic_update_slice_p.bind(zeros, ct, *idx)] + [None] * len(idx)


def _dynamic_update_slice_jvp(primals, tangents):
    x, upd, *idx = primals
    tx, tu = tangents[:2]
    out = S.dynamic_update_slice_p.bind(x, upd, *idx)
    if type(tx) is Zero and type(tu) is Zero:
        return out, zero_of(out)
    return out, S.dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *idx)


def _dynamic_update_slice_transpose(ct, x, upd, *idx):
    if type(ct) is Zero:
        return ([Zero(x.aval) if is_undefined(x) else None,
                 Zero(upd.aval) if is_undefined(upd) else None] + [None] * len(idx))
    upd_shape = _aval(upd).shape
    zeros = lax.full_like(ct, 0, shape=upd_shape)
    ct_x = S.dynamic_update_slice_p.bind(ct, zeros, *idx) if is_undefined(x) else None
    ct_upd = (S.dynamic_slice_p.bind(ct, *idx, slice_sizes=tuple(upd_shape))
              if is_undefined(upd) else None)
    return [ct_x, ct_upd] + [None] * len(idx)


jvp_rules[S.dynamic_slice_p] = _dynamic_slice_jvp
transpose_rules[S.dynamic_slice_p] = _dynamic_slice_transpose
jvp_rules[S.dynamic_update_slice_p] = _dynamic_update_slice_jvp
transpose_rules[S.dynamic_update_slice_p] = _dynamic_update_slice_transpose


# -- reductions ---------------------------------------------------------------------------------------

def _reduce_chooser_jvp(g, ans, x, *, axes, **_):
    shape = [1 if i in axes else d for i, d in enumerate(lax.shape_of(x))]
    location = lax.convert_element_type(_eq_meet(x, lax.reshape(ans, shape)), lax.dtype_of(g))
    counts = lax.reduce_sum(location, axes)
    return lax.div(lax.reduce_sum(lax.mul(g, location), axes), counts)


defjvp2(R["reduce_max"], _reduce_chooser_jvp)
defjvp2(R["reduce_min"], _reduce_chooser_jvp)


def _reduce_jvp(reducer, init_values, primals, tangents, axes):
    """JAX's ``_reduce_jvp``: the reduction as a tree of pairwise ``reducer`` calls over
    the reduced axes (moved to the front and flattened), differentiated with ``jvp``."""
    input_shape = np.array(lax.shape_of(primals[0]), dtype=int)
    n = int(np.prod(input_shape[list(axes)]))
    non_axes = np.delete(np.arange(len(input_shape)), axes)
    permutation = tuple(int(a) for a in tuple(axes) + tuple(non_axes))
    new_shape = (n,) + tuple(int(d) for d in input_shape[non_axes])
    primals = tuple(lax.reshape(x, new_shape, permutation) for x in primals)
    tangents = tuple(lax.reshape(t, new_shape, permutation) for t in tangents)

    def reduce_tree(*xs, axis=0):
        while lax.shape_of(xs[0])[axis] > 1:
            n = lax.shape_of(xs[0])[axis]
            n1 = (n + 1) // 2
            n2 = n - n1
            xs1 = [lax.slice_in_dim(x, 0, n1) for x in xs]
            xs2 = [lax.slice_in_dim(x, n1, None) for x in xs]
            if n2 != n1:
                paddings = [(0, 0, 0)] * len(lax.shape_of(xs[0]))
                paddings[axis] = (0, 1, 0)
                xs2 = [lax.pad(x2, i, paddings) for x2, i in zip(xs2, init_values)]
            xs = reducer(*(xs1 + xs2))
        if lax.shape_of(xs[0])[axis] == 0:
            return [lax.full(tuple(int(d) for d in input_shape[non_axes]), i) for i in init_values]
        return tuple(lax.squeeze(x, (axis,)) for x in xs)

    return jvp_flat(lambda *xs: list(reduce_tree(*xs)), list(primals), list(tangents))


def _reduce_prod_jvp(primals, tangents, *, axes, **_):
    x, = primals
    init = np.array(1, lax.dtype_of(x))
    outs, touts = _reduce_jvp(lambda a, b: [lax.mul(a, b)], [init], primals,
                              [instantiate(t) for t in tangents], tuple(axes))
    return outs[0], touts[0]


jvp_rules[R["reduce_prod"]] = _reduce_prod_jvp


# -- contractions -------------------------------------------------------------------------------------

def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield list(range(start, start + len(x)))
        start += len(x)


def _remaining(original, *removed):
    gone = set(itertools.chain(*removed))
    return [i for i in original if i not in gone]


def _dot_transpose_lhs(g, x_aval, y, *, dimension_numbers, precision, preferred_element_type,
                       swap_ans=False):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _remaining(range(len(x_aval.shape)), x_contract, x_batch)
    y_kept = _remaining(range(len(lax.shape_of(y))), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    x_contract_sorted_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    unsorted_axes = list(x_batch) + x_kept + x_contract_sorted_by_y
    out_axes = np.argsort(unsorted_axes)
    # the cotangent lands where x lives: its sharding, in dot_general's output order
    out_sharding = None
    if x_aval.sharding is not None:
        spec = tuple(x_aval.sharding.spec) + (None,) * (len(x_aval.shape) - len(x_aval.sharding.spec))
        out_sharding = x_aval.sharding.with_spec(tuple(spec[o] for o in unsorted_axes))
    out = lax.dot_general(g, y, dims, precision=precision,
                          preferred_element_type=preferred_element_type, out_sharding=out_sharding)
    x_bar = lax.transpose(out, tuple(out_axes))
    if lax.dtype_of(x_bar) != x_aval.dtype:
        x_bar = lax._convert_element_type(x_bar, x_aval.dtype, x_aval.weak_type)
    return x_bar


def _dot_general_jvp(primals, tangents, **params):
    x, y = primals
    tx, ty = tangents
    out = dot_general_p.bind(x, y, **params)
    parts = []
    if type(tx) is not Zero:
        parts.append(dot_general_p.bind(tx, y, **params))
    if type(ty) is not Zero:
        parts.append(dot_general_p.bind(x, ty, **params))
    return out, functools.reduce(add_tangents, parts, zero_of(out))


def _dot_general_transpose(ct, x, y, *, dimension_numbers, precision=None,
                           preferred_element_type=None, out_sharding=None):
    (xc, yc), (xb, yb) = dimension_numbers
    if is_undefined(x) and is_undefined(y):
        raise ValueError("Transpose rule for 'dot_general': the product of two linear values "
                         "is not linear, so it cannot be transposed.")
    if is_undefined(x):
        if type(ct) is Zero:
            return [Zero(x.aval), None]
        return [_dot_transpose_lhs(ct, x.aval, y, dimension_numbers=dimension_numbers,
                                   precision=precision,
                                   preferred_element_type=preferred_element_type), None]
    if type(ct) is Zero:
        return [None, Zero(y.aval)]
    swapped = ((yc, xc), (yb, xb))
    return [None, _dot_transpose_lhs(ct, y.aval, x, dimension_numbers=swapped, precision=precision,
                                     preferred_element_type=preferred_element_type, swap_ans=True)]


jvp_rules[dot_general_p] = _dot_general_jvp
transpose_rules[dot_general_p] = _dot_general_transpose


# add_any is born here; its batching rule is the elementwise broadcasting one.
from ..batching.core import register_batching  # noqa: E402
from ..batching.rules import _broadcasting  # noqa: E402

register_batching(add_any_p, _broadcasting(add_any_p))


# -- gather, scatter, sort, cumulative reductions (JAX's slicing.py / loops.py rules) ---------------

from ..ir.rules import indexing as _I  # noqa: E402
from ..tracer import trace_to_jaxpr as _trace_to_jaxpr  # noqa: E402

_GDN, _SDN, _Mode = _I.GatherDimensionNumbers, _I.ScatterDimensionNumbers, _I.GatherScatterMode
_gather_p, _sort_p = _I.P["gather"], _I.P["sort"]
_scatter_p, _scatter_add_p, _scatter_mul_p = (_I.P["scatter"], _I.P["scatter-add"],
                                              _I.P["scatter-mul"])
_reduction_jaxprs: dict = {}


def _reduction_jaxpr(computation, dtype):
    """JAX's ``_reduction_jaxpr`` (cached): the scalar combiner a scatter carries."""
    dtype = np.dtype(dtype)
    key = (computation, dtype)
    if key not in _reduction_jaxprs:
        from ..ir.avals import ShapedArray
        aval = ShapedArray((), dtype, False)
        closed = _trace_to_jaxpr(lambda x, y: [computation(x, y)], [aval, aval])
        _reduction_jaxprs[key] = (closed.jaxpr, tuple(closed.consts))
    return _reduction_jaxprs[key]


def _gather(operand, indices, dimension_numbers, slice_sizes, *, unique_indices=False,
            indices_are_sorted=False, mode=None, fill_value=None):
    """JAX's ``lax.gather`` wrapper: canonical mode and fill value."""
    parsed_mode = _Mode.from_any(mode)
    if parsed_mode == _Mode.FILL_OR_DROP:
        if fill_value is None:
            dt = lax.dtype_of(operand)
            if dtypes.is_inexact(dt):
                fill_value = np.nan
            elif dtypes.is_unsigned_int(dt):
                fill_value = np.iinfo(dt).max
            elif dtypes.is_int(dt):
                fill_value = np.iinfo(dt).min
            else:
                fill_value = True
    else:
        fill_value = None
    return _gather_p.bind(operand, indices, dimension_numbers=dimension_numbers,
                          slice_sizes=tuple(int(s) for s in slice_sizes),
                          unique_indices=bool(unique_indices),
                          indices_are_sorted=bool(indices_are_sorted), mode=parsed_mode,
                          fill_value=fill_value)


def _scatter_op(prim, computation):
    def op(operand, indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        if computation is None:
            jaxpr, consts = None, ()
        else:
            jaxpr, consts = _reduction_jaxpr(computation, lax.dtype_of(operand))
        return prim.bind(operand, indices, updates, update_jaxpr=jaxpr, update_consts=consts,
                         dimension_numbers=dimension_numbers,
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=_Mode.from_any(mode))
    return op


_scatter = _scatter_op(_scatter_p, None)
_scatter_add = _scatter_op(_scatter_add_p, lax.add)
_scatter_mul = _scatter_op(_scatter_mul_p, lax.mul)


def _inverse_gather(dnums, operand_ndim, updates_shape):
    """The gather dimension numbers and slice sizes undoing a scatter's placement."""
    gather_dnums = _GDN(offset_dims=dnums.update_window_dims,
                        collapsed_slice_dims=dnums.inserted_window_dims,
                        start_index_map=dnums.scatter_dims_to_operand_dims,
                        operand_batching_dims=dnums.operand_batching_dims,
                        start_indices_batching_dims=dnums.scatter_indices_batching_dims)
    slice_sizes, pos = [], 0
    for i in range(operand_ndim):
        if i in dnums.inserted_window_dims or i in dnums.operand_batching_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(updates_shape[dnums.update_window_dims[pos]])
            pos += 1
    return gather_dnums, slice_sizes


def _gather_jvp(g, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                indices_are_sorted, mode, fill_value):
    return _gather(g, indices, dimension_numbers, slice_sizes, unique_indices=unique_indices,
                   indices_are_sorted=indices_are_sorted, mode=mode, fill_value=0)


def _gather_transpose(t, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                      indices_are_sorted, mode, fill_value):
    if type(t) is Zero:
        return [Zero(operand.aval), None]
    zeros = lax.full(operand.aval.shape, 0, lax.dtype_of(t))
    dn = dimension_numbers
    scatter_dnums = _SDN(update_window_dims=dn.offset_dims,
                         inserted_window_dims=dn.collapsed_slice_dims,
                         scatter_dims_to_operand_dims=dn.start_index_map,
                         operand_batching_dims=dn.operand_batching_dims,
                         scatter_indices_batching_dims=dn.start_indices_batching_dims)
    out = _scatter_add(zeros, indices, t, scatter_dnums, unique_indices=unique_indices,
                       indices_are_sorted=indices_are_sorted, mode=mode)
    return [out, None]


defjvp(_gather_p, _gather_jvp, None)
transpose_rules[_gather_p] = _gather_transpose


def _scatter_addsub_jvp(prim):
    def jvp(primals, tangents, **params):
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        val_out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is Zero and type(g_updates) is Zero:
            return val_out, zero_of(val_out)
        return val_out, prim.bind(instantiate(g_operand), indices, instantiate(g_updates),
                                  **params)
    return jvp


def _scatter_add_transpose(t, operand, indices, updates, *, update_jaxpr, update_consts,
                           dimension_numbers, indices_are_sorted, unique_indices, mode):
    updates_shape = _aval(updates).shape
    if type(t) is Zero:
        return [Zero(operand.aval) if is_undefined(operand) else None, None,
                Zero(updates.aval) if is_undefined(updates) else None]
    operand_t = t if is_undefined(operand) else None
    update_t = None
    if is_undefined(updates):
        gather_dnums, slice_sizes = _inverse_gather(dimension_numbers, len(lax.shape_of(t)),
                                                    updates_shape)
        update_t = _gather(t, indices, gather_dnums, slice_sizes, mode=mode, fill_value=0)
    return [operand_t, None, update_t]


jvp_rules[_scatter_add_p] = _scatter_addsub_jvp(_scatter_add_p)
transpose_rules[_scatter_add_p] = _scatter_add_transpose


def _scatter_mul_jvp_rhs(g, x, i, y, *, dimension_numbers, indices_are_sorted, unique_indices,
                         mode, **kw):
    if not unique_indices:
        raise NotImplementedError(
            "scatter_mul gradients are only implemented if `unique_indices=True`")
    return lax.mul(x, _scatter_add(_zeros(x), i, g, dimension_numbers,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode))


def _scatter_mul_transpose(t, operand, indices, updates, *, update_jaxpr, update_consts,
                           dimension_numbers, indices_are_sorted, unique_indices, mode):
    updates_shape = _aval(updates).shape
    if type(t) is Zero:
        return [Zero(operand.aval) if is_undefined(operand) else None, None,
                Zero(updates.aval) if is_undefined(updates) else None]
    operand_t = update_t = None
    if is_undefined(operand):
        operand_t = _scatter_mul(t, indices, updates, dimension_numbers,
                                 indices_are_sorted=indices_are_sorted,
                                 unique_indices=unique_indices, mode=mode)
    if is_undefined(updates):
        if not unique_indices:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`")
        gather_dnums, slice_sizes = _inverse_gather(dimension_numbers, len(lax.shape_of(t)),
                                                    updates_shape)
        update_t = _gather(lax.mul(t, operand), indices, gather_dnums, slice_sizes,
                           mode=mode, fill_value=0)
    return [operand_t, None, update_t]


defjvp(_scatter_mul_p, lambda g, x, i, y, **kw: _scatter_mul_p.bind(g, i, y, **kw), None,
       _scatter_mul_jvp_rhs)
transpose_rules[_scatter_mul_p] = _scatter_mul_transpose


def _scatter_extremal_jvp(prim):
    def jvp(primals, tangents, *, update_jaxpr, update_consts, dimension_numbers,
            indices_are_sorted, unique_indices, mode):
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        scatter_dnums = dimension_numbers
        updates_shape = lax.shape_of(updates)
        val_out = prim.bind(operand, indices, updates, update_jaxpr=update_jaxpr,
                            update_consts=update_consts, dimension_numbers=scatter_dnums,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode)
        if type(g_operand) is Zero and type(g_updates) is Zero:
            return val_out, zero_of(val_out)
        g_operand, g_updates = instantiate(g_operand), instantiate(g_updates)
        gather_dnums, slice_sizes = _inverse_gather(scatter_dnums, len(lax.shape_of(operand)),
                                                    updates_shape)
        initial_vals = _gather(operand, indices, gather_dnums, slice_sizes)
        target_vals = _gather(val_out, indices, gather_dnums, slice_sizes)
        successful_updates = lax.eq(updates, target_vals)
        retained_values = lax.eq(initial_vals, target_vals)
        num_updates = _gather(
            _scatter_add(_zeros(operand), indices,
                         lax.select(successful_updates, _ones(updates), _zeros(updates)),
                         scatter_dnums),
            indices, gather_dnums, slice_sizes)
        num_refs = _gather(_scatter_add(_zeros(operand), indices, _ones(updates), scatter_dnums),
                           indices, gather_dnums, slice_sizes)
        one = _const(num_updates, 1.0)
        updates_normalizer = lax.select(retained_values,
                                        lax.div(one, lax.add(num_updates, one)),
                                        lax.div(one, num_updates))
        updates_coef = lax.select(successful_updates, updates_normalizer, _zeros(updates))
        operand_normalizer = lax.select(retained_values,
                                        lax.div(one, lax.add(num_updates, one)),
                                        _zeros(num_updates))
        operand_coef = lax.div(lax.add(_const(operand_normalizer, -1.0), operand_normalizer),
                               num_refs)
        target_tangents = _gather(g_operand, indices, gather_dnums, slice_sizes)
        tangent_updates = lax.add(lax.mul(target_tangents, operand_coef),
                                  lax.mul(g_updates, updates_coef))
        tangent_out = _scatter_add(g_operand, indices, tangent_updates, scatter_dnums,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode)
        return val_out, tangent_out
    return jvp


for _name in ("scatter-min", "scatter-max"):
    jvp_rules[_I.P[_name]] = _scatter_extremal_jvp(_I.P[_name])


def _scatter_jvp(primals, tangents, *, update_jaxpr, update_consts, dimension_numbers,
                 indices_are_sorted, unique_indices, mode):
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dnums = dimension_numbers
    params = dict(update_jaxpr=update_jaxpr, update_consts=update_consts,
                  dimension_numbers=dnums, indices_are_sorted=indices_are_sorted, mode=mode)
    if type(g_operand) is Zero and type(g_updates) is Zero:
        val_out = _scatter_p.bind(operand, indices, updates, unique_indices=unique_indices,
                                  **params)
        return val_out, zero_of(val_out)
    g_operand, g_updates = instantiate(g_operand), instantiate(g_updates)
    if unique_indices:
        val_out = _scatter_p.bind(operand, indices, updates, unique_indices=True, **params)
        tangent_out = _scatter_p.bind(g_operand, indices, g_updates, unique_indices=True,
                                      **params)
        return val_out, tangent_out
    # JAX's scheme: scatter ids of the updates, gather them back, mask what lost, scatter-add
    updates_shape = lax.shape_of(updates)
    ids_shape = list(updates_shape)
    for update_dim in dnums.update_window_dims:
        ids_shape[update_dim] = 1
    num_ids = int(np.prod(ids_shape, dtype=np.int64))
    id_dtype = np.dtype(np.uint64) if num_ids > np.iinfo(np.uint32).max else np.dtype(np.uint32)
    update_ids = lax.add(lax.reshape(lax.iota(id_dtype, num_ids), ids_shape),
                         lax.full_like(updates, 1, dtype=id_dtype))
    scattered_ids = _scatter(lax.full(lax.shape_of(operand), 0, id_dtype), indices, update_ids,
                             dnums, indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode)
    gather_dnums, slice_sizes = _inverse_gather(dnums, len(lax.shape_of(scattered_ids)),
                                                updates_shape)
    gathered_update_ids = _gather(scattered_ids, indices, gather_dnums, slice_sizes)
    masked_operand = lax.select(lax.eq(scattered_ids, _zeros(scattered_ids)), operand,
                                _zeros(operand))
    masked_updates = lax.select(lax.eq(update_ids, gathered_update_ids), updates, _zeros(updates))
    masked_g_operand = lax.select(lax.eq(scattered_ids, _zeros(scattered_ids)), g_operand,
                                  _zeros(g_operand))
    masked_g_updates = lax.select(lax.eq(update_ids, gathered_update_ids), g_updates,
                                  _zeros(g_updates))
    val_out = _scatter_add(masked_operand, indices, masked_updates, dnums,
                           indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                           mode=mode)
    tangent_out = _scatter_add(masked_g_operand, indices, masked_g_updates, dnums,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)
    return val_out, tangent_out


def _scatter_transpose(t, operand, indices, updates, *, update_jaxpr, update_consts,
                       dimension_numbers, indices_are_sorted, unique_indices, mode):
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    updates_shape = _aval(updates).shape
    if type(t) is Zero:
        return [Zero(operand.aval) if is_undefined(operand) else None, None,
                Zero(updates.aval) if is_undefined(updates) else None]
    operand_t = update_t = None
    if is_undefined(operand):
        operand_t = _scatter(t, indices, lax.full(updates_shape, 0, lax.dtype_of(t)),
                             dimension_numbers, indices_are_sorted=indices_are_sorted,
                             unique_indices=True, mode=mode)
    if is_undefined(updates):
        gather_dnums, slice_sizes = _inverse_gather(dimension_numbers, len(lax.shape_of(t)),
                                                    updates_shape)
        update_t = _gather(t, indices, gather_dnums, slice_sizes, mode=mode, fill_value=0)
    return [operand_t, None, update_t]


jvp_rules[_scatter_p] = _scatter_jvp
transpose_rules[_scatter_p] = _scatter_transpose


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    shape = lax.shape_of(primals[0])
    index_dtype = np.dtype(np.uint64) if any(d > np.iinfo(np.uint32).max for d in shape) \
        else np.dtype(np.uint32)
    sorted_primals_and_idx = _sort_p.bind(
        *primals, lax.broadcasted_iota(index_dtype, shape, dimension),
        dimension=dimension, is_stable=is_stable, num_keys=num_keys + 0)
    batch_dims = tuple(np.delete(np.arange(len(shape), dtype=np.int64), dimension))
    dnums = _GDN(offset_dims=(), collapsed_slice_dims=(dimension,), start_index_map=(dimension,),
                 operand_batching_dims=batch_dims, start_indices_batching_dims=batch_dims)
    idx = lax.expand_dims(sorted_primals_and_idx[-1], (len(shape),))
    tangents_out = [t if type(t) is Zero else
                    _gather(t, idx, dnums, (1,) * len(shape), mode=_Mode.PROMISE_IN_BOUNDS)
                    for t in tangents]
    outs = list(sorted_primals_and_idx[:-1])
    return outs, [zero_of(o) if type(t) is Zero else t for o, t in zip(outs, tangents_out)]


jvp_rules[_sort_p] = _sort_jvp

# cumulative reductions: cumsum is linear; the others differentiate JAX's parallel prefix scan


def _cumsum_transpose(t, operand, *, axis, reverse):
    return [_I.P["cumsum"].bind(t, axis=axis, reverse=not reverse)]


deflinear2(_I.P["cumsum"], _cumsum_transpose)


def _interleave(a, b, axis):
    a_shape, b_shape = lax.shape_of(a), lax.shape_of(b)
    a_pad = [(0, 0, 0)] * len(a_shape)
    b_pad = [(0, 0, 0)] * len(b_shape)
    a_pad[axis] = (0, 1 if a_shape[axis] == b_shape[axis] else 0, 1)
    b_pad[axis] = (1, 0 if a_shape[axis] == b_shape[axis] else 1, 1)
    op = lax.bitwise_or if lax.dtype_of(a) == np.bool_ else lax.add
    return op(lax.pad(a, _const(a, 0), a_pad), lax.pad(b, _const(b, 0), b_pad))


def associative_scan(fn, elems, reverse=False, axis=0):
    """JAX's ``lax.associative_scan`` on a list of arrays (``fn`` maps two lists to one)."""
    elems = list(elems)
    if reverse:
        elems = [lax.rev(e, [axis]) for e in elems]

    def scan(elems):
        num_elems = lax.shape_of(elems[0])[axis]
        if num_elems < 2:
            return elems
        reduced = fn([lax.slice_in_dim(e, 0, -1, stride=2, axis=axis) for e in elems],
                     [lax.slice_in_dim(e, 1, None, stride=2, axis=axis) for e in elems])
        odd = scan(reduced)
        if num_elems % 2 == 0:
            even = fn([lax.slice_in_dim(e, 0, -1, axis=axis) for e in odd],
                      [lax.slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
        else:
            even = fn(odd, [lax.slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
        even = [lax.concatenate([lax.slice_in_dim(e, 0, 1, axis=axis), r], axis)
                for e, r in zip(elems, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    scans = scan(elems)
    if reverse:
        scans = [lax.rev(s, [axis]) for s in scans]
    return scans


def _replace_inf(x):
    return lax.select(lax.eq(x, _const(x, float("inf"))), _zeros(x), x)


_logaddexp_fn = []


def _logaddexp_custom(x1, x2):
    """JAX's ``lax.other.logaddexp`` (a custom_jvp function) on real floats."""
    if not _logaddexp_fn:
        _logaddexp_fn.append(_make_logaddexp())
    return _logaddexp_fn[0](x1, x2)


def _logaddexp_impl(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2),
                      lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


def _logaddexp_jvp(primals, tangents):
    x1, x2 = primals
    t1, t2 = tangents
    primal_out = _logaddexp_custom(x1, x2)
    tangent_out = lax.add(
        lax.mul(t1, lax.exp(lax.sub(_replace_inf(x1), _replace_inf(primal_out)))),
        lax.mul(t2, lax.exp(lax.sub(_replace_inf(x2), _replace_inf(primal_out)))))
    return primal_out, tangent_out


def _make_logaddexp():
    from .custom import custom_jvp
    f = custom_jvp(_logaddexp_impl)
    f.__name__ = "logaddexp"
    f.defjvp(_logaddexp_jvp)
    return f


_COMBINERS = {"cumprod": lax.mul, "cummax": lax.max, "cummin": lax.min,
              "cumlogsumexp": lambda a, b: _logaddexp_custom(a, b)}


def _cumulative_jvp(name):
    combine = _COMBINERS[name]

    def jvp(primals, tangents, *, axis, reverse):
        def scan(x):
            return associative_scan(lambda a, b: [combine(a[0], b[0])], [x], reverse=reverse,
                                    axis=axis)
        outs, touts = jvp_flat(scan, list(primals), [instantiate(t) for t in tangents])
        return outs[0], touts[0]
    return jvp


for _name in ("cumprod", "cummax", "cummin", "cumlogsumexp"):
    jvp_rules[_I.P[_name]] = _cumulative_jvp(_name)


# -- special functions, complex parts, tile, scatter-sub (JAX's special.py / lax.py) ----------------

from ..ir import ALL_PRIMITIVES as _ALL  # noqa: E402

if "erfc" in E:
    defjvp(E["erfc"], lambda g, x: lax.mul(_const(x, -2. / np.sqrt(np.pi)),
                                           lax.mul(g, lax.exp(lax.neg(_square(x))))))
if "lgamma" in E and "digamma" in E:
    defjvp(E["lgamma"], lambda g, x: lax.mul(g, lax.digamma(x)))
# digamma's derivative is polygamma(1, x), a primitive traxla does not have: no JVP rule

if "real" in E and "complex" in E:
    deflinear2(E["real"], lambda t, x: [lax.complex(t, np.zeros((), lax.dtype_of(t)))])
    deflinear2(E["imag"], lambda t, x: [lax.complex(np.zeros((), lax.dtype_of(t)), lax.neg(t))])

    def _complex_transpose(t, x, y):
        return [unbroadcast(x.aval, lax.real(t)) if is_undefined(x) else None,
                unbroadcast(y.aval, lax.imag(lax.neg(t))) if is_undefined(y) else None]

    deflinear2(E["complex"], _complex_transpose)

if "conj" in E:
    def _conj_transpose(t, x, *, input_dtype):
        if dtypes.is_complex(input_dtype):
            return [lax.conj(t)]
        return [lax.real(t)]

    deflinear2(E["conj"], _conj_transpose)

if "tile" in _ALL:
    def _tile_transpose(ct, x, *, reps):
        if not is_undefined(x):
            return [None]
        shape = tuple(k for pair in zip(reps, x.aval.shape) for k in pair)
        return [lax.reduce_sum(lax.reshape(ct, shape), tuple(2 * i for i in range(len(reps))))]

    deflinear2(_ALL["tile"], _tile_transpose)

if "scatter-sub" in _ALL:
    _scatter_sub_p = _ALL["scatter-sub"]

    def _scatter_sub_transpose(t, operand, indices, updates, **params):
        ct_operand, _, ct_updates = _scatter_add_transpose(t, operand, indices, updates, **params)
        if ct_updates is not None and type(ct_updates) is not Zero:
            ct_updates = lax.neg(ct_updates)
        return [ct_operand, None, ct_updates]

    jvp_rules[_scatter_sub_p] = _scatter_addsub_jvp(_scatter_sub_p)
    transpose_rules[_scatter_sub_p] = _scatter_sub_transpose

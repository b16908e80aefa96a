"""JVP and transpose rules of the elementwise primitives (JAX's lax.py)."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.rules import shape as S
from traxla.ir.rules.ad import add_any_p, empty2_p
from traxla.ir.rules.elementwise import P as E
from traxla.ir.rules.reduction import P as R
from traxla.autodiff.ad import (Zero, instantiate, is_undefined, jvp_rules, linearize_rules,
                                transpose_rules, zero_of)
from traxla.autodiff.rules._util import (_aval, _broadcast_shapes, _const, _convert, _eq_meet, _one,
                                         _ones, _square, _twos, _zero, _zeros,
                                         def_bilinear_transpose, defjvp, defjvp2, defjvp_zero,
                                         deflinear2, maybe_broadcast, unbroadcast)
from traxla.ir.avals import ShapedArray


# -- elementwise: zero derivatives -----------------------------------------------------------------

for _name in ("sign", "floor", "ceil", "round", "is_finite", "not", "and", "or", "xor",
              "shift_left", "shift_right_logical", "shift_right_arithmetic",
              "eq", "ne", "lt", "le", "gt", "ge", "bitcast_convert_type",
              "eq_to", "lt_to", "le_to"):
    defjvp_zero(E[_name])
for _name in ("argmax", "argmin"):
    defjvp_zero(R[_name])
# population_count, clz, reduce_and (and reduce_xor) have no JVP rule in JAX: only their
# integer operands, whose tangents are symbolic zeros, get past one; a float operand being
# differentiated raises "Differentiation rule ... not implemented" before its typing rule.
# reduce_or has a linearization only (JAX's _reduce_or_lin): under grad/linearize its
# operand's type is checked, under jvp the rule is missing.


def _reduce_or_linearize(trace, primals, tangents, *, axes):
    out = R["reduce_or"].bind(primals[0], axes=axes)
    return out, zero_of(out)


linearize_rules[R["reduce_or"]] = _reduce_or_linearize
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
def _abs_jvp(g, ans, x):
    if dtypes.is_complex(lax.dtype_of(x)):  # d|z| = re(conj(z) dz) / |z| (0 at z = 0)
        return lax.real(lax.mul(g, lax.div(lax.conj(x), _replace_zero(
            lax.convert_element_type(ans, lax.dtype_of(x))))))
    return lax.select(lax.ge(x, _zero(x)), g, lax.neg(g))


defjvp2(E["abs"], _abs_jvp)
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
# nextafter has no JVP rule, as in JAX: differentiating it raises NotImplementedError
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


def_bilinear_transpose(E["mul"], "product", lambda ct, x, y: unbroadcast(x.aval, lax.mul(ct, y)),
                       lambda ct, x, y: unbroadcast(y.aval, lax.mul(x, ct)))

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
    return ShapedArray(aval.shape, dtypes.float0, False)


jvp_rules[E["convert_element_type"]] = _convert_jvp
transpose_rules[E["convert_element_type"]] = _convert_transpose


def _edtype_jvp(prim):
    """JAX's: a conversion to (from) an extended dtype is linear; its tangent is the input
    tangent converted to the output's tangent dtype."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t, = tangents
        if type(t) is Zero:
            return out, zero_of(out)
        return out, lax.convert_element_type(t, dtypes.tangent_dtype(lax.aval_of(out).dtype))
    return jvp


for _name in ("to_edtype", "from_edtype"):
    jvp_rules[E[_name]] = _edtype_jvp(E[_name])
transpose_rules[E["to_edtype"]] = lambda ct, x, *, edtype: [
    Zero(x.aval) if type(ct) is Zero else E["from_edtype"].bind(ct, dtype=x.aval.dtype)]
transpose_rules[E["from_edtype"]] = lambda ct, x, *, dtype: [
    Zero(x.aval) if type(ct) is Zero else E["to_edtype"].bind(ct, edtype=x.aval.dtype)]


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



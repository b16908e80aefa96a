"""Lowering of elementwise primitives: mostly one StableHLO/CHLO op each."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.accuracy import AccuracyMode, Tolerance
from traxla.ir.rules.elementwise import P, WITH_ACCURACY
from traxla.lowering.mlir import (aval_type, broadcast_to, constant, create_op, hlo, i64_array,
                                  ir, op_result, rule_cache, tensor_type)
from traxla.lowering.registry import (RuleContext, register_direct_op, register_direct_rule,
                                      register_elementwise_op, register_lowering)

# primitive name -> the one StableHLO/CHLO op it lowers to (operands already broadcast)
UNARY_OPS = {
    "neg": "stablehlo.negate", "floor": "stablehlo.floor", "ceil": "stablehlo.ceil",
    "is_finite": "stablehlo.is_finite", "exp": "stablehlo.exponential", "log": "stablehlo.log",
    "log1p": "stablehlo.log_plus_one", "expm1": "stablehlo.exponential_minus_one",
    "tanh": "stablehlo.tanh", "logistic": "stablehlo.logistic", "sin": "stablehlo.sine",
    "cos": "stablehlo.cosine", "tan": "stablehlo.tan", "asin": "chlo.asin", "acos": "chlo.acos",
    "atan": "chlo.atan", "sinh": "chlo.sinh", "cosh": "chlo.cosh", "asinh": "chlo.asinh",
    "acosh": "chlo.acosh", "atanh": "chlo.atanh", "sqrt": "stablehlo.sqrt",
    "rsqrt": "stablehlo.rsqrt", "cbrt": "stablehlo.cbrt", "abs": "stablehlo.abs",
    "not": "stablehlo.not", "erf": "chlo.erf", "erf_inv": "chlo.erf_inv",
    "population_count": "stablehlo.popcnt", "clz": "stablehlo.count_leading_zeros",
}
BINARY_OPS = {
    "add": "stablehlo.add", "sub": "stablehlo.subtract", "mul": "stablehlo.multiply",
    "div": "stablehlo.divide", "rem": "stablehlo.remainder", "pow": "stablehlo.power",
    "max": "stablehlo.maximum", "min": "stablehlo.minimum", "atan2": "stablehlo.atan2",
    "nextafter": "chlo.next_after", "and": "stablehlo.and", "or": "stablehlo.or",
    "xor": "stablehlo.xor", "shift_left": "stablehlo.shift_left",
    "shift_right_logical": "stablehlo.shift_right_logical",
    "shift_right_arithmetic": "stablehlo.shift_right_arithmetic",
}
COMPARE_DIRECTIONS = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


def _unary(name):
    def rule(ctx, x, accuracy=None, **params):
        return op_result(name, aval_type(ctx.avals_out[0]), (x,), accuracy_attributes(accuracy))
    return rule


def accuracy_attributes(accuracy) -> dict | None:
    """``result_accuracy`` for an ``accuracy=`` param, as JAX lowers it (None: no attribute)."""
    if accuracy is None:
        return None
    if isinstance(accuracy, AccuracyMode):
        attr = hlo.ResultAccuracyAttr.get(0.0, 0.0, 0, accuracy.name)
    elif isinstance(accuracy, Tolerance):
        attr = hlo.ResultAccuracyAttr.get(atol=accuracy.atol, rtol=accuracy.rtol,
                                          ulps=accuracy.ulps, mode="TOLERANCE")
    else:
        raise NotImplementedError(f"Accuracy {accuracy} not supported")
    return {"result_accuracy": attr}


def _unary_plain(name):
    def rule(ctx, x, **params):
        return op_result(name, aval_type(ctx.avals_out[0]), (x,))
    return rule


def _binary(name, direction=None):
    """``name`` of the operands broadcast to the output's shape; ``direction``: that of a
    ``stablehlo.compare``, whose compare type follows the operands' dtype."""
    def rule(ctx, x, y):
        out = ctx.avals_out[0]
        shape = out.shape
        x_aval, y_aval = ctx.avals_in
        if direction is not None and isinstance(x_aval.dtype, dtypes.ExtendedDType):
            return _compare_keys(ctx, x, y, direction)
        if x_aval.shape != shape:
            x = broadcast_to(x, x_aval, shape)
        if y_aval.shape != shape:
            y = broadcast_to(y, y_aval, shape)
        attributes = (None if direction is None
                      else compare_attributes(direction, compare_type(x_aval.dtype)))
        return op_result(name, aval_type(out), (x, y), attributes)
    return rule


def compare_type(dtype) -> str:
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    if dtypes.is_signed_int(dtype):
        return "SIGNED"
    return "UNSIGNED"


def compare(x, y, direction: str, dtype):
    return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get(compare_type(dtype)))


def compare_attributes(direction: str, kind: str) -> dict:
    cache = rule_cache("compare")  # (direction, kind) -> the compare op's attributes
    attrs = cache.get((direction, kind))
    if attrs is None:
        attrs = cache[(direction, kind)] = {
            "comparison_direction": hlo.ComparisonDirectionAttr.get(direction),
            "compare_type": hlo.ComparisonTypeAttr.get(kind)}
    return attrs


def _broadcast_physical(value, aval, shape):
    """A key array's physical data (shape + its key shape) broadcast to ``shape``."""
    key_rank = len(aval.dtype.physical_shape)
    if aval.shape == shape:
        return value
    # lax broadcasting: a scalar, or equal ranks with size-1 dims
    dims = [*range(len(aval.shape)), *range(len(shape), len(shape) + key_rank)]
    return hlo.broadcast_in_dim(tensor_type(tuple(shape) + aval.dtype.physical_shape,
                                            aval.dtype.physical_dtype), value, dims)


def _compare_keys(ctx, x, y, direction):
    """eq/ne of typed PRNG keys, as JAX's opaque comparison: compare the key data
    element by element, then all-of (EQ) or any-of (NE) over the key's trailing dims."""
    out = ctx.avals_out[0]
    x_aval, y_aval = ctx.avals_in
    x = _broadcast_physical(x, x_aval, out.shape)
    y = _broadcast_physical(y, y_aval, out.shape)
    bits = hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get("UNSIGNED"))
    key_dims = range(len(out.shape), len(out.shape) + len(x_aval.dtype.physical_shape))
    scalar = tensor_type((), dtypes.bool_)
    red = hlo.ReduceOp([aval_type(out)], [bits], [constant(direction == "EQ", dtypes.bool_)],
                       i64_array(key_dims))
    block = red.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        combine = hlo.and_ if direction == "EQ" else hlo.or_
        hlo.return_([combine(*block.arguments)])
    return red.result


for _name, _op in UNARY_OPS.items():
    # (logistic's accuracy selects its JVP only: JAX lowers it without the attribute)
    with_accuracy = _name in WITH_ACCURACY and _name != "logistic"
    register_elementwise_op(P[_name], _op, _unary(_op) if with_accuracy else _unary_plain(_op),
                            ("accuracy", ()) if with_accuracy else None)  # (accuracy: rule)
for _name, _op in BINARY_OPS.items():
    register_elementwise_op(P[_name], _op, _binary(_op))


def _minmax(name, direction):
    """max/min comparing complex values lexicographically as (real, imag) pairs, as
    JAX's ``mlir.max_hlo``/``min_hlo``; other dtypes: the one StableHLO op."""
    plain = _binary(name)

    def rule(ctx, x, y):
        if not dtypes.is_complex(ctx.avals_in[0].dtype):
            return plain(ctx, x, y)
        shape = ctx.avals_out[0].shape
        x = broadcast_to(x, ctx.avals_in[0], shape)
        y = broadcast_to(y, ctx.avals_in[1], shape)
        rx, ry = hlo.real(x), hlo.real(y)
        real_eq = hlo.compare(rx, ry, **compare_attributes("EQ", "FLOAT"))
        real_cmp = hlo.compare(rx, ry, **compare_attributes(direction, "FLOAT"))
        imag_cmp = hlo.compare(hlo.imag(x), hlo.imag(y), **compare_attributes(direction, "FLOAT"))
        return hlo.select(hlo.select(real_eq, imag_cmp, real_cmp), x, y)
    return rule


def _real_operands(eqn, memo=None):
    """The inline path (one op) only for real operands."""
    return None if dtypes.is_complex(eqn.invars[0].aval.dtype) else {}


for _name, _direction in (("max", "GT"), ("min", "LT")):
    register_elementwise_op(P[_name], BINARY_OPS[_name], _minmax(BINARY_OPS[_name], _direction),
                            _real_operands)


def _compare_attributes(direction):
    def attributes_of(eqn, memo=None):
        dtype = eqn.invars[0].aval.dtype
        if memo is not None:  # the module's, by dtype (no thread-local read)
            attrs = memo.get(dtype)
            if attrs is not None:
                return attrs
        cache = rule_cache("compare_of")  # (direction, dtype) -> the op's attributes
        attrs = cache.get((direction, dtype))
        if attrs is None:
            if isinstance(dtype, dtypes.ExtendedDType):
                return None
            attrs = cache[(direction, dtype)] = compare_attributes(direction,
                                                                   compare_type(dtype))
        if memo is not None:
            memo[dtype] = attrs
        return attrs
    return attributes_of


for _name, _direction in COMPARE_DIRECTIONS.items():
    register_elementwise_op(P[_name], "stablehlo.compare",
                            _binary("stablehlo.compare", _direction),
                            _compare_attributes(_direction))


def _compare_total_order(direction):
    def rule(ctx, x, y):
        shape, dtype = ctx.aval_out.shape, ctx.avals_in[0].dtype
        x = broadcast_to(x, ctx.avals_in[0], shape)
        y = broadcast_to(y, ctx.avals_in[1], shape)
        kind = "TOTALORDER" if dtypes.is_inexact(dtype) else compare_type(dtype)
        return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                           compare_type=hlo.ComparisonTypeAttr.get(kind))
    return rule


for _name, _direction in (("eq_to", "EQ"), ("lt_to", "LT"), ("le_to", "LE")):
    register_lowering(P[_name], _compare_total_order(_direction))


def _identity(ctx, x, **params):
    return x


def _round(ctx, x, *, rounding_method):
    return hlo.round_nearest_even(x) if int(rounding_method) == 1 else hlo.round_nearest_afz(x)


def _sign(ctx, x):
    """stablehlo.sign rejects unsigned integers: there sign(x) is select(x == 0, 0, 1), as JAX."""
    aval = ctx.avals_in[0]
    if not dtypes.is_unsigned_int(aval.dtype):
        return hlo.sign(x)
    zero, one = (broadcast_to(constant(v, aval.dtype), aval.update(shape=()), aval.shape)
                 for v in (0, 1))
    return hlo.select(compare(x, zero, "EQ", aval.dtype), zero, one)


def _exp2(ctx, x, accuracy=None):
    dtype = ctx.avals_in[0].dtype
    ln2 = broadcast_to(constant(np.log(2), dtype), ctx.avals_in[0].update(shape=()), ctx.aval_out.shape)
    product = hlo.multiply(ln2, x)
    return op_result("stablehlo.exponential", aval_type(ctx.aval_out), (product,),
                     accuracy_attributes(accuracy))


def _integer_pow(ctx, x, *, y):
    """x ** y by repeated squaring, as JAX emits it."""
    aval = ctx.avals_in[0]
    result_type = aval_type(aval)
    if y == 3:  # JAX's special case: (x * x) * x, not the loop's x * (x * x) (complex products
        # round differently in the last bit)
        return op_result("stablehlo.multiply", result_type,
                         (op_result("stablehlo.multiply", result_type, (x, x)), x))
    acc = None
    base, n = x, abs(int(y))
    while n:
        if n & 1:
            acc = base if acc is None else op_result("stablehlo.multiply", result_type, (acc, base))
        n >>= 1
        if n:
            base = op_result("stablehlo.multiply", result_type, (base, base))
    if acc is None:
        acc = broadcast_to(constant(1, aval.dtype), aval.update(shape=()), aval.shape)
    if y < 0:
        one = broadcast_to(constant(1, aval.dtype), aval.update(shape=()), aval.shape)
        acc = hlo.divide(one, acc)
    return acc


def _pow(ctx, x, y):
    xa, ya = ctx.avals_in
    if ya.dtype != xa.dtype:  # integer exponent: compute in the base's type
        y = hlo.convert(aval_type(ya.update(dtype=xa.dtype)), y)
        ya = ya.update(dtype=xa.dtype)
    shape = ctx.aval_out.shape
    return hlo.power(broadcast_to(x, xa, shape), broadcast_to(y, ya, shape))


def _select_n(ctx, which, *cases):
    which_aval = ctx.avals_in[0]
    out = ctx.avals_out[0]
    shape = out.shape
    if which_aval.shape != shape:
        which = broadcast_to(which, which_aval, shape)
    if which_aval.dtype == np.bool_:
        return cases[0] if len(cases) == 1 else op_result(
            "stablehlo.select", aval_type(out), (which, cases[1], cases[0]))

    def pick(lo, hi):
        if hi - lo == 1:
            return cases[lo]
        mid = (lo + hi) // 2
        bound = broadcast_to(constant(mid, which_aval.dtype), which_aval.update(shape=()), shape)
        return hlo.select(compare(which, bound, "LT", which_aval.dtype), pick(lo, mid), pick(mid, hi))

    return pick(0, len(cases))


def _clamp(ctx, lo, x, hi):
    return hlo.clamp(lo, x, hi)


def convert(value, from_aval, to_dtype):
    """StableHLO convert with JAX's semantics for bool targets and complex sources."""
    if from_aval.dtype == to_dtype:
        return value
    if dtypes.is_complex(from_aval.dtype) and not dtypes.is_complex(to_dtype):
        value = hlo.real(value)
        from_aval = from_aval.update(dtype=dtypes.float64 if from_aval.dtype == dtypes.complex128
                                     else dtypes.float32)
    if dtypes.is_bool(to_dtype):
        zero = broadcast_to(constant(0, from_aval.dtype), from_aval.update(shape=()), from_aval.shape)
        return compare(value, zero, "NE", from_aval.dtype)
    return op_result("stablehlo.convert", tensor_type(from_aval.shape, to_dtype), (value,))


def _convert_element_type(ctx, x, *, new_dtype, weak_type, sharding=None):
    aval = ctx.avals_in[0]
    if (isinstance(new_dtype, dtypes.ExtendedDType) or isinstance(aval.dtype, dtypes.ExtendedDType)
            or dtypes.is_complex(aval.dtype)
            or not all(type(d) is int for d in aval.shape)):
        return convert(x, aval, new_dtype)
    # JAX's ``mlir.convert_hlo``: to bool, ``x != 0`` against a broadcast zero (a rank-0 one
    # too); then a convert, the identity included
    if dtypes.is_bool(new_dtype):
        zero = hlo.broadcast_in_dim(tensor_type(aval.shape, aval.dtype),
                                    constant(0, aval.dtype), [])
        x = compare(x, zero, "NE", aval.dtype)
    return hlo.convert(aval_type(ctx.aval_out), x)


def _bitcast_convert_type(ctx, x, *, new_dtype):
    return hlo.bitcast_convert(aval_type(ctx.aval_out), x)


register_lowering(P["stop_gradient"], _identity)
register_lowering(P["copy"], _identity)
register_lowering(P["round"], _round)
register_lowering(P["sign"], _sign)
register_lowering(P["exp2"], _exp2)
def _integer_pow_direct(builder, eqn, operands, loc):
    """The equation loop's integer_pow: ``x ** 2`` (the common one) is one multiply."""
    if eqn.params["y"] == 2:
        x, = operands
        return create_op("stablehlo.multiply", (aval_type(eqn.invars[0].aval),), (x, x),
                         loc=loc).result
    with loc:
        return _integer_pow(RuleContext(builder, eqn.primitive, [eqn.invars[0].aval],
                                        [eqn.outvars[0].aval], loc), *operands, **eqn.params)


register_direct_rule(P["integer_pow"], _integer_pow_direct, _integer_pow)
register_lowering(P["pow"], _pow)
register_lowering(P["select_n"], _select_n)
register_lowering(P["clamp"], _clamp)
_NO_ATTRIBUTES: dict = {}


def _convert_attributes(eqn, memo=None):
    """The inline path's convert: a plain ``stablehlo.convert`` (not to bool, not complex
    to real; the identity too, as JAX's)."""
    from_dtype, to_dtype = eqn.invars[0].aval.dtype, eqn.params["new_dtype"]
    if (dtypes.is_bool(to_dtype)
            or isinstance(from_dtype, dtypes.ExtendedDType)
            or isinstance(to_dtype, dtypes.ExtendedDType)
            or (dtypes.is_complex(from_dtype) and not dtypes.is_complex(to_dtype))):
        return None
    return _NO_ATTRIBUTES


register_direct_op(P["convert_element_type"], "stablehlo.convert", _convert_attributes,
                   _convert_element_type)
# an extended dtype's array and its representation array are the same physical array
register_lowering(P["to_edtype"], lambda ctx, x, *, edtype: x)
register_lowering(P["from_edtype"], lambda ctx, x, *, dtype: x)
register_lowering(P["bitcast_convert_type"], _bitcast_convert_type)


def _complex_sin_cos(cosine: bool):
    """sin/cos of a complex operand by JAX's formula (expm1 in place of exp avoids
    cancellation for small imaginary parts), not XLA's complex sine/cosine:
    sin(a+bi) = sin a cosh b + i cos a sinh b, cos(a+bi) = cos a cosh b - i sin a sinh b."""
    plain = _unary("stablehlo.cosine" if cosine else "stablehlo.sine")

    def rule(ctx, x, accuracy=None):
        aval = ctx.avals_in[0]
        if not dtypes.is_complex(aval.dtype):
            return plain(ctx, x, accuracy=accuracy)
        real_aval = aval.update(dtype=np.finfo(aval.dtype).dtype)

        def scalar(v):
            return broadcast_to(constant(v, real_aval.dtype), real_aval.update(shape=()),
                                real_aval.shape)
        a, b = hlo.real(x), hlo.imag(x)
        a_is_zero = compare(a, scalar(0), "EQ", real_aval.dtype)
        two = scalar(2)
        sn, cs = hlo.sine(a), hlo.cosine(a)
        e1m, e2m = hlo.exponential_minus_one(b), hlo.exponential_minus_one(hlo.negate(b))
        snh = hlo.divide(hlo.subtract(e1m, e2m), two)
        csh = hlo.divide(hlo.add(hlo.add(e1m, e2m), two), two)
        if cosine:
            re, im = hlo.multiply(cs, csh), hlo.multiply(hlo.negate(sn), snh)
            on_axis = hlo.complex(re, scalar(0))
        else:
            re, im = hlo.multiply(sn, csh), hlo.multiply(cs, snh)
            on_axis = hlo.complex(scalar(0), im)
        # a zero real part with an |imag| so large that expm1 overflows would give nan
        return hlo.select(a_is_zero, on_axis, hlo.complex(re, im))
    return rule


_COMPLEX = frozenset((np.dtype(np.complex64), np.dtype(np.complex128)))


for _name in ("sin", "cos"):
    register_elementwise_op(P[_name], UNARY_OPS[_name], _complex_sin_cos(_name == "cos"),
                            ("accuracy", _COMPLEX))  # (inline: real, no accuracy)


def _logistic(ctx, x, accuracy=None):
    """1 / (1 + exp(-x)), as JAX lowers logistic on every platform (XLA's logistic op
    rounds differently in bfloat16 on CPU and in float32 on TPU)."""
    aval = ctx.avals_in[0]

    def one():
        return broadcast_to(constant(1, aval.dtype), aval.update(shape=()), aval.shape)
    exp_neg = hlo.exponential(hlo.negate(x))
    denominator = hlo.add(one(), exp_neg)
    return hlo.divide(one(), denominator)


register_lowering(P["logistic"], _logistic)

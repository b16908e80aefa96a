"""Lowering of reductions, argmax/argmin and dot_general."""
from __future__ import annotations

import functools

import numpy as np

from traxla.lowering import dynamic_shapes as dyn
from traxla.ir import dtypes
from traxla.ir.dot_algorithm import CPU_PRESETS, DotAlgorithm, DotAlgorithmPreset
from traxla.ir.rules.reduction import P, dot_general_p
from traxla.lowering.mlir import (aval_type, constant, constant_parts, create_op, element_type, hlo,
                                  i64_array_attrs, ir, op_result, rule_cache, tensor_type)
from traxla.lowering.registry import (mark_platform_sensitive, register_direct_op,
                                      register_direct_rule, register_lowering)
from traxla.lowering.rules.elementwise import compare, convert


def _lowest(dtype):
    if dtypes.is_bool(dtype):
        return False
    if dtypes.is_int(dtype):
        return np.iinfo(dtype).min
    return -np.inf


def _highest(dtype):
    if dtypes.is_bool(dtype):
        return True
    if dtypes.is_int(dtype):
        return np.iinfo(dtype).max
    return np.inf


# name -> (combiner op, init value for a dtype)
MONOIDS = {
    "reduce_sum": (hlo.add, lambda dt: 0),
    "reduce_prod": (hlo.multiply, lambda dt: 1),
    "reduce_max": (hlo.maximum, _lowest),
    "reduce_min": (hlo.minimum, _highest),
    "reduce_and": (hlo.and_, lambda dt: True if dtypes.is_bool(dt) else -1),
    "reduce_or": (hlo.or_, lambda dt: 0),
}
# name -> the combiner's op name (the reduce rule builds its body with ``create_op``)
COMBINER_OPS = {"reduce_sum": "stablehlo.add", "reduce_prod": "stablehlo.multiply",
                "reduce_max": "stablehlo.maximum", "reduce_min": "stablehlo.minimum",
                "reduce_and": "stablehlo.and", "reduce_or": "stablehlo.or"}


def _reduce(op_name, init):
    def build(x, aval, out_aval, axes):
        """The init constant's parts and a new reduce op (at the current location)."""
        dtype = aval.dtype
        init_constants = rule_cache("reduce_init")  # (op, dtype) -> the init constant's parts
        parts = init_constants.get((op_name, dtype))
        if parts is None:
            parts = init_constants[(op_name, dtype)] = constant_parts(
                np.array(init(dtype)).astype(dtype))
        init_val = create_op("stablehlo.constant", parts[0], (), parts[1]).result
        red = create_op("stablehlo.reduce", (aval_type(out_aval),), (x, init_val),
                        i64_array_attrs("dimensions", axes), regions=1)
        scalar = parts[0][0]
        block = red.regions[0].blocks.append(scalar, scalar)
        ip = ir.InsertionPoint(block)
        total = create_op(op_name, results=(scalar,), operands=tuple(block.arguments), ip=ip)
        create_op("stablehlo.return", operands=(total.result,), ip=ip)
        return parts, red

    def rule(ctx, x, *, axes, out_sharding=None):
        return build(x, ctx.avals_in[0], ctx.avals_out[0], axes)[1].result

    def direct(builder, eqn, operands, loc):
        """A reduction like one already emitted at the same location (same combiner,
        operand shape, dtype, axes) is a clone of that reduce op, body included, given
        its operands (Operation.clone and two operand sets cost less than half of the
        op, its block, the combiner and the return)."""
        aval = eqn.invars[0].aval
        axes = eqn.params["axes"]
        key = (op_name, aval.shape, aval.dtype, axes, id(loc))  # (locations live with it)
        templates = builder.op_templates
        hit = templates.get(key)
        if hit is not None:
            parts, template = hit
            init_val = create_op("stablehlo.constant", parts[0], (), parts[1], loc=loc).result
            red = template.clone()  # at the current insertion point, body and all
            red_operands = red.operands
            red_operands[0] = operands[0]
            red_operands[1] = init_val
            return red.result
        with loc:
            parts, red = templates[key] = build(operands[0], aval, eqn.outvars[0].aval, axes)
        return red.result
    return rule, direct


for _name, (_, _init) in MONOIDS.items():
    _rule, _direct = _reduce(COMBINER_OPS[_name], _init)
    register_direct_rule(P[_name], _direct, _rule)


def _argminmax(direction, init):
    def rule(ctx, x, *, axes, index_dtype):
        aval = ctx.avals_in[0]
        if dtypes.is_complex(aval.dtype):  # typed, but refused at lowering, as JAX's
            cmp = "gt" if direction == "GT" else "lt"  # (whose lowering compares with lax.gt/lt)
            raise TypeError(f"{cmp} does not accept dtype {aval.dtype.name} at position 0. "
                            "Accepted dtypes at position 0 are subtypes of integer, floating, bool.")
        axis = axes[0]
        idx = dyn.iota(tensor_type(aval.shape, index_dtype), axis, aval.shape)
        out_aval = ctx.aval_out
        vtype, itype = tensor_type((), aval.dtype), tensor_type((), index_dtype)
        red = hlo.ReduceOp([tensor_type(out_aval.shape, aval.dtype), aval_type(out_aval)],
                           [x, idx], [constant(np.array(init(aval.dtype)).astype(aval.dtype), aval.dtype),
                                      constant(0, index_dtype)], [axis])
        block = red.regions[0].blocks.append(vtype, itype, vtype, itype)
        with ir.InsertionPoint(block):
            op_val, op_idx, acc_val, acc_idx = block.arguments
            pick_val = compare(op_val, acc_val, direction, aval.dtype)
            if dtypes.is_inexact(aval.dtype):
                pick_val = hlo.or_(pick_val, compare(op_val, op_val, "NE", aval.dtype))
            tie = hlo.and_(compare(op_val, acc_val, "EQ", aval.dtype),
                           compare(op_idx, acc_idx, "LT", index_dtype))
            pick_idx = hlo.or_(pick_val, tie)
            hlo.return_([hlo.select(pick_val, op_val, acc_val), hlo.select(pick_idx, op_idx, acc_idx)])
        return red.results[1]
    return rule


register_lowering(P["argmax"], _argminmax("GT", _lowest))
register_lowering(P["argmin"], _argminmax("LT", _highest))


def _dot_general(ctx, lhs, rhs, *, dimension_numbers, precision=None,
                 preferred_element_type=None, out_sharding=None, _converts=None):
    """As JAX: operands of one dtype go in as they are (``preferred_element_type`` is the
    result's type: bf16 x bf16 -> f32 is one op); operands of two dtypes are converted to
    the result's first (on TPU only those that are neither floating nor integer). A dot
    algorithm (``DotAlgorithmPreset``, ``DotAlgorithm``) converts the operands to its input
    types and accumulates in its accumulation type, as JAX's ``_handle_dot_precision``."""
    out = ctx.avals_out[0]
    lhs_aval, rhs_aval = ctx.avals_in[:2]
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return _dot_with_algorithm(ctx, lhs, rhs, dimension_numbers, precision)
    dtype = out.dtype
    if lhs_aval.dtype != rhs_aval.dtype and (_converts is None or
                                             _converts(lhs_aval.dtype, rhs_aval.dtype)):
        # both, as JAX (an operand already of the result's type too: an identity convert)
        lhs = _convert_always(lhs, lhs_aval, dtype)
        rhs = _convert_always(rhs, rhs_aval, dtype)
    return op_result("stablehlo.dot_general", aval_type(out), (lhs, rhs),
                     _dot_attrs(dimension_numbers, precision))


def _dot_with_algorithm(ctx, lhs, rhs, dimension_numbers, algorithm):
    if ctx.module.platform == "cpu" and algorithm not in CPU_PRESETS:
        # XLA's CPU backend ignores the attribute: JAX refuses what it would not compute
        raise ValueError(f"The precision '{algorithm}' is not supported by dot_general on CPU")
    out = ctx.avals_out[0]
    lhs_aval, rhs_aval = ctx.avals_in[:2]
    lhs_dt, rhs_dt, acc_dt = algorithm.compute_types(lhs_aval.dtype, rhs_aval.dtype, out.dtype)
    acc_dt = out.dtype if acc_dt is None else acc_dt
    if lhs_dt != lhs_aval.dtype:
        lhs = convert(lhs, lhs_aval, lhs_dt)
    if rhs_dt != rhs_aval.dtype:
        rhs = convert(rhs, rhs_aval, rhs_dt)
    attrs = dict(_dot_attrs(dimension_numbers, None))
    fields = algorithm.attribute_fields(lhs_dt, rhs_dt)
    if fields is not None:
        types = [ir.FloatTF32Type.get() if t == "tf32" else element_type(t) for t in fields[:3]]
        attrs["algorithm"] = hlo.DotAlgorithm.get(*types, *fields[3:])
    result = op_result("stablehlo.dot_general", tensor_type(out.shape, acc_dt), (lhs, rhs), attrs)
    if acc_dt != out.dtype:
        result = convert(result, out.update(dtype=acc_dt), out.dtype)
    return result


def _convert_always(value, aval, dtype):
    if aval.dtype != dtype:
        return convert(value, aval, dtype)
    return hlo.convert(aval_type(aval), value)


def _tpu_converts(lhs_dtype, rhs_dtype) -> bool:
    """JAX's TPU rule keeps mixed floating/integer operands as they are."""
    return not all(dtypes.is_float(dt) or dtypes.is_int(dt) for dt in (lhs_dtype, rhs_dtype))


def _dot_attrs(dimension_numbers, precision=None) -> dict:
    """Dimension numbers and precision as the op's MLIR attributes, built once per distinct
    value in this thread's MLIR context (a dot algorithm's precision_config is DEFAULT)."""
    cache = rule_cache("dot_general")
    attrs = cache.get((dimension_numbers, precision))
    if attrs is None:
        (lc, rc), (lb, rb) = dimension_numbers
        dn = hlo.DotDimensionNumbers.get(
            lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
            lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))
        names = (tuple(p.name for p in precision) if type(precision) is tuple
                 else ("DEFAULT", "DEFAULT"))
        precision_config = ir.ArrayAttr.get([hlo.PrecisionAttr.get(n) for n in names])
        attrs = cache[(dimension_numbers, precision)] = {
            "dot_dimension_numbers": dn, "precision_config": precision_config}
    return attrs


def _dot_general_attributes(eqn, memo=None):
    """The inline path's dot_general: operands of one dtype (no conversion). ``memo``: the
    module's dict for dot_general (see ``inline_ops``), by the dimension numbers' id."""
    lhs, rhs = eqn.invars
    lhs_dtype, rhs_dtype = lhs.aval.dtype, rhs.aval.dtype
    # (NumPy's dtypes are singletons: identity first, it is the common case and cheap)
    if lhs_dtype is not rhs_dtype and lhs_dtype != rhs_dtype:
        return None
    params = eqn.params
    # a loop's dot_generals share their dimension numbers object (tracing hands out one):
    # by its identity first (hashing the nested tuples cost more than the rest of this)
    dimension_numbers = params["dimension_numbers"]
    precision = params.get("precision")
    if memo is not None:
        hit = memo.get(id(dimension_numbers))
        if hit is not None and hit[0] is dimension_numbers and hit[1] is precision:
            return hit[2]
    if precision is not None and type(precision) is not tuple:  # a dot algorithm: the rule
        return None
    attrs = _dot_attrs(dimension_numbers, precision)
    if memo is not None:
        memo[id(dimension_numbers)] = (dimension_numbers, precision, attrs)  # (keeps it alive)
    return attrs


register_direct_op(dot_general_p, "stablehlo.dot_general", _dot_general_attributes,
                   _dot_general)
register_lowering(dot_general_p, functools.partial(_dot_general, _converts=_tpu_converts),
                  platform="tpu")
mark_platform_sensitive(dot_general_p, lambda eqn: ("cpu", "tpu"))  # JAX's own rules

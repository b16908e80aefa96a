"""Lowering rules from user code: ``register_lowering(prim, rule)`` with
``rule(ctx, *operands, **params) -> [ir.Value, ...]`` (StableHLO ops from ``hlo``), or
``lower_fun(fn)`` to lower a primitive as the traxla function ``fn`` computes it."""
from __future__ import annotations

from traxla.lowering.mlir import constant, hlo, ir  # noqa: F401
from traxla.lowering.module import emit_jaxpr, const_value
from traxla.lowering.registry import register_lowering as _register
from traxla.lowering.rules.callbacks import emit_callback as _emit_callback
from traxla.tracer import trace_to_jaxpr
from traxla.base.unsupported import fill as _fill
from traxla.interpreters._mlir_helpers import (  # noqa: F401
    DEVICE_TO_DEVICE_TYPE, RECV_FROM_HOST_TYPE, SEND_TO_HOST_TYPE, LoweringRule, MeshAxisName,
    Token, Value, aval_to_ir_type, aval_to_ir_types, dense_int_array, dense_int_elements,
    dtype_to_ir_type, flatten_ir_types, flatten_ir_values, i32_attr, i64_attr, make_ir_context,
    module_to_bytecode, module_to_string, token_type, unflatten_ir_values_like_types)
from traxla.lowering.module import ModuleBuilder as ModuleContext  # noqa: F401
from traxla.lowering.registry import RuleContext as LoweringRuleContext  # noqa: F401
from traxla.runtime.placement import Mesh  # noqa: F401


def ir_constant(value):
    """A StableHLO constant for a NumPy value or a Python scalar."""
    return constant(value)


def register_lowering(prim, rule, platform: str | None = None, inline: bool = True,
                      cacheable: bool = True):
    """Registers ``rule(ctx, *operands, **params)`` returning a sequence of ir.Values
    (one per result). ``ctx.avals_in``/``ctx.avals_out`` are the operand and result types.
    ``platform``: 'cpu', 'tpu', 'cuda', 'rocm', 'gpu' (CUDA and ROCm) or None (every
    platform without a rule of its own). Returns None, as JAX's. ``inline`` and
    ``cacheable`` (JAX's choice of emitting the rule as a private function, and of reusing
    it) are accepted as JAX's signature has them (drjax passes them); traxla always emits
    the rule's ops in place."""
    del inline, cacheable
    def lowering(ctx, *args, **params):
        out = rule(ctx, *args, **params)
        if isinstance(out, ir.Value):
            out = [out]
        out = [v.result if hasattr(v, "result") and not isinstance(v, ir.Value) else v
               for v in out]
        return out if prim.multiple_results else out[0]
    _register(prim, lowering, platform=platform)


def lower_fun(fun, multiple_results: bool = True):
    """A lowering rule that traces ``fun(*operands, **params)`` (traxla operations) at the
    operand types and emits its equations in place."""
    def rule(ctx, *args, **params):

        def flat(*xs):
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]
        closed = trace_to_jaxpr(flat, list(ctx.avals_in))
        consts = [const_value(v.aval, c) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
        return emit_jaxpr(ctx.module, closed.jaxpr, consts, list(args))
    return rule


def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect, returns_token=True, partitioned=False,
                         sharding=None):
    """Emits a call from the program back to ``callback(*numpy_operands)``, which returns a
    sequence of arrays of ``result_avals`` (count, shape and dtype checked, as JAX's).
    Returns ``(results, token, keepalive)``, as JAX's; keep the callback alive with
    ``ctx.module_context.add_keepalive(keepalive)``."""
    del returns_token
    if token is not None:
        raise NotImplementedError(
            "emit_python_callback with a token is not supported by traxla: it threads the "
            "tokens of ordered effects itself (use io_callback(..., ordered=True))")
    if partitioned:
        raise NotImplementedError(
            "emit_python_callback(partitioned=True) is not supported by traxla")
    if sharding is not None:
        raise NotImplementedError(
            "emit_python_callback(sharding=...) is not supported by traxla")
    results = _emit_callback(ctx, list(operands), callback, kind="python",
                             result_avals=tuple(result_avals), ordered=False,
                             side_effect=has_side_effect, operand_avals=list(operand_avals))
    return results, None, callback


# JAX's own lowering machinery (its module, axis and sharding contexts, the lowering of
# whole jaxprs, constant and type handler tables): traxla lowers through traxla.lowering.
_fill(globals(), "JAX's MLIR lowering machinery (traxla lowers jaxprs with traxla.lowering)",
      functions="AxisContext core_call_lowering ir_attribute ir_constants jaxpr_subcomp "
                "lower_jaxpr_to_fun lower_jaxpr_to_module merge_mlir_modules "
                "register_constant_handler shape_tensor",
      classes="ConstantHandler LoweringParameters LoweringResult SPMDAxisContext "
              "ShapePolyLoweringState ShardingContext TokenSet",
      constants="ir_tree_registry ir_type_handlers lowerable_effects")

__all__ = ["register_lowering", "lower_fun", "ir", "hlo", "ir_constant", "emit_python_callback"]

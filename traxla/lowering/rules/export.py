"""Lowering of ``call_exported``: the exported module's functions are merged into the module
being built (renamed so that nothing clashes, all private) and its ``main`` is called, as
JAX's ``_call_exported_lowering`` does. Operands whose static type differs from the
exported (symbolic) one are converted; a shape-polymorphic callee marks the module so that
the runtime refines its shapes before XLA compiles it."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.export import call_exported_p, dim_as_value_p
from traxla.lowering.mlir import aval_type, constant, context, func, hlo, ir
from traxla.lowering.registry import custom_call_libraries, register_lowering
from traxla.lowering.dynamic_shapes import dim_value

USES_SHAPE_POLYMORPHISM = "jax.uses_shape_polymorphism"


def exported_module(serialized: bytes) -> ir.Module:
    """The module of an ``Exported`` (a StableHLO portable artifact) in traxla's context."""
    return hlo.deserialize_portable_artifact(context(), bytes(serialized))


def _merge(builder, submodule: ir.Module, main_name: str) -> str:
    """Moves ``submodule``'s symbols into ``builder.module``; returns ``main``'s new name."""
    dst = builder.symbol_table
    src = ir.SymbolTable(submodule.operation)
    renamings, used = {}, set()
    for op in submodule.body.operations:
        if "sym_name" not in op.attributes:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name in dst or name == "main":
            base = main_name if name == "main" else name
            new, i = base, 0
            while new in src or new in dst or new in used:
                new, i = f"{base}_{i}", i + 1
            renamings[name] = new
            used.add(new)
    private = ir.StringAttr.get("private")
    for op in submodule.body.operations:
        if "sym_name" not in op.attributes:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name in renamings:
            src.set_symbol_name(op, renamings[name])
        if op.operation.name == "func.func":
            op.attributes["sym_visibility"] = private
    for old, new in renamings.items():
        for op in submodule.body.operations:
            src.replace_all_symbol_uses(old, new, op)
    for op in list(submodule.body.operations):
        if op.operation.name == "sdy.mesh" and ir.StringAttr(op.attributes["sym_name"]).value in dst:
            continue  # the same mesh declared by both modules
        builder.module.body.append(op)
        dst.insert(op)
    return renamings["main"]


def _convert(x, typ):
    return x if x.type == typ else hlo.convert(typ, x)


def _call_exported(ctx, *args, exported):
    builder = ctx.module
    if exported.ordered_effects:
        raise NotImplementedError(
            f"calling the exported function '{exported.fun_name}': it has ordered effects "
            f"{exported.ordered_effects}, which traxla cannot thread through an exported call.")
    if exported.nr_devices != 1:
        raise NotImplementedError(
            f"Function {exported.fun_name} was exported for {exported.nr_devices} devices; "
            "traxla calls exported functions on one device only.")
    platform = "cuda" if builder.platform in ("gpu", "cuda") else builder.platform
    platforms = tuple(exported.platforms)
    checks = {str(c) for c in exported.disabled_safety_checks}
    if platform not in platforms and "platform" not in checks:
        raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                         f"'{platforms}' but it is used on '{(platform,)}'.")
    if b"lapack_" in exported.mlir_module_serialized:  # JAX's linalg kernels: register them
        custom_call_libraries.add("lapack")
    submodule = exported_module(exported.mlir_module_serialized)
    main = ir.SymbolTable(submodule.operation)["main"]
    callee_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    name = _merge(builder, submodule, f"call_exported_{exported.fun_name}")
    if exported.uses_global_constants:
        builder.module.operation.attributes[USES_SHAPE_POLYMORPHISM] = ir.BoolAttr.get(True)
    call_args = []
    if len(platforms) > 1:
        index = platforms.index(platform) if platform in platforms else 0
        call_args.append(_convert(constant(np.int32(index)), callee_type.inputs[0]))
    kept = [args[i] for i in exported.module_kept_var_idx]
    call_args += [_convert(x, t) for x, t in zip(kept, callee_type.inputs[len(call_args):])]
    call = func.CallOp(list(callee_type.results), ir.FlatSymbolRefAttr.get(name), call_args)
    return [_convert(r, aval_type(a)) for r, a in zip(call.results, ctx.avals_out)]


register_lowering(call_exported_p, _call_exported)


def _dim_as_value(ctx, *, dim):
    return _convert(dim_value(dim), aval_type(ctx.aval_out))


register_lowering(dim_as_value_p, _dim_as_value)

"""Lowering for ``traxla.export``: the module of an ``Exported``, in JAX's calling
convention (version 9/10). A static program is ``@main`` itself (unused arguments pruned);
a shape-polymorphic one is wrapped as JAX wraps it: ``@main`` takes the arrays only,
computes each dimension variable from an argument's shape (``get_dimension_size``), checks
it with ``shape_assertion`` custom calls, and calls ``@_wrapped_jax_export_main`` with the
dimension values first (``jax.global_constant`` arguments)."""
from __future__ import annotations

import numpy as np

from traxla.errors import LoweringError
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal
from traxla.ir.shape_poly import DimExpr, all_dim_vars
from traxla.lowering.mlir import constant, context, func, hlo, ir, aval_type
from traxla.lowering.module import ModuleBuilder, _sanitize, verify
from traxla.lowering.dynamic_shapes import dim_value, dim_values

USES_SHAPE_POLYMORPHISM = "jax.uses_shape_polymorphism"


class ExportLowering:
    __slots__ = ("module", "kept", "uses_dim_vars")

    def __init__(self, module, kept, uses_dim_vars):
        self.module, self.kept, self.uses_dim_vars = module, kept, uses_dim_vars


def _used_inputs(jaxpr) -> list[bool]:
    used = set()
    for eqn in jaxpr.eqns:
        used.update(v for v in eqn.invars if type(v) is not Literal)
    used.update(v for v in jaxpr.outvars if type(v) is not Literal)
    return [v in used for v in jaxpr.invars]


def lower_for_export(closed: ClosedJaxpr, name: str, platforms, result_names,
                     keep_unused: bool = False) -> ExportLowering:
    """The module of an export for ``platforms`` (several: ``@main`` takes the platform
    index first, a ``jax.global_constant``, and runs the program lowered for that one)."""
    jaxpr = closed.jaxpr
    dim_vars = all_dim_vars(closed.in_avals)
    multi = len(platforms) > 1
    n = len(jaxpr.invars)
    keep = [True] * n if (keep_unused or dim_vars) else _used_inputs(jaxpr)
    kept = tuple(i for i in range(n) if keep[i])
    if len(kept) != n:
        closed = ClosedJaxpr(Jaxpr(jaxpr.constvars, [jaxpr.invars[i] for i in kept],
                                   jaxpr.outvars, jaxpr.eqns, jaxpr.debug_info), closed.consts)
    targets = ["gpu" if p in ("cuda", "rocm") else p for p in platforms]
    with context(), ir.Location.unknown():
        builder = ModuleBuilder(f"jit_{_sanitize(name)}", platform=targets[0])
        builder.scope_prefix = f"jit({name})"
        if not dim_vars:  # several platforms: @main takes their index first (JAX's form)
            builder.platforms = tuple(targets) if multi else None
            builder._emit_function(closed, "main", public=True, result_infos=result_names)
        else:
            builder.dim_vars = dim_vars
            inners = []
            for target, platform in zip(targets, platforms):
                builder.platform = target
                builder._functions = {}  # nested jits are lowered again for each platform
                suffix = f"_{platform}" if multi else ""
                inners.append(builder._emit_function(
                    closed, f"_wrapped_jax_export_main{suffix}", public=False,
                    result_infos=result_names))
            _emit_wrapping_main(builder, closed, inners, dim_vars, name, multi)
        builder.module.operation.attributes[USES_SHAPE_POLYMORPHISM] = ir.BoolAttr.get(
            bool(dim_vars) or multi)
        verify(builder.module, closed)
        if builder.host_callbacks:
            raise LoweringError(f"export of '{name}': the program calls back into Python "
                                "(a host callback), which an exported artifact cannot carry.")
        return ExportLowering(builder.module, kept, bool(dim_vars) or multi)


def _emit_wrapping_main(builder, closed, inners, dim_vars, name: str, multi: bool):
    in_avals = closed.in_avals
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    arg_types = ([i32] if multi else []) + [aval_type(a) for a in in_avals]
    callee = builder.symbol_table[inners[0]]
    ftype = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value)
    results = list(ftype.results)
    with ir.InsertionPoint.at_block_begin(builder.module.body):
        main = func.FuncOp("main", ir.FunctionType.get(arg_types, results))
    main.attributes["sym_visibility"] = ir.StringAttr.get("public")
    if multi:
        main.arg_attrs = ir.ArrayAttr.get(
            [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get("_platform_index")})]
            + [ir.DictAttr.get({})] * len(in_avals))
    try:
        main.result_attrs = callee.result_attrs
    except (KeyError, ValueError):
        pass
    builder.symbol_table.insert(main)
    entry = main.add_entry_block()
    with ir.InsertionPoint(entry):
        args = list(entry.arguments)
        platform_index, args = (args[0], args[1:]) if multi else (None, args)
        values = _dim_values_checked(args, in_avals, dim_vars, name)
        call_args = [values[v] for v in dim_vars] + args
        if not multi:
            outs = func.CallOp(results, ir.FlatSymbolRefAttr.get(inners[0]), call_args).results
        else:
            case = hlo.CaseOp(results, platform_index, len(inners))
            for i, inner in enumerate(inners):
                block = case.regions[i].blocks.append()
                with ir.InsertionPoint(block):
                    hlo.return_(list(func.CallOp(results, ir.FlatSymbolRefAttr.get(inner),
                                                 call_args).results))
            outs = case.results
        func.ReturnOp(list(outs))


def _dim_values_checked(args, in_avals, dim_vars, name: str) -> dict:
    """Each dimension variable's value, from a dimension that is just it, with JAX's
    ``shape_assertion``s that it is >= 1 and that every other symbolic dimension agrees."""
    if not dim_vars:
        return {}
    specs = ", ".join(f"args[{i}].shape = ({', '.join(map(str, a.shape))})"
                      for i, a in enumerate(in_avals))
    values, where = {}, {}
    for i, a in enumerate(in_avals):
        for j, d in enumerate(a.shape):
            if isinstance(d, DimExpr) and str(d) in dim_vars and str(d) not in values:
                values[str(d)] = hlo.get_dimension_size(args[i], j)
                where[str(d)] = (i, j)
    missing = [v for v in dim_vars if v not in values]
    if missing:
        raise ValueError(
            f"export of '{name}': cannot solve for the dimension variables {missing}; each "
            "must occur alone as a dimension of some argument (traxla solves no other "
            "equations).")
    one = constant(np.int32(1))
    for v in dim_vars:
        i, j = where[v]
        _shape_assertion(
            hlo.compare(values[v], one, hlo.ComparisonDirectionAttr.get("GE"),
                        compare_type=hlo.ComparisonTypeAttr.get("SIGNED")), [values[v]],
            f"Input shapes do not match the polymorphic shapes specification. Expected "
            f"value >= 1 for dimension variable '{v}'. Using the following polymorphic "
            f"shapes specifications: {specs}. Obtained dimension variables: '{v}' = {{0}} "
            f"from specification '{v}' for dimension args[{i}].shape[{j}] (= {{0}}), .")
    with dim_values(values):
        for i, a in enumerate(in_avals):  # every other symbolic dimension must agree
            for j, d in enumerate(a.shape):
                if isinstance(d, DimExpr) and where.get(str(d)) != (i, j):
                    actual = hlo.get_dimension_size(args[i], j)
                    expected = dim_value(d)
                    _shape_assertion(
                        hlo.compare(actual, expected, hlo.ComparisonDirectionAttr.get("EQ"),
                                    compare_type=hlo.ComparisonTypeAttr.get("SIGNED")),
                        [actual, expected],
                        f"Input shapes do not match the polymorphic shapes specification. "
                        f"Found inconsistency between dimension size args[{i}].shape[{j}] "
                        f"(= {{0}}) and the specification '{d}' (= {{1}}). Using the "
                        f"following polymorphic shapes specifications: {specs}.")
    return values


def _shape_assertion(pred, error_args, message: str):
    op = hlo.CustomCallOp([], [pred, *error_args], call_target_name="shape_assertion",
                          has_side_effect=True,
                          api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2))
    op.attributes["error_message"] = ir.StringAttr.get(message)

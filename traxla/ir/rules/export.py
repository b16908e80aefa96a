"""``call_exported``: a call to a deserialized (or freshly exported) ``Exported`` program.

The equation carries the ``Exported`` itself (hashed by identity); its typing checks the
operands against the exported input avals, solving the dimension variables of a
shape-polymorphic export from the operand shapes, and gives the output avals with the
variables replaced by their values (as JAX's ``call_exported_p``)."""
from __future__ import annotations

from ..avals import ShapedArray
from ..primitive import Primitive, def_typing
from ..shape_poly import evaluate_shape, is_constant_shape, solve_dim_vars

call_exported_p = Primitive("call_exported", multiple_results=True)


def _arg_name(exported, i: int) -> str:
    return f"args[{i}] of the exported function '{exported.fun_name}'"


def _call_exported_typing(*avals_in, exported):
    expected = exported.in_avals
    if len(avals_in) != len(expected):
        raise ValueError(f"Function {exported.fun_name} was exported with {len(expected)} "
                         f"arguments but called with {len(avals_in)}.")
    for i, (a, e) in enumerate(zip(avals_in, expected)):
        if a.dtype != e.dtype:
            raise TypeError(
                f"Function {exported.fun_name} was exported for an argument with dtype "
                f"{e.str_short()} but it is called with an argument with dtype "
                f"{a.str_short()} (args[{i}]).")
        if len(a.shape) != len(e.shape):
            raise ValueError(
                f"Function {exported.fun_name} was exported for an argument of rank "
                f"{len(e.shape)} ({e.str_short()}) but it is called with an argument of "
                f"rank {len(a.shape)} ({a.str_short()}) (args[{i}]).")
        if is_constant_shape(e.shape) and tuple(a.shape) != tuple(e.shape):
            raise ValueError(
                f"Function {exported.fun_name} was exported for an argument of shape "
                f"{e.str_short()} but it is called with an argument of shape "
                f"{a.str_short()} (args[{i}]).")
    if all(is_constant_shape(e.shape) for e in expected):
        return [ShapedArray(o.shape, o.dtype) for o in exported.out_avals]
    env = solve_dim_vars([e.shape for e in expected], [a.shape for a in avals_in],
                         lambda i: _arg_name(exported, i))
    return [ShapedArray(evaluate_shape(o.shape, env), o.dtype) for o in exported.out_avals]


def_typing(call_exported_p, _call_exported_typing)

P = {"call_exported": call_exported_p}

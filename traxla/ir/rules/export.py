"""``call_exported``: a call to a deserialized (or freshly exported) ``Exported`` program.

The equation carries the ``Exported`` itself (hashed by identity); its typing checks the
operands against the exported input avals, solving the dimension variables of a
shape-polymorphic export from the operand shapes, and gives the output avals with the
variables replaced by their values (as JAX's ``call_exported_p``)."""
from __future__ import annotations

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.shape_poly import evaluate_shape, is_constant_shape, is_symbolic, solve_dim_vars
from traxla.ir import dtypes

call_exported_p = Primitive("call_exported", multiple_results=True)


def _arg_name(exported, i: int) -> str:
    """``args[0]``, ``kwargs['x']``: where flat argument ``i`` sits (JAX's descriptor)."""
    names = getattr(exported, "_arg_names", None)
    return names[i] if names and i < len(names) else f"args[{i}]"


def _call_exported_typing(*avals_in, exported):
    expected = exported.in_avals
    if len(avals_in) != len(expected):
        raise ValueError(f"Function {exported.fun_name} was exported with {len(expected)} "
                         f"arguments but called with {len(avals_in)}.")
    for i, (a, e) in enumerate(zip(avals_in, expected)):
        if len(a.shape) != len(e.shape):
            raise ValueError(f"Rank mismatch for {_arg_name(exported, i)}: expected "
                             f"{tuple(e.shape)} and called with {tuple(a.shape)}")
        if a.dtype != e.dtype:
            raise ValueError(f"Dtype mismatch for {_arg_name(exported, i)}: expected "
                             f"{e.dtype} and called with {a.dtype}")
        for j, d in enumerate(e.shape):
            if not is_symbolic(d) and d != a.shape[j]:
                raise ValueError(
                    f"Shape mismatch for {_arg_name(exported, i)}.shape[{j}] (expected same "
                    f"constant): expected {tuple(e.shape)} and called with {tuple(a.shape)}")
    if all(is_constant_shape(e.shape) for e in expected):
        return [ShapedArray(o.shape, o.dtype) for o in exported.out_avals]
    env = solve_dim_vars([e.shape for e in expected], [a.shape for a in avals_in],
                         lambda i: _arg_name(exported, i))
    return [ShapedArray(evaluate_shape(o.shape, env), o.dtype) for o in exported.out_avals]


def_typing(call_exported_p, _call_exported_typing)

P = {"call_exported": call_exported_p}


# ``dim_as_value``: a symbolic dimension used as a value (``x.sum(0) / x.shape[0]``,
# ``mean`` over a polymorphic axis): a weakly typed integer scalar, as JAX's.
dim_as_value_p = Primitive("dim_as_value")


def _dim_as_value_typing(*, dim):
    return ShapedArray((), dtypes.canonicalize(dtypes.int64), weak_type=True)


def_typing(dim_as_value_p, _dim_as_value_typing)
P["dim_as_value"] = dim_as_value_p

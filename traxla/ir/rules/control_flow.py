"""Control-flow primitives: ``cond``, ``while`` and ``scan`` carry closed jaxprs
as params; their operands are the closed-over constants followed by the values
the Python function received."""
from __future__ import annotations

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_printing, def_typing

cond_p = Primitive("cond", multiple_results=True)
while_p = Primitive("while", multiple_results=True)
scan_p = Primitive("scan", multiple_results=True)


def same_type(a, b) -> bool:
    """Types agree up to weak typing (as JAX's ``typematch``)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _types(avals):
    return "[" + ", ".join(a.str_short() for a in avals) + "]"


def _check_call(name, what, jaxpr, avals):
    expected = jaxpr.in_avals
    if len(expected) != len(avals) or not all(map(same_type, expected, avals)):
        raise TypeError(f"{name} {what} takes {_types(expected)} but is given {_types(avals)}.")


def _cond_rule(index, *ops, branches, branches_platforms=None):
    # branches_platforms (a ``platform_dependent`` cond): per branch, the lowering
    # platforms it serves, None for the default branch (last)
    if index.shape or index.dtype != dtypes.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}.")
    if branches_platforms is not None and len(branches_platforms) != len(branches):
        raise TypeError(f"cond has {len(branches)} branches but {len(branches_platforms)} "
                        "branches_platforms.")
    outs = branches[0].out_avals
    for i, branch in enumerate(branches):
        _check_call("cond", f"branch {i}", branch, ops)
        if len(branch.out_avals) != len(outs) or not all(map(same_type, branch.out_avals, outs)):
            raise TypeError(f"cond branches must have equal output types, got {_types(outs)} for "
                            f"branch 0 and {_types(branch.out_avals)} for branch {i}.")
    return list(outs)  # as JAX: branch 0's types, weak types included


def _while_rule(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts:]
    _check_call("while", "cond_jaxpr", cond_jaxpr, list(cconsts) + list(carry))
    _check_call("while", "body_jaxpr", body_jaxpr, list(bconsts) + list(carry))
    out = cond_jaxpr.out_avals
    if len(out) != 1 or not dtypes.is_bool(out[0].dtype):
        raise TypeError(f"while cond_jaxpr must return a boolean, got {_types(out)}.")
    if out[0].shape:  # a batched predicate (vmap): one lane per leading carry element
        for c in carry:
            if tuple(c.shape[:len(out[0].shape)]) != tuple(out[0].shape):
                raise TypeError(f"while with a batched predicate {out[0].str_short()} needs every "
                                f"carry to lead with its shape, got {_types(carry)}.")
    if not all(map(same_type, body_jaxpr.out_avals, carry)) or len(body_jaxpr.out_avals) != len(carry):
        raise TypeError(f"while body_jaxpr must return the carry types {_types(carry)}, got "
                        f"{_types(body_jaxpr.out_avals)}.")
    return list(body_jaxpr.out_avals)  # as JAX: the body's output types


def _scan_rule(*args, jaxpr, length, reverse, unroll, num_consts, num_carry, linear=None,
               _split_transpose=False):
    consts, carry, xs = args[:num_consts], args[num_consts:num_consts + num_carry], args[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan xs must have leading dimension {length}, got {x.str_short()}.")
    x_avals = [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    _check_call("scan", "jaxpr", jaxpr, list(consts) + list(carry) + x_avals)
    outs = jaxpr.out_avals
    if len(outs) < num_carry or not all(map(same_type, outs[:num_carry], carry)):
        raise TypeError(f"scan carry output types {_types(outs[:num_carry])} differ from carry "
                        f"input types {_types(carry)}.")
    ys = [ShapedArray((length,) + y.shape, y.dtype, y.weak_type) for y in outs[num_carry:]]
    return list(outs[:num_carry]) + ys  # as JAX: the body's carry output types


def_typing(cond_p, _cond_rule)
def_typing(while_p, _while_rule)
def_typing(scan_p, _scan_rule)
def_printing(scan_p, hide=("linear", "_split_transpose"))

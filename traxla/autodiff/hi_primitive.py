"""``call_hi_primitive``: the primitive that applies a ``VJPHiPrimitive`` (JAX's new-style
hijax primitive: a class with ``in_avals``, ``out_aval``, ``params`` and rules as methods,
``traxla.experimental.hijax``).

The equation carries the primitive object as its ``_prim`` parameter and prints as
``call_hi_primitive[_prim=Name[{params}]]``. Its rules call the object's methods, as JAX's:

- evaluated eagerly it runs ``expand`` on the arguments as given (Python scalars stay
  Python scalars); staged (jit) it is one equation whose lowering traces ``expand`` then;
- ``jvp`` runs the object's ``jvp``; under ``grad``/``vjp`` its ``vjp_fwd`` computes the
  outputs and residuals in the enclosing trace and a ``call_hi_primitive_linearized``
  equation of the linear jaxpr, transposed, calls ``vjp_bwd`` (by default
  ``vjp_bwd_retval``) with one accumulator per input; under ``linearize`` its ``lin``
  computes the residuals and ``linearized`` is traced into the linear jaxpr;
- ``vmap`` calls its ``batch`` rule (by default: ``VmapOf`` the primitive, out dim from
  ``batch_dim_rule``).
"""
from __future__ import annotations

import numpy as np

from traxla import primitives as prims, tree_util
from traxla.autodiff.ad import (Zero, add_tangents, instantiate, jvp_rules, linearize_mode,
                                linearize_rules, tangent_aval, transpose_rules, zero_of)
from traxla.batching.batch_trace import batching_axis_names, register_batching
from traxla.ir import dtypes
from traxla.ir.primitive import Primitive, def_printing, def_typing
from traxla.ir.sharding_rules import self_typed
from traxla.lowering.mlir import constant
from traxla.lowering.module import emit_jaxpr
from traxla.lowering.registry import register_lowering
from traxla.tracer import make_debug_info, trace_to_jaxpr
from traxla.tracer.traces import current_trace, set_current_trace

class _CallHiPrimitive(Primitive):
    """Evaluated eagerly, ``expand`` runs on the arguments as given (JAX's ``to_lojax``)."""

    __slots__ = ()

    @staticmethod
    def impl(*args, _prim):
        return expand_flat(_prim, args)

    def bind(self, *args, **params):
        # a trace that lowers high-level values as it goes (JAX's ``requires_low``: the
        # one that turns a staged hijax jaxpr into arrays, traxla/api/hi_lowering.py)
        # runs ``expand`` in place; any other stages (or transforms) one equation
        if current_trace().requires_low:
            return expand_flat(params["_prim"], args)
        return Primitive.bind(self, *args, **params)


call_hi_primitive_p = _CallHiPrimitive("call_hi_primitive", multiple_results=True)
call_hi_primitive_linearized_p = Primitive("call_hi_primitive_linearized",
                                           multiple_results=True)


def leaves_checked(treedef, tree):
    """The leaves of ``tree``, which must have the structure ``treedef`` (JAX's
    ``tree_leaves_checked``)."""
    leaves, tree_ = tree_util.tree_flatten(tree)
    if tree_ != treedef:
        raise TypeError(f"expected a value of structure {treedef}, got {tree_}")
    return leaves


# -- accumulators: where vjp_bwd puts the input cotangents ---------------------------------------

class GradAccum:
    """An input's cotangent accumulator handed to ``vjp_bwd`` (JAX's ``ad.GradAccum``)."""

    aval = None

    def accum(self, x) -> None:
        raise NotImplementedError


class ValAccum(GradAccum):
    """Accumulates cotangent values (JAX's ``ad.ValAccum``)."""

    def __init__(self, aval, val=None):
        self.aval = aval
        self.val = Zero(aval) if val is None else val

    def __repr__(self):
        return f"ValAccum({self.aval})"

    def accum(self, x):
        if x is None:
            return
        x_aval = x.aval if type(x) is Zero else prims.aval_of(x)
        if tuple(x_aval.shape) != tuple(self.aval.shape):
            raise ValueError(f"Expected cotangent type {self.aval.str_short()} but got "
                             f"{x_aval.str_short()}")
        self.val = add_tangents(self.val, x)

    def freeze(self):
        return self.val


class NullAccum(GradAccum):
    """The accumulator of an input whose cotangent nobody wants (JAX's ``ad.NullAccum``)."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"NullAccum({self.aval})"

    def accum(self, x):
        return


def accumulate(prim, accums, grads):
    """``vjp_bwd``'s default: each input's cotangent from ``vjp_bwd_retval`` into its
    accumulator (a ``None`` cotangent, or subtree, adds nothing)."""
    for acc_tree, grad_tree in zip(accums, grads):
        if grad_tree is None:
            continue
        accs = tree_util.tree_leaves(acc_tree, is_leaf=lambda x: isinstance(x, GradAccum))
        acc_def = tree_util.tree_structure(acc_tree, is_leaf=lambda x: isinstance(x, GradAccum))
        gs = acc_def.flatten_up_to(grad_tree)
        for acc, g in zip(accs, gs):
            if isinstance(acc, GradAccum):
                acc.accum(g)


# -- typing, printing, evaluation, lowering -----------------------------------------------------

def _typing(*avals, _prim):
    return list(_prim.out_avals_flat)


def _linearized_typing(*avals, _prim, residuals_tree, nz_in_flat):
    return [tangent_aval(a) for a in _prim.out_avals_flat]


def_typing(call_hi_primitive_p, _typing)
def_typing(call_hi_primitive_linearized_p, _linearized_typing)
self_typed.update((call_hi_primitive_p, call_hi_primitive_linearized_p))
def_printing(call_hi_primitive_linearized_p, hide=("residuals_tree",))


def expand_flat(prim, args_flat):
    args = tree_util.tree_unflatten(prim.in_tree, list(args_flat))
    return leaves_checked(prim.out_tree, prim.expand(*args))




def _lowering(ctx, *args, _prim):
    # traced once per primitive object: a jaxpr lowered again (another jit of the same
    # function, whose trace is cached) does not run ``expand`` again, as in JAX
    closed = _prim.__dict__.get("_expanded")
    if closed is None:
        closed = trace_to_jaxpr(lambda *a: expand_flat(_prim, a), list(_prim.in_avals_flat),
                                make_debug_info(_prim.expand, "expand", ()))
        _prim.__dict__["_expanded"] = closed
    consts = [constant(np.asarray(c)) for c in closed.consts]
    return emit_jaxpr(ctx.module, closed.jaxpr, consts, list(args))


def _refuse_jvp(*_, **__):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


register_lowering(call_hi_primitive_p, _lowering)
register_lowering(call_hi_primitive_linearized_p, _refuse_jvp)


# -- autodiff ------------------------------------------------------------------------------------

def _jvp(primals, tangents, *, _prim):
    primals = tree_util.tree_unflatten(_prim.in_tree, list(primals))
    tangents = tree_util.tree_unflatten(_prim.in_tree, list(tangents))
    out, tout = _prim.jvp(primals, tangents)
    out_flat = leaves_checked(_prim.out_tree, out)
    tout_flat = _prim.out_tree.flatten_up_to(tout)
    return out_flat, [zero_of(o) if t is None else t for o, t in zip(out_flat, tout_flat)]


def _broadcast_nzs(nzs, tree):
    """``nzs`` (a bool, or a prefix tree of bools, of ``tree``) for each leaf of ``tree``."""
    if isinstance(nzs, bool):
        return [nzs] * len(tree_util.tree_leaves(tree))
    leaves, treedef = tree_util.tree_flatten(nzs)
    out = []
    for nz, sub in zip(leaves, treedef.flatten_up_to(tree)):
        out += [nz] * len(tree_util.tree_leaves(sub))
    return out


def _linearize(trace, primals, tangents, *, _prim):
    nz_in_flat = [type(t) is not Zero for t in tangents]
    args = tree_util.tree_unflatten(_prim.in_tree, list(primals))
    nzs_in = tree_util.tree_unflatten(_prim.in_tree, nz_in_flat)
    is_vjp = linearize_mode.is_vjp
    with set_current_trace(trace.parent):
        if is_vjp:
            ans, residuals, *maybe_nzs_out = _prim.vjp_fwd(nzs_in, *args)
        else:
            ans, residuals, *maybe_nzs_out = _prim.lin(nzs_in, *args)
    out_flat = leaves_checked(_prim.out_tree, ans)
    nzs_out = _broadcast_nzs(maybe_nzs_out[0] if maybe_nzs_out else True, ans)
    with set_current_trace(trace.tangent_trace):
        if is_vjp:
            res_flat, res_tree = tree_util.tree_flatten(residuals)
            nz_tangents = [t for t in tangents if type(t) is not Zero]
            touts = call_hi_primitive_linearized_p.bind(
                *res_flat, *nz_tangents, _prim=_prim, residuals_tree=res_tree,
                nz_in_flat=tuple(nz_in_flat))
        else:
            touts = leaves_checked(_prim.out_tree, _prim.linearized(
                residuals, *tree_util.tree_unflatten(_prim.in_tree, list(tangents))))
    return out_flat, [t if nz and t is not None else zero_of(o)
                      for o, nz, t in zip(out_flat, nzs_out, touts)]


def _linearized_transpose(cts, *invals, _prim, residuals_tree, nz_in_flat):
    n_res = residuals_tree.num_leaves
    res = [prims._lift(r) if type(r).__name__ == "Literal" else r for r in invals[:n_res]]
    residuals = tree_util.tree_unflatten(residuals_tree, res)
    accums_flat = [ValAccum(tangent_aval(a)) if nz else NullAccum(tangent_aval(a))
                   for a, nz in zip(_prim.in_avals_flat, nz_in_flat)]
    accums = tree_util.tree_unflatten(_prim.in_tree, accums_flat)
    out_cts = tree_util.tree_unflatten(_prim.out_tree, list(cts))
    if _prim.vjp_bwd(residuals, out_cts, *accums) is not None:
        raise AssertionError(f"{type(_prim).__name__}.vjp_bwd must return None")
    return [None] * n_res + [acc.freeze() for acc, nz in zip(accums_flat, nz_in_flat) if nz]


jvp_rules[call_hi_primitive_p] = _jvp
linearize_rules[call_hi_primitive_p] = _linearize
jvp_rules[call_hi_primitive_linearized_p] = _refuse_jvp
transpose_rules[call_hi_primitive_linearized_p] = _linearized_transpose


# -- vmap ---------------------------------------------------------------------------------------

class AxisData:
    """What a ``batch`` rule learns of the vmapped axis (JAX's ``batching.AxisData``)."""

    __slots__ = ("name", "size", "spmd_name", "explicit_mesh_axis")

    def __init__(self, name, size, spmd_name=None, explicit_mesh_axis=None):
        self.name, self.size = name, size
        self.spmd_name, self.explicit_mesh_axis = spmd_name, explicit_mesh_axis

    def __repr__(self):
        return (f"AxisData(name={self.name!r}, size={self.size}, spmd_name={self.spmd_name!r}, "
                f"explicit_mesh_axis={self.explicit_mesh_axis!r})")


def _batch(size, vals, dims, *, _prim):
    name = batching_axis_names[-1] if batching_axis_names else None
    args = tree_util.tree_unflatten(_prim.in_tree, list(vals))
    in_dims = tree_util.tree_unflatten(_prim.in_tree, list(dims))
    ans, out_dims = _prim.batch(AxisData(name, size), args, in_dims)
    ans_flat = leaves_checked(_prim.out_tree, ans)
    return ans_flat, _prim.out_tree.flatten_up_to(out_dims)


register_batching(call_hi_primitive_p, _batch)
register_batching(call_hi_primitive_linearized_p, _refuse_jvp)


def is_float0(aval):
    return tangent_aval(aval).dtype == dtypes.float0


__all__ = ["AxisData", "GradAccum", "NullAccum", "ValAccum", "accumulate",
           "call_hi_primitive_linearized_p", "call_hi_primitive_p", "instantiate",
           "leaves_checked"]

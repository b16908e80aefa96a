"""Entry points built on VJPs, as JAX 0.10.2 has them: ``linear_transpose``,
``fwd_and_bwd`` (a pullback that is a pytree of its residuals, so it crosses ``jit``),
``custom_gradient`` (a ``custom_vjp`` whose backward rule the function returns) and
``closure_convert`` (a function's closed-over arrays made explicit arguments)."""
from __future__ import annotations

import functools
import weakref

from traxla import primitives as prims, tree_util
from traxla.ir import dtypes
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.tracer import Tracer, make_debug_info, trace_to_jaxpr
from traxla.tracer.interpret import eval_jaxpr, replaying
from traxla.ir.config import config
from traxla.runtime.cache import on_clear
from traxla.api.jit_caches import _trace_context
from traxla.tracer.values import concrete_aval
from traxla.autodiff.ad import (JVPTracer, Zero, _ensure_argnums, _flatten_fun, argnums_partial,
                   backward_pass, instantiate, linearize_flat, tangent_aval)
from traxla.autodiff.custom import custom_vjp
from traxla.autodiff.partial_eval import _dce_jaxpr
from traxla.api import jit
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.linear_call import linear_call_p


def _shaped(x):
    """The aval of an array, a tracer or anything with ``.shape`` and ``.dtype``."""
    if isinstance(x, Tracer) or hasattr(x, "__traxla_array__"):
        return x.aval
    if hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__"):
        return ShapedArray(tuple(x.shape), dtypes.canonicalize(x.dtype), False)
    return concrete_aval(x)


def _check_callable(fun):
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


# -- linear_transpose ------------------------------------------------------------------------

class _LinearTranspose:
    """The transpose of a linear function (a pytree of its closed-over constants)."""

    def __init__(self, jaxpr, consts, in_tree, in_avals, out_tree, out_avals):
        self.jaxpr, self.consts = jaxpr, consts
        self.in_tree, self.in_avals = in_tree, in_avals
        self.out_tree, self.out_avals = out_tree, out_avals

    def __call__(self, out_cotangent):
        out_cts, out_tree = tree_util.tree_flatten(out_cotangent)
        if out_tree != self.out_tree:
            raise TypeError("cotangent tree does not match function output, "
                            f"expected {self.out_tree} but got {out_tree}")
        got = [prims.aval_of(c) for c in out_cts]
        if any(g.shape != a.shape or g.dtype != a.dtype for g, a in zip(got, self.out_avals)):
            raise TypeError("cotangent type does not match function output, "
                            f"expected {list(self.out_avals)} but got {out_cts}")
        in_cts = backward_pass(ClosedJaxpr(self.jaxpr, list(self.consts)), out_cts)
        return tree_util.tree_unflatten(self.in_tree, [instantiate(c) for c in in_cts])


tree_util.register_pytree_node(
    _LinearTranspose,
    lambda t: (list(t.consts), (t.jaxpr, t.in_tree, t.in_avals, t.out_tree, t.out_avals)),
    lambda aux, consts: _LinearTranspose(aux[0], list(consts), *aux[1:]))


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun`` at the types of ``primals`` (arrays or
    anything with ``.shape`` and ``.dtype``); it returns a tuple shaped like ``primals``."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    primals_flat, in_tree = tree_util.tree_flatten(primals)
    in_avals = [_shaped(x) for x in primals_flat]
    store = []
    flat = _flatten_fun(lambda *a: fun(*a), in_tree, store)
    # traced as JAX's partial-eval trace does: equations that only forward an input (an
    # identity broadcast_in_dim) stay, and transpose (to a reduce_sum over no axes)
    closed = trace_to_jaxpr(flat, in_avals, make_debug_info(fun, "linear_transpose", ()),
                            forwards=False)
    jaxpr, _ = _dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars),
                          [True] * len(in_avals))
    out_avals = [v.aval for v in jaxpr.outvars]
    all_dtypes = [a.dtype for a in in_avals + out_avals]
    if not (all(dtypes.is_inexact(d) for d in all_dtypes)
            or all(dtypes.is_int(d) for d in all_dtypes)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or complex], "
                        "and integer -> integer functions, but got "
                        f"{[a.dtype for a in in_avals]} -> {[a.dtype for a in out_avals]}.")
    out_tree = dict(store)["out"]
    return _LinearTranspose(jaxpr, list(closed.consts), in_tree, in_avals, out_tree,
                            [tangent_aval(a) for a in out_avals])


# -- fwd_and_bwd ----------------------------------------------------------------------------

class _Pullback:
    """``vjp``'s backward function as a pytree whose leaves are the residuals (so that it
    can be returned from, and passed to, a jitted function)."""

    def __init__(self, lin_jaxpr, residuals, meta):
        self.lin_jaxpr, self.residuals, self.meta = lin_jaxpr, residuals, meta

    def __call__(self, ct):
        nonzero, zero_outs, in_avals, out_tree, in_tree = self.meta
        ct_flat, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(f"unexpected tree structure of the cotangent: the function's output "
                             f"has structure {out_tree}, the cotangent {ct_tree}.")
        cts = [c for c, z in zip(ct_flat, zero_outs) if not z]
        lin_cts = iter(backward_pass(ClosedJaxpr(self.lin_jaxpr, list(self.residuals)), cts))
        in_cts = [next(lin_cts) if nz else Zero(a) for nz, a in zip(nonzero, in_avals)]
        return tree_util.tree_unflatten(in_tree, [instantiate(c) for c in in_cts])


tree_util.register_pytree_node(
    _Pullback, lambda p: (list(p.residuals), (p.lin_jaxpr, p.meta)),
    lambda aux, res: _Pullback(aux[0], list(res), aux[1]))


def _vjp_pytree(fun, primals, has_aux):
    p_flat, p_tree = tree_util.tree_flatten(primals)
    store = []
    result = linearize_flat(_flatten_fun(fun, p_tree, store, has_aux), p_flat, "vjp",
                            has_aux=has_aux, is_vjp=True)
    outs, lin = result[0], result[1]
    out_tree = dict(store)["out"]
    in_avals = tuple(tangent_aval(prims.aval_of(p)) for p in p_flat)
    meta = (tuple(lin.nonzero), tuple(lin.zero_outs), in_avals, out_tree, p_tree)
    pullback = _Pullback(lin.jaxpr.jaxpr, list(lin.jaxpr.consts), meta)
    out = tree_util.tree_unflatten(out_tree, outs)
    if has_aux:
        return out, pullback, tree_util.tree_unflatten(dict(store)["aux"], result[2])
    return out, pullback


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """``(fwd, bwd)``: ``fwd(*args)`` is ``(fun(*args), residuals)`` (plus the auxiliary
    output with ``has_aux``) and ``bwd(residuals, ct)`` the cotangents of
    ``args[argnums]``; both jitted by default, so ``bwd`` compiles once."""
    _check_callable(fun)
    argnums = _ensure_argnums(argnums)

    def fwd(*args, **kwargs):
        f_partial, dyn_args = argnums_partial(fun, argnums, args, {})
        return _vjp_pytree(f_partial, dyn_args, has_aux)

    def bwd(f_vjp, outgrad):
        g = f_vjp(outgrad)
        return g[0] if isinstance(argnums, int) else g

    if jitted:
        fwd, bwd = jit(fwd), jit(bwd)
    return fwd, bwd


# -- custom_gradient ----------------------------------------------------------------------------

class _Residuals:
    """custom_gradient's residuals: the backward rule's jaxpr and the values it closes over."""

    def __init__(self, jaxpr, in_tree, out_tree, consts):
        self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts


tree_util.register_pytree_node(
    _Residuals, lambda r: (list(r.consts), (r.jaxpr, r.in_tree, r.out_tree)),
    lambda aux, consts: _Residuals(aux[0], aux[1], aux[2], list(consts)))


def custom_gradient(fun):
    """``fun(*args)`` returns ``(out, vjp_rule)``; the result computes ``out`` and uses
    ``vjp_rule(ct) -> tuple of input cotangents`` as its gradient (``tf.custom_gradient``)."""
    @custom_vjp
    def wrapped_fun(*args, **kwargs):
        ans, _ = fun(*args, **kwargs)
        return ans

    def fwd(*args, **kwargs):
        ans, rule = fun(*args, **kwargs)
        ans_flat, out_tree = tree_util.tree_flatten((ans,))
        store = []
        flat_rule = _flatten_fun(rule, out_tree, store)
        ct_avals = [tangent_aval(prims.aval_of(x)) for x in ans_flat]
        closed = trace_to_jaxpr(flat_rule, ct_avals,
                                make_debug_info(rule, "custom_gradient fwd", ()))
        in_tree = dict(store)["out"]
        return ans, _Residuals(closed.jaxpr, in_tree, out_tree, list(closed.consts))

    def bwd(res, cts):
        cts_flat, out_tree = tree_util.tree_flatten((cts,))
        if res.out_tree != out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
        cts_out = eval_jaxpr(res.jaxpr, res.consts, *cts_flat)
        cts_out = tree_util.tree_unflatten(res.in_tree, cts_out)
        if tree_util.treedef_is_leaf(res.in_tree):
            cts_out = (cts_out,)
        return cts_out

    wrapped_fun.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped_fun, fun)
    return wrapped_fun


# -- closure_convert ------------------------------------------------------------------------------

def _maybe_perturbed(x) -> bool:
    """JAX's heuristic: could ``x`` carry a nonzero tangent?"""
    if not isinstance(x, Tracer):
        return False
    if isinstance(x, JVPTracer) and type(x.tangent) is Zero:
        return _maybe_perturbed(x.primal)
    if type(x).__name__ == "DynamicJaxprTracer":
        return tangent_aval(x.aval).dtype != dtypes.float0
    if not isinstance(x, JVPTracer):
        inner = getattr(x, "val", None)
        return True if inner is None else _maybe_perturbed(inner)
    return True


# Converted once per function, argument types and trace context, as JAX's cache of
# ``_closure_convert_for_avals``: converting the same function again returns the same
# converted function, so a ``jit`` taking it as a static argument (``odeint``) hits its
# cache. A conversion whose hoisted values are tracers is not kept (they die with their trace).
_converted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CONVERTED_LIMIT = 64  # entries per function
on_clear(_converted.clear)


def closure_convert(fun, *example_args):
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)`` with the
    closed-over values that could be differentiated passed explicitly as ``consts``."""
    flat_args, in_tree = tree_util.tree_flatten(example_args)
    in_avals = tuple(prims.aval_of(x) for x in flat_args)
    if config.read("check_tracer_leaks"):
        return _closure_convert_for_avals(fun, in_tree, in_avals)[:2]
    key = (in_tree, in_avals, _trace_context(), replaying())
    try:
        per_fun = _converted.get(fun)
        hit = None if per_fun is None else per_fun.get(key)
    except TypeError:  # a function that cannot be weakly referenced or hashed: not kept
        return _closure_convert_for_avals(fun, in_tree, in_avals)[:2]
    if hit is not None:
        return hit[0], list(hit[1])
    converted, const_args, traced = _closure_convert_for_avals(fun, in_tree, in_avals)
    if not traced:
        per_fun = _converted.setdefault(fun, {})
        if len(per_fun) >= _CONVERTED_LIMIT:
            per_fun.clear()
        per_fun[key] = (converted, tuple(const_args))
    return converted, const_args


def _closure_convert_for_avals(fun, in_tree, in_avals):
    store = []
    flat = _flatten_fun(lambda *a: fun(*a), in_tree, store)
    closed = trace_to_jaxpr(flat, list(in_avals), make_debug_info(fun, "closure_convert", ()))
    out_tree = dict(store)["out"]
    which = [_maybe_perturbed(c) for c in closed.consts]
    closure_consts = [c for c, w in zip(closed.consts, which) if not w]
    const_args = [c for c, w in zip(closed.consts, which) if w]
    jaxpr = closed.jaxpr
    num_consts = len(const_args)

    def converted_fun(*args_hconsts):
        num_args = len(args_hconsts) - num_consts
        args, hoisted = args_hconsts[:num_args], iter(args_hconsts[num_args:])
        kept = iter(closure_consts)
        consts = [next(hoisted) if w else next(kept) for w in which]
        all_args, in_tree2 = tree_util.tree_flatten(tuple(args))
        if in_tree != in_tree2:
            raise TypeError("The inputs to the closure produced by closure_convert must have the "
                            "same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got {in_tree2}")
        return tree_util.tree_unflatten(out_tree, eval_jaxpr(jaxpr, consts, *all_args))

    return converted_fun, const_args, any(isinstance(c, Tracer) for c in closed.consts)




# -- linear_call ---------------------------------------------------------------------------------

def _memoize(thunk):
    cell = []

    def memoized():
        if not cell:
            cell.append(thunk())
        return cell[0]
    return memoized


def _initial_style(fun, avals, what):
    """``fun`` traced on ``avals`` with its constants as leading inputs: (jaxpr, consts)."""
    closed = trace_to_jaxpr(fun, avals, make_debug_info(fun, what, ()))
    j = closed.jaxpr
    jaxpr = ClosedJaxpr(Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns,
                              j.debug_info), [])
    return jaxpr, list(closed.consts)


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """``fun(residual_args, linear_args)``, linear in ``linear_args``, transposed (by
    ``vjp``/``grad``/``linear_transpose``) with ``fun_transpose(residual_args, cts)``
    instead of by transposing ``fun``."""
    operands_res, res_tree = tree_util.tree_flatten(residual_args)
    operands_lin, lin_tree = tree_util.tree_flatten(linear_args)
    store = {}
    n_res = len(operands_res)  # (the rules outlive this call: they hold no traced operand)

    def f(*xs):
        res = tree_util.tree_unflatten(res_tree, xs[:n_res])
        lin = tree_util.tree_unflatten(lin_tree, xs[n_res:])
        leaves, store["out_tree"] = tree_util.tree_flatten(fun(res, lin))
        return leaves

    res_avals = [prims.aval_of(x) for x in operands_res]
    lin_avals = [prims.aval_of(x) for x in operands_lin]
    callee, f_consts = _initial_style(f, res_avals + lin_avals, "linear_call fun")
    out_avals = list(callee.out_avals)

    def t(*xs):
        res = tree_util.tree_unflatten(res_tree, xs[:n_res])
        cts = tree_util.tree_unflatten(store["out_tree"], xs[n_res:])
        leaves, store["t_out_tree"] = tree_util.tree_flatten(fun_transpose(res, cts))
        return leaves

    @_memoize
    def transpose_thunk():
        t_jaxpr, t_consts = _initial_style(t, res_avals + out_avals, "linear_call fun_transpose")
        if store["t_out_tree"] != lin_tree:
            raise TypeError("transpose output pytree structure must match that of linear inputs, "
                            f"got output structure {store['t_out_tree']} and input structure "
                            f"{lin_tree}.")
        return t_jaxpr, t_consts

    out = linear_call_p.bind(*f_consts, *operands_res, *operands_lin, callee=callee,
                             transpose_thunk=transpose_thunk, num_callee_consts=len(f_consts),
                             num_res=len(operands_res))
    return tree_util.tree_unflatten(store["out_tree"], out)


__all__ = ["linear_transpose", "fwd_and_bwd", "custom_gradient", "closure_convert",
           "linear_call"]

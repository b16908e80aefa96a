"""``custom_jvp`` and ``custom_vjp``: functions with user-supplied derivative rules.

A custom function runs its primal function as ordinary Python whenever no trace
needs its rule:

- evaluated eagerly, it just calls the function;
- under a ``JVPTrace`` (jvp, grad, linearize...) it applies the user's rule to the
  (primal, tangent) pairs: the JVP rule for ``custom_jvp``; for ``custom_vjp`` the
  ``fwd`` rule computes the outputs and residuals in the enclosing trace, and the
  tangent outputs come from a ``custom_lin`` equation in the linear jaxpr whose
  transpose rule calls ``bwd`` (forward mode of a ``custom_vjp`` function is refused,
  as in JAX);
- under a ``BatchTrace`` it vmaps the function and its rules and goes on in the
  enclosing trace;
- staged into a jaxpr (jit, make_jaxpr...) it records one ``custom_jvp_call`` /
  ``custom_vjp_call`` equation carrying the traced primal function and the rules, so
  that a later transformation of that jaxpr (grad of a jit...) still applies them.

The three primitives live here, with their typing, printing, lowering (the primal
jaxpr inlined), batching and AD rules registered in each stage's registry.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from traxla import primitives as prims, tree_util
from traxla.autodiff.custom_args import (CustomVJPException, _closure_error, _resolve_kwargs,
                                         _split_nondiff)
from traxla.autodiff.custom_refs import _check_no_aliased_refs, _is_ref, _refs_kept_by_bwd
from traxla.batching.batch_trace import BatchTrace, BatchTracer, bdim_at_front, register_batching
from traxla.autodiff.custom_batch import (OutDims, batched_bwd, batched_fun, batched_fwd,
                                          batched_jvp, front_inputs)
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal
from traxla.ir.literals import float0_zeros
from traxla.ir.rules.refs import is_ref_aval
from traxla.ir.primitive import Primitive, def_printing, def_typing
from traxla.ir.sharding_rules import register_sharding
from traxla.ir.traceback_util import api_boundary
from traxla.lowering.registry import register_lowering
from traxla.tracer import DynamicJaxprTracer, EvalTrace, Tracer, make_debug_info, trace_to_jaxpr
from traxla.tracer.traces import current_trace, set_current_trace
from traxla.tracer.interpret import eval_jaxpr
from traxla.autodiff.ad import (JVPTrace, JVPTracer, RoutingTrace, Zero, add_tangents, instantiate,
                   jvp_rules, linearize_rules, tangent_aval, transpose_rules, zero_of, zeros_like_aval)
from traxla.lowering.mlir import constant
from traxla.lowering.module import emit_jaxpr
from traxla.batching import vmap
from traxla.tracer.values import is_concrete
from traxla.autodiff.symbolic_zeros import SymbolicZero, CustomVJPPrimal
from traxla.autodiff.custom_subfuns import CustomJVPCallPrimitive, rule_of_lifted


custom_jvp_call_p = CustomJVPCallPrimitive("custom_jvp_call")
custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
# the linear part of a linearized custom_vjp call: residuals and input tangents -> output
# tangents; transposed by calling the user's bwd rule
custom_lin_p = Primitive("custom_lin", multiple_results=True)


class _Rule:
    """A rule (Python callable) carried as an equation parameter; prints as the user's
    function name, as JAX prints ``jvp=f_jvp``."""

    __slots__ = ("fn", "name", "num_lifted")

    def __init__(self, fn, name, num_lifted=0):
        self.fn = fn
        self.name = name
        # leading operands that are traced nondiff arguments: consts of the equation, as in
        # JAX (which closes over them), which the rule still takes first
        self.num_lifted = num_lifted

    def __call__(self, *args):
        return self.fn(*args)

    def __str__(self):
        return self.name

    __repr__ = __str__


class _SymbolicRule(_Rule):
    """A custom_vjp rule defined with ``symbolic_zeros=True``: ``fwd`` is told which
    inputs are perturbed, ``bwd`` gets zero cotangents as ``SymbolicZero``s."""

    __slots__ = ()
    symbolic_zeros = True

    def __call__(self, *args, perturbed=None):
        return self.fn(*args) if perturbed is None else self.fn(*args, perturbed=perturbed)


def _user_values(xs):
    """What the user's function and rules get: a constant of the jaxpr being replayed is a
    ``Literal`` inside traxla, handed to them as an Array (never the Literal itself)."""
    return [prims._lift(x) if type(x) is Literal else x for x in xs]


def _name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _is_float0_aval(aval):
    return tangent_aval(aval).dtype == dtypes.float0


def _float0_zeros(aval):
    return float0_zeros(aval.shape)


def _aval(x):
    return prims.aval_of(x)


# -- typing, printing, lowering of the primitives -------------------------------------------------

def _call_typing(*avals, call_jaxpr, **_):
    expected = call_jaxpr.in_avals
    if len(avals) != len(expected) or any(a.shape != e.shape or a.dtype != e.dtype
                                          for a, e in zip(avals, expected)):
        raise TypeError(f"custom call takes {[e.str_short() for e in expected]} but is given "
                        f"{[a.str_short() for a in avals]}.")
    return list(call_jaxpr.out_avals)


def _custom_lin_typing(*avals, out_avals, **_):
    return list(out_avals)


def_typing(custom_jvp_call_p, _call_typing)
def_typing(custom_vjp_call_p, _call_typing)
# explicitly sharded operands: the results are typed as the traced function's (as jit's)
for _p in (custom_jvp_call_p, custom_vjp_call_p):
    register_sharding(_p, lambda in_avals, outs, *, call_jaxpr, **_: [
        a.sharding_type for a in call_jaxpr.out_avals])
def_typing(custom_lin_p, _custom_lin_typing)
# the results' types (explicit shardings included) are those of the traced function's
for _p in (custom_jvp_call_p, custom_vjp_call_p, custom_lin_p):
    register_sharding(_p, lambda *avals, **_: [o.sharding_type for o in avals[1]])
def_printing(custom_jvp_call_p, first=("name",), hide_if_empty=("num_consts",))
def_printing(custom_vjp_call_p, first=("name",), hide_if_empty=("num_consts",))
def_printing(custom_lin_p, hide=("out_avals", "in_avals", "lin_mask", "out_mask"))


def _inline_lowering(ctx, *args, call_jaxpr, **_):
    consts = [constant(np.asarray(c)) for c in call_jaxpr.consts]
    return emit_jaxpr(ctx.module, call_jaxpr.jaxpr, consts, list(args))


def _custom_lin_lowering(ctx, *args, **_):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


register_lowering(custom_jvp_call_p, _inline_lowering)
register_lowering(custom_vjp_call_p, _inline_lowering)
register_lowering(custom_lin_p, _custom_lin_lowering)


# -- staging: trace the primal function into the equation --------------------------------------------

def _trace_call(fun, args, what):
    """The jaxpr of ``fun`` on ``args``' types with every constant it closes over (tracers of
    enclosing traces and arrays alike) moved to leading operands, as JAX's
    ``convert_constvars_jaxpr``: ``(closed, consts)``, ``closed`` closing over nothing."""
    closed = trace_to_jaxpr(fun, [_aval(a) for a in args], make_debug_info(fun, what, ()))
    jaxpr = closed.jaxpr
    if not jaxpr.constvars:
        return closed, []
    new = Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns,
                jaxpr.debug_info)
    return ClosedJaxpr(new, []), list(closed.consts)


def _fun_of_jaxpr(call_jaxpr, consts):
    return lambda *args: eval_jaxpr(call_jaxpr, (), *consts, *args)


# -- custom_jvp: binding -------------------------------------------------------------------------------

def bind_custom_jvp(fun, jvp, args, name, call_jaxpr=None, consts=()):
    """Applies a custom_jvp function in the current trace. ``fun(*args)`` returns the flat
    outputs; ``jvp(primals, tangents)`` returns ``(outs, tangent_outs)``, with ``None`` as the
    tangent of an integer input. ``call_jaxpr`` (closing over ``consts``) is ``fun`` already
    traced, when the call comes from a jaxpr equation."""
    trace = current_trace()
    if isinstance(trace, EvalTrace):
        return list(fun(*args))
    if isinstance(trace, RoutingTrace):
        tt = trace.tangent_trace
        if any(type(a) is DynamicJaxprTracer and a._trace is tt for a in args):
            # applied to tangents (in a rule of user code): linear code, which is transposed,
            # never differentiated again, so its body is staged without the rule (as JAX's
            # JaxprTrace.process_custom_jvp_call inlines it)
            with set_current_trace(tt):
                return list(fun(*args))
        with set_current_trace(trace.parent):
            return bind_custom_jvp(fun, jvp, args, name, call_jaxpr, consts)
    if isinstance(trace, JVPTrace):
        return _custom_jvp_jvp(trace, fun, jvp, args, name, call_jaxpr, consts)
    if isinstance(trace, BatchTrace):
        vals, dims = zip(*[trace.to_val_dim(a) for a in args]) if args else ((), ())
        with set_current_trace(trace.parent):
            if all(d is None for d in dims):
                return bind_custom_jvp(fun, jvp, list(vals), name, call_jaxpr, consts)
            outs, out_dims = _batched_custom_jvp(trace.axis_size, fun, jvp, list(vals),
                                                 list(dims), name)
        return [o if d is None else BatchTracer(trace, o, d) for o, d in zip(outs, out_dims)]
    # staging (or any other trace): one custom_jvp_call equation
    if call_jaxpr is None:
        call_jaxpr, consts = _trace_call(fun, args, "custom_jvp")
    return custom_jvp_call_p.bind(*consts, *args, call_jaxpr=call_jaxpr, jvp=jvp,
                                  num_consts=len(consts) + getattr(jvp, "num_lifted", 0),
                                  symbolic_zeros=isinstance(jvp, _SymbolicRule), name=name)


def bind_with_subfuns(fun, jvp, args, *, symbolic_zeros=False):
    """``custom_jvp_call_p.bind(*args, subfuns=(fun, jvp), ...)``, JAX's spelling (see
    ``custom_subfuns``): ``fun`` and ``jvp`` are ``WrappedFun``s in JAX's convention."""
    rule = (_SymbolicRule if symbolic_zeros else _Rule)(rule_of_lifted(jvp), _name(jvp))
    return bind_custom_jvp(lambda *xs: list(fun.call_wrapped(*xs)), rule, list(args),
                           _name(fun))


def _custom_jvp_jvp(trace, fun, jvp, args, name, call_jaxpr, consts):
    pts = [trace.to_pt(a) for a in args]
    primals = [p for p, _ in pts]
    tangents = [t for _, t in pts]
    if all(type(t) is Zero for t in tangents):
        with set_current_trace(trace.parent):
            return bind_custom_jvp(fun, jvp, primals, name, call_jaxpr, consts)
    with set_current_trace(trace.rule_trace):
        keep = isinstance(jvp, _SymbolicRule)
        ts = [None if _is_float0_aval(_aval(p)) else t if keep and type(t) is Zero
              else instantiate(t) for p, t in zip(primals, tangents)]
        outs, touts = jvp(primals, ts)
    touts = [zero_of(o) if t is None or _is_float0_aval(_aval(o)) else t
             for o, t in zip(outs, touts)]
    if trace.tangent_trace is not None:  # linearizing: a constant tangent is zero, as in JAX
        touts = [trace.known_to_zero(o, t) for o, t in zip(outs, touts)]
    return [JVPTracer(trace, o, t) for o, t in zip(outs, touts)]


def _batched_custom_jvp(size, fun, jvp, vals, dims, name):
    """In the current trace (the batch trace's parent): the custom function on batched
    values, its primal function and rule batched (``custom_batch``); returns the outputs
    and their batch dims (None: unbatched)."""
    vals, dims = front_inputs(vals, dims)
    out = OutDims()
    rule = _Rule(batched_jvp(size, jvp, dims, out), str(jvp), getattr(jvp, "num_lifted", 0))
    outs = bind_custom_jvp(batched_fun(size, fun, dims, out), rule, vals, name)
    return outs, out.last


# -- custom_jvp: the primitive's rules (when re-evaluating a jaxpr) ---------------------------------------

def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, symbolic_zeros, name):
    num_consts -= getattr(jvp, "num_lifted", 0)  # (lifted nondiff arguments go to the rule)
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise _closure_error("custom_jvp")
    consts, args = primals[:num_consts], primals[num_consts:]
    ts = [None if _is_float0_aval(_aval(p)) else instantiate(t)
          for p, t in zip(args, tangents[num_consts:])]
    outs, touts = jvp(list(args), ts)
    touts = [zero_of(o) if t is None or _is_float0_aval(_aval(o)) else t
             for o, t in zip(outs, touts)]
    return list(outs), touts


def _custom_jvp_call_batch(size, vals, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros, name):
    num_consts -= getattr(jvp, "num_lifted", 0)  # (lifted nondiff arguments go to the rule)
    if any(d is not None for d in dims[:num_consts]):
        raise _closure_error("custom_jvp")
    consts = vals[:num_consts]
    fun = _fun_of_jaxpr(call_jaxpr, consts)
    return _batched_custom_jvp(size, fun, jvp, list(vals[num_consts:]), list(dims[num_consts:]),
                               name)


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
register_batching(custom_jvp_call_p, _custom_jvp_call_batch)


# -- custom_vjp: binding ---------------------------------------------------------------------------------

def bind_custom_vjp(fun, fwd, bwd, args, name, call_jaxpr=None, consts=()):
    """Applies a custom_vjp function in the current trace. ``fun(*args)`` returns the flat
    outputs, ``fwd(*args)`` the pair ``(outs, residual leaves)`` and ``bwd(res, cts)`` one
    cotangent (an array) per input."""
    trace = current_trace()
    if isinstance(trace, EvalTrace):
        return list(fun(*args))
    if isinstance(trace, RoutingTrace):
        tt = trace.tangent_trace
        target = tt if any(type(a) is DynamicJaxprTracer and a._trace is tt for a in args) \
            else trace.parent
        with set_current_trace(target):
            return bind_custom_vjp(fun, fwd, bwd, args, name, call_jaxpr, consts)
    if isinstance(trace, JVPTrace):
        pts = [trace.to_pt(a) for a in args]
        primals = [p for p, _ in pts]
        tangents = [t for _, t in pts]
        if all(type(t) is Zero for t in tangents):
            with set_current_trace(trace.parent):
                return bind_custom_vjp(fun, fwd, bwd, primals, name, call_jaxpr, consts)
        if trace.tangent_trace is None:
            with set_current_trace(trace.parent):
                _run_fwd_and_refuse(fwd, primals, tangents)
        with set_current_trace(trace.rule_trace):
            outs, touts = _custom_vjp_linearize(trace, primals, tangents, fwd, bwd)
        return [JVPTracer(trace, o, t) for o, t in zip(outs, touts)]
    if isinstance(trace, BatchTrace):
        vals, dims = zip(*[trace.to_val_dim(a) for a in args]) if args else ((), ())
        with set_current_trace(trace.parent):
            if all(d is None for d in dims):
                return bind_custom_vjp(fun, fwd, bwd, list(vals), name, call_jaxpr, consts)
            if any(_is_ref(a) for a in args):
                raise NotImplementedError(
                    f"vmap of the custom_vjp function {name} with a Ref argument is not "
                    "supported: call it on the Ref's value, or vmap outside a jit.")
            outs, out_dims = _batched_custom_vjp(trace.axis_size, fun, fwd, bwd, list(vals),
                                                 list(dims), name)
        return [o if d is None else BatchTracer(trace, o, d) for o, d in zip(outs, out_dims)]
    if call_jaxpr is None:
        call_jaxpr, consts = _trace_call(fun, args, "custom_vjp")
    return custom_vjp_call_p.bind(*consts, *args, call_jaxpr=call_jaxpr, fwd=fwd, bwd=bwd,
                                  num_consts=len(consts), symbolic_zeros=isinstance(fwd, _SymbolicRule),
                                  name=name)


def _custom_vjp_linearize(trace, primals, tangents, fwd, bwd):
    """Under linearize: ``fwd`` in the enclosing trace, one ``custom_lin`` equation
    (residuals, input tangents -> output tangents) in the linear jaxpr."""
    with set_current_trace(trace.parent):
        if isinstance(fwd, _SymbolicRule):
            outs, res = fwd(*primals, perturbed=[type(t) is not Zero for t in tangents])
        else:
            outs, res = fwd(*primals)
    if any(_is_ref(r) for r in res):  # bwd gets them back where they were
        res, bwd = _refs_kept_by_bwd(res, bwd)
    in_avals = tuple(_aval(p) for p in primals)
    lin_mask = tuple(not is_ref_aval(a) and not _is_float0_aval(a) for a in in_avals)
    out_avals = tuple(tangent_aval(_aval(o)) for o in outs)
    out_mask = tuple(a.dtype != dtypes.float0 for a in out_avals)
    if not any(out_mask):
        return outs, [zero_of(o) for o in outs]
    with set_current_trace(trace.tangent_trace):
        lin_in = [instantiate(t) for t, m in zip(tangents, lin_mask) if m]
        touts = custom_lin_p.bind(*res, *lin_in, num_res=len(res), bwd=bwd,
                                  out_avals=tuple(a for a, m in zip(out_avals, out_mask) if m),
                                  in_avals=in_avals, lin_mask=lin_mask, out_mask=out_mask)
    touts = iter(touts)
    return outs, [next(touts) if m else zero_of(o) for o, m in zip(outs, out_mask)]


def _batched_custom_vjp(size, fun, fwd, bwd, vals, dims, name):
    """The primal function and both rules batched (``custom_batch``): returns the outputs
    and their batch dims (None: unbatched)."""
    vals, dims = front_inputs(vals, dims)
    out = OutDims()
    outs = bind_custom_vjp(batched_fun(size, fun, dims, out),
                           _Rule(batched_fwd(size, fwd, dims, out), str(fwd)),
                           _Rule(batched_bwd(size, bwd, dims, out), str(bwd)), vals, name)
    return outs, out.last


# -- custom_vjp: the primitives' rules --------------------------------------------------------------------

def _custom_vjp_call_jvp(primals, tangents, *, fwd, **params):
    _run_fwd_and_refuse(fwd, primals, tangents)


def _run_fwd_and_refuse(fwd, primals, tangents):
    """jvp of a custom_vjp function: JAX runs the forward rule first; the custom_lin it
    binds then refuses."""
    if isinstance(fwd, _SymbolicRule):
        fwd(*primals, perturbed=[type(t) is not Zero for t in tangents])
    else:
        fwd(*primals)
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_vjp_call_linearize(trace, primals, tangents, *, call_jaxpr, fwd, bwd, num_consts,
                               symbolic_zeros, name):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise CustomVJPException()
    return _custom_vjp_linearize(trace, list(primals[num_consts:]), list(tangents[num_consts:]),
                                 fwd, bwd)


def _custom_vjp_call_batch(size, vals, dims, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros,
                           name):
    if any(d is not None for d in dims[:num_consts]):
        raise _closure_error("custom_vjp")
    fun = _fun_of_jaxpr(call_jaxpr, vals[:num_consts])
    return _batched_custom_vjp(size, fun, fwd, bwd, list(vals[num_consts:]),
                               list(dims[num_consts:]), name)


def _custom_lin_transpose(cts, *invals, num_res, bwd, out_avals, in_avals, lin_mask, out_mask):
    # residuals that were concrete scalars are literals of the linear jaxpr: the user's
    # bwd gets arrays
    res = [prims._lift(r) if isinstance(r, Literal) else r
           for r in invals[:num_res]]
    cts = iter(cts)
    full_cts = []
    keep_zeros = isinstance(bwd, _SymbolicRule)
    for m in out_mask:
        if m:
            ct = next(cts)
            full_cts.append(ct if keep_zeros and type(ct) is Zero else instantiate(ct))
        else:
            full_cts.append(None)
    in_cts = bwd(res, full_cts)
    out = [None] * num_res
    for ct, m, aval in zip(in_cts, lin_mask, in_avals):
        if m:
            out.append(Zero(tangent_aval(aval)) if ct is None else ct)
    return out


def _custom_lin_batch(size, vals, dims, *, num_res, bwd, out_avals, in_avals, lin_mask, out_mask):
    vals = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]

    def batched(aval):
        return ShapedArray((size,) + tuple(aval.shape), aval.dtype, aval.weak_type)

    def bbwd(res, cts):
        return list(vmap(lambda r, c: list(bwd(r, c)), in_axes=(0, 0), out_axes=0)(
            list(res), list(cts)))

    outs = custom_lin_p.bind(*vals, num_res=num_res, bwd=_Rule(bbwd, str(bwd)),
                             out_avals=tuple(map(batched, out_avals)),
                             in_avals=tuple(map(batched, in_avals)), lin_mask=lin_mask,
                             out_mask=out_mask)
    return outs, [0] * len(outs)


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
jvp_rules[custom_lin_p] = _custom_vjp_call_jvp
register_batching(custom_lin_p, _custom_lin_batch)
linearize_rules[custom_vjp_call_p] = _custom_vjp_call_linearize
register_batching(custom_vjp_call_p, _custom_vjp_call_batch)
transpose_rules[custom_lin_p] = _custom_lin_transpose


# -- the user-facing decorators ------------------------------------------------------------------------

def _stop_gradient_tracers(tree):
    return tree_util.tree_map(
        lambda x: prims.stop_gradient_raw(x) if isinstance(x, Tracer) else x, tree)


def _check_leaf(x, what):
    if not (isinstance(x, Tracer) or is_concrete(x)):
        raise TypeError(f"{what}: value {x!r} of type {type(x)} is not a valid JAX type.")
    return x


def _type_str(aval):
    return aval.str_short(short_dtypes=False)


class _CustomFunction:
    """What custom_jvp and custom_vjp share: the wrapped function, its non-differentiable
    arguments, and binding as a method."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        argnums = set(nondiff_argnums)
        if nondiff_argnames:  # JAX: the names' positions in ``fun``'s signature
            params = list(inspect.signature(fun).parameters)
            for name in ((nondiff_argnames,) if isinstance(nondiff_argnames, str)
                         else nondiff_argnames):
                if name in params:
                    argnums.add(params.index(name))
        self.nondiff_argnums = tuple(sorted(argnums))

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __getattr__(self, name):  # JAX's forward_attr: a custom_vmap inside gives def_vmap
        if name.startswith("def") and "fun" in self.__dict__:
            return getattr(self.fun, name)
        raise AttributeError(name)


class custom_jvp(_CustomFunction):
    """Set up a JAX-transformable function for a custom JVP rule definition.

    ``f = custom_jvp(fun)``; ``f.defjvp(lambda primals, tangents: (out, tangent_out))`` (or
    ``f.defjvps(*per_argument_rules)``). With ``nondiff_argnums``, those arguments are passed
    first to the rule and get no tangents."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps):
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            zeros = tree_util.tree_map(zero_of, primal_out)
            all_tangents_out = [rule(t, primal_out, *primals) if rule else zeros
                                for t, rule in zip(tangents, jvps)]
            tangent_out = tree_util.tree_map(_sum_tangents, primal_out, *all_tangents_out)
            return primal_out, tangent_out

        self.defjvp(jvp)

    @api_boundary
    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        if self.nondiff_argnums:  # as JAX: a traced nondiff argument gets no gradient
            args = tuple(_stop_gradient_tracers(a) if i in self.nondiff_argnums else a
                         for i, a in enumerate(args))
        static, dyn, merge = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_util.tree_flatten(tuple(dyn))
        leaves = [_check_leaf(x, f"custom_jvp function {name} argument") for x in leaves]
        # Traced nondiff arguments become leading operands (JAX closes over them, and they
        # print as consts), so that jit, vmap and grad of the call see them as values.
        static_leaves, static_tree = tree_util.tree_flatten(static)
        lifted_at = [i for i, x in enumerate(static_leaves) if isinstance(x, Tracer)]
        n_lifted = len(lifted_at)
        leaves = [static_leaves[i] for i in lifted_at] + leaves

        def static_of(lifted):
            if not n_lifted:
                return static
            vals = list(static_leaves)
            for i, v in zip(lifted_at, lifted):
                vals[i] = v
            return tree_util.tree_unflatten(static_tree, vals)

        store = {}
        fun, rule = self.fun, self.jvp
        rule_name = _name(rule)

        def flat_fun(*xs):
            lifted, xs = xs[:n_lifted], xs[n_lifted:]
            out = fun(*merge(tree_util.tree_unflatten(in_tree, _user_values(xs)),
                             static_of(lifted)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            store.setdefault("out_tree", out_tree)
            return out_leaves

        symbolic = self.symbolic_zeros

        def flat_jvp(primals, tangents):
            static_vals = static_of(primals[:n_lifted])
            primals, tangents = primals[n_lifted:], tangents[n_lifted:]
            ts = [_float0_zeros(_aval(p)) if t is None else t for p, t in zip(primals, tangents)]
            if symbolic:  # the rule sees zero tangents as SymbolicZero, and may return them
                ts = [SymbolicZero(t.aval) if type(t) is Zero else t for t in ts]
            p_tree = tree_util.tree_unflatten(in_tree, _user_values(primals))
            t_tree = tree_util.tree_unflatten(in_tree, _user_values(ts))
            out = rule(*static_vals, p_tree, t_tree)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"Custom JVP rule {rule_name} for function {name} must produce a "
                                "pair (list or tuple of length two) representing primal and "
                                f"tangent outputs, but got {out}.")
            primal_out, tangent_out = out
            p_leaves, p_tree_out = tree_util.tree_flatten(primal_out)
            t_leaves, t_tree_out = tree_util.tree_flatten(tangent_out)
            t_leaves = [Zero(t.aval) if type(t).__name__ == "SymbolicZero"
                        else t if symbolic and type(t) is Zero else instantiate(t)
                        for t in t_leaves]
            store.setdefault("out_tree", p_tree_out)
            if p_tree_out != store["out_tree"]:
                raise TypeError(f"Custom JVP rule {rule_name} for function {name} must produce "
                                "primal outputs with the same container (pytree) structure as the "
                                f"function's output, but got {p_tree_out} and "
                                f"{store['out_tree']}.")
            if t_tree_out != p_tree_out:
                raise TypeError(f"Custom JVP rule {rule_name} for function {name} must produce "
                                "primal and tangent outputs with equal container (pytree) "
                                f"structures, but got {p_tree_out} and {t_tree_out} respectively.")
            for p, t in zip(p_leaves, t_leaves):
                pa, ta = _aval(p), (t.aval if type(t) is Zero else _aval(t))
                expected = tangent_aval(pa)
                if expected.dtype == dtypes.float0:
                    continue
                if ta.shape != expected.shape or ta.dtype != expected.dtype:
                    raise TypeError(
                        "Custom JVP rule must produce primal and tangent outputs with "
                        f"corresponding shapes and dtypes. Expected {_type_str(expected)} "
                        f"(tangent type of {_type_str(pa)}) but got {_type_str(ta)}.")
            return p_leaves, t_leaves

        outs = bind_custom_jvp(flat_fun, (_SymbolicRule if symbolic else _Rule)(
            flat_jvp, rule_name, n_lifted), leaves, name)
        if "out_tree" not in store:  # the rule ran without the function: trace its tree
            flat_fun(*leaves)
        return tree_util.tree_unflatten(store["out_tree"], outs)


def _sum_tangents(_, x, *xs):
    return functools.reduce(add_tangents, xs, x)


class custom_vjp(_CustomFunction):
    """Set up a JAX-transformable function for a custom VJP rule definition.

    ``f = custom_vjp(fun)``; ``f.defvjp(fwd, bwd)`` with ``fwd(*args) -> (out, residuals)``
    and ``bwd(residuals, out_cotangent) -> tuple of input cotangents`` (``bwd`` first takes
    the ``nondiff_argnums`` arguments)."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError(
                "remat optimization for custom_vjp does not support symbolic zeros")
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    @api_boundary
    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        static, dyn, merge = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_util.tree_flatten(tuple(dyn))
        # a Ref argument is an operand like the others (staged, it is a ref input of the
        # traced function, as in JAX), but it is not differentiated: its cotangent is None
        is_ref = [_is_ref(x) for x in leaves]
        for x, r in zip(leaves, is_ref):
            if not r:
                _check_leaf(x, f"custom_vjp function {name} argument")
        _check_no_aliased_refs(self.fun, dyn, leaves, is_ref)

        # The rules below outlive this call (the staged equation keeps them): they hold
        # the arguments' structure, never the traced arguments themselves.
        dyn_tree = tree_util.tree_structure(tuple(dyn))
        arg_trees = [tree_util.tree_structure(a) for a in dyn]

        def rebuild(xs):
            return merge(tree_util.tree_unflatten(in_tree, _user_values(xs)))
        in_avals = [None if r else tangent_aval(_aval(x)) for x, r in zip(leaves, is_ref)]
        store = {}
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        fwd_name, bwd_name = _name(fwd), _name(bwd)
        symbolic = getattr(self, "symbolic_zeros", False)

        def flat_fun(*xs):
            out = fun(*rebuild(xs))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            store.setdefault("out_tree", out_tree)
            return out_leaves

        def flat_fwd(*xs, perturbed=None):
            if symbolic:
                flags = [True] * len(xs) if perturbed is None else perturbed
                xs = [CustomVJPPrimal(x, bool(p)) for x, p in zip(_user_values(xs), flags)]
            pair = fwd(*rebuild(xs))
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
                    "(list or tuple of length two) where the first element represents the primal "
                    f"output (equal to those of the custom_vjp-decorated function {name}) and the "
                    "second element represents residuals (i.e. values stored from the forward "
                    "pass for use on the backward pass), but instead of a pair the fwd rule "
                    f"{fwd_name} produced {pair}.")
            out, res = pair
            out_leaves, out_tree = tree_util.tree_flatten(out)
            store.setdefault("out_tree", out_tree)
            if out_tree != store["out_tree"]:
                raise TypeError(f"Custom VJP fwd rule {fwd_name} for function {name} must produce "
                                "primal outputs with the same container (pytree) structure as the "
                                f"function, but got {out_tree} and {store['out_tree']}.")
            res_leaves, res_tree = tree_util.tree_flatten(res)
            store["res_tree"] = res_tree
            for r in res_leaves:
                if not _is_ref(r):
                    _check_leaf(r, f"Custom VJP fwd rule {fwd_name} residual")
                elif not any(r is x for x in xs):  # a ref shared with bwd: an argument only
                    raise ValueError(f"custom_vjp fwd function {fwd_name} returned a mutable "
                                     f"array reference of type {_aval(r).str_short()} that "
                                     "was not an argument.")
            # as JAX's: a Python scalar residual reaches bwd as itself (``perturbed`` flags
            # stay bools), not as an array the program carries
            store["py_res"] = [r if type(r) in _PY_SCALARS else _CARRIED for r in res_leaves]
            return out_leaves, [r for r in res_leaves if type(r) not in _PY_SCALARS]

        def flat_bwd(res_leaves, cts):
            carried = iter(res_leaves)
            res_leaves = [next(carried) if r is _CARRIED else r for r in store["py_res"]]
            res = tree_util.tree_unflatten(store["res_tree"], res_leaves)
            out_avals = store.get("out_avals")
            cts = [c for c in cts]
            if symbolic:
                cts = [SymbolicZero(c.aval) if type(c) is Zero else c for c in cts]
            ct = tree_util.tree_unflatten(store["out_tree"], [
                _float0_zeros(a) if c is None else c for c, a in
                zip(cts, out_avals if out_avals is not None else [None] * len(cts))])
            in_cts = bwd(*static, res, ct)
            if isinstance(in_cts, list) and len(in_cts) == len(arg_trees):
                in_cts = tuple(in_cts)
            # As JAX's _flatten_bwd: the output is a prefix of the arguments' structure
            # (None standing for zeros of its whole subtree, a leaf repeated over the leaves
            # of its subtree, nothing where the argument is None)
            flat = []

            def append(x, d):
                flat.extend([x] * tree_util.tree_structure(d).num_leaves)
                return x
            dummy = tuple(tree_util.tree_unflatten(t, [object()] * t.num_leaves)
                          for t in arg_trees)
            try:
                if not isinstance(in_cts, tuple):
                    raise ValueError
                tree_util.tree_map(append, in_cts, dummy, is_leaf=lambda x: x is None)
            except ValueError:
                got = tree_util.tree_structure(in_cts)
                raise TypeError(
                    "Custom VJP bwd rule must produce an output with the same container (pytree) "
                    "structure as the args tuple of the primal function, and in particular must "
                    "produce a tuple of length equal to the number of arguments to the primal "
                    f"function, but got bwd output structure {got} for primal input structure "
                    f"{dyn_tree}.") from None
            out = []
            for k, (c, a) in enumerate(zip(flat, in_avals)):
                if a is None:  # a Ref input: not differentiated
                    out.append(None)
                    continue
                if a.dtype == dtypes.float0:  # an integer input: no cotangent
                    out.append(None)
                    continue
                if c is None or type(c).__name__ == "SymbolicZero":
                    out.append(zeros_like_aval(a))
                    continue
                ca = _aval(c)
                if ca.shape != a.shape:
                    raise ValueError(
                        "Custom VJP bwd rule must produce an output with the same type as the "
                        f"args tuple of the primal function, but at output[{k}] the bwd rule "
                        f"produced an output of type {_type_str(ca)} corresponding to an input "
                        f"of type {_type_str(a)}, so the shapes do not match")
                if ca.dtype != a.dtype:
                    c = prims.convert_element_type(c, a.dtype)
                out.append(c)
            return out

        def flat_fwd_recording(*xs, perturbed=None):
            outs, res = flat_fwd(*xs, perturbed=perturbed)
            store["out_avals"] = [tangent_aval(_aval(o)) for o in outs]
            return outs, res

        rule = _SymbolicRule if symbolic else _Rule
        outs = bind_custom_vjp(flat_fun, rule(flat_fwd_recording, fwd_name),
                               rule(flat_bwd, bwd_name), leaves, name)
        if "out_tree" not in store:
            flat_fun(*leaves)
        return tree_util.tree_unflatten(store["out_tree"], outs)


_PY_SCALARS = (bool, int, float, complex)
_CARRIED = object()  # a residual leaf the program carries (py_res above)

__all__ = ["custom_jvp", "custom_vjp", "custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p"]

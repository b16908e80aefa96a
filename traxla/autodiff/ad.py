"""Forward and reverse mode as traces and jaxpr rewrites.

- ``jvp``: a JVPTrace carries (primal, tangent) pairs; each primitive's JVP rule binds new
  primitives on them in the enclosing trace. Zero tangents stay symbolic (``Zero``).
- ``linearize``: the same trace, but tangents are tracers of a fresh staging
  trace. Rules run under a routing trace: a primitive with a tangent operand is
  recorded in the linear jaxpr, anything else is computed in the enclosing trace
  (the primal computation and the residuals the linear jaxpr closes over).
- ``vjp``/``grad``: transpose the linear jaxpr, equation by equation in reverse, with each
  linear primitive's transpose rule; cotangents of a variable used twice are summed.
"""
from __future__ import annotations

import threading

import numpy as np

from traxla.base.partial import Partial
from traxla.base.wrapping import wraps
from traxla import primitives as prims, tree_util
from traxla.errors import UnexpectedTracerError
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import ClosedJaxpr, Literal
from traxla.ir.literals import float0_zeros
from traxla.ir.rules.ad import add_any_p
from traxla.ir.rules.refs import AbstractRef
from traxla.ir.traceback_util import api_boundary
from traxla.tracer import DynamicJaxprTrace, DynamicJaxprTracer, Tracer, make_debug_info
from traxla.ir.thread_state import unusual as _unusual
from traxla.tracer.traces import Trace, _state as _trace_state, current_trace, set_current_trace
from traxla.tracer.interpret import eval_jaxpr
from traxla.tracer.values import hitype_avals, is_concrete
from traxla.autodiff.dtype_checks import (  # noqa: F401  (re-exported: jac.py, api)
    _check_scalar, _is_array_like, check_input_dtype_revderiv, check_output_dtype_revderiv)
from traxla.autodiff.vjp_object import (  # noqa: F401  (DontWant... also as ad.X)
    VJP, DidntWant, DontWant, GradRef, GradValue, NotNeeded)

# primitive -> rule(primals, tangents, **params) -> (primal_out, tangent_out)
jvp_rules: dict = {}
# ``new_ref`` (installed by ``traxla.state.ref``, a layer above)
new_zeros_ref: list = [None]
# primitive -> rule(ct, *invals, **params) -> list of cts (None for non-linear operands)
transpose_rules: dict = {}
# primitive -> rule(trace, primals, tangents, **params): for primitives carrying jaxprs,
# splitting the work into a known part (enclosing trace) and a linear part (tangent trace)
linearize_rules: dict = {}
# primitive -> rule(parent, *args, **params): how a linearized rule's bind whose operands are
# all primal (known) is staged in the enclosing trace, where JAX's partial evaluation has a
# rule of its own for it even then (scan hoists its loop invariants out of the body)
known_rules: dict = {}
# primitive -> rule(parent, tangent_trace, args, **params): a linearized rule's bind mixing
# primal and tangent operands, split as JAX's partial evaluation splits it (a jit becomes a
# known jit of the primal operands and a linear jit of its residuals and the tangents)
mixed_rules: dict = {}


class Zero:
    """A symbolic zero tangent/cotangent of the given aval."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"  # float32[], ~float32[] weakly typed: JAX's


# a pytree node without leaves, as JAX's ``ad_util.Zero`` (a vmapped rule of user code may
# return one: lineax's jvp rules under vmap)
tree_util.register_pytree_node(Zero, lambda z: ((), z.aval), lambda aval, _: Zero(aval))


class UndefinedPrimal:
    """A linear operand of an equation being transposed."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


def tangent_aval(aval) -> ShapedArray:
    """A tangent's type: the primal's shape, placement and memory space; float0 for ints
    (a ref's tangent is a ref of its value's tangent type, as in JAX)."""
    if type(aval) is AbstractRef:
        return AbstractRef(tangent_aval(aval.inner_aval), aval.memory_space, aval.kind)
    return aval.to_tangent_aval()


def has_float0_tangent(x) -> bool:
    """Whether ``x``'s tangents are float0 (an integer or boolean value)."""
    return tangent_aval(prims.aval_of(x)).dtype == dtypes.float0


def zero_of(x) -> Zero:
    return Zero(tangent_aval(prims.aval_of(x)))


def zeros_like_aval(aval):
    if type(aval) is AbstractRef:  # the zero cotangent of a Ref input: a Ref of zeros (JAX's)
        return new_zeros_ref[0](zeros_like_aval(aval.inner_aval))
    if getattr(aval.dtype, "_rules", None) is not None:  # a library's extended dtype: its zero
        return prims.broadcast(aval.dtype._rules.zero(aval.dtype), aval.shape)
    if aval.dtype == dtypes.float0:
        zero = np.zeros((), dtypes.float0)
        if aval.shape and isinstance(current_trace(), DynamicJaxprTrace):
            # staged as JAX stages it: a broadcast of the float0 scalar literal
            return prims.broadcast_in_dim(zero, aval.shape, ())
        return float0_zeros(aval.shape)  # host-side, as JAX hands a float0 value back
    # weak type included: the zero gradient of a Python-float input is weak, as in JAX
    return prims.full(aval.shape, prims._convert_element_type(0, aval.dtype, aval.weak_type))


def instantiate(t):
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(x, y):
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_values(x, y)


def add_values(x, y):
    """The sum of two tangents (or cotangents): ``add_any``, or what the type rules of a
    library's extended dtype say (flax's fp8 metadata keeps the maximum), as in JAX."""
    dtype = prims.aval_of(x).dtype
    rules = getattr(dtype, "_rules", None)
    return add_any_p.bind(x, y) if rules is None else rules.add(dtype, x, y)


_new = object.__new__


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __new__(cls, trace, primal, tangent):
        # under linearize/grad (a staged tangent) the tracer is a LinearizeTracer, as JAX's
        if trace.tangent_trace is not None:
            cls = LinearizeTracer
        return object.__new__(cls)

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return prims.aval_of(self.primal)

    def to_concrete_value(self):
        p = self.primal
        return p.to_concrete_value() if isinstance(p, Tracer) else p

    def _short_repr(self):
        def short(x):
            return x._short_repr() if isinstance(x, Tracer) else str(x)
        if self._trace.tangent_trace is not None:  # linearize/grad: the tangent is staged
            tangent = self.tangent.aval.str_short(short_dtypes=True)
            return f"GradTracer(primal={short(self.primal)}, typeof(tangent)={tangent})"
        return f"JVPTracer(primal={short(self.primal)}, tangent={short(self.tangent)})"


class LinearizeTracer(JVPTracer):
    """A JVPTracer whose tangent is staged into the linear jaxpr (grad, vjp, linearize):
    JAX's class of that name, printing as ``GradTracer(primal=..., typeof(tangent)=...)``."""
    __slots__ = ()


class RoutingTrace(Trace):
    """Where a linearized rule's binds go: tangent operands -> the linear jaxpr."""

    def __init__(self, parent, tangent_trace):
        self.parent = parent
        self.tangent_trace = tangent_trace

    def process_primitive(self, prim, args, params):
        tt = self.tangent_trace
        for a in args:  # (flags listed only when some operand is a tangent)
            if type(a) is DynamicJaxprTracer and a._trace is tt:
                tangent_args = [type(a) is DynamicJaxprTracer and a._trace is tt for a in args]
                rule = mixed_rules.get(prim)
                if rule is not None and not all(tangent_args):
                    return rule(self.parent, tt, tangent_args, *args, **params)
                return tt.process_primitive(prim, args, params)
        rule = known_rules.get(prim)
        if rule is not None:
            with set_current_trace(self.parent):
                return rule(self.parent, *args, **params)
        return self.parent.process_primitive(prim, args, params)


class JVPTrace(Trace):
    def __init__(self, parent, tangent_trace=None):
        self.parent = parent
        self.tangent_trace = tangent_trace
        self.rule_trace = parent if tangent_trace is None else RoutingTrace(parent, tangent_trace)

    def to_pt(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer) and not x._trace.alive:
            raise x._trace.leak_error(x)
        return x, zero_of(x)

    def process_primitive(self, prim, args, params):
        primals, tangents, zero = [], [], True
        for a in args:  # (to_pt inlined for this trace's own tracers)
            kind = type(a)
            if (kind is LinearizeTracer or kind is JVPTracer) and a._trace is self:
                p, t = a.primal, a.tangent
            else:
                p, t = self.to_pt(a)
            primals.append(p)
            tangents.append(t)
            if zero and type(t) is not Zero:
                zero = False
        state = _trace_state  # (set_current_trace inlined: once per differentiated op)
        previous = state.trace
        if zero:
            state.trace = self.parent
            _unusual.append(None)
            try:
                return prim.bind(*primals, **params)
            finally:
                state.trace = previous
                _unusual.pop()
        if self.tangent_trace is not None and prim in linearize_rules:
            rule = linearize_rules[prim]
            state.trace = self.rule_trace
            _unusual.append(None)
            try:
                out, tout = rule(self, primals, tangents, **params)
            finally:
                state.trace = previous
                _unusual.pop()
        else:
            rule = jvp_rules.get(prim)
            if rule is None:
                raise NotImplementedError(
                    f"Differentiation rule for '{prim.name}' not implemented\ntraxla has no JVP "
                    f"rule for this primitive (operands {[prims.aval_of(p).str_short() for p in primals]}).")
            state.trace = self.rule_trace
            _unusual.append(None)
            try:
                out, tout = rule(primals, tangents, **params)
            finally:
                state.trace = previous
                _unusual.pop()
            if self.tangent_trace is not None:
                # as JAX's fallback linearization: a tangent the rule computed without the
                # tangent inputs (a constant, e.g. integer_pow's by 0) is known, hence zero
                tout = ([self.known_to_zero(p, t) for p, t in zip(out, tout)]
                        if prim.multiple_results else self.known_to_zero(out, tout))
        if prim.multiple_results:
            return [self.tracer_or_primal(p, t) for p, t in zip(out, tout)]
        return self.tracer_or_primal(out, tout)

    def tracer_or_primal(self, primal, tangent):
        """An output whose tangent is a symbolic zero is its primal, not a tracer of this
        trace (JAX's ``maybe_jvp_tracer``: it does not depend on what is differentiated)."""
        if type(tangent) is Zero:
            return primal
        tracer = _new(JVPTracer if self.tangent_trace is None else LinearizeTracer)
        tracer._trace, tracer.primal, tracer.tangent = self, primal, tangent
        return tracer

    def known_to_zero(self, primal, t):
        if type(t) is Zero or (type(t) is DynamicJaxprTracer and t._trace is self.tangent_trace):
            return t
        return zero_of(primal)

    def leak_error(self, tracer):
        return UnexpectedTracerError(
            "Encountered an unexpected tracer: a value being differentiated "
            f"({tracer.aval.str_short(short_dtypes=False)}) escaped the differentiated function "
            "and was used after it returned. Return values from the function instead of storing them.")


# -- jvp ---------------------------------------------------------------------------------

def _check_tangent(p, t, i):
    pa, ta = prims.aval_of(p), (t.aval if type(t) is Zero else prims.aval_of(t))
    expected = dtypes.tangent_dtype(pa.dtype)
    if pa.shape != ta.shape:
        raise ValueError(f"jvp called with different primal and tangent shapes;Got primal shape "
                         f"{pa.shape} and tangent shape as {ta.shape}")
    if ta.dtype != expected:
        raise TypeError(f"primal and tangent arguments to jax.jvp do not match; dtypes must be "
                        f"equal, or in case of int/bool primal dtype the tangent dtype must be "
                        f"float0.Got primal dtype {pa.dtype} and so expected tangent dtype "
                        f"{expected}, but got tangent dtype {ta.dtype} instead.")


def jvp_flat(fun_flat, primals, tangents, has_aux=False):
    """Runs ``fun_flat`` on (primal, tangent) pairs; returns (primal outs, tangent outs), and
    with ``has_aux`` (``fun_flat`` returning ``(outs, aux_leaves)``) the aux leaves' primals."""
    parent = current_trace()
    trace = JVPTrace(parent)
    tracers = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
    try:
        with set_current_trace(trace):
            outs = fun_flat(*tracers)
        if has_aux:
            outs, aux = outs
            aux = [_primal_of(trace, a) for a in aux]
        pts = [trace.to_pt(o) for o in outs]
    finally:
        trace.invalidate()
    if has_aux:
        return [p for p, _ in pts], [t for _, t in pts], aux
    return [p for p, _ in pts], [t for _, t in pts]


def _primal_of(trace, x):
    """An auxiliary output leaves the trace as its primal value (no tangent)."""
    if isinstance(x, JVPTracer) and x._trace is trace:
        return x.primal
    return x


@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), J(primals) @ tangents)`` for pytrees of primals and tangents (and the
    auxiliary output with ``has_aux``)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_flat, p_tree = tree_util.tree_flatten(tuple(primals))
    t_flat, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents have "
                        f"tree structure {t_tree}.")
    for i, (p, t) in enumerate(zip(p_flat, t_flat)):
        _check_tangent(p, t, i)
    t_flat = [zero_of(p) if _is_float0(t) else t for p, t in zip(p_flat, t_flat)]
    store = []
    flat = _flatten_fun(fun, p_tree, store, has_aux)
    result = jvp_flat(flat, p_flat, t_flat, has_aux)
    primals_out, tangents_out = result[0], [instantiate(t) for t in result[1]]
    out_tree = dict(store)["out"]
    out = (tree_util.tree_unflatten(out_tree, primals_out),
           tree_util.tree_unflatten(out_tree, tangents_out))
    if has_aux:
        return out + (tree_util.tree_unflatten(dict(store)["aux"], result[2]),)
    return out


def _is_float0(t):
    return getattr(getattr(t, "dtype", None), "names", None) == ("float0",)


# -- linearize ---------------------------------------------------------------------------------

class Linearized:
    """The linear map of a linearization: a jaxpr over tangents closing over residuals."""

    def __init__(self, jaxpr, out_avals, zero_outs, nonzero=None):
        self.jaxpr = jaxpr
        self.out_avals = out_avals
        self.zero_outs = zero_outs
        # which inputs the linear jaxpr takes (the others have symbolic zero / float0 tangents)
        self.nonzero = nonzero

    def __call__(self, *tangents):
        if self.nonzero is not None:
            tangents = [t for t, nz in zip(tangents, self.nonzero) if nz]
        outs = iter(eval_jaxpr(self.jaxpr, (), *tangents))
        return [zeros_like_aval(a) if z else next(outs) for a, z in zip(self.out_avals, self.zero_outs)]


class _Mode(threading.local):
    is_vjp = False


# whether the linearization running is a vjp's (grad, vjp: a hijax primitive's vjp_fwd and
# vjp_bwd rules apply) or linearize's (its lin and linearized rules), as JAX's
# ``LinearizeTrace.is_vjp``; nested linearizations (of a jit, cond, scan...) inherit it
linearize_mode = _Mode()


def linearize_flat(fun_flat, primals, debug_name="linearize", nonzero=None, has_aux=False,
                   is_vjp=None):
    if is_vjp is None or is_vjp == linearize_mode.is_vjp:
        return _linearize_flat(fun_flat, primals, debug_name, nonzero, has_aux)
    linearize_mode.is_vjp, before = is_vjp, linearize_mode.is_vjp
    try:
        return _linearize_flat(fun_flat, primals, debug_name, nonzero, has_aux)
    finally:
        linearize_mode.is_vjp = before


def _linearize_flat(fun_flat, primals, debug_name, nonzero, has_aux):
    """Runs ``fun_flat`` on primals; returns its primal outputs (in the current
    trace) and the linear map of the nonzero-tangent inputs (all by default; inputs
    whose tangents are float0, i.e. integer and boolean ones, never are). With
    ``has_aux``, ``fun_flat`` returns ``(outs, aux_leaves)`` and the aux leaves' primal
    values are returned third."""
    parent = current_trace()
    tangent_trace = DynamicJaxprTrace(make_debug_info(fun_flat, debug_name, ()))
    nonzero = [True] * len(primals) if nonzero is None else list(nonzero)
    nonzero = [nz and tangent_aval(prims.aval_of(p)).dtype != dtypes.float0
               for p, nz in zip(primals, nonzero)]
    tangents = [tangent_trace.new_arg(tangent_aval(prims.aval_of(p))) if nz else zero_of(p)
                for p, nz in zip(primals, nonzero)]
    trace = JVPTrace(parent, tangent_trace)
    tracers = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
    aux = None
    try:
        with set_current_trace(trace):
            outs = fun_flat(*tracers)
        if has_aux:
            outs, aux = outs
            aux = [_primal_of(trace, a) for a in aux]
        pts = [trace.to_pt(o) for o in outs]
    finally:
        trace.invalidate()
    primals_out = [p for p, _ in pts]
    tangents_out = [t for _, t in pts]
    zero_outs = [type(t) is Zero for t in tangents_out]
    try:
        closed = tangent_trace.to_closed_jaxpr([t for t in tangents_out if type(t) is not Zero])
    finally:
        tangent_trace.invalidate()
    out_avals = [tangent_aval(prims.aval_of(p)) for p in primals_out]
    lin = Linearized(closed, out_avals, zero_outs, nonzero)
    if has_aux:
        return primals_out, lin, aux
    return primals_out, lin


# -- transposition ------------------------------------------------------------------------------

def backward_pass(closed, cts_out, wanted=None):
    """Cotangents of a linear jaxpr's inputs, given cotangents of its outputs
    (Zero allowed); binds the transposed equations in the current trace. With ``wanted``
    (a flag per input), equations that feed no wanted input's cotangent are skipped."""
    jaxpr = closed.jaxpr
    primal_env = dict(zip(jaxpr.constvars, closed.consts))
    linear = set(jaxpr.invars)
    reads_linear = []  # per equation: does it read a linear variable? (one pass, no generator)
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if type(v) is not Literal and v in linear:
                linear.update(eqn.outvars)
                reads_linear.append(True)
                break
        else:
            reads_linear.append(False)
    ct_env: dict = {}

    def write(v, ct):
        if ct is None or type(ct) is Zero or isinstance(v, Literal):
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_values(prev, ct)

    def read_primal(v):
        if isinstance(v, Literal):
            return v
        return primal_env[v]

    # non-linear equations (none when produced by linearize) are evaluated forward first
    for eqn, is_linear in zip(jaxpr.eqns, reads_linear):
        if is_linear:
            continue  # linear (possibly with no outputs): handled by the reverse sweep
        if not any(v in linear for v in eqn.outvars):
            outs = eqn.primitive.bind(*[read_primal(v) for v in eqn.invars], **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            primal_env.update(zip(eqn.outvars, outs))
    for v, ct in zip(jaxpr.outvars, cts_out):
        write(v, ct)
    reach = None
    if wanted is not None and not all(wanted):
        # the linear values that depend on a wanted input: only their cotangents are needed
        reach = {v for v, w in zip(jaxpr.invars, wanted) if w}
        for eqn in jaxpr.eqns:
            if any(not isinstance(v, Literal) and v in reach for v in eqn.invars):
                reach.update(eqn.outvars)
    for eqn, is_linear in zip(reversed(jaxpr.eqns), reversed(reads_linear)):
        if not (is_linear and eqn.outvars) and not any(v in linear for v in eqn.outvars):
            continue
        if reach is not None and not any(not isinstance(v, Literal) and v in reach
                                         for v in eqn.invars):
            continue
        prim, outvars = eqn.primitive, eqn.outvars
        if not prim.multiple_results and len(outvars) == 1:
            # (one result: its cotangent, or nothing to transpose; write() stores no Zero)
            ct_arg = ct_env.pop(outvars[0], None)
            if ct_arg is None:
                continue
        else:
            cts_in = [_or_zero(ct_env.pop(v, None), v.aval) for v in outvars]
            if all(type(c) is Zero for c in cts_in):
                continue
            ct_arg = cts_in if prim.multiple_results else cts_in[0]
        invals = []
        for v in eqn.invars:
            if isinstance(v, Literal):
                invals.append(v)
            elif v in linear:
                undefined = _new(UndefinedPrimal)
                undefined.aval = v.aval
                invals.append(undefined)
            else:
                invals.append(primal_env[v])
        rule = transpose_rules.get(prim)
        if rule is None:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for '{prim.name}' "
                "not implemented")
        cts = rule(ct_arg, *invals, **eqn.params)
        for v, inval, ct in zip(eqn.invars, invals, cts):
            if type(inval) is UndefinedPrimal:
                write(v, ct)
    return [_or_zero(ct_env.get(v), v.aval) for v in jaxpr.invars]


def _or_zero(ct, aval):
    return Zero(aval) if ct is None else ct


# -- vjp, grad ------------------------------------------------------------------------------------

def _flatten_fun(fun, in_tree, store, has_aux=False):
    """``fun`` on flat leaves: returns the output leaves (and with ``has_aux``, the pair
    ``(output leaves, aux leaves)``); the trees go to ``store``."""
    def flat(*args):
        out = fun(*tree_util.tree_unflatten(in_tree, args))
        if has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError("expected function with aux output to return a two-element tuple, "
                                f"but got type {type(out)} with value {out!r}")
            out, aux = out
            aux_leaves, aux_tree = tree_util.tree_flatten(aux)
            store.append(("aux", aux_tree))
        leaves, tree = tree_util.tree_flatten(out)
        store.append(("out", tree))
        return (leaves, aux_leaves) if has_aux else leaves
    return flat


def _fun_name(fun):
    name = getattr(fun, "__name__", None) or type(fun).__name__
    code = getattr(fun, "__code__", None)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code is not None else name


@api_boundary
def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """``(fun(*primals), vjp_fun)`` where ``vjp_fun(ct)`` pulls a cotangent back (and the
    auxiliary output third with ``has_aux``)."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to vjp is deprecated")
    p_flat, p_tree = tree_util.tree_flatten(primals)
    store = []
    result = linearize_flat(_flatten_fun(fun, p_tree, store, has_aux), p_flat, "vjp",
                            has_aux=has_aux, is_vjp=True)
    primals_out, lin = result[0], result[1]
    out_tree = dict(store)["out"]
    in_avals = [tangent_aval(prims.aval_of(p)) for p in p_flat]

    closed = lin.jaxpr

    def make_pullback(residuals):
        """The pullback over ``residuals`` (the linear jaxpr's constants: what the VJP
        object carries as its pytree leaves)."""
        lin_jaxpr = ClosedJaxpr(closed.jaxpr, residuals)

        @api_boundary
        def vjp_fun(ct, _wanted=None):
            ct_flat, ct_tree = tree_util.tree_flatten(ct)
            if ct_tree != out_tree:
                raise ValueError(
                    "unexpected tree structure.\n\nThe argument to a VJP function returned by "
                    "`jax.vjp` must match the pytree\nstructure of the differentiated function "
                    f"{_fun_name(fun)}.\n\nBut the tree structures differ: the function's output "
                    f"has structure {out_tree}, the cotangent {ct_tree}.")
            for c, a, p in zip(ct_flat, lin.out_avals, primals_out):
                ca = prims.aval_of(c)
                if ca.shape != a.shape:
                    pa = prims.aval_of(p)
                    raise ValueError(
                        f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: "
                        f"got {ca.str_short(False)}, but expected {pa.str_short(False)} because "
                        "the corresponding output of the differentiated function had JAX type "
                        f"{pa.str_short(False)}")
            cts = [c for c, z in zip(ct_flat, lin.zero_outs) if not z]
            wanted = None if _wanted is None else [
                w for w, nz in zip(_wanted, lin.nonzero) if nz]
            lin_cts = iter(backward_pass(lin_jaxpr, cts, wanted))
            in_cts = [next(lin_cts) if nz else Zero(a) for nz, a in zip(lin.nonzero, in_avals)]
            in_cts = [instantiate(c) for c in in_cts]
            return tree_util.tree_unflatten(p_tree, in_cts)
        return vjp_fun

    out = tree_util.tree_unflatten(out_tree, primals_out)
    pullback = VJP(make_pullback, p_tree, closed.consts)
    pullback._primals = p_flat
    if has_aux:
        return out, pullback, tree_util.tree_unflatten(dict(store)["aux"], result[2])
    return out, pullback


def _one_like(x):
    """The seed cotangent: ones of ``x``'s type, weak type included (as JAX's ``_one``), so
    the gradient of a weakly typed input stays weakly typed."""
    aval = prims.aval_of(x)
    one = prims.full(aval.shape, prims._convert_element_type(1, aval.dtype, aval.weak_type))
    st = aval.sharding_type
    if st is not None and isinstance(x, Tracer) and not aval.shape:
        # JAX's ``_one_vjp``: placed as the cotangent of ``x``'s type (a ``reshard`` of the
        # scalar, unreduced where ``x`` is reduced)
        from traxla.ir.rules.collectives import reshard_p
        ct = st.to_ct()
        one = reshard_p.bind(one, dst_sharding=ct, dst_spec=(ct.mesh, ct.spec))
    return one


def _ensure_argnums(argnums):
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool):
        return int(argnums)
    if isinstance(argnums, (tuple, list)) and all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in argnums):
        return tuple(int(a) for a in argnums)
    raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}.")


def argnums_partial(fun, argnums, args, kwargs):
    """``(f_partial, dyn_args)``: ``fun`` as a function of ``args[argnums]`` only."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    n = len(args)
    nums = tuple(i % n if -n <= i < 0 else i for i in nums)
    dyn = tuple(args[i] for i in nums)

    def f_partial(*dyn_args):
        full = list(args)
        for i, v in zip(nums, dyn_args):
            full[i] = v
        return fun(*full, **kwargs)

    return f_partial, dyn


# The docstrings JAX gives ``grad(f)`` and ``value_and_grad(f)`` (``wraps``'s docstr).
_GRAD_DOC = ("Gradient of {fun} with respect to positional argument(s) {argnums}. Takes the same "
             "arguments as {fun} but returns the gradient, which has the same shape as the "
             "arguments at positions {argnums}.")
_VALUE_AND_GRAD_DOC = (
    "Value and gradient of {fun} with respect to positional argument(s) {argnums}. Takes the "
    "same arguments as {fun} but returns a two-element tuple where the first element is the "
    "value of {fun} and the second element is the gradient, which has the same shape as the "
    "arguments at positions {argnums}.")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """``(fun(*args), gradient of fun w.r.t. args[argnums])``; fun must return a real scalar
    (a complex one with ``holomorphic=True``)."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    argnums = _ensure_argnums(argnums)

    @wraps(fun, docstr=_VALUE_AND_GRAD_DOC, argnums=argnums)
    @api_boundary
    def vg(*args, **kwargs):
        max_argnum = argnums if isinstance(argnums, int) else max(argnums, default=-1)
        if max_argnum >= len(args):
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at least "
                            f"{max_argnum + 1} positional arguments to be passed by the caller, "
                            f"but got only {len(args)} positional arguments.")
        f_partial, dyn = argnums_partial(fun, argnums, args, kwargs)
        for x in tree_util.tree_leaves(dyn):
            check_input_dtype_revderiv("grad", allow_int, x, holomorphic)
        if has_aux:
            ans, vjp_fun, aux = vjp(f_partial, *dyn, has_aux=True)
        else:
            ans, vjp_fun = vjp(f_partial, *dyn)
        _check_scalar(ans)
        check_output_dtype_revderiv("grad", ans, holomorphic)
        grads = vjp_fun(_one_like(ans))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((ans, aux), g) if has_aux else (ans, g)

    return vg


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of a scalar function with respect to ``args[argnums]``."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @wraps(fun, docstr=_GRAD_DOC, argnums=argnums)
    @api_boundary
    def g(*args, **kwargs):
        out, grads = vg(*args, **kwargs)
        return (grads, out[1]) if has_aux else grads

    return g


class _LinearJvp:
    """The function of ``linearize``'s ``f_jvp``: ``(*residuals, *tangents)`` -> output
    tangents (the residuals, the linear jaxpr's constants, are the Partial's leaves)."""

    def __init__(self, lin, p_tree, out_tree):
        self.lin, self.p_tree, self.out_tree = lin, p_tree, out_tree

    @api_boundary
    def __call__(self, *args):
        lin = self.lin
        n = len(lin.jaxpr.consts)
        consts, tangents = args[:n], args[n:]
        t_flat, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != self.p_tree:
            raise TypeError(f"expected {self.p_tree}, got {t_tree}")  # JAX's message
        lin = Linearized(ClosedJaxpr(lin.jaxpr.jaxpr, consts), lin.out_avals, lin.zero_outs,
                         lin.nonzero)
        return tree_util.tree_unflatten(self.out_tree, [instantiate(t) for t in lin(*t_flat)])


@api_boundary
def linearize(fun, *primals, has_aux=False):
    """``(fun(*primals), f_jvp)`` with ``f_jvp(*tangents)`` the linear map, evaluated lazily
    (and the auxiliary output third with ``has_aux``)."""
    p_flat, p_tree = tree_util.tree_flatten(primals)
    store = []
    result = linearize_flat(_flatten_fun(fun, p_tree, store, has_aux), p_flat, has_aux=has_aux,
                            is_vjp=False)
    primals_out, lin = result[0], result[1]
    out_tree = dict(store)["out"]
    # As JAX's, a Partial whose leaves are the residuals: it can be returned from jit/vmap
    f_jvp = Partial(_LinearJvp(lin, p_tree, out_tree), *lin.jaxpr.consts)
    out = tree_util.tree_unflatten(out_tree, primals_out)
    if has_aux:
        return out, f_jvp, tree_util.tree_unflatten(dict(store)["aux"], result[2])
    return out, f_jvp

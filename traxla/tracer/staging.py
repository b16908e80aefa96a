"""Staging: running a Python function on tracers and recording a jaxpr."""
from __future__ import annotations

import functools

import numpy as np

from traxla.errors import UnexpectedTracerError
from traxla.ir import dtypes
from traxla.ir.config import config
from traxla.ir.avals import ShapedArray, interned
from traxla.ir.jaxpr import ClosedJaxpr, DebugInfo, Jaxpr, JaxprEqn, Literal, Var
from traxla.ir.sharding_rules import infer_avals
from traxla.ir.vma import (active as vma_active, needs_matching, ordered, pvary_p,
                           reduced_vary_cast_p)
from traxla.tracer import traces as core
from traxla.tracer.traces import Trace, Tracer, user_source_info
from traxla.tracer.values import concrete_aval, concrete_value, hitype_avals, is_concrete
from traxla.ir.shape_poly import DimExpr
from traxla.ir.rules.export import dim_as_value_p
from traxla.ir.jaxpr_printer import pp_eqn_text
from traxla.ir.config import config
from traxla.tracer.leaks import check_no_leaks


_new = object.__new__


class DynamicJaxprTracer(Tracer):
    # ``aval`` is the variable's (which never changes), kept in a slot of its own: it is
    # read on every operation, and a slot is cheaper than a property.
    __slots__ = ("_var", "aval")  # not "var": that is the method x.var()

    def __init__(self, trace, var):
        self._trace = trace
        self._var = var
        self.aval = var.aval

    def _origin_msg(self) -> str:
        return self._trace.origin_message(self._var)

    def _short_repr(self):
        aval = self._var.aval
        return f"JitTracer({'~' if aval.weak_type else ''}{aval.str_short(short_dtypes=False)})"


def _hi_constant_aval(x):
    """The abstract value of ``x``, a high-level object met as a constant of a staged
    function: refused, as in JAX (no constant handler), when its arrays are tracers (say
    the function's own, wrapped by hand rather than by a hijax primitive)."""
    aval = hitype_avals[type(x)](x)
    if aval.has_qdd:  # a mutable one (flax's Variables) is lowered where it is used
        return None
    for lo in aval.lower_val(x):
        if isinstance(lo, Tracer):
            raise TypeError(f"No constant handler for type: {type(lo)}")
    return aval


# primitive -> rule(eqn) -> (per output, the index of the input it merely forwards or None;
# the equation to keep, or None), as JAX's ``pe.forwarding_rules``: staging only.
forwarding_rules: dict = {}


class DynamicJaxprTrace(Trace):
    """Records every primitive applied to its tracers as a jaxpr equation."""

    # JAX's partial-eval trace (``linear_transpose`` traces with it) records forwarding
    # equations, say an identity ``broadcast_in_dim``; its staging trace drops them.
    forwards = True

    def __init__(self, debug_info: DebugInfo | None = None):
        self.debug_info = debug_info
        self.invars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        self._const_ids: dict[int, Var] = {}

    # -- building ----------------------------------------------------------
    def new_arg(self, aval: ShapedArray) -> DynamicJaxprTracer:
        var = Var(interned(aval))
        self.invars.append(var)
        return DynamicJaxprTracer(self, var)

    def _new_const(self, value, aval) -> Var:
        key = id(value)
        var = self._const_ids.get(key)
        if var is None:
            var = self._const_ids[key] = Var(aval)
            self.constvars.append(var)
            self.consts.append(value)
        return var

    def to_atom(self, x):
        # (a subclass too: the ``pe.JaxprTracer`` views a JVP rule of user code gets)
        if isinstance(x, DynamicJaxprTracer) and x._trace is self:
            return x._var
        if isinstance(x, Literal):
            return x
        if isinstance(x, Tracer):
            if not x._trace.alive:
                raise x._trace.leak_error(x)
            # A tracer of an enclosing trace (a closure): a constant here,
            # turned into an explicit operand by whoever called us.
            return self._new_const(x, x.aval)
        if isinstance(x, DimExpr):  # a symbolic dimension used as a value (export)
            return self.to_atom(self.process_primitive(dim_as_value_p, [], {"dim": x}))
        if not is_concrete(x):
            if hasattr(type(x), "__traxla_abstract__"):
                # a ShapeDtypeStruct: a constant of its type, with no value (JAX's
                # pytype_aval_mappings has it), so eval_shape can return it as is
                return self._new_const(x, x.__traxla_abstract__)
            m = getattr(x, "__jax_array__", None)  # JAX's protocol: flax's Variables
            if m is not None:
                return self.to_atom(m())
            aval = _hi_constant_aval(x) if type(x) in hitype_avals else None
            if aval is not None:  # a high-level (hijax) value: a constant of its type
                return self._new_const(x, aval)
            raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")
        aval = concrete_aval(x)
        if not aval.shape and not dtypes.is_extended(aval.dtype):
            value = concrete_value(x)
            # A Python float bound as is (say, a jit argument) keeps its own value in the
            # literal, which prints unrounded, as in JAX; lowering casts it to the dtype.
            # (the interned type: the typing caches key on the operands' aval identity)
            return Literal(x if type(x) is float else value, interned(aval))
        return self._new_const(x, aval)

    def process_primitive(self, prim, args, params):
        atoms, in_avals = [], []
        for a in args:  # to_atom inlined for the common operands: our tracers, literals
            kind = type(a)
            if kind is DynamicJaxprTracer and a._trace is self:
                atom = a._var
            elif kind is Literal:
                atom = a
            else:
                atom = self.to_atom(a)
            atoms.append(atom)
            in_avals.append(atom.aval)
        # (whoever called process_primitive is traxla's own code: the walk starts above it)
        source = user_source_info(3)
        if vma_active[0] and len(atoms) > 1 and needs_matching(prim, params):
            self._match_vma(atoms, in_avals, source)
        out = infer_avals(prim, in_avals, params)
        if self.forwards and prim in forwarding_rules:
            outvars = [Var(a) for a in out] if prim.multiple_results else [Var(out)]
            outs = [DynamicJaxprTracer(self, v) for v in outvars]
            fwd, eqn = forwarding_rules[prim](JaxprEqn(atoms, outvars, prim, params, source))
            for i, j in enumerate(fwd):
                if j is not None:
                    outs[i] = DynamicJaxprTracer(self, atoms[j])
            if eqn is not None:
                self.eqns.append(eqn)
            return outs if prim.multiple_results else outs[0]
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(JaxprEqn(atoms, outvars, prim, params, source))
            return [DynamicJaxprTracer(self, v) for v in outvars]
        # The one-result case, once per traced operation: the three objects are filled in
        # directly, without the Python-level __init__ calls (what they would do).
        var = _new(Var)
        var.aval = out
        eqn = _new(JaxprEqn)
        eqn.invars, eqn.outvars, eqn.primitive, eqn.params, eqn.source_info = (
            atoms, [var], prim, params, source)
        self.eqns.append(eqn)
        tracer = _new(DynamicJaxprTracer)
        tracer._trace, tracer._var, tracer.aval = self, var, out
        return tracer

    def _match_vma(self, atoms, in_avals, source):
        """In a shard_map body with check_vma, operands varying over fewer manual axes
        than the others are first cast with ``pvary`` (as JAX's ``insert_pvary``)."""
        union = ordered(ax for a in in_avals for ax in a.vma)
        if not union:
            return
        for i, aval in enumerate(in_avals):
            if aval.vma != union:
                missing = tuple(n for n in union if n not in aval.vma)
                # a value reduced over exactly the missing axes: JAX's reduced_vary_cast
                cast = (reduced_vary_cast_p if aval.sharding_type is not None
                        and aval.sharding_type.spec.reduced == frozenset(missing) else pvary_p)
                var = Var(infer_avals(cast, [aval], {"axes": missing}))
                self.eqns.append(JaxprEqn([atoms[i]], [var], cast, {"axes": missing}, source))
                atoms[i], in_avals[i] = var, var.aval

    def to_closed_jaxpr(self, outs) -> ClosedJaxpr:
        outvars = [self.to_atom(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns, self.debug_info)
        return ClosedJaxpr(jaxpr, self.consts)

    # -- messages ------------------------------------------------------------
    def _producers(self):
        return {v: e for e in self.eqns for v in e.outvars}

    def origin_message(self, var) -> str:
        dbg = self.debug_info
        if dbg is None:
            return ""
        producers = self._producers()
        positions, roots, seen, stack = set(), [], set(), [var]
        invar_pos = {v: i for i, v in enumerate(self.invars)}
        while stack:
            v = stack.pop()
            if v in seen or isinstance(v, Literal):
                continue
            seen.add(v)
            if v in invar_pos:
                positions.add(invar_pos[v])
                continue
            eqn = producers.get(v)
            if eqn is None:
                continue
            inputs = [x for x in eqn.invars if not isinstance(x, Literal)]
            if not inputs and eqn not in roots:
                roots.append(eqn)
            stack.extend(inputs)
        origin = (f"The error occurred while tracing the function {dbg.func_src_info} for "
                  f"{dbg.traced_for}. ")
        if positions:
            names = [dbg.arg_names[i] if i < len(dbg.arg_names) else f"args[{i}]"
                     for i in sorted(positions)]
            if len(names) == 1:
                what = f"argument {names[0]}"
            elif len(names) == 2:
                what = f"arguments {names[0]} and {names[1]}"
            else:
                what = "arguments " + ", ".join(names[:-1]) + f", and {names[-1]}"
            origin += ("This concrete value was not available in Python because it depends on "
                       f"the value{'s' if len(names) > 1 else ''} of the {what}.")
        elif roots:
            lines = [f"  operation {pp_eqn_text(e)}\n    from line {e.source_info}"
                     for e in roots[:5]]
            origin += ("This value became a tracer due to JAX operations on these lines:\n\n"
                       + "\n\n".join(lines))
            if len(roots) > 5:
                origin += "\n\n(Additional originating lines are not shown.)"
        return "\n" + origin

    def leak_error(self, tracer) -> UnexpectedTracerError:
        dbg = self.debug_info
        fn = f"{dbg.func_src_info} traced for {dbg.traced_for}" if dbg else "an unknown function"
        eqn = self._producers().get(getattr(tracer, "_var", None))
        created = ""
        if eqn is not None and eqn.source_info is not None:
            created = ("\n------------------------------\nThe leaked intermediate value was "
                       f"created on line {eqn.source_info}. \n------------------------------")
        return UnexpectedTracerError(
            "Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
            "allowing for a reference to an intermediate value with type "
            f"{tracer.aval.str_short(short_dtypes=False)} wrapped in a {type(tracer).__name__} "
            "to escape the scope of the transformation.\nJAX transformations require that "
            "functions explicitly return their outputs, and disallow saving intermediate values "
            f"to global state.\nThe function being traced when the value leaked was {fn}."
            f"{created}")


def trace_to_jaxpr(fun, in_avals, debug_info: DebugInfo | None = None, forwards: bool = True):
    """Runs ``fun`` on fresh tracers; returns the closed jaxpr. ``forwards=False`` keeps
    the equations a forwarding rule would drop (as JAX's partial-eval trace does)."""
    trace = DynamicJaxprTrace(debug_info)
    trace.forwards = forwards
    tracers = [trace.new_arg(a) for a in in_avals]
    try:
        with core.set_current_trace(trace):
            outs = fun(*tracers)
        closed = trace.to_closed_jaxpr(outs)
    finally:
        trace.invalidate()
    if config.current.check_tracer_leaks:
        tracers = outs = None  # noqa: F841  (ours: not leaks)
        check_no_leaks(trace)
    return closed


def _unwrap(fun):
    """The user's function behind partials and ``functools.wraps`` wrappers (as JAX's
    ``fun_sourceinfo``), so messages name ``abs_val`` in ``jit(grad(abs_val))``."""
    for _ in range(100):
        inner = getattr(fun, "func", None) if isinstance(fun, functools.partial) else None
        inner = inner if inner is not None else getattr(fun, "__wrapped__", None)
        if inner is None:
            break
        fun = inner
    return fun


def source_info_of_function(fun) -> str:
    fun = _unwrap(fun)
    name = getattr(fun, "__name__", type(fun).__name__)
    code = getattr(fun, "__code__", None)
    if code is None:
        inner = getattr(fun, "func", None)  # functools.partial
        code = getattr(inner, "__code__", None)
        name = getattr(inner, "__name__", name)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def make_debug_info(fun, traced_for: str, arg_names) -> DebugInfo:
    name = getattr(fun, "__name__", None) or getattr(getattr(fun, "func", None), "__name__", "fun")
    return DebugInfo(traced_for, name, source_info_of_function(fun), arg_names)


del np

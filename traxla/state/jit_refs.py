"""``jit`` of a function taking or closing over array refs (``traxla.ref``): eagerly, a
``Ref`` argument's buffer is updated in place by a program whose ref inputs are aliased to
their final values; under a transformation the traced jaxpr runs in the current trace.
JAX's errors for refs passed twice, passed and closed over, or returned."""
from __future__ import annotations

from traxla import tree_util
import traxla.api as _api
from traxla.api.jit_caches import _trace_context
from traxla.base.arg_names import leaf_names
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.refs import is_ref_aval
from traxla.runtime import to_array
from traxla.runtime.executable import Executable
from traxla.state.ref import Ref, _EvalTrace, _is_staged_ref, _value_for
from traxla.tracer import Tracer, make_debug_info, traces as trace_core
from traxla.tracer.interpret import eval_jaxpr as _eval_jaxpr
from traxla.tracer.staging import DynamicJaxprTracer


# -- jit with Ref arguments ----------------------------------------------------------------

def call_with_refs(jitted, args, kwargs):
    """``jit(f)(ref, x)``. Eagerly, ``f`` is traced with each ``Ref`` argument as a staged
    ref, the program (refs discharged) returns each ref's final value aliased to its
    argument, and each ``Ref``'s buffer is updated in place, as in JAX. Under a
    transformation (grad, vmap of a call) or inside another trace, ``call_inline``."""
    dyn_args, dyn_kwargs, static_key = jitted._split_static(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    _check_no_aliased_refs(jitted, args, kwargs, leaves)
    eager = type(trace_core.current_trace()) is _EvalTrace and not any(
        isinstance(x._value if isinstance(x, Ref) else x, Tracer) for x in leaves)
    if eager:
        return _call_with_refs_in_place(jitted, args, kwargs, leaves, in_tree, static_key)
    return call_inline(jitted, args, kwargs, leaves, in_tree, static_key)


def call_inline(jitted, args, kwargs, leaves, in_tree, static_key):
    """A jit-compiled function called with refs (``Ref`` objects, or refs differentiated or
    batched) under a transformation: its traced jaxpr, refs and all, evaluated in the
    current trace, each access going through the transformation's ref rules (as JAX's
    do); ``Ref`` objects are updated in place, with values of their own trace."""
    avals = tuple(x._aval if isinstance(x, Ref) else _api.typeof(x) for x in leaves)
    key = (in_tree, static_key, avals, _trace_context())
    closed, out_tree = jitted._trace(key, args, kwargs, avals)
    return tree_util.tree_unflatten(out_tree, eval_closed_with_refs(closed, leaves))


def eval_closed_with_refs(closed, operands):
    """``closed`` evaluated in the current trace over its operands; the ``Ref`` objects it
    takes or closes over end up holding values of their own trace."""
    boxes = [x for x in list(operands) + list(closed.consts) if isinstance(x, Ref)]
    outs = _eval_jaxpr(closed, (), *operands)
    for box in boxes:
        box._value = _value_for(box, box._value)
    return outs


def _debug_info(jitted, args, kwargs):
    return make_debug_info(jitted.fun, "jit", jitted._arg_names(args, kwargs))


def _check_no_aliased_refs(jitted, args, kwargs, leaves):
    """JAX's error for one Ref passed twice to a jit-compiled function."""
    seen = {}
    for i, x in enumerate(leaves):
        if isinstance(x, Ref) and seen.setdefault(id(x), i) != i:
            debug = _debug_info(jitted, args, kwargs)
            names = debug.arg_names
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but when tracing {debug.func_src_info} for jit the mutable array "
                f"reference of type {x.aval} appeared at both "
                f"{names[seen[id(x)]]} and {names[i]}.")


def _call_with_refs_in_place(jitted, args, kwargs, leaves, in_tree, static_key):
    avals = tuple(x._aval if isinstance(x, Ref) else _api.typeof(x) for x in leaves)
    key = (in_tree, static_key, avals, _trace_context())
    cache = jitted.__dict__.setdefault("_ref_programs", {})
    closed, out_tree = jitted._trace(key, args, kwargs, avals)
    entry = cache.get(key)
    if entry is None or entry[0] is not closed:
        entry = cache[key] = (closed, _in_place_program(jitted, closed))
    _, (executable, kept, n_results, closed_refs) = entry
    arg_refs = {id(x) for x in leaves if isinstance(x, Ref)}
    for box in closed_refs:
        if id(box) in arg_refs:
            debug = _debug_info(jitted, args, kwargs)
            k = next(i for i, x in enumerate(leaves) if x is box)
            raise ValueError(f"when tracing {debug.func_src_info} for jit, a mutable array "
                             f"reference of type {box.aval} was both closed over "
                             f"and passed as the argument {debug.arg_names[k]}")
    inputs = [x._donatable() if isinstance(x, Ref) else to_array(x) for x in leaves]
    inputs += [box._donatable() for box in closed_refs]
    outs = executable.execute(inputs if kept is None else [inputs[i] for i in kept])
    boxes = [x for x in leaves if isinstance(x, Ref)] + list(closed_refs)
    for box, value in zip(boxes, outs[n_results:]):
        box._set_owned(value)
    return tree_util.tree_unflatten(out_tree, outs[:n_results])


def _in_place_program(jitted, closed):
    """``(executable, kept inputs, number of results, Refs closed over)`` for a traced
    function with ref inputs: Refs it closes over become extra (last) ref inputs; every
    ref's final value follows the results, aliased to its input."""
    j = closed.jaxpr
    is_box = [type(c) is Ref for c in closed.consts]
    boxes = [c for c in closed.consts if type(c) is Ref]
    if boxes:
        closed = ClosedJaxpr(
            Jaxpr([v for v, b in zip(j.constvars, is_box) if not b],
                  list(j.invars) + [v for v, b in zip(j.constvars, is_box) if b],
                  j.outvars, j.eqns, j.debug_info),
            [c for c, b in zip(closed.consts, is_box) if not b])
    n_results = len(closed.out_avals)
    program = _stages.lower_program(closed, jitted.name, [False] * len(closed.in_avals),
                                    jitted.keep_unused)
    out_avals = list(closed.out_avals) + [a.inner_aval.strip_weak_type()
                                          for a in closed.in_avals if is_ref_aval(a)]
    executable = Executable(program.module, program.in_avals, out_avals)
    return executable, program.kept, n_results, boxes


def check_no_refs_returned(out_leaves, debug_info, out_tree=None):
    """JAX's error for a jit-compiled function that returns a ref: where it is in the
    result, and whether it was an argument or made inside."""
    for i, x in enumerate(out_leaves):
        if not (isinstance(x, Ref) or _is_staged_ref(x)):
            continue
        fn = debug_info.func_src_info if debug_info is not None else "a function"
        loc = origin = ""
        if out_tree is not None:
            paths = leaf_names("result", tree_util.tree_unflatten(
                out_tree, [0] * out_tree.num_leaves))
            loc = f" at output tree path {paths[i]}" if paths != ["result"] else ""
        if type(x) is DynamicJaxprTracer:
            trace, var = x._trace, x._var
            if var in trace.invars and debug_info is not None:
                k = trace.invars.index(var)
                name = debug_info.arg_names[k] if k < len(debug_info.arg_names) else f"args[{k}]"
                origin = f"\n\nThe returned mutable array was passed in as the argument {name}."
            else:
                eqn = next((e for e in trace.eqns if var in e.outvars), None)
                if eqn is not None and eqn.source_info is not None:
                    origin = ("\n\nThe returned mutable array was created on line "
                              f"{eqn.source_info}.")
        raise ValueError(f"function {fn} traced for jit returned a mutable array reference "
                         f"of type {x.aval}{loc}, but mutable array references cannot be "
                         f"returned.{origin}")


def closes_over_refs(closed) -> bool:
    return any(type(c) is Ref for c in closed.consts)


def call_closing_over_refs(jitted, closed, out_tree, arrays, key):
    """``jit(f)(x)`` where ``f`` mutates a ``Ref`` it closes over: the refs become extra
    arguments and results of the compiled program, written back after each call."""
    cache = jitted.__dict__.setdefault("_ref_closure_programs", {})
    is_box = [type(c) is Ref for c in closed.consts]
    boxes = [c for c in closed.consts if type(c) is Ref]
    entry = cache.get(key)
    if entry is None or entry[0] is not closed:
        j = closed.jaxpr
        opened = ClosedJaxpr(
            Jaxpr([v for v, b in zip(j.constvars, is_box) if not b],
                  list(j.invars) + [v for v, b in zip(j.constvars, is_box) if b],
                  j.outvars, j.eqns, j.debug_info),
            [c for c, b in zip(closed.consts, is_box) if not b])
        pure = _state_discharge.discharge(opened)
        program = _stages.lower_program(pure, jitted.name, [False] * len(pure.jaxpr.invars), True)
        entry = cache[key] = (closed, Executable(program.module, program.in_avals,
                                                 pure.out_avals))
    for box in boxes:
        box._checked_value()
    outs = entry[1].execute(list(arrays) + [to_array(b._value) for b in boxes])
    n_outs = len(outs) - len(boxes)
    for box, value in zip(boxes, outs[n_outs:]):
        box._value = value
    return tree_util.tree_unflatten(out_tree, outs[:n_outs])


import traxla.state.discharge as _state_discharge  # noqa: E402  (bound last, as in ref.py)
import traxla.api.stages as _stages  # noqa: E402  (it imports this module's importers: bound last)

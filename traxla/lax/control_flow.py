"""Structured control flow as primitives: ``cond``, ``switch``, ``while_loop``,
``fori_loop`` and ``scan``. Every branch or body is traced once, with
abstract values, into a closed jaxpr; values it closes over become explicit
leading operands, as in JAX. The staging decisions (constant merging, weak-type
promotion of initial carries, pruning of forwarded outputs, read-only carries
moved to constants) follow JAX 0.10.2 so that the jaxprs print identically."""
from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from traxla.base.arg_names import bound_leaf_names, leaf_names, plain_binding
from traxla.api_util import equality_errors, equality_errors_pytreedef, signature_or_none
from traxla import tree_util
from traxla.ir.effects import has_effects
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from traxla.ir.rules.control_flow import cond_p, same_type, scan_p, while_p
from traxla.ir.rules.refs import is_ref_aval
from traxla.api.jit_caches import _trace_context
from traxla.runtime.cache import on_clear
from traxla.runtime.placement import get_mesh
from traxla.tracer import Tracer, make_debug_info, trace_to_jaxpr
from traxla.tracer.traces import current_trace
from traxla.tracer.interpret import replaying
from traxla.tracer.staging import source_info_of_function
from traxla.api.hi_lowering import jaxpr_is_high
from traxla.lax import hi_control_flow as hi_cf
from traxla.tracer.values import hitype_avals
from traxla.lax.control_flow_caches import (fori_scan_body, fori_while_body, merged_branches,
                                            move_binders_to_front as _move_binders_to_front,
                                            prune_outputs as _prune_outputs)
from traxla.lax.control_flow_messages import (_differences, _mismatch_extra, _pvary_hint,
                                              _str_short)
from traxla.lax import (_convert_element_type, add, asarray, aval_of, clamp, concatenate,
                        expand_dims, index_in_dim, lt)
from traxla.runtime.dispatch import to_array
from traxla.ir.config import config
from traxla.ir.traceback_util import api_boundary
from traxla.errors import ConcretizationTypeError


# -- tracing sub-functions ---------------------------------------------------------

def _arg_names(fun, args) -> tuple:
    """Leaf names (``v``, ``c['a']``) of ``fun``'s arguments, for error messages."""
    sig = signature_or_none(fun)  # (one per code object for a plain function)
    if sig is None:
        return ()
    plain = plain_binding(sig, args, None)
    if plain is not None:
        return tuple(n for name, value in plain for n in leaf_names(name, value))
    try:
        bound = sig.bind(*args)
    except (TypeError, ValueError):
        return ()
    return tuple(bound_leaf_names(sig, bound))


# As JAX's ``trace_to_jaxpr`` (a weakref LRU cache on the function), a body or branch is
# traced once per function, argument types and trace context (``cond(p, g, g)`` traces ``g``
# once); one closing over the enclosing trace's tracers is kept for that trace only.
_fun_traces: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_traced_under: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # trace -> {(fun, key)}
_FUN_TRACE_LIMIT = 64  # entries per function
on_clear(_fun_traces.clear)
on_clear(_traced_under.clear)


def _trace(fun, in_tree, in_avals, traced_for, arg_names=(), debug_fun=None):
    """Traces ``fun`` on abstract values (once per function, types and context); returns
    (closed jaxpr whose leading invars are the closed-over constants, those constants,
    output tree)."""
    key = (in_tree, tuple(in_avals), traced_for, tuple(arg_names), debug_fun,
           _trace_context(), get_mesh(), replaying())
    try:
        per_fun = _fun_traces.get(fun)
        hit = None if per_fun is None else per_fun.get(key)
        if hit is None:
            enclosing = _traced_under.get(current_trace())
            hit = None if enclosing is None else enclosing.get((fun, key))
    except TypeError:  # a function that cannot be weakly referenced or hashed: not kept
        return _trace_uncached(fun, in_tree, in_avals, traced_for, arg_names, debug_fun)
    if hit is not None:
        return hit[0], list(hit[1]), hit[2]
    enclosing_trace = current_trace()
    closed, consts, out_tree = _trace_uncached(fun, in_tree, in_avals, traced_for, arg_names,
                                               debug_fun)
    entry = (closed, tuple(consts), out_tree)
    try:
        if not any(isinstance(c, Tracer) for c in consts):
            store, k = _fun_traces.setdefault(fun, {}), key
        else:
            store, k = _traced_under.setdefault(enclosing_trace, {}), (fun, key)
    except TypeError:
        return closed, consts, out_tree
    if len(store) >= _FUN_TRACE_LIMIT:
        store.clear()
    store[k] = entry
    return closed, consts, out_tree


def _trace_uncached(fun, in_tree, in_avals, traced_for, arg_names=(), debug_fun=None):
    out_store = []

    def flat_fun(*flat):
        out = fun(*tree_util.tree_unflatten(in_tree, flat))
        leaves, tree = tree_util.tree_flatten(out)
        out_store.append(tree)
        for i, leaf in enumerate(leaves):
            if getattr(leaf, "is_array_ref", False):  # a Ref object closed over, not staged
                raise _returned_ref_error(debug, leaf.aval, tree, i, "")
        return leaves

    debug = make_debug_info(fun if debug_fun is None else debug_fun, traced_for, arg_names)
    closed = trace_to_jaxpr(flat_fun, in_avals, debug)
    jaxpr = closed.jaxpr
    _check_no_refs_returned(jaxpr, out_store[0], debug)
    lifted = Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns,
                   jaxpr.debug_info)
    if hitype_avals:  # high-level (hijax) values made and used inside: the arrays' jaxpr
        return hi_cf.lowered_body(ClosedJaxpr(lifted, []), list(closed.consts), out_store[0])
    return ClosedJaxpr(lifted, []), list(closed.consts), out_store[0]


def _check_no_refs_returned(jaxpr, out_tree, debug):
    """JAX's error for a loop body or branch that returns a ref (a Ref carry included)."""
    for i, v in enumerate(jaxpr.outvars):
        if not is_ref_aval(v.aval):
            continue
        origin = ""
        if v in jaxpr.invars:
            k = jaxpr.invars.index(v)
            name = debug.arg_names[k] if k < len(debug.arg_names) else f"args[{k}]"
            origin = f"\n\nThe returned mutable array was passed in as the argument {name}."
        raise _returned_ref_error(debug, v.aval, out_tree, i, origin)


def _returned_ref_error(debug, aval, out_tree, i, origin):
    paths = leaf_names("result", tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves))
    loc = f" at output tree path {paths[i]}" if paths != ["result"] else ""
    return ValueError(
        f"function {debug.func_src_info} traced for {debug.traced_for} returned a mutable "
        f"array reference of type {aval}{loc}, but mutable array references cannot be "
        f"returned.{origin}")


def _merge_common_consts(traced):
    """Concatenates every jaxpr's constants (each jaxpr gets unused binders for the
    others'), then de-duplicates them by identity, keeping the first, as JAX does."""
    all_consts = [c for _, consts, _ in traced for c in consts]
    first: dict[int, int] = {}
    for i, c in enumerate(all_consts):
        first.setdefault(id(c), i)
    keep = sorted(set(first.values()))
    consts = [all_consts[i] for i in keep]

    def merge():
        jaxprs, offset = [], 0
        for closed, own, _ in traced:
            jaxpr = closed.jaxpr
            n = len(own)
            padded = ([Var(aval_of(c)) for c in all_consts[:offset]] + jaxpr.invars[:n]
                      + [Var(aval_of(c)) for c in all_consts[offset + n:]])
            canonical = {}
            for i, (c, v) in enumerate(zip(all_consts, padded)):
                canonical.setdefault(id(c), v)
            subst = {v: canonical[id(c)] for c, v in zip(all_consts, padded)}
            const_vars = [padded[i] for i in keep]
            new = _substitute(jaxpr, subst, const_vars + jaxpr.invars[n:])
            jaxprs.append(ClosedJaxpr(new, []))
            offset += n
        return tuple(jaxprs)
    # (the same traces with the same sharing of constants: the same merged jaxprs)
    pattern = tuple(first[id(c)] for c in all_consts)
    return list(merged_branches([t[0] for t in traced], pattern, merge)), consts


def _substitute(jaxpr: Jaxpr, subst: dict, invars) -> Jaxpr:
    if all(k is v for k, v in subst.items()):
        return Jaxpr([], invars, jaxpr.outvars, jaxpr.eqns, jaxpr.debug_info)
    sub = lambda a: subst.get(a, a) if isinstance(a, Var) else a  # noqa: E731
    eqns = [e.replace(invars=[sub(a) for a in e.invars]) for e in jaxpr.eqns]
    return Jaxpr([], invars, [sub(a) for a in jaxpr.outvars], eqns, jaxpr.debug_info)


def _forwarding(jaxpr: Jaxpr) -> list:
    """For each output, the index of the input it simply forwards, else None."""
    index = {v: i for i, v in enumerate(jaxpr.invars)}
    return [None if isinstance(v, Literal) else index.get(v) for v in jaxpr.outvars]


# As JAX caches the tracing of a loop function (by identity: fori_loop's condition is one
# module-level function) and the DCE of a jaxpr, two fori_loops share their condition jaxpr
# (printed hoisted). Keys hold the jaxpr itself so that an id is never reused while cached.
_fori_cond_traces: dict = {}
_dce_cache: dict = {}
_CACHE_LIMIT = 4096
on_clear(_fori_cond_traces.clear)
on_clear(_dce_cache.clear)


def _remember(cache, key, value):
    if len(cache) >= _CACHE_LIMIT:  # bounded: drop everything rather than grow forever
        cache.clear()
    cache[key] = value


def _dce(closed: ClosedJaxpr, instantiate):
    """Drops equations whose outputs are unused and inputs that are neither used nor
    instantiated; returns (jaxpr, used inputs)."""
    key = (id(closed), tuple(instantiate), replaying())
    hit = _dce_cache.get(key)
    if hit is None or hit[0] is not closed:
        hit = (closed, _dce_uncached(closed, instantiate))
        _remember(_dce_cache, key, hit)
    new, used_inputs = hit[1]
    return new, list(used_inputs)


def _dce_uncached(closed: ClosedJaxpr, instantiate):
    j = closed.jaxpr
    used = {v for v in j.outvars if isinstance(v, Var)}
    eqns = []
    for eqn in reversed(j.eqns):
        if any(v in used for v in eqn.outvars) or has_effects(eqn):
            eqns.append(eqn)
            used.update(a for a in eqn.invars if isinstance(a, Var))
    eqns.reverse()
    used_inputs = [inst or v in used for v, inst in zip(j.invars, instantiate)]
    invars = [v for v, u in zip(j.invars, used_inputs) if u]
    return ClosedJaxpr(Jaxpr([], invars, j.outvars, eqns, j.debug_info), []), used_inputs


def _as_output(x):
    """A forwarded operand returned in place of a pruned output (JAX's ``lax.asarray``)."""
    if isinstance(x, Tracer):
        return x
    return to_array(x)


# -- error messages ----------------------------------------------------------------

def _describe(fun):
    return source_info_of_function(fun)


def _same(a, b) -> bool:
    """Types agree up to weak typing, varying manual axes included (JAX's ``typematch``)."""
    return same_type(a, b) and a.vma == b.vma


def _check_branch_outputs(api_name, name1, name2, f1, f2, tree1, avals1, tree2, avals2):
    info1, info2 = _describe(f1), _describe(f2)
    try:
        outs1 = tree_util.tree_unflatten(tree1, avals1)
        paths = [p for p, _ in tree_util.tree_flatten_with_path(outs1)[0]]
    except Exception:  # noqa: BLE001
        paths = [None] * len(avals1)
    component = lambda p: f" at path {tree_util.keystr(p)}" if p else ""  # noqa: E731
    if tree1 != tree2:
        diffs = [f"{name1} output{component(p)} is a {thing1} but "
                 f"{name2} output{component(p)} is a {thing2}, so {expl}"
                 for p, thing1, thing2, expl in equality_errors_pytreedef(tree1, tree2)]
        if not diffs:
            return
        differences = _differences(diffs, capitalize=False)
        raise TypeError(
            f"{api_name} branch outputs must have the same pytree structure, but they differ:\n\n"
            f"{name1} is {info1}\n{name2} is {info2}\n\n{differences}\n"
            f"Revise {name1} and/or {name2} so that they have the same pytree structure.")
    if not all(map(_same, avals1, avals2)):
        diffs = [f"the output of {name1}{component(p)} has type {_str_short(a1)} but the "
                 f"corresponding output of {name2} has type {_str_short(a2)}"
                 f"{_mismatch_extra(a1, a2)}"
                 for p, a1, a2 in zip(paths, avals1, avals2) if not _same(a1, a2)]
        differences = _differences(diffs, blank_lines=False)
        # (JAX's wording, its axes tuple included: the first output's minus the second's)
        hint = _pvary_hint([
            f"applying `jax.lax.pcast(..., {tuple(n for n in a.vma if n not in b.vma)}, "
            f"to='varying')` to the output of {n}{component(p)}"
            for p, aval1, aval2 in zip(paths, avals1, avals2)
            for n, a, b in ((name1, aval2, aval1), (name2, aval1, aval2))
            if not _same(a, b) and set(b.vma) - set(a.vma)], blank_lines=False)
        raise TypeError(
            f"{api_name} branches must have equal output types but they differ.\n\n"
            f"{name1} is {info1}\n{name2} is {info2}\n\n{differences}\n{hint}"
            f"Revise {name1} and/or {name2} so that all output types match.")


def _check_carry_type(name, body_fun, in_tree, in_avals, out_tree, out_avals):
    """JAX's ``_check_carry_type``: names the carry leaf after ``body_fun``'s first
    parameter (``c['a']``) and says why the types differ."""
    sig = signature_or_none(body_fun)  # (one per code object for a plain function)
    carry_name = next(iter(sig.parameters), None) if sig is not None else None
    if carry_name:
        component = lambda p: (f"the input carry component {carry_name}{tree_util.keystr(p)}"  # noqa: E731
                               if p else f"the input carry {carry_name}")
    else:
        component = lambda p: (f"the input carry at path {tree_util.keystr(p)}"  # noqa: E731
                               if p else "the input carry")
    if in_tree != out_tree:
        try:
            in_val = tree_util.tree_unflatten(in_tree, in_avals)
            out_val = tree_util.tree_unflatten(out_tree, out_avals)
        except Exception:  # noqa: BLE001
            out_val = None
        if out_val is None:
            differences = (f"the input tree structure is:\n{in_tree}\n"
                           f"the output tree structure is:\n{out_tree}\n")
        else:
            diffs = [f"{component(path)} is a {thing1} but the corresponding component of the "
                     f"carry output is a {thing2}, so {expl}"
                     for path, thing1, thing2, expl in equality_errors((), in_val, out_val)]
            if not diffs:
                return
            differences = _differences(diffs)
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree structure, "
            f"but they differ:\n\n{differences}\n"
            "Revise the function so that the carry output has the same pytree structure as the "
            "carry input.")
    if not all(map(_same, in_avals, out_avals)):
        paths = [p for p, _ in tree_util.tree_flatten_with_path(
            tree_util.tree_unflatten(in_tree, list(range(len(in_avals)))))[0]]
        diffs = [f"{component(path)} has type {_str_short(a)} but the corresponding output carry "
                 f"component has type {_str_short(b)}{_mismatch_extra(a, b)}"
                 for path, a, b in zip(paths, in_avals, out_avals) if not _same(a, b)]
        differences = _differences(diffs)
        hint = _pvary_hint([
            f"applying `jax.lax.pcast(..., {tuple(n for n in b.vma if n not in a.vma)}, "
            f"to='varying')`, to the initial carry value corresponding to {component(path)}"
            for path, a, b in zip(paths, in_avals, out_avals)
            if not _same(a, b) and set(b.vma) - set(a.vma)], blank_lines=True)
        raise TypeError(
            f"{name} function carry input and carry output must have equal types, but they "
            f"differ:\n\n{differences}\n{hint}"
            "Revise the function so that all output types match the corresponding input types.")


# -- cond and switch -----------------------------------------------------------------

def _check_callables(*funs, what):
    if not all(callable(f) for f in funs):
        raise TypeError(what)


_no_operand = object()  # ``operand=`` (JAX's older single-operand convention) not passed


@api_boundary
def cond(pred, true_fun, false_fun, *operands, operand=_no_operand):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; both are traced
    (``true_fun`` first), and the equation lists the branches as (false, true)."""
    if not (callable(true_fun) and callable(false_fun)):
        # JAX's older form cond(pred, true_operand, true_fun, false_operand, false_fun)
        # (blackjax's NUTS uses it): each branch gets its own operand.
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if operand is not _no_operand:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                            f"passed, got operand={operand} and positional operands {operands}")
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    pred_aval = aval_of(pred)
    if pred_aval.shape:
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {tuple(pred_aval.shape)}.")
    if not dtypes.is_bool(pred_aval.dtype):
        if dtypes.is_int(pred_aval.dtype) or dtypes.is_float(pred_aval.dtype):
            pred = pred != 0
        else:
            raise TypeError(f"Pred type must be either boolean or number, got {pred_aval.dtype}.")
    if config.disable_jit and _is_concrete(pred):  # as JAX: the chosen branch, in Python
        return true_fun(*operands) if pred else false_fun(*operands)

    leaves, in_tree = tree_util.tree_flatten(operands)
    if hi_cf.has_hi(leaves):  # high-level (hijax) operands: their arrays
        return hi_cf.lowered_cond(cond, pred, true_fun, false_fun, operands)
    avals = [aval_of(x) for x in leaves]
    traced = [_trace(f, in_tree, avals, "cond",
                     _arg_names(f, operands), debug_fun=f) for f in (true_fun, false_fun)]
    if hitype_avals and any(jaxpr_is_high(j) for j, _, _ in traced):  # high-level results
        return hi_cf.lowered_cond(cond, pred, true_fun, false_fun, operands)
    (true_j, false_j), consts = _merge_common_consts(traced)
    _check_branch_outputs("cond", "true_fun", "false_fun", true_fun, false_fun,
                          traced[0][2], true_j.out_avals, traced[1][2], false_j.out_avals)
    t_fwd, f_fwd = _forwarding(true_j.jaxpr), _forwarding(false_j.jaxpr)
    in_fwd = [i if i == j else None for i, j in zip(t_fwd, f_fwd)]
    keep = [f is None for f in in_fwd]
    true_j, false_j = _prune_outputs(true_j, keep), _prune_outputs(false_j, keep)
    index = _convert_element_type(pred, dtypes.int32, False)
    outs = cond_p.bind(index, *consts, *leaves, branches=(false_j, true_j))
    return tree_util.tree_unflatten(traced[0][2], _unprune(outs, in_fwd, consts + leaves))


def _unprune(outs, in_fwd, all_inputs):
    it = iter(outs)
    return [next(it) if f is None else _as_output(all_inputs[f]) for f in in_fwd]


@api_boundary
def switch(index, branches, *operands, operand=_no_operand):
    """``branches[clamp(0, index, n - 1)](*operands)``; every branch is traced."""
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if operand is not _no_operand:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                            f"passed, got operand={operand} and positional operands {operands}")
        operands = (operand,)
    index_aval = aval_of(index)
    if index_aval.shape:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{tuple(index_aval.shape)}.")
    if not dtypes.is_int(index_aval.dtype):
        raise TypeError(f"Index type must be an integer, got {index} as {index_aval.dtype}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = _convert_element_type(index, dtypes.int32, False)
    lo = _convert_element_type(0, dtypes.int32, False)
    hi = _convert_element_type(len(branches) - 1, dtypes.int32, False)
    index = clamp(lo, index, hi)
    return _switch_internal(index, branches, operands)


def _switch_internal(index, branches, operands, branches_platforms=None):
    """``cond`` of the traced ``branches`` on an int32 ``index`` already in range
    (``platform_dependent`` gives its ``branches_platforms``)."""
    if config.disable_jit and _is_concrete(index):
        return branches[int(index)](*operands)
    leaves, in_tree = tree_util.tree_flatten(operands)
    avals = [aval_of(x) for x in leaves]
    traced = [_trace(f, in_tree, avals, "switch",
                     _arg_names(f, operands), debug_fun=f) for f in branches]
    jaxprs, consts = _merge_common_consts(traced)
    for i in range(1, len(branches)):
        _check_branch_outputs("switch", "branch 0", f"branch{i}", branches[0], branches[i],
                              traced[0][2], jaxprs[0].out_avals, traced[i][2], jaxprs[i].out_avals)
    fwds = [_forwarding(j.jaxpr) for j in jaxprs]
    in_fwd = [xs[0] if len(set(xs)) == 1 else None for xs in zip(*fwds)]
    keep = [f is None for f in in_fwd]
    jaxprs = [_prune_outputs(j, keep) for j in jaxprs]
    params = {} if branches_platforms is None else {"branches_platforms": branches_platforms}
    outs = cond_p.bind(index, *consts, *leaves, branches=tuple(jaxprs), **params)
    return tree_util.tree_unflatten(traced[0][2], _unprune(outs, in_fwd, consts + leaves))


# -- loops -----------------------------------------------------------------------------

def _promote_weak_typed_inputs(values, in_avals, out_avals):
    """A weakly typed initial carry (e.g. Python ``0``) whose type differs from what the
    body returns is converted to the promoted type; says whether any changed."""
    new, changed = list(values), False
    for i, (v, a, b) in enumerate(zip(values, in_avals, out_avals)):
        if a.weak_type and not same_type(a, b):
            dtype = dtypes.result_type_of((a.dtype, True), (b.dtype, b.weak_type))[0]
            new[i] = _convert_element_type(v, dtype, False)
            changed = True
    return new, changed


@api_boundary
def while_loop(cond_fun, body_fun, init_val):
    """``while cond_fun(val): val = body_fun(val)`` as one ``while`` equation."""
    _check_callables(cond_fun, body_fun,
                     what="lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.disable_jit:  # as JAX: a Python loop, unless a value is abstract (under vmap)
        try:
            val = tree_util.tree_map(asarray, init_val)
            while cond_fun(val):
                val = tree_util.tree_map(asarray, body_fun(val))
            return val
        except ConcretizationTypeError:
            pass
    return _while_loop(cond_fun, body_fun, init_val)


def _while_loop(cond_fun, body_fun, init_val, body_debug=None):
    leaves, val_tree = tree_util.tree_flatten(init_val)
    in_tree = tree_util.treedef_tuple([val_tree])  # the functions take one argument
    cond_names = _arg_names(cond_fun, (init_val,))
    body_for, body_debug_fun, body_names = body_debug or (
        "while_body", body_fun, _arg_names(body_fun, (init_val,)))

    def trace_cond(avals):
        if cond_fun is not _fori_cond_fun:
            return _trace(cond_fun, in_tree, avals, "while_cond", cond_names)
        key = (tuple(avals), in_tree, cond_names, config.enable_x64, replaying())
        hit = _fori_cond_traces.get(key)
        if hit is None:
            hit = _trace(cond_fun, in_tree, avals, "while_cond", cond_names)
            _remember(_fori_cond_traces, key, hit)
        return hit[0], list(hit[1]), hit[2]

    def create(avals):
        cond_j, cond_consts, cond_tree = trace_cond(avals)
        body_j, body_consts, body_tree = _trace(body_fun, in_tree, avals, body_for, body_names,
                                                debug_fun=body_debug_fun)
        out = cond_j.out_avals
        if not tree_util.treedef_is_leaf(cond_tree) or len(out) != 1:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
        if out[0].shape or not dtypes.is_bool(out[0].dtype):
            raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                            f"[{', '.join(map(repr, out))}].")
        return cond_j, cond_consts, body_j, body_consts, body_tree

    avals = [aval_of(x) for x in leaves]
    cond_j, cond_consts, body_j, body_consts, body_tree = create(avals)
    body_out = body_j.out_avals
    if len(body_out) != len(avals):
        _check_carry_type("while_loop body", body_fun, val_tree, avals, body_tree, body_out)
    leaves, changed = _promote_weak_typed_inputs(leaves, avals, body_out)
    if changed:
        avals = [aval_of(x) for x in leaves]
        cond_j, cond_consts, body_j, body_consts, body_tree = create(avals)
        body_out = body_j.out_avals
    _check_carry_type("while_loop body", body_fun, val_tree, avals, body_tree, body_out)

    # A carry the body forwards unchanged and cond_fun does not read becomes a body const.
    nb, nc = len(body_consts), len(cond_consts)
    body_fwd = _forwarding(body_j.jaxpr)
    carry_nofwd = [nb + i != f for i, f in enumerate(body_fwd)]
    cond_dced, keep_cond = _dce(cond_j, [True] * nc + carry_nofwd)
    move_to_const = [not k for k in keep_cond[nc:]]
    init_vals, new_consts = leaves, []
    if any(move_to_const):
        cond_j = cond_dced
        body_j = _prune_outputs(body_j, [not m for m in move_to_const])
        body_j = _move_binders_to_front(body_j, [False] * nb + move_to_const)
        new_consts = [x for x, m in zip(leaves, move_to_const) if m]
        init_vals = [x for x, m in zip(leaves, move_to_const) if not m]
        body_consts = new_consts + body_consts
    outs = while_p.bind(*cond_consts, *body_consts, *init_vals, cond_jaxpr=cond_j,
                        body_jaxpr=body_j, cond_nconsts=nc, body_nconsts=len(body_consts))
    if any(move_to_const):
        outs_it, consts_it = iter(outs), iter(new_consts)
        outs = [next(consts_it) if m else next(outs_it) for m in move_to_const]
    return tree_util.tree_unflatten(body_tree, outs)


@api_boundary
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``: a ``scan`` when the trip
    count is static, a ``while`` otherwise."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lower_aval, upper_aval = aval_of(lower), aval_of(upper)
    lower_dtype = dtypes.canonicalize(lower_aval.dtype)
    upper_dtype = dtypes.canonicalize(upper_aval.dtype)
    if lower_dtype == upper_dtype:
        dtype = lower_dtype
    else:
        dtype = None
        if dtypes.is_signed_int(lower_dtype) and dtypes.is_signed_int(upper_dtype):
            if lower_aval.weak_type and not upper_aval.weak_type:
                dtype = upper_dtype
            elif not lower_aval.weak_type and upper_aval.weak_type:
                dtype = lower_dtype
        if dtype is None:
            raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                            f"{lower_dtype.name} and {upper_dtype.name}")
    body_names = _arg_names(body_fun, (0, init_val))

    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        lower_, upper_ = int(np.asarray(lower)), int(np.asarray(upper))
        if config.disable_jit and upper_ <= lower_:
            return init_val  # as JAX: the Python scan below has no zero-length form

        (_, result), _ = _scan(fori_scan_body(body_fun), (lower_, init_val), None,
                               length=max(upper_ - lower_, 0),
                               unroll=False if unroll is None else unroll,
                               traced_for="fori_loop", debug_fun=body_fun, arg_names=body_names)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically "
                         "known.")
    if lower_dtype != dtype:
        lower = _convert_element_type(lower, dtype, False)
    if upper_dtype != dtype:
        upper = _convert_element_type(upper, dtype, False)

    names = (body_names[:1] + ("",) + body_names[1:]) if body_names else ()
    _, _, result = _while_loop(_fori_cond_fun, fori_while_body(body_fun, _add_one),
                               (lower, upper, init_val), body_debug=("fori_loop", body_fun, names))
    return result


def _add_one(i):
    return add(i, _convert_element_type(1, aval_of(i).dtype, False))


def _fori_cond_fun(loop_carry):
    i, hi, _ = loop_carry
    return lt(i, hi)


def _concretization_error(tracer, msg):
    tracer._check_alive()
    return ConcretizationTypeError(
        "Abstract tracer value encountered where concrete value is expected: "
        f"{tracer._error_repr()}\n{msg}{tracer._origin_msg()}\n")


def _infer_scan_length(x_leaves, length):
    sizes = []
    for x in x_leaves:
        shape = aval_of(x).shape
        if not shape:
            raise ValueError("scan got value with no leading axis to scan over: "
                             f"{_str_short(aval_of(x))}.")
        sizes.append(shape[0])
    if length is not None:
        if isinstance(length, Tracer):
            raise _concretization_error(
                length, "The `length` argument to `scan` expects a concrete `int` value. For "
                "scan-like iteration with a dynamic length, use `while_loop` or `fori_loop`.")
        length = int(length)
        if not all(length == s for s in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {sizes}.")
        return length
    if len(set(sizes)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(map(str, sizes))}.")
    if not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return sizes[0]


@api_boundary
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """``carry, ys = scan(f, init, xs)``: ``f(carry, x) -> (carry, y)`` over the leading axis,
    traced exactly once (twice only when a weakly typed ``init`` must adopt the body's type)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    return _scan(f, init, xs, length, reverse, unroll)


def _scan(f, init, xs, length=None, reverse=False, unroll=1, *, traced_for="scan",
          debug_fun=None, arg_names=None):
    x_leaves, _ = tree_util.tree_flatten(xs)
    carry_leaves, carry_tree = tree_util.tree_flatten(init)
    if hi_cf.has_hi(carry_leaves + x_leaves):  # high-level (hijax) values: their arrays
        return hi_cf.lowered_scan(scan, f, init, xs, length, reverse, unroll)
    length = _infer_scan_length(x_leaves, length)
    if config.disable_jit:
        return _scan_in_python(f, init, xs, length, reverse)
    x_avals = [_strip_leading(aval_of(x)) for x in x_leaves]
    in_tree = tree_util.tree_structure((init, xs))
    if arg_names is None:
        arg_names = _arg_names(f, (init, xs))

    def create(carry_avals):
        jaxpr, consts, out_tree = _trace(f, in_tree, carry_avals + x_avals, traced_for,
                                         arg_names, debug_fun=debug_fun or f)
        children = (tree_util.treedef_children(out_tree)
                    if not tree_util.treedef_is_leaf(out_tree) else [])
        if len(children) != 2:
            out = tree_util.tree_unflatten(out_tree, jaxpr.out_avals)
            raise TypeError(f"scan body output must be a pair, got {_pair_repr(out)}.")
        return jaxpr, consts, children

    carry_avals = [aval_of(c) for c in carry_leaves]
    jaxpr, consts, (carry_out_tree, ys_tree) = create(carry_avals)
    if hitype_avals and jaxpr_is_high(jaxpr):  # the body makes high-level values
        return hi_cf.lowered_scan(scan, f, init, xs, length, reverse, unroll)
    n_carry = len(carry_avals)
    carry_out = jaxpr.out_avals[:carry_out_tree.num_leaves]
    if carry_out_tree.num_leaves != n_carry:
        _check_carry_type("scan body", f, carry_tree, carry_avals, carry_out_tree, carry_out)
    carry_leaves, changed = _promote_weak_typed_inputs(carry_leaves, carry_avals, carry_out)
    if changed:
        carry_avals = [aval_of(c) for c in carry_leaves]
        jaxpr, consts, (carry_out_tree, ys_tree) = create(carry_avals)
        carry_out = jaxpr.out_avals[:n_carry]
    _check_carry_type("scan body", f, carry_tree, carry_avals, carry_out_tree, carry_out)

    if isinstance(unroll, Tracer):
        raise _concretization_error(
            unroll, "The `unroll` argument to `scan` expects a concrete `int` or `bool` value.")
    if isinstance(unroll, (bool, np.bool_)):
        unroll = max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")

    # A carry the body forwards unchanged is read-only: it becomes a const.
    nc, nx = len(consts), len(x_leaves)
    n_ys = len(jaxpr.out_avals) - n_carry
    fwd = _forwarding(jaxpr.jaxpr)
    carry_fwd, ext_fwd = fwd[:n_carry], fwd[n_carry:]
    move_to_const = [nc + i == f for i, f in enumerate(carry_fwd)]
    args_flat = list(carry_leaves) + list(x_leaves)
    num_carry, new_consts = n_carry, []
    if any(move_to_const):
        jaxpr = _prune_outputs(jaxpr, [not m for m in move_to_const] + [True] * n_ys)
        jaxpr = _move_binders_to_front(jaxpr, [False] * nc + move_to_const + [False] * nx)
        mask = move_to_const + [False] * nx
        new_consts = [a for a, m in zip(args_flat, mask) if m]
        args_flat = [a for a, m in zip(args_flat, mask) if not m]
        consts = new_consts + consts
        num_carry -= len(new_consts)
    # A y that is just the x slice is the stacked xs: forward it instead of copying.
    ext_to_ext = [i - len(consts) if i is not None and i >= num_carry + len(consts) else None
                  for i in ext_fwd]
    jaxpr = _prune_outputs(jaxpr, [True] * num_carry + [i is None for i in ext_to_ext])

    outs = scan_p.bind(*consts, *args_flat, jaxpr=jaxpr, length=length, reverse=bool(reverse),
                       unroll=unroll, num_consts=len(consts), num_carry=num_carry,
                       linear=(False,) * (len(consts) + len(args_flat)), _split_transpose=False)
    carry_part, ys_part = outs[:num_carry], iter(outs[num_carry:])
    ys = [next(ys_part) if i is None else _as_output(args_flat[i]) for i in ext_to_ext]
    if any(move_to_const):
        carry_it, consts_it = iter(carry_part), iter(new_consts)
        carry_part = [next(consts_it) if m else next(carry_it) for m in move_to_const]
    return (tree_util.tree_unflatten(carry_tree, carry_part),
            tree_util.tree_unflatten(ys_tree, ys))


def _is_concrete(x) -> bool:
    """JAX's ``core.is_concrete``: a value, or a tracer with a concrete value behind it."""
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def _scan_in_python(f, init, xs, length, reverse):
    """``scan`` under ``disable_jit()``, as JAX: ``f`` called once per step, in Python."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry, ys = init, []
    steps = range(length)
    for i in (reversed(steps) if reverse else steps):
        carry, y = f(carry, tree_util.tree_map(
            lambda x: index_in_dim(x, i, keepdims=False), xs))
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = tree_util.tree_map(
        lambda *y: concatenate([expand_dims(v, (0,)) for v in y], 0), *ys)
    return carry, stacked


def _pair_repr(out):
    if isinstance(out, ShapedArray):
        return str(out)
    return repr(out)


def _strip_leading(aval):
    """The type of one slice of ``aval`` along its leading axis: its sharding without that
    axis's entry (unreduced and reduced axes kept), as JAX's ``mapped_aval``."""
    st = aval.sharding_type
    if st is not None:
        spec = tuple(st.spec) + (None,) * (len(aval.shape) - len(st.spec))
        st = st.with_spec(st.spec.update(partitions=spec[1:]))
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type, st, aval.memory_space)

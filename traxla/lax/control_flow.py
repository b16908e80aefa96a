"""Structured control flow as primitives: ``cond``, ``switch``, ``while_loop``,
``fori_loop`` and ``scan``. Every branch or body is traced once, with
abstract values, into a closed jaxpr; values it closes over become explicit
leading operands, as in JAX."""
from __future__ import annotations

import numpy as np

from .. import tree_util
from ..ir import dtypes
from ..ir.avals import ShapedArray
from ..ir.core import ClosedJaxpr, Jaxpr, Var
from ..ir.rules.control_flow import cond_p, same_type, scan_p, while_p
from ..tracer import Tracer, make_debug_info, trace_to_jaxpr
from ..tracer.staging import source_info_of_function
from . import _convert_element_type, aval_of, clamp


# -- tracing sub-functions ---------------------------------------------------------

def _trace(fun, in_tree, in_avals, what):
    """Traces ``fun`` on abstract values; returns (closed jaxpr with no constvars,
    closed-over constants, output tree)."""
    out_store = []

    def flat_fun(*flat):
        out = fun(*tree_util.tree_unflatten(in_tree, flat))
        leaves, tree = tree_util.tree_flatten(out)
        out_store.append(tree)
        return leaves

    closed = trace_to_jaxpr(flat_fun, in_avals, make_debug_info(fun, what, ()))
    jaxpr = closed.jaxpr
    lifted = Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns,
                   jaxpr.debug_info)
    return ClosedJaxpr(lifted, []), list(closed.consts), out_store[0]


def _common_consts(traced):
    """Gives every branch the constants of all branches (unused ones ignored)."""
    all_consts, index = [], {}
    for _, consts, _ in traced:
        for c in consts:
            if id(c) not in index:
                index[id(c)] = len(all_consts)
                all_consts.append(c)
    jaxprs = []
    for closed, consts, _ in traced:
        jaxpr = closed.jaxpr
        own = {index[id(c)]: v for c, v in zip(consts, jaxpr.invars[:len(consts)])}
        const_vars = [own.get(i) or Var(_aval(c)) for i, c in enumerate(all_consts)]
        new = Jaxpr([], const_vars + jaxpr.invars[len(consts):], jaxpr.outvars, jaxpr.eqns,
                    jaxpr.debug_info)
        jaxprs.append(ClosedJaxpr(new, []))
    return jaxprs, all_consts


def _aval(x):
    return aval_of(x)


def _describe(fun):
    return source_info_of_function(fun)


def _mismatch(what_a, what_b, a, b):
    why = "shapes" if a.shape != b.shape else "dtypes"
    return (f"The output of {what_a} has type {a.str_short(False)} but the corresponding output "
            f"of {what_b} has type {b.str_short(False)}, so the {why} do not match.")


def _check_branches(kind, names, funs, traced):
    trees = [t for _, _, t in traced]
    header = "\n".join(f"{n} is {_describe(f)}" for n, f in zip(names, funs))
    for k in range(1, len(traced)):
        if trees[k] != trees[0]:
            raise TypeError(
                f"{kind} branch outputs must have the same pytree structure, but they differ:\n\n"
                f"{header}\n\n{names[0]} output is {_tree_kind(trees[0])} but {names[k]} output is "
                f"{_tree_kind(trees[k])}, so their Python types differ.\n\n"
                f"Revise {names[0]} and/or {names[k]} so that they have the same pytree structure.")
        for a, b in zip(traced[0][0].out_avals, traced[k][0].out_avals):
            if not same_type(a, b):
                raise TypeError(
                    f"{kind} branches must have equal output types but they differ.\n\n{header}\n\n"
                    f"{_mismatch(names[0], names[k], a, b)}\n\n"
                    f"Revise {names[0]} and/or {names[k]} so that all output types match.")


def _tree_kind(tree):
    if tree_util.treedef_is_leaf(tree):
        return "a pytree leaf"
    node = tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    return f"a {type(node)}"


# -- cond and switch -----------------------------------------------------------------

def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; both are traced."""
    pred_aval = aval_of(pred)
    if pred_aval.shape:
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {pred_aval.shape}.")
    if not (dtypes.is_bool(pred_aval.dtype) or dtypes.is_int(pred_aval.dtype)
            or dtypes.is_float(pred_aval.dtype)):
        raise TypeError(f"Pred type must be either boolean or number, got {pred_aval.dtype}.")
    if not dtypes.is_bool(pred_aval.dtype):
        from . import ne
        pred = ne(pred, _convert_element_type(0, pred_aval.dtype, False))
    index = _convert_element_type(pred, dtypes.int32, False)
    return _switch_impl("cond", ["false_fun", "true_fun"], index, [false_fun, true_fun], operands,
                        display_names=["true_fun", "false_fun"])


def switch(index, branches, *operands):
    """``branches[clamp(0, index, n - 1)](*operands)``; every branch is traced."""
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    index_aval = aval_of(index)
    if index_aval.shape or not dtypes.is_int(index_aval.dtype):
        raise TypeError(f"Branch index must be scalar integer, got {index_aval.str_short(False)}.")
    if len(branches) == 1:
        return branches[0](*operands)
    index = _convert_element_type(index, dtypes.int32, False)
    lo = _convert_element_type(0, dtypes.int32, False)
    hi = _convert_element_type(len(branches) - 1, dtypes.int32, False)
    index = clamp(lo, index, hi)
    names = ["branch 0"] + [f"branch{i}" for i in range(1, len(branches))]
    return _switch_impl("switch", names, index, branches, operands)


def _switch_impl(kind, names, index, funs, operands, display_names=None):
    leaves, in_tree = tree_util.tree_flatten(operands)
    avals = [aval_of(x) for x in leaves]
    traced = [_trace(lambda *ops, f=f: f(*ops), in_tree, avals, kind) for f in funs]
    for t, f in zip(traced, funs):
        t[0].jaxpr.debug_info = f
    if display_names is not None:  # report true_fun first, as JAX does
        order = [1, 0]
        _check_branches(kind, display_names, [funs[i] for i in order], [traced[i] for i in order])
    else:
        _check_branches(kind, names, funs, traced)
    jaxprs, consts = _common_consts(traced)
    outs = cond_p.bind(index, *consts, *leaves, branches=tuple(jaxprs))
    return tree_util.tree_unflatten(traced[0][2], outs)


# -- loops -----------------------------------------------------------------------------

def _carry_mismatch(what, in_tree, in_avals, out_avals):
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(in_tree, list(range(len(in_avals)))))[0]]
    for path, a, b in zip(paths, in_avals, out_avals):
        if not same_type(a, b):
            comp = f"c{path}" if path else "c"
            who = f"The input carry component {comp}" if path else "The input carry c"
            why = "shapes" if a.shape != b.shape else "dtypes"
            return TypeError(
                f"{what} function carry input and carry output must have equal types, but they "
                f"differ:\n\n{who} has type {a.str_short(False)} but the corresponding output "
                f"carry component has type {b.str_short(False)}, so the {why} do not match.\n\n"
                "Revise the function so that all output types match the corresponding input types.")
    return None


def _promote_weak_carry(init_leaves, in_avals, out_avals):
    """A weakly typed initial carry (e.g. Python ``0.0``) adopts the type the body returns."""
    changed = False
    new_leaves = list(init_leaves)
    for i, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and (a.dtype != b.dtype or a.weak_type != b.weak_type) and a.shape == b.shape:
            if dtypes.result_type_of((a.dtype, True), (b.dtype, b.weak_type))[0] == b.dtype:
                new_leaves[i] = _convert_element_type(init_leaves[i], b.dtype, b.weak_type)
                changed = True
    return new_leaves, changed


def while_loop(cond_fun, body_fun, init_val):
    """``while cond_fun(val): val = body_fun(val)`` as one ``while`` equation."""
    leaves, val_tree = tree_util.tree_flatten(init_val)
    in_tree = tree_util.treedef_tuple([val_tree])  # the functions take one argument
    for attempt in range(2):
        avals = [aval_of(x) for x in leaves]
        cond_j, cond_consts, cond_tree = _trace(cond_fun, in_tree, avals, "while_loop")
        out = cond_j.out_avals
        if len(out) != 1 or out[0].shape or not dtypes.is_bool(out[0].dtype):
            raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                            f"{[_repr_aval(a) for a in out]}.")
        body_j, body_consts, body_tree = _trace(body_fun, in_tree, avals, "while_loop")
        if body_tree != val_tree:
            raise TypeError("body_fun output and input must have the same pytree structure, got "
                            f"{body_tree} and {val_tree}.")
        if attempt == 0:
            leaves, changed = _promote_weak_carry(leaves, avals, body_j.out_avals)
            if changed:
                continue
        break
    err = _carry_mismatch("while_loop body", val_tree, avals, body_j.out_avals)
    if err is not None:
        raise err
    outs = while_p.bind(*cond_consts, *body_consts, *leaves, cond_jaxpr=cond_j, body_jaxpr=body_j,
                        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts))
    return tree_util.tree_unflatten(val_tree, outs)


def _repr_aval(a):
    return repr(a)


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``: a ``scan`` when the trip
    count is static, a ``while`` otherwise."""
    static = not isinstance(lower, Tracer) and not isinstance(upper, Tracer)
    if static:
        lower_i, upper_i = int(np.asarray(lower)), int(np.asarray(upper))
        dtype = _index_dtype(lower, upper)

        def scan_body(carry, _):
            i, x = carry
            return (i + 1, body_fun(i, x)), None

        start = _bound(lower, dtype, lower_upper_differ(lower, upper))
        (_, result), _ = scan(scan_body, (start, init_val), None,
                              length=max(upper_i - lower_i, 0), unroll=1 if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    dtype = _index_dtype(lower, upper)
    differ = lower_upper_differ(lower, upper)
    lower, upper = _bound(lower, dtype, differ), _bound(upper, dtype, differ)

    def cond_fun(carry):
        i, hi, _ = carry
        return i < hi

    def body(carry):
        i, hi, x = carry
        return i + 1, hi, body_fun(i, x)

    _, _, result = while_loop(cond_fun, body, (lower, upper, init_val))
    return result


def lower_upper_differ(lower, upper) -> bool:
    return dtypes.canonicalize(aval_of(lower).dtype) != dtypes.canonicalize(aval_of(upper).dtype)


def _bound(value, dtype, convert: bool):
    """Loop bounds keep their (possibly weak) type unless lower and upper disagree, as in JAX."""
    if convert:
        return _convert_element_type(value, dtype, False)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return _convert_element_type(value, dtype, aval_of(value).weak_type)
    return value


def _index_dtype(lower, upper):
    avals = [aval_of(v) for v in (lower, upper)]
    for a in avals:
        if not dtypes.is_int(a.dtype):
            raise TypeError(f"fori_loop bounds must be integers, got {a.str_short(False)}.")
    return dtypes.result_type_of(*[(a.dtype, a.weak_type) for a in avals])[0]


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """``carry, ys = scan(f, init, xs)``: ``f(carry, x) -> (carry, y)`` over the leading axis,
    traced exactly once (twice only when a weakly typed ``init`` must adopt the body's type)."""
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    sizes = [aval_of(x).shape[0] if aval_of(x).shape else None for x in x_leaves]
    if any(s is None for s in sizes):
        raise ValueError("scan got value with no leading axis to scan over: "
                         + ", ".join(aval_of(x).str_short(False) for x in x_leaves))
    if length is not None:
        length = int(length)
        if any(s != length for s in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {sizes}.")
    elif not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    elif len(set(sizes)) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: "
                         f"{', '.join(map(str, sizes))}.")
    else:
        length = sizes[0]
    carry_leaves, carry_tree = tree_util.tree_flatten(init)
    x_avals = [_strip_leading(aval_of(x)) for x in x_leaves]
    in_tree = tree_util.tree_structure((init, xs))
    for attempt in range(2):
        carry_avals = [aval_of(c) for c in carry_leaves]
        jaxpr, consts, out_tree = _trace(
            lambda c, x: _pair(f(c, x)), in_tree, carry_avals + x_avals, "scan")
        out_children = tree_util.treedef_children(out_tree)
        n_carry = len(carry_avals)
        if out_children[0] != carry_tree:
            raise TypeError("scan body function carry input and carry output must have the same "
                            f"pytree structure, but they differ:\n\nThe input carry is {carry_tree} "
                            f"but the output carry is {out_children[0]}.")
        if attempt == 0:
            carry_leaves, changed = _promote_weak_carry(carry_leaves, carry_avals,
                                                        jaxpr.out_avals[:n_carry])
            if changed:
                continue
        break
    err = _carry_mismatch("scan body", carry_tree, carry_avals, jaxpr.out_avals[:n_carry])
    if err is not None:
        raise err
    outs = scan_p.bind(*consts, *carry_leaves, *x_leaves, jaxpr=jaxpr, length=length,
                       reverse=bool(reverse), unroll=unroll, num_consts=len(consts),
                       num_carry=n_carry, linear=(False,) * (len(consts) + n_carry + len(x_leaves)),
                       _split_transpose=False)
    carry_out = tree_util.tree_unflatten(carry_tree, outs[:n_carry])
    ys = tree_util.tree_unflatten(out_children[1], outs[n_carry:])
    return carry_out, ys


def _pair(out):
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError("scan body output must be a pair (carry, y), got "
                        f"{type(out).__name__} of length {len(out) if hasattr(out, '__len__') else '?'}.")
    return out


def _strip_leading(aval):
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)

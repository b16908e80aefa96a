"""Re-rolling unrolled Python loops into ``scan`` before lowering.

``reroll_jaxpr(closed)`` finds the loops (``unrolled.py``) and re-traces the program
with each loop replaced by one ``scan`` whose body is the loop's block: the same
primitives with the same parameters in the same order per step (a ``slice`` moving by a
fixed step, ``xs[t]``, becomes a ``dynamic_slice`` of the same window). Loop state
becomes the scan carry, loop invariants stay closed over, per-step inputs (a different
variable each step) are stacked into ``xs``, intermediate values used after the loop
come back as stacked ``ys``, and loops nested in the block become nested scans.

Results are bitwise equal on the article's recurrence, RNNs and RK4 on CPU; XLA may
still compile an op differently inside a loop body than in straight-line code (a
division by a reduction was seen to differ by one ulp), and gradients sum a loop
invariant's cotangent in another order.

Opt in with ``config.update("reroll_loops", True)`` (every ``jit`` trace) or wrap one
function: ``jit(traxla.diagnostics.reroll(f))``.
"""
from __future__ import annotations

import functools

import numpy as np

from traxla import lax, tree_util, numpy as jnp
from traxla.api.device_arrays import _aval
from traxla.diagnostics.unrolled import find_unrolled_loops
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal
from traxla.tracer import Tracer, make_debug_info, trace_to_jaxpr
from traxla.tracer.interpret import eval_jaxpr
from traxla.tracer.traces import source_info_context


def _bind(eqn, values):
    with source_info_context(eqn.source_info):
        out = eqn.primitive.bind(*values, **eqn.params)
    return list(out) if eqn.primitive.multiple_results else [out]


def _outside_users(jaxpr, loop):
    """Variables of the loop read after it (by later equations or as results)."""
    used = set()
    for eqn in jaxpr.eqns[loop.end:]:
        used.update(v for v in eqn.invars if type(v) is not Literal)
    used.update(v for v in jaxpr.outvars if type(v) is not Literal)
    return used


def _run_loop(jaxpr, loop, read, write, find_options=None):
    """Binds one scan for ``loop`` in the current trace and writes every loop variable
    used afterwards. Loops nested in the block are re-rolled inside the body."""
    eqns, L, R = jaxpr.eqns, loop.block_len, loop.repeats
    block = eqns[loop.start + L:loop.start + 2 * L]   # the template: block 1
    used_after = _outside_users(jaxpr, loop)
    carry_slots = list(loop.carry_slots)
    # which outputs of which blocks are read after the loop
    needed: dict = {}
    for b in range(R):
        for i in range(L):
            for p, v in enumerate(eqns[loop.start + b * L + i].outvars):
                if v in used_after:
                    needed.setdefault((i, p), []).append((b, v))
    y_slots = [s for s, uses in needed.items()
               if not (s in carry_slots and all(b == R - 1 for b, _ in uses))]
    invariant = {pos: vs[0] for pos, vs in loop.ext_vars.items()
                 if all(v is vs[0] for v in vs)}
    varying = [pos for pos in loop.ext_positions if pos not in invariant]
    xs = tuple(jnp.stack([read(v) for v in loop.ext_vars[pos]]) for pos in varying)
    if loop.indexed:  # static windows moving every step: the step number indexes them
        xs = xs + (lax.iota(np.int32, R),)
    init = tuple(read(loop.init_vars[s]) for s in carry_slots)
    carry_index = {s: k for k, s in enumerate(carry_slots)}
    x_index = {pos: k for k, pos in enumerate(varying)}
    # each template operand: where its value comes from inside the body
    owner = {v: (i, p) for i, e in enumerate(block) for p, v in enumerate(e.outvars)}
    first = eqns[loop.start:loop.start + L]
    prev_owner = {v: (i, p) for i, e in enumerate(first) for p, v in enumerate(e.outvars)}
    invariant_values = {pos: read(v) for pos, v in invariant.items()}
    inner, by_var = _nested_loops(block, loop, carry_slots, y_slots, x_index, invariant,
                                  invariant_values, find_options or {})

    def body(carry, x):
        local = {}

        def read_var(v):  # for a nested loop: a value of this step by variable
            if type(v) is Literal:
                return v
            if v in owner:
                return local[owner[v]]
            if v in prev_owner:
                return carry[carry_index[prev_owner[v]]]
            source, key = by_var[v]
            return x[key] if source == "x" else key

        def write_var(v, value):
            local[owner[v]] = value

        i = 0
        while i < len(block):
            nested = inner.get(i)
            if nested is not None:
                _run_loop(nested[0], nested[1], read_var, write_var, find_options)
                i = nested[1].end
                continue
            eqn = block[i]
            values = []
            for k, v in enumerate(eqn.invars):
                if type(v) is Literal:
                    values.append(v)
                elif v in owner:
                    values.append(local[owner[v]])
                elif v in prev_owner:
                    values.append(carry[carry_index[prev_owner[v]]])
                elif (i, k) in x_index:
                    values.append(x[x_index[(i, k)]])
                else:
                    values.append(invariant_values[(i, k)])
            if i in loop.indexed:
                outs = [_moving_slice(values[0], x[-1], *loop.indexed[i], eqn)]
            else:
                outs = _bind(eqn, values)
            for p, out in enumerate(outs):
                local[(i, p)] = out
            i += 1
        return (tuple(local[s] for s in carry_slots), tuple(local[s] for s in y_slots))

    final, ys = lax.scan(body, init, xs if xs else None, length=R)
    for s, uses in needed.items():
        for b, v in uses:
            if s in y_slots:
                write(v, lax.index_in_dim(ys[y_slots.index(s)], b, keepdims=False))
            else:
                write(v, final[carry_index[s]])


def _nested_loops(block, loop, carry_slots, y_slots, x_index, invariant, invariant_values,
                  find_options):
    """Loops unrolled inside the block of ``loop`` (a Python loop nested in a loop):
    ``({start: (block as a jaxpr, inner loop)}, {outside var: ("x", index) |
    ("const", value)})``; none when an operand cannot be named by variable alone."""
    by_var: dict = {}
    for (i, k), j in x_index.items():
        v = block[i].invars[k]
        if by_var.setdefault(v, ("x", j)) != ("x", j):
            return {}, {}
    for (i, k), _ in invariant.items():
        v = block[i].invars[k]
        if v in by_var and by_var[v][0] != "const":
            return {}, {}
        by_var[v] = ("const", invariant_values[(i, k)])
    outvars = [block[i].outvars[p] for i, p in list(carry_slots) + list(y_slots)]
    sub = Jaxpr([], [], outvars, block)
    found = find_unrolled_loops(sub, **find_options)
    inner = {}
    for lp in found:
        if lp.rerollable and not any(lp.start <= i < lp.end for i in loop.indexed):
            inner[lp.start] = (sub, lp)
    return inner, by_var


def _moving_slice(operand, step, starts, deltas, sizes, eqn):
    """``slice`` at ``starts + step * deltas`` as a ``dynamic_slice``: the same window of
    the same data, with the step number as its index."""
    if type(operand) is Literal:
        operand = operand.val
    with source_info_context(eqn.source_info):
        index = [lax.add(lax.mul(step, np.int32(d)), np.int32(s)) if d else np.int32(s)
                 for s, d in zip(starts, deltas)]
        return lax.dynamic_slice(operand, index, sizes, allow_negative_indices=False)


def reroll_jaxpr(closed: ClosedJaxpr, loops=None, **find_options):
    """``(closed', rerolled loops)``: ``closed`` with its re-rollable unrolled loops
    turned into scans (``closed`` itself when there is nothing to re-roll)."""
    if loops is None:
        loops = find_unrolled_loops(closed, **find_options)
    loops = [lp for lp in loops if lp.rerollable]
    if not loops or any(isinstance(c, Tracer) for c in closed.consts):
        return closed, []
    jaxpr = closed.jaxpr
    starts = {lp.start: lp for lp in loops}

    def rerolled(*args):
        env = {}

        def read(v):
            return v if type(v) is Literal else env[v]

        def write(v, value):
            env[v] = value

        for v, c in zip(jaxpr.constvars, closed.consts):
            env[v] = c
        for v, a in zip(jaxpr.invars, args):
            env[v] = a
        i = 0
        while i < len(jaxpr.eqns):
            loop = starts.get(i)
            if loop is not None:
                _run_loop(jaxpr, loop, read, write, find_options)
                i = loop.end
                continue
            eqn = jaxpr.eqns[i]
            for v, out in zip(eqn.outvars, _bind(eqn, [read(x) for x in eqn.invars])):
                env[v] = out
            i += 1
        return [read(v) for v in jaxpr.outvars]

    debug = jaxpr.debug_info
    if debug is None:
        debug = make_debug_info(rerolled, "jit", ())
    new = trace_to_jaxpr(rerolled, [v.aval for v in jaxpr.invars], debug)
    return new, loops


def reroll(fun, **find_options):
    """``reroll(f)``: ``f`` with its unrolled Python loops traced as scans (use it
    under ``jit``: ``jit(reroll(f))``). ``find_options`` (``min_repeats``,
    ``min_equations``, ``max_block``) tune which runs count as loops."""

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        out_trees = []

        def flat(*flat_args):
            a, kw = tree_util.tree_unflatten(in_tree, flat_args)
            out_leaves, out_tree = tree_util.tree_flatten(fun(*a, **kw))
            out_trees.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat, [_aval(x) for x in leaves],
                                make_debug_info(fun, "reroll", ()))
        closed, _ = reroll_jaxpr(closed, **find_options)
        outs = eval_jaxpr(closed, (), *leaves)
        return tree_util.tree_unflatten(out_trees[0], outs)

    return wrapper

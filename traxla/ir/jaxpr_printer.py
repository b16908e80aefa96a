"""Prints jaxprs character-for-character as JAX does.

Variables are named a..z, ba, bb, ... in the order the printer first meets
them across nested jaxprs; jaxprs used more than once (or named sub-jaxprs
of more than ten equations) are hoisted as ``let name = { ... } in``.
"""
from __future__ import annotations

import itertools
import re
from collections import Counter, deque

from traxla.ir import doc_layout as pp
from traxla.ir.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, subjaxprs

# primitive -> fn(eqn, context) -> pp doc; for equations whose printing is special.
pp_eqn_rules: dict = {}
# primitive -> fn(params) -> list of (name, value) to print, in order.
pp_param_rules: dict = {}


def _alphabetic(n: int) -> str:
    s = ""
    while not s or n:
        n, i = n // 26, n % 26
        s = chr(97 + i) + s
    return s


class PrintContext:
    def __init__(self, var_names=None):
        self.shared_jaxprs: dict = {}
        self.shared_names: set = set()
        self._fresh = (name for i in itertools.count()
                       if (name := _alphabetic(i)) not in self.shared_names)
        self.var_names: dict = dict(var_names or {})

    def name(self, v) -> str:
        if isinstance(v, Literal):
            return v.pretty()
        if isinstance(v, DropVar):
            return "_"
        name = self.var_names.get(v)
        if name is None:
            name = self.var_names[v] = next(self._fresh)
        return name

    def suggest_same_names(self, for_vars, like_vars):
        """Names inner binders after the outer operands they alias (as JAX does for jit)."""
        if len(for_vars) != len(like_vars):
            return
        used = set()
        for for_v, like_v in zip(for_vars, like_vars):
            if (not isinstance(like_v, Literal) and like_v not in used
                    and not isinstance(for_v, Literal) and for_v not in self.var_names):
                used.add(like_v)
                self.var_names[for_v] = self.name(like_v)


def pp_vars(vs, ctx: PrintContext, separator: str = "", print_shapes: bool = False):
    if print_shapes:
        docs = [pp.text(f"{ctx.name(v)}:{v.aval.str_short()}") for v in vs]
    else:
        docs = [pp.text(ctx.name(v)) for v in vs]
    return pp.nest(2, pp.group(pp.join(pp.concat([pp.text(separator), pp.group(pp.brk())]), docs)))


def _param_text(value) -> str:
    if isinstance(value, frozenset):
        return f"frozenset({{{', '.join(repr(e) for e in sorted(value))}}})"
    s = str(value)
    return re.sub(r" at 0x([0-9a-fA-F]+)", lambda m: " at 0x" + "X" * len(m.group(1)), s)


def pp_kv_pair(key, value, ctx):
    if type(value) is tuple and value and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in value):
        doc = pp_jaxprs(value, ctx)
    elif isinstance(value, (Jaxpr, ClosedJaxpr)):
        doc = pp_jaxpr(value.jaxpr if isinstance(value, ClosedJaxpr) else value, ctx)
    else:
        doc = pp.text(_param_text(value))
    return pp.concat([pp.text(f"{key}="), doc])


def pp_kv_pairs(pairs, ctx):
    if not pairs:
        return pp.NIL
    return pp.group(pp.concat([
        pp.nest(2, pp.concat([pp.text("["), pp.brk(""),
                              pp.join(pp.brk(), [pp_kv_pair(k, v, ctx) for k, v in pairs])])),
        pp.brk(""), pp.text("]")]))


def printed_params(eqn):
    rule = pp_param_rules.get(eqn.primitive)
    if rule is not None:
        return rule(eqn.params)
    return [(k, eqn.params[k]) for k in sorted(eqn.params)]


def pp_eqn_generic(eqn, ctx, params=None):
    lhs = pp_vars(eqn.outvars, ctx, print_shapes=True)
    pairs = printed_params(eqn) if params is None else params
    rhs = [pp.text(eqn.primitive.name), pp_kv_pairs(pairs, ctx),
           pp.concat([pp.text(" "), pp_vars(eqn.invars, ctx)])]
    if eqn.outvars:
        return pp.concat([lhs, pp.text(" = "), *rhs])
    return pp.concat(rhs)


def pp_eqn(eqn, ctx):
    rule = pp_eqn_rules.get(eqn.primitive)
    return rule(eqn, ctx) if rule is not None else pp_eqn_generic(eqn, ctx)


def _skeleton(jaxpr: Jaxpr, ctx):
    constvars = pp_vars(jaxpr.constvars, ctx, print_shapes=True)
    invars = pp_vars(jaxpr.invars, ctx, print_shapes=True)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, ctx) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), pp_vars(jaxpr.outvars, ctx, separator=","),
                         pp.text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return pp.group(pp.concat([pp.nest(2, pp.concat([
        pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars,
        pp.text(". "), pp.text("let"), pp.nest(2, pp.concat([pp.brk(), eqns])), pp.brk(),
        pp.text("in "), outvars])), pp.text(" }")]))


def pp_jaxpr(jaxpr: Jaxpr, ctx):
    name = ctx.shared_jaxprs.get(jaxpr)
    if name is not None:
        return pp.text(name)
    return _skeleton(jaxpr, ctx)


def pp_jaxprs(jaxprs, ctx):
    jaxprs = [j.jaxpr if isinstance(j, ClosedJaxpr) else j for j in jaxprs]
    return pp.group(pp.concat([
        pp.nest(2, pp.concat([pp.text("("), pp.brk(""),
                              pp.join(pp.brk(), [pp_jaxpr(j, ctx) for j in jaxprs])])),
        pp.brk(""), pp.text(")")]))


def _unused_binders(jaxpr: Jaxpr) -> dict:
    """Top-level equation outputs nobody reads print as ``_`` (as JAX prints them)."""
    names = {}
    used = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if v not in used:
                names[v] = "_"
        used.update(v for v in eqn.invars if not isinstance(v, Literal))
    return names


# JAX derives these primitives' printed ``name`` from the jaxpr's function name at print
# time, so it does not name a hoisted jaxpr (that one prints as ``jaxpr``).
_DISPLAY_ONLY_NAME = frozenset({"custom_jvp_call", "custom_vjp_call"})


def pp_toplevel(top: Jaxpr, width: int = 80) -> str:
    ctx = PrintContext(_unused_binders(top))
    names: dict = {}
    counts: Counter = Counter()
    queue = deque([top])
    while queue:
        jaxpr = queue.popleft()
        counts[jaxpr] += 1
        if jaxpr is not top and len(jaxpr.eqns) > 10:
            counts[jaxpr] += 1
        for eqn in jaxpr.eqns:
            name = (None if eqn.primitive.name in _DISPLAY_ONLY_NAME
                    else eqn.params.get("name"))
            if name is None:
                queue.extend(subjaxprs(eqn.params))
                continue
            name = name.strip("<>")
            for sub in subjaxprs(eqn.params):
                queue.append(sub)
                names.setdefault(sub, name)
    name_counts: Counter = Counter()
    shared = []
    for jaxpr, count in counts.items():
        if count == 1:
            continue
        name = names.get(jaxpr, "jaxpr")
        if name_counts[name] > 0:
            seen = name_counts[name]
            name_counts[name] += 1
            name += str(seen)
        name_counts[name] += 1
        ctx.shared_names.add(name)
        ctx.shared_jaxprs[jaxpr] = name
        shared.append((name, jaxpr))
    docs = []
    for name, jaxpr in shared:
        docs.append(pp.concat([pp.text(f"let {name} = "), _skeleton(jaxpr, ctx),
                               pp.text(" in"), pp.brk()]))
    docs.append(pp_jaxpr(top, ctx))
    return pp.format(pp.concat(docs), width)


def pp_eqn_text(eqn) -> str:
    return pp.format(pp_eqn(eqn, PrintContext()))

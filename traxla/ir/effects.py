"""Effects: what a jaxpr does besides computing its outputs.

An equation's effects come from its primitive's effect rule (a callback primitive says
``Debug`` or ``OrderedIO``...) or, for primitives carrying jaxprs (``jit``, ``cond``,
``while``, ``scan``), from the union of their sub-jaxprs' effects. A jaxpr's effects are
the union over its equations. Ordered effects are threaded through a token when lowered;
every effectful equation survives dead-code elimination.
"""
from __future__ import annotations

from operator import attrgetter

from traxla.ir.jaxpr import eqns_with_subjaxprs, has_subjaxprs, subjaxprs


class Effect:
    """One kind of side effect; instances are singletons compared by identity."""

    ordered = False
    name = "Effect"

    def __str__(self):
        return self.name

    __repr__ = __str__


class DebugEffect(Effect):
    name = "Debug"


class OrderedDebugEffect(Effect):
    name = "OrderedDebug"
    ordered = True


class IOEffect(Effect):
    name = "IO"


class OrderedIOEffect(Effect):
    name = "OrderedIO"
    ordered = True


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()
io_effect = IOEffect()
ordered_io_effect = OrderedIOEffect()

NO_EFFECTS: frozenset = frozenset()

# primitive -> fn(params) -> frozenset of effects (primitives without a rule and without
# sub-jaxprs are pure)
effect_rules: dict = {}


def def_effects(prim, rule):
    effect_rules[prim] = rule
    return prim


def eqn_effects(eqn) -> frozenset:
    rule = effect_rules.get(eqn.primitive)
    if rule is not None:
        return rule(eqn.params)
    out = NO_EFFECTS
    if not eqn.params or not has_subjaxprs(eqn.params):  # most equations: pure, no jaxprs
        return out
    for sub in subjaxprs(eqn.params):
        found = jaxpr_effects(sub)
        if found:
            out = out | found
    return out


def jaxpr_effects(jaxpr) -> frozenset:
    """The union of the effects of ``jaxpr``'s equations (nested jaxprs included),
    remembered on the jaxpr (lowering and DCE ask again and again)."""
    eqns = jaxpr.eqns
    memo = getattr(jaxpr, "effects_memo", None)
    if memo is not None and memo[0] == len(eqns):
        return memo[1]
    out = NO_EFFECTS
    # (``eqn_effects`` of each equation, without a call per equation: most programs have
    # no primitive with an effect rule, and few equations carry jaxprs)
    rules = effect_rules
    if not rules.keys().isdisjoint(map(_primitive_of, eqns)):
        for eqn in eqns:
            rule = rules.get(eqn.primitive)
            if rule is not None:
                found = rule(eqn.params)
                if found:
                    out = out | found
    seen = set()  # an inner jaxpr called many times: asked once
    for eqn in eqns_with_subjaxprs(jaxpr):
        if eqn.primitive not in rules:
            for sub in subjaxprs(eqn.params):
                if id(sub) in seen:
                    continue
                seen.add(id(sub))
                found = jaxpr_effects(sub)
                if found:
                    out = out | found
    try:
        jaxpr.effects_memo = (len(eqns), out)
    except AttributeError:  # a jaxpr-like object without the slot
        pass
    return out


def has_effects(eqn) -> bool:
    """True when dead-code elimination must keep ``eqn`` although nobody reads its outputs."""
    return bool(eqn_effects(eqn))


def ordered_effects(effects) -> list:
    """The ordered effects among ``effects``, in a stable order (by name)."""
    return sorted((e for e in effects if e.ordered), key=lambda e: e.name)


def has_ordered_effects(jaxpr) -> bool:
    return any(e.ordered for e in jaxpr_effects(jaxpr))


_primitive_of = attrgetter("primitive")

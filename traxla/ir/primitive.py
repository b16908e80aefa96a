"""Primitives are data: a name and a flag. Their rules live in per-stage registries.

The typing registry (abstract evaluation) lives here, in ``ir/``; lowering,
eager, JVP, transpose and batching registries live in their own stages and are
keyed by the same ``Primitive`` objects.
"""
from __future__ import annotations

from traxla.ir.jaxpr_printer import pp_eqn_rules, pp_param_rules


class Primitive:
    __slots__ = ("name", "multiple_results", "__weakref__")
    impl = None  # a Python implementation for eager evaluation (user primitives: def_impl)

    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        if type(self) is Primitive:  # traxla's own; user primitives (traxla.extend) are not
            ALL_PRIMITIVES[name] = self  # listed, nor may they shadow a built-in name

    def __repr__(self):
        return self.name

    def bind(self, /, *args, **params):
        """Hands the primitive to the innermost trace (installed by ``tracer/``)."""
        return _bind_hook(self, args, params)

    def abstract_eval(self, *avals, **params):
        return typing_rules[self](*avals, **params)

    def get_bind_params(self, params):
        """The params ``bind`` takes for an equation's ``params`` (JAX's: a call primitive
        turns its jaxpr back into a function; traxla's primitives bind their params as
        they are), so ``prim.bind(*args, **prim.get_bind_params(eqn.params))`` re-runs it."""
        return params


def _bind_hook(prim, args, params):  # replaced by tracer.core at import
    raise RuntimeError("traxla.tracer is not initialised")


def set_bind_hook(fn, method=None):
    """Installs ``fn(prim, args, params)`` as what ``bind`` hands primitives to; ``method``,
    when given, is the same hook spelled ``method(prim, *args, **params)`` and becomes
    ``Primitive.bind`` itself (one Python frame less on every traced operation)."""
    global _bind_hook
    _bind_hook = fn
    Primitive.bind = method if method is not None else _forwarding_bind


def _forwarding_bind(self, *args, **params):
    """Hands the primitive to the innermost trace (installed by ``tracer/``)."""
    return _bind_hook(self, args, params)


ALL_PRIMITIVES: dict[str, Primitive] = {}

# primitive -> fn(*avals, **params) -> aval (or list of avals for multiple_results)
typing_rules: dict[Primitive, object] = {}


# primitive -> {(in avals, params, param types): out aval}: the typing results of the
# primitives whose rules are pure functions of their avals and params (elementwise,
# reductions, shapes), memoized by ``sharding_rules.infer_avals``. A traced program types
# the same few signatures thousands of times; a dict lookup is cheaper than the checks.
typing_caches: dict[Primitive, dict] = {}
# The memoized primitives whose rules tell equal params of different types apart
# (integer_pow's ``y=2`` from ``y=2.0``): their cache keys include the param types.
typed_param_keys: set = set()
# The memoized primitives whose rules read a flag for operands of some dtypes (reduce_sum's
# allow_f16_reductions for float16/bfloat16): a result for such a first operand is not kept.
uncached_dtypes: dict = {}


def def_typing(prim: Primitive, rule, *, memoize: bool = False, typed_params: bool = False,
               unless_dtypes: tuple = ()):
    """Registers ``prim``'s typing rule; ``memoize=True`` when the rule reads nothing but its
    arguments (no config, no thread state) and returns one aval, or reads some only when
    its first operand's dtype is one of ``unless_dtypes``; ``typed_params=True`` when it
    also refuses a param by its type alone."""
    typing_rules[prim] = rule
    typing_caches.pop(prim, None)
    typed_param_keys.discard(prim)
    uncached_dtypes.pop(prim, None)
    if memoize:
        typing_caches[prim] = {}
        if typed_params:
            typed_param_keys.add(prim)
        if unless_dtypes:
            uncached_dtypes[prim] = tuple(unless_dtypes)
    return prim


def def_printing(prim: Primitive, *, hide=(), hide_if_none=(), hide_if_empty=(), first=()):
    """Declares how an equation's params print: which are implied by the types
    (``hide``), which only print when set, and which come first (the rest sorted)."""

    def rule(params):
        keys = [k for k in first if k in params]
        keys += sorted(k for k in params if k not in first)
        out = []
        for k in keys:
            v = params[k]
            if k in hide or (k in hide_if_none and v is None) or (k in hide_if_empty and not v):
                continue
            out.append((k, v))
        return out

    pp_param_rules[prim] = rule


__all__ = ["Primitive", "typing_rules", "typing_caches", "typed_param_keys", "uncached_dtypes", "def_typing", "def_printing", "pp_eqn_rules",
           "ALL_PRIMITIVES", "set_bind_hook"]

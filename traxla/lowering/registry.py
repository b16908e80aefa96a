"""The lowering registry: primitive -> StableHLO emitter.

A rule is ``rule(ctx, *operands, **params) -> ir.Value | list[ir.Value]``
where ``ctx`` is a ``RuleContext`` (the avals in and out, and the module being
built, for rules that emit functions such as ``jit``).
"""
from __future__ import annotations

lowering_rules: dict = {}

# platform -> {primitive: rule}: rules for one platform, which override ``lowering_rules``
# (and the inline path) in modules lowered for that platform, as JAX's
# ``register_lowering(..., platform=)``. Platforms: "cpu", "cuda", "rocm", "tpu".
platform_rules: dict = {}
_PLATFORM_GROUPS = {"gpu": ("cuda", "rocm")}
_MODULE_PLATFORM = {"gpu": "cuda"}  # a module lowered for "gpu" uses the CUDA rules
_views: dict = {}  # platform -> (rules, inline ops) with that platform's rules applied

# primitive -> (op name, attributes_of, elementwise): a primitive that lowers to one op
# whose result has the equation's type. The equation loop emits these inline (most
# equations of most programs are such), without a context or a rule call;
# ``lowering_rules`` has the same as a rule, for everything else. ``attributes_of(eqn,
# memo)`` gives the op's attributes, or None where the equation needs its rule
# (``attributes_of`` None: no attributes; ``(name, dtypes)``: no attributes, and an
# equation whose param ``name`` is not None, or whose first operand's dtype is in
# ``dtypes``, needs its rule: no Python call); ``memo``: a dict of the module being
# built, one per primitive, where it may keep the MLIR attributes it built (valid in that
# module's context only). ``elementwise``: the operands are broadcast to the result's shape.
inline_ops: dict = {}

# primitive -> direct(builder, eqn, operands, loc) -> the result (or results): a rule that
# the equation loop calls as it is (no RuleContext, no keyword arguments, the location
# given, not entered), for primitives repeated throughout long programs (reductions, inner
# jit calls); ``lowering_rules`` has the usual rule, which it may fall back on.
direct_rules: dict = {}


def canonical_platforms(platform: str) -> tuple:
    """The platforms a ``platform=`` names: "gpu" is CUDA and ROCm."""
    platform = platform.lower()
    return _PLATFORM_GROUPS.get(platform, (platform,))


def register_lowering(prim, rule, keep_inline: bool = False, platform: str | None = None):
    """``keep_inline``: ``rule`` wraps the rule of an inline op (for equations that its
    ``attributes_of`` refuses), which stays inline. ``platform``: the rule serves modules
    lowered for that platform only ("cpu", "tpu", "cuda", "rocm" or "gpu"), in place of
    the default rule."""
    if platform is not None:
        for name in canonical_platforms(platform):
            platform_rules.setdefault(name, {})[prim] = rule
        _views.clear()
        return rule
    _views.clear()
    lowering_rules[prim] = rule
    if not keep_inline:
        inline_ops.pop(prim, None)  # a rule registered later wins
        direct_rules.pop(prim, None)
    return rule


def register_direct_rule(prim, direct, rule):
    """Registers ``rule`` for ``prim``, and ``direct`` for the equation loop (see
    ``direct_rules``; it must emit what ``rule`` emits)."""
    _views.clear()
    lowering_rules[prim] = rule
    inline_ops.pop(prim, None)
    direct_rules[prim] = direct
    return rule


def register_elementwise_op(prim, op_name: str, rule, attributes_of=None):
    """Registers ``rule`` for ``prim``, and ``op_name`` for the equation loop's inline
    path (``rule`` must emit exactly that op: it serves callers of ``lowering_rules``)."""
    _views.clear()
    lowering_rules[prim] = rule
    inline_ops[prim] = (op_name, attributes_of, True)
    return rule


def register_direct_op(prim, op_name: str, attributes_of, rule):
    """Registers ``rule`` for ``prim``, and ``op_name`` with ``attributes_of(eqn, memo)`` for
    the equation loop's inline path, operands as they are (``rule`` must emit the same op
    for the equations that ``attributes_of`` accepts)."""
    _views.clear()
    lowering_rules[prim] = rule
    inline_ops[prim] = (op_name, attributes_of, False)
    return rule


def rules_for(platform: str):
    """``(rules, inline ops)`` for a module lowered for ``platform``: the default tables
    themselves where the platform has no rules of its own (the common case, no copy)."""
    return lowering_tables(platform)[:2]


def lowering_tables(platform: str):
    """``(rules, inline ops, direct rules)`` for a module lowered for ``platform`` (as
    ``rules_for``), the equation loop's three tables."""
    view = _views.get(platform)
    if view is None:
        own = platform_rules.get(_MODULE_PLATFORM.get(platform, platform))
        if not own:
            view = (lowering_rules, inline_ops, direct_rules)
        else:
            view = ({**lowering_rules, **own},
                    {p: op for p, op in inline_ops.items() if p not in own},
                    {p: rule for p, rule in direct_rules.items() if p not in own})
        _views[platform] = view
    return view


# primitive -> predicate(eqn): the rule reads ``ctx.module.platform`` (or JAX has a rule per
# platform for it), so a module for several platforms lowers such an equation once per
# platform (a ``stablehlo.case`` on the platform index), as JAX's ``lower_per_platform``.
platform_sensitive: dict = {}


def mark_platform_sensitive(prim, when=None):
    """Declares that ``prim``'s lowering differs by platform: ``when(eqn)`` says for which
    equations: True (every platform lowers it its own way), a tuple of the platforms that
    have a rule of their own in JAX (the others share its default rule), or False (None:
    always True)."""
    platform_sensitive[prim] = when if when is not None else (lambda eqn: True)


def rule_for(prim, platform: str):
    """The rule that lowers ``prim`` in a module for ``platform`` (None: there is none)."""
    return rules_for(platform)[0].get(prim)


class RuleContext:
    """``loc``: the equation's location (the one in effect while the rule runs), where the
    equation loop gives it (None elsewhere): a rule may reuse ops it built at that
    location (``ModuleBuilder.op_templates``)."""
    __slots__ = ("module", "primitive", "avals_in", "avals_out", "loc")

    def __init__(self, module, primitive, avals_in, avals_out, loc=None):
        self.module = module
        self.primitive = primitive
        self.avals_in = avals_in
        self.avals_out = avals_out
        self.loc = loc

    @property
    def aval_out(self):
        return self.avals_out[0]

    @property
    def module_context(self):
        """The module being built (JAX's ``ctx.module_context``: ``add_keepalive``...)."""
        return self.module


# Kernel libraries (e.g. "lapack") whose custom-call targets some lowered module calls; the
# runtime registers them with the client before compiling.
custom_call_libraries: set = set()

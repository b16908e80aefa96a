"""The lowering registry: primitive -> StableHLO emitter.

A rule is ``rule(ctx, *operands, **params) -> ir.Value | list[ir.Value]``
where ``ctx`` is a ``RuleContext`` (the avals in and out, and the module being
built, for rules that emit functions such as ``jit``).
"""
from __future__ import annotations

lowering_rules: dict = {}

# primitive -> the name of the one op it lowers to (``stablehlo.add``): an elementwise
# primitive whose op takes the operands broadcast to the result's shape, has the result's
# type and no attributes. The equation loop emits these inline (most equations of most
# programs are such), without a rule call; ``lowering_rules`` has the same as a rule.
elementwise_ops: dict = {}


def register_lowering(prim, rule):
    lowering_rules[prim] = rule
    elementwise_ops.pop(prim, None)  # a rule registered later wins
    return rule


def register_elementwise_op(prim, op_name: str, rule):
    """Registers ``rule`` for ``prim``, and ``op_name`` for the equation loop's inline
    path (``rule`` must emit exactly that op: it serves callers of ``lowering_rules``)."""
    lowering_rules[prim] = rule
    elementwise_ops[prim] = op_name
    return rule


class RuleContext:
    __slots__ = ("module", "primitive", "avals_in", "avals_out")

    def __init__(self, module, primitive, avals_in, avals_out):
        self.module = module
        self.primitive = primitive
        self.avals_in = avals_in
        self.avals_out = avals_out

    @property
    def aval_out(self):
        return self.avals_out[0]


# Kernel libraries (e.g. "lapack") whose custom-call targets some lowered module calls; the
# runtime registers them with the client before compiling.
custom_call_libraries: set = set()

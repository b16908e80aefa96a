"""The lowering registry: primitive -> StableHLO emitter.

A rule is ``rule(ctx, *operands, **params) -> ir.Value | list[ir.Value]``
where ``ctx`` is a ``RuleContext`` (the avals in and out, and the module being
built, for rules that emit functions such as ``jit``).
"""
from __future__ import annotations

lowering_rules: dict = {}


def register_lowering(prim, rule):
    lowering_rules[prim] = rule
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

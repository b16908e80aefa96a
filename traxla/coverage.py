"""The rule-coverage matrix: which registries know each primitive."""
from __future__ import annotations

from .ir.primitive import ALL_PRIMITIVES, typing_rules
from .lowering.registry import lowering_rules


def coverage() -> dict:
    """``{primitive name: {registry: bool}}`` for every primitive traxla defines."""
    registries = {"typing": typing_rules, "lowering": lowering_rules}
    return {name: {reg: prim in table for reg, table in registries.items()}
            for name, prim in sorted(ALL_PRIMITIVES.items())}


def coverage_table() -> str:
    cov = coverage()
    regs = list(next(iter(cov.values())).keys())
    lines = [f"{'primitive':28s}" + "".join(f"{r:>10s}" for r in regs) + f"{'eager':>10s}"]
    for name, row in cov.items():
        # eager evaluation compiles the lowering, so it is covered exactly when lowering is
        lines.append(f"{name:28s}" + "".join(f"{'yes' if row[r] else '-':>10s}" for r in regs)
                     + f"{'yes' if row['lowering'] else '-':>10s}")
    totals = {r: sum(row[r] for row in cov.values()) for r in regs}
    lines.append(f"{len(cov)} primitives; " + ", ".join(f"{r}: {n}" for r, n in totals.items()))
    return "\n".join(lines)

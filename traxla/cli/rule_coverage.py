"""The rule-coverage matrix: which registries know each primitive."""
from __future__ import annotations

from traxla.autodiff.ad import jvp_rules, linearize_rules, transpose_rules
from traxla.batching.batch_trace import batching_rules
from traxla.ir.primitive import ALL_PRIMITIVES, typing_rules
from traxla.ir.rules.refs import REF_PRIMITIVES
from traxla.lowering.registry import lowering_rules

# JAX's own registry sizes, as the specification article counts them.
JAX_REGISTRY_SIZES = {"lowering": 251, "batching": 225, "jvp": 200, "transpose": 84}


def registries() -> dict:
    jvp = dict(jvp_rules)
    jvp.update(linearize_rules)  # primitives carrying jaxprs linearize by splitting them
    return {"typing": typing_rules, "lowering": lowering_rules, "batching": batching_rules,
            "jvp": jvp, "transpose": transpose_rules}


# Array-ref primitives never reach lowering or vmap: the state-discharge pass
# (traxla/state/discharge.py) rewrites every jaxpr holding one into a pure jaxpr first.
DISCHARGED = frozenset(REF_PRIMITIVES)

# Every primitive must type, lower and batch; JVP and transpose rules exist where the
# primitive is differentiable and linear, respectively.
REQUIRED = ("typing", "lowering", "batching")


def coverage() -> dict:
    """``{primitive name: {registry: bool}}`` for every primitive traxla defines."""
    registries_ = registries()
    return {name: {reg: prim in table or (prim in DISCHARGED and reg in ("lowering", "batching"))
                   for reg, table in registries_.items()}
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
    lines.append("JAX 0.11 (the article): " + ", ".join(
        f"{r}: {n}" for r, n in JAX_REGISTRY_SIZES.items()))
    return "\n".join(lines)

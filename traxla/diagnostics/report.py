"""The compile report: where a jitted call's compile time went and which source lines
produced the program.

Attribution is by source line twice over: jaxpr equations by their ``source_info``
(nested jaxprs included), StableHLO ops by their location (``jit(f)/scope/prim`` around
``file:line:col``, the locations ``as_text(debug_info=True)`` prints and XLA keeps as
``op_name`` metadata).
"""
from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field

from traxla.diagnostics.unrolled import find_unrolled_loops
from traxla.ir.jaxpr import subjaxprs

_FILE_LOC = re.compile(r'"([^"]+)":(\d+)')


@dataclass
class LineCost:
    location: str      # "file:line"
    equations: int
    ops: int


@dataclass
class CompileReport:
    """``jit(f).lower(...).compile().report()``: seconds per stage, sizes, attribution."""
    name: str
    trace_seconds: float
    lower_seconds: float
    compile_seconds: float
    equations: int             # top-level jaxpr equations
    equations_total: int       # including those inside nested jaxprs
    ops: int                   # StableHLO operations in the module
    by_line: list = field(default_factory=list)    # LineCost, most ops first
    loops: list = field(default_factory=list)      # UnrolledLoop found in the jaxpr
    loops_described: bool = False  # the loops were shown already: only count them

    @property
    def total_seconds(self) -> float:
        return self.trace_seconds + self.lower_seconds + self.compile_seconds

    def __str__(self):
        lines = [f"Compile report for jit({self.name}): trace {self.trace_seconds:.3f} s, "
                 f"lower {self.lower_seconds:.3f} s, XLA compile {self.compile_seconds:.3f} s "
                 f"(total {self.total_seconds:.3f} s)",
                 f"  {self.equations} top-level equations ({self.equations_total} with nested "
                 f"jaxprs), {self.ops} StableHLO ops"]
        if self.by_line:
            lines.append(f"  {'equations':>9s} {'ops':>7s}  source line")
            for row in self.by_line[:10]:
                lines.append(f"  {row.equations:9d} {row.ops:7d}  {row.location}")
            if len(self.by_line) > 10:
                lines.append(f"  ... {len(self.by_line) - 10} more lines")
        if self.loops and self.loops_described:
            lines.append(f"  unrolled loops: {len(self.loops)} (described above)")
        else:
            for loop in self.loops:
                lines.append("  " + loop.describe().replace("\n", "\n  "))
        return "\n".join(lines)


def _count_equations(jaxpr, per_line, top=True):
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        info = eqn.source_info
        per_line[f"{info.file}:{info.line}" if info is not None else "<unknown>"] += 1
        for sub in subjaxprs(eqn.params):
            total += _count_equations(getattr(sub, "jaxpr", sub), per_line, False)
    return total


def _count_ops(module):
    """``(number of ops, Counter of "file:line")`` over every op of the module."""
    per_line = collections.Counter()
    count = [0]

    def visit(op):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    count[0] += 1
                    match = _FILE_LOC.search(str(inner.location))
                    per_line[f"{match.group(1)}:{match.group(2)}" if match else
                             "<unknown>"] += 1
                    visit(inner.operation)

    visit(module.operation)
    return count[0], per_line


def build_report(name, closed, module, trace_s, lower_s, compile_s, loops=None):
    eqn_lines = collections.Counter()
    total = _count_equations(closed.jaxpr, eqn_lines)
    n_ops, op_lines = _count_ops(module)
    keys = set(eqn_lines) | set(op_lines)
    by_line = sorted((LineCost(k, eqn_lines.get(k, 0), op_lines.get(k, 0)) for k in keys),
                     key=lambda r: (-r.ops, -r.equations, r.location))
    if loops is None:
        loops = find_unrolled_loops(closed)
    return CompileReport(name, trace_s, lower_s, compile_s, len(closed.jaxpr.eqns), total,
                         n_ops, by_line, loops)


def report_of_compiled(compiled) -> CompileReport:
    """The report of an AOT-compiled stage (``Compiled``)."""
    info = compiled._program_info
    return build_report(info.name, info.closed, compiled._program.module, info.trace_seconds,
                        getattr(compiled, "lower_seconds", 0.0), compiled.compile_seconds)


def last_compile_report(jitted) -> CompileReport | None:
    """The report of the last compilation a jitted function made on call (None: none)."""
    record = getattr(jitted, "_diag_last_compile", None)
    if record is None:
        return None
    return build_report(jitted.name, *record)

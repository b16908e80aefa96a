"""Finding Python loops that tracing unrolled: long runs of isomorphic equation blocks
in a jaxpr, each block fed by the one before it.

A run is found in two passes. First every equation gets a coarse signature
(primitive, parameters, operand and result types, literal values) and, for each
candidate block length ``L``, numpy finds the stretches where equation ``j`` and
``j + L`` have equal signatures. Then each stretch is checked structurally, block by
block: every operand of an equation is either produced inside its own block
(``internal``), by the previous block (``carry``: the loop's state), or comes from
outside the run (``external``: a loop invariant when it is the same variable in every
block, a per-step input when it differs). Blocks that agree on this structure form
one loop; its report names the block, its source line, the repetitions and the
predicted XLA compile cost, and says whether ``reroll.py`` can turn it into a scan.
"""
from __future__ import annotations

import collections
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from traxla.ir.jaxpr import ClosedJaxpr, Literal
from traxla.ir.effects import has_effects

# Defaults: a run is reported from this many repetitions and equations on.
MIN_REPEATS = 16
MIN_EQUATIONS = 64
MAX_BLOCK = 256

# XLA's compile time of straight-line code grows faster than linearly with the number of
# operations ("roughly quadratic", jax#11093): ``t = t0 + c * n**p``. Measured compiles of
# unrolled loops on the project's 2-core machine (jaxlib 0.10.2) spread widely with the
# program and the machine's load: 0.042 s at about 100 equations, 0.79 s at 601, 1.07 s at
# 200 and 13.5 s at 2,000 (the article's 32x32 recurrence), 26.4 s at 6,000, and 5-50x
# those on the machine under heavy load. The model runs through their middle (within 4x of
# each quiet figure); a prediction is a range around it, calibrated on this process's own
# measured compiles once it has made some (``record_compile``).
_COMPILE_FIXED = 0.03
_COMPILE_COEF = 3.7e-4
_COMPILE_POWER = 1.3
# Without measurements: from a fifth to three times the model's figure.
_UNCALIBRATED = (0.2, 3.0)
# A scan compiles its body once: about a fixed cost plus the body's size.
_SCAN_BASE_S = 0.07
# (equations, seconds) of the latest compiles of at least _CALIBRATE_MIN equations
_observed: collections.deque = collections.deque(maxlen=16)
_CALIBRATE_MIN = 32


def _model_seconds(n_equations: int) -> float:
    n = max(n_equations, 1)
    return _COMPILE_FIXED + _COMPILE_COEF * n ** _COMPILE_POWER


def record_compile(n_equations: int, seconds: float) -> None:
    """Calibrates predictions with a measured XLA compile of a program of ``n_equations``
    top-level equations (jit does this on every compile; so does the scan-vs-unrolled
    benchmark)."""
    if n_equations >= _CALIBRATE_MIN and seconds > 0:
        _observed.append((n_equations, seconds))


def predicted_compile_range(n_equations: int) -> tuple[float, float]:
    """``(low, high)`` XLA CPU compile seconds for ``n_equations`` straight-line equations:
    the model scaled by how this process's measured compiles of the nearest sizes (up to
    three) compared with it, or a wide range when none was measured yet."""
    base = _model_seconds(n_equations)
    size = math.log(max(n_equations, 1))
    nearest = sorted(list(_observed), key=lambda o: abs(math.log(o[0]) - size))[:3]
    ratios = [t / _model_seconds(n) for n, t in nearest]
    if not ratios:
        lo, hi = _UNCALIBRATED
        return base * lo, base * hi
    return base * min(ratios) * 0.7, base * max(ratios) * 1.4


def extrapolated_compile_seconds(n_equations: int, measured) -> float:
    """The model's figure for ``n_equations``, scaled by the largest of the ``measured``
    ``(equations, seconds)`` compiles of the same kind of program (its load, its ops)."""
    n0, t0 = max(measured)
    return _model_seconds(n_equations) * t0 / _model_seconds(n0)


def predicted_compile_seconds(n_equations: int) -> float:
    """A single figure: the geometric middle of ``predicted_compile_range``."""
    lo, hi = predicted_compile_range(n_equations)
    return math.sqrt(lo * hi)


def calibration_note() -> str:
    n = len(_observed)
    if n:
        return f"calibrated on {n} compile{'s' if n > 1 else ''} measured in this process"
    return "not calibrated yet: no compile measured in this process"


def _range(bounds) -> str:
    lo, hi = bounds
    return f"{_seconds(lo)}-{_seconds(hi)} s"


def _seconds(x: float) -> str:
    return f"{x:.2g}" if x < 10 else f"{x:.0f}"


# One registry for every UnrolledLoopWarning: under Python's default filter a loop is
# reported once per message and line, however often its function is traced again.
_warning_registry: dict = {}


def warn(loop) -> None:
    """Issues ``loop``'s ``UnrolledLoopWarning`` at the loop's own source line (so that a
    warnings filter can target it)."""
    warnings.warn_explicit(loop.describe(), UnrolledLoopWarning, loop.file or "<unknown>",
                           loop.line, module="traxla.diagnostics",
                           registry=_warning_registry)


@dataclass
class UnrolledLoop:
    """One run of ``repeats`` isomorphic blocks of ``block_len`` equations starting at
    top-level equation ``start``."""
    start: int
    block_len: int
    repeats: int
    primitives: tuple
    source: str
    file: str = ""
    line: int = 0
    carry_slots: list = field(default_factory=list)      # (local eqn, output) of the state
    init_vars: dict = field(default_factory=dict)        # slot -> var entering block 0
    ext_positions: list = field(default_factory=list)    # (local eqn, operand) from outside
    ext_vars: dict = field(default_factory=dict)         # position -> [var per block]
    indexed: dict = field(default_factory=dict)  # local eqn -> (starts, steps, sizes)
    total_equations: int = 0
    rerollable: bool | None = True    # None: not checked (the quick scan of warnings)
    reason: str = ""

    @property
    def end(self) -> int:
        return self.start + self.block_len * self.repeats

    @property
    def equations(self) -> int:
        return self.block_len * self.repeats

    @property
    def predicted_compile_range(self) -> tuple[float, float]:
        return predicted_compile_range(self.total_equations)

    @property
    def predicted_compile_seconds(self) -> float:
        return predicted_compile_seconds(self.total_equations)

    @property
    def predicted_rolled_range(self) -> tuple[float, float]:
        rest = self.total_equations - self.equations + self.block_len
        lo, hi = predicted_compile_range(rest)
        return _SCAN_BASE_S + lo, _SCAN_BASE_S + hi

    @property
    def predicted_rolled_seconds(self) -> float:
        lo, hi = self.predicted_rolled_range
        return math.sqrt(lo * hi)

    def describe(self) -> str:
        body = ", ".join(self.primitives[:8]) + (", ..." if len(self.primitives) > 8 else "")
        lines = [
            f"Unrolled loop: {self.repeats} repetitions of a {self.block_len}-equation block "
            f"[{body}] ({self.equations} of the program's {self.total_equations} equations), "
            f"traced from {self.source}.",
            f"  Predicted XLA compile: {_range(self.predicted_compile_range)} unrolled, "
            f"{_range(self.predicted_rolled_range)} as a scan ({calibration_note()}).",
            "  Write the loop with traxla.lax.scan or traxla.lax.fori_loop, or let traxla "
            "re-roll it: traxla.config.update('reroll_loops', True) or "
            "traxla.diagnostics.reroll(f).",
        ]
        if self.rerollable is False:
            lines.append(f"  (automatic re-rolling does not apply here: {self.reason})")
        lines.append("  Silence with traxla.config.update('warn_unrolled_loops', False) or a "
                     "warnings filter on traxla.diagnostics.UnrolledLoopWarning.")
        return "\n".join(lines)

    __str__ = describe


class UnrolledLoopWarning(UserWarning):
    """A traced program contains a long unrolled Python loop."""


# -- coarse signatures ------------------------------------------------------------------

def _hashable(value, relaxed=False):
    """A hashable stand-in for a parameter; ``relaxed`` forgets integer values (the
    per-step static indices of ``xs[t]`` with a Python ``t``)."""
    if relaxed and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int
    if isinstance(value, (ClosedJaxpr,)) or type(value).__name__ == "Jaxpr":
        return ("jaxpr", id(value))
    if isinstance(value, np.ndarray):
        return ("array", value.shape, str(value.dtype), value.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(_hashable(v, relaxed) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted((k, _hashable(v, relaxed)) for k, v in value.items()))
    try:
        hash(value)
        return value
    except TypeError:
        return ("id", id(value))


def _literal_key(lit: Literal):
    return ("lit", lit.aval, np.asarray(lit.val).tobytes())


def _signature(eqn):
    """The exact signature: primitive, parameters, operand and result types."""
    ins = tuple(_literal_key(v) if type(v) is Literal else v.aval for v in eqn.invars)
    return (id(eqn.primitive), tuple(eqn.params.items()), ins,
            tuple(v.aval for v in eqn.outvars))


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (ValueError, TypeError):  # parameters holding arrays: compare by content
        return _hashable(a) == _hashable(b)


def _signature_ids(signatures, candidates) -> np.ndarray:
    """Relaxed signatures (integer parameters forgotten) numbered, for the equations in
    ``candidates`` (a boolean mask; the others get unique numbers). The relaxing is
    done once per distinct parameter set."""
    relaxed_of: dict = {}
    table: dict = {}
    ids = -1 - np.arange(len(signatures), dtype=np.int64)
    for i in np.nonzero(candidates)[0]:
        sig = signatures[i]
        try:
            relaxed = relaxed_of.get(sig[1])
            if relaxed is None:
                relaxed = relaxed_of[sig[1]] = _hashable(sig[1], relaxed=True)
        except TypeError:  # an unhashable parameter (an array): compared by content
            relaxed = _hashable(sig[1], relaxed=True)
        try:
            ids[i] = table.setdefault((sig[0], relaxed, sig[2], sig[3]), len(table))
        except TypeError:
            pass
    return ids


def _periodic_stretches(ids, min_repeats, max_block):
    """Candidates ``(coverage, L, start, repeats)`` where ``ids`` is periodic with
    period ``L`` for at least ``min_repeats`` periods."""
    n = len(ids)
    found = []
    padded = np.zeros(n + 1, np.int8)
    for L in range(1, min(max_block, n // max(min_repeats, 2)) + 1):
        matches = ids[L:] == ids[:-L]
        need = (min_repeats - 1) * L
        count = np.count_nonzero(matches)
        if count < need:  # too few matches for any stretch: most periods
            continue
        if count == n - L:  # periodic throughout (a fully unrolled program): one stretch
            repeats = n // L
            found.append((repeats * L, L, 0, repeats))
            continue
        padded[1:n - L + 1] = matches
        padded[n - L + 1:] = 0
        d = np.diff(padded[:n - L + 2])
        starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]
        lengths = ends - starts
        for s, length in zip(starts[lengths >= need], lengths[lengths >= need]):
            repeats = (int(length) + L) // L
            found.append((repeats * L, L, int(s), repeats))
    found.sort(key=lambda c: (-c[0], c[1]))
    return found


# -- structural check ---------------------------------------------------------------------

def _block_structure(eqns, start, L, b, owner):
    """Per operand of block ``b``: ('int', i, p) | ('carry', i, p, var) | ('ext', var) |
    ('lit',) | ('bad',)."""
    entries = []
    base = start + b * L
    for i in range(L):
        for v in eqns[base + i].invars:
            if type(v) is Literal:
                entries.append(("lit",))
                continue
            own = owner.get(v)
            if own is None:
                entries.append(("ext", v))
            elif own[0] == b:
                entries.append(("int", own[1], own[2]))
            elif own[0] == b - 1:
                entries.append(("carry", own[1], own[2], v))
            else:
                entries.append(("bad",))
    return entries


def _shape(entries):
    return tuple(e[:3] if e[0] == "carry" else ("ext",) if e[0] == "ext" else e
                 for e in entries)


def _segments(eqns, start, L, repeats, min_repeats):
    """Splits a periodic stretch into structurally isomorphic loops: ``(first block,
    end block, structures, template)``; the first block's carried operands come from
    before the loop (its initial state)."""
    owner = {}
    for b in range(repeats):
        for i in range(L):
            for p, v in enumerate(eqns[start + b * L + i].outvars):
                owner[v] = (b, i, p)
    structures = [_block_structure(eqns, start, L, b, owner) for b in range(repeats)]
    shapes = [_shape(s) for s in structures]
    out = []
    b = 0
    while b + 1 < repeats:
        template = shapes[b + 1]
        compatible = ("bad",) not in template and all(
            t == f or (t[0] == "carry" and f[0] in ("ext", "carry"))
            for t, f in zip(template, shapes[b]))
        if not compatible:
            b += 1
            continue
        e = b + 2
        while e < repeats and shapes[e] == template:
            e += 1
        if e - b >= min_repeats:
            out.append((b, e, structures[b:e], template))
        b = e
    return out


def _positions(eqns, start, L):
    return [(i, k) for i in range(L) for k in range(len(eqns[start + i].invars))]


def _source_of(block_eqns):
    """``(description, file, line)`` of the line most of the block was traced from."""
    infos = [e.source_info for e in block_eqns if e.source_info is not None]
    if not infos:
        return "<unknown source>", "", 0
    (file, line), _ = collections.Counter((i.file, i.line) for i in infos).most_common(1)[0]
    fn = next(i.function for i in infos if (i.file, i.line) == (file, line))
    return f"{file}:{line} ({fn})", file, line


def _make_loop(eqns, signatures, start, L, segment, total):
    b0, b1, structures, template = segment
    run_start = start + b0 * L
    block = eqns[run_start + L:run_start + 2 * L]  # block 1 of the loop: the template
    positions = _positions(eqns, run_start, L)
    source, file, line = _source_of(block)
    loop = UnrolledLoop(run_start, L, b1 - b0, tuple(e.primitive.name for e in block),
                        source, file, line, total_equations=total)
    carry = sorted({(t[1], t[2]) for t in template if t[0] == "carry"})
    loop.carry_slots = carry
    for k, (pos, t, f) in enumerate(zip(positions, template, structures[0])):
        if t[0] == "carry":
            slot = (t[1], t[2])
            prev = loop.init_vars.setdefault(slot, f[-1])
            if prev is not f[-1]:
                loop.rerollable, loop.reason = False, "one loop state enters the first " \
                    "iteration as two different values"
            out_aval = block[slot[0]].outvars[slot[1]].aval
            if f[-1].aval != out_aval:
                loop.rerollable = False
                loop.reason = (f"the loop state starts as {f[-1].aval.str_short()} and becomes "
                               f"{out_aval.str_short()} (a weak type or dtype change)")
        elif t[0] == "ext":
            loop.ext_positions.append(pos)
            loop.ext_vars[pos] = [s[k][1] for s in structures]
    exact = signatures[run_start + L:run_start + 2 * L]
    for i in range(L):
        varying = [eqns[run_start + b * L + i] for b in range(b1 - b0)
                   if not _same(signatures[run_start + b * L + i], exact[i])]
        if not varying:
            continue
        progression = _static_index_progression(
            [eqns[run_start + b * L + i] for b in range(b1 - b0)])
        if progression is None:
            loop.rerollable = False
            loop.reason = (f"the static parameters of {varying[0].primitive} change from step "
                           "to step in a way a scan cannot index; iterate over the array with "
                           "lax.scan, or over a list of arrays")
            break
        loop.indexed[i] = progression
    for e in eqns[run_start:run_start + L]:
        if has_effects(e):
            loop.rerollable, loop.reason = False, f"the block has side effects ({e.primitive})"
    return loop


def _static_index_progression(steps_eqns):
    """For a ``slice`` whose window moves by the same amount every step (``xs[t]`` with
    a Python ``t``): ``(first starts, step per iteration, sizes)``; otherwise None."""
    first = steps_eqns[0]
    if first.primitive.name != "slice" or len(steps_eqns) < 2:
        return None
    strides = first.params.get("strides")
    if strides is not None and any(s != 1 for s in strides):
        return None
    starts = [e.params["start_indices"] for e in steps_eqns]
    sizes = tuple(hi - lo for lo, hi in zip(first.params["start_indices"],
                                            first.params["limit_indices"]))
    step = tuple(b - a for a, b in zip(starts[0], starts[1]))
    for k, e in enumerate(steps_eqns):
        if e.primitive is not first.primitive or set(e.params) != set(first.params):
            return None
        if e.params.get("strides") != strides:
            return None
        expected = tuple(a + k * d for a, d in zip(starts[0], step))
        size = tuple(hi - lo for lo, hi in zip(e.params["start_indices"],
                                               e.params["limit_indices"]))
        if tuple(e.params["start_indices"]) != expected or size != sizes:
            return None
    return tuple(starts[0]), step, sizes


def find_unrolled_loops(jaxpr, *, min_repeats: int = MIN_REPEATS,
                        min_equations: int = MIN_EQUATIONS,
                        max_block: int = MAX_BLOCK, verify: bool = True) -> list[UnrolledLoop]:
    """The unrolled loops among ``jaxpr``'s top-level equations (a Jaxpr or ClosedJaxpr),
    in program order; none shorter than ``min_repeats`` repetitions or ``min_equations``.

    ``verify=False`` is the quick scan behind the default-on warning: runs of equations
    repeating the same primitives and result types, without checking parameters or
    dataflow (``rerollable`` is then None); it costs a few percent of tracing."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    eqns = jaxpr.eqns
    n = len(eqns)
    if n < max(min_equations, 2 * min_repeats):
        return []
    # A cheap first pass on primitives and result types alone: most programs stop here.
    coarse_ids: dict = {}
    coarse = np.fromiter((coarse_ids.setdefault(
        (id(e.primitive), e.outvars[0].aval if e.outvars else None), len(coarse_ids))
        for e in eqns), np.int64, n)
    candidates = np.zeros(n, bool)
    quick = []
    for coverage, L, start, repeats in _periodic_stretches(coarse, min_repeats, max_block):
        if coverage >= min_equations and not verify and not candidates[start:start + coverage].any():
            source, file, line = _source_of(eqns[start:start + L])
            quick.append(UnrolledLoop(start, L, repeats, tuple(
                e.primitive.name for e in eqns[start:start + L]), source, file, line,
                rerollable=None, total_equations=n))
        if coverage >= min_equations:
            candidates[start:start + coverage] = True
    if not verify or not candidates.any():
        return sorted(quick, key=lambda lp: lp.start)
    signatures = [_signature(e) if candidates[i] else None for i, e in enumerate(eqns)]
    ids = _signature_ids(signatures, candidates)
    taken = np.zeros(n, bool)
    loops = []
    for coverage, L, start, repeats in _periodic_stretches(ids, min_repeats, max_block):
        if coverage < min_equations or taken[start:start + coverage].any():
            continue
        for segment in _segments(eqns, start, L, repeats, min_repeats):
            loop = _make_loop(eqns, signatures, start, L, segment, n)
            if loop.equations >= min_equations and not taken[loop.start:loop.end].any():
                loops.append(loop)
                taken[loop.start:loop.end] = True
    loops.sort(key=lambda lp: lp.start)
    return loops

"""The ahead-of-time stages of ``jit`` (``jax.stages``, whose namespace is ``traxla.stages``).

``jit(f).trace(*args)`` gives a ``Traced`` (the jaxpr), ``.lower()`` a ``Lowered``
(the StableHLO module), ``.compile()`` a ``Compiled`` (XLA's executable, callable).
Each stage knows the argument structure (``in_tree``, ``in_avals``, ``args_info``
with donation) and the result structure (``out_tree``, ``out_info``).
"""
from __future__ import annotations

import operator
import time
import warnings
from itertools import chain
from typing import Union

from traxla.api.hi_lowering import jaxpr_is_high
from traxla import tree_util
from traxla.api import jit_hooks
from traxla.api.layouts import Format, Layout
from traxla.api.shape_dtype_struct import struct_of_aval
from traxla.api_util import equality_errors_pytreedef
from traxla.autodiff.partial_eval import prune_unused
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal
from traxla.ir.rules.refs import is_ref_aval
from traxla.ir.traceback_util import api_boundary
from traxla.lowering import lower_jaxpr
from traxla.runtime import to_array, xla_adapter
from traxla.runtime.backend import get_backend
from traxla.runtime.executable import Executable
from traxla.runtime.placement import SingleDeviceSharding
from traxla.state.discharge import discharge_if_needed
from traxla.tracer import Tracer

CompilerOptions = dict[str, Union[str, bool]]


class ArgInfo:
    """One argument leaf as a compiled function sees it: its aval and whether its
    buffer is donated."""

    __slots__ = ("_aval", "donated")

    def __init__(self, _aval, donated: bool):
        self._aval = _aval
        self.donated = donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __repr__(self):
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"

    def __eq__(self, other):
        return (isinstance(other, ArgInfo) and self._aval == other._aval
                and self.donated == other.donated)

    def __hash__(self):
        return hash((self._aval, self.donated))


class Wrapped:
    """A function wrapped by ``jit``: callable, and with ``trace`` and ``lower``."""

    def __call__(self, *args, **kwargs):
        raise NotImplementedError

    def trace(self, *args, **kwargs) -> "Traced":
        raise NotImplementedError

    def lower(self, *args, **kwargs) -> "Lowered":
        raise NotImplementedError


# -- what lowering a program for execution decides: pruned arguments, aliases -----------

class LoweredProgram:
    """A module plus how to call it: which flat arguments it keeps (``keep_unused=False``
    drops the unused ones, as JAX does) and which kept arguments are donated."""

    __slots__ = ("module", "kept", "aliases", "in_avals", "platforms")

    def __init__(self, module, kept, aliases, in_avals):
        self.module, self.kept, self.aliases, self.in_avals = module, kept, aliases, in_avals
        self.platforms = None  # several lowering platforms: a module that takes their index


def _is_literal(v) -> bool:
    return type(v) is Literal


def donation_aliases(in_avals, donated, out_avals) -> list:
    """Per argument, the result that reuses its donated buffer (JAX's rule: the first
    result of the same shape and dtype not already taken), or None; warns, as JAX does,
    about donated arguments no result can reuse."""
    free = list(range(len(out_avals)))
    aliases, unusable = [], []
    for aval, d in zip(in_avals, donated):
        alias = None
        if d:
            for j in free:
                o = out_avals[j]
                if o.shape == aval.shape and o.dtype == aval.dtype:
                    alias = j
                    free.remove(j)
                    break
            else:
                unusable.append(aval.str_short(False))
        aliases.append(alias)
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
                      "See an explanation at https://docs.jax.dev/en/latest/faq.html"
                      "#buffer-donation.", stacklevel=4)
    return aliases


def result_names(out_tree) -> list[str]:
    """``jax.result_info`` of each result: ``result`` plus its key path in the output."""
    leaves = tree_util.tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
    return ["result" + tree_util.keystr(path)
            for path, _ in tree_util.tree_flatten_with_path(leaves)[0]]


_invars_of = operator.attrgetter("invars")


def lower_program(closed: ClosedJaxpr, name: str, donated, keep_unused: bool,
                  shardings_for=None, out_tree=None, platform=None) -> LoweredProgram:
    """Lowers ``closed`` for a top-level call: unused arguments pruned unless
    ``keep_unused``, donated arguments aliased to results. ``shardings_for(kept)``
    gives the module's Shardy annotations for the kept arguments (None: one device)."""
    ref_inputs = [is_ref_aval(a) for a in closed.in_avals]
    n_results = len(closed.out_avals)
    # the operands of every equation: one C-level pass for the refs check and the pruning
    operands = set(chain.from_iterable(map(_invars_of, closed.jaxpr.eqns)))
    discharged = discharge_if_needed(closed, operands)  # array refs become threaded values
    if discharged is not closed:
        closed, operands = discharged, None
    jaxpr = closed.jaxpr
    n = len(jaxpr.invars)
    if keep_unused:
        keep = [True] * n
    else:  # as JAX's _prune_unused_inputs: dead equations go, then the arguments unused
        pruned, keep = prune_unused(jaxpr, operands)
        if pruned is not jaxpr and (len(pruned.eqns) != len(jaxpr.eqns) or any(
                a is not b for a, b in zip(pruned.eqns, jaxpr.eqns))):
            jaxpr = Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, pruned.eqns,
                          jaxpr.debug_info)
            closed = ClosedJaxpr(jaxpr, closed.consts)
    kept = None if all(keep) else tuple(i for i in range(n) if keep[i])
    if kept is not None:
        closed = ClosedJaxpr(Jaxpr(jaxpr.constvars, [jaxpr.invars[i] for i in kept],
                                   jaxpr.outvars, jaxpr.eqns, jaxpr.debug_info), closed.consts)
    idx = range(n) if kept is None else kept
    in_avals = [closed.jaxpr.invars[k].aval for k in range(len(idx))]
    kept_donated = [bool(donated[i]) for i in idx]
    aliases = (donation_aliases(in_avals, kept_donated, closed.out_avals)
               if any(kept_donated) else None)
    if any(ref_inputs):  # a Ref argument's buffer is updated in place: its final value's
        aliases = list(aliases or [None] * len(idx))
        ref_results = iter(range(n_results, len(closed.out_avals)))
        finals = {i: next(ref_results) for i in range(n) if ref_inputs[i]}
        aliases = [finals.get(i, a) for i, a in zip(idx, aliases)]
    shardings = None if shardings_for is None else shardings_for(closed, idx)
    names = result_names(out_tree) if out_tree is not None else None
    if names is not None and any(ref_inputs):  # JAX loses the result paths there
        names = [""] * len(closed.out_avals)
    module = lower_jaxpr(closed, name, shardings, aliases=aliases, result_names=names,
                         platform=platform)
    return LoweredProgram(module, kept, aliases, in_avals)


# -- the stages ---------------------------------------------------------------------------

class _Stage:
    """What every stage knows about the call signature."""

    _program_info: "ProgramInfo"
    in_tree = property(operator.attrgetter("_program_info.in_tree"))
    out_tree = property(operator.attrgetter("_program_info.out_tree"))
    donate_argnums = property(operator.attrgetter("_program_info.donate_argnums"))
    fun_name = property(operator.attrgetter("_program_info.name"))

    def _inputs(self, leaves):
        """One value per argument leaf, in the structure of the arguments."""
        return tree_util.tree_unflatten(self.in_tree, leaves)

    def _outputs(self, leaves):
        """One value per result leaf, in the structure of the results."""
        return tree_util.tree_unflatten(self.out_tree, leaves)

    @property
    def in_avals(self):
        return self._inputs(self._program_info.closed.in_avals)

    @property
    def out_avals(self):
        return self._outputs(self._program_info.closed.out_avals)

    @property
    def args_info(self):
        info = self._program_info
        return self._inputs([ArgInfo(a, bool(d)) for a, d in zip(info.closed.in_avals,
                                                                 info.donated)])

    @property
    def out_info(self):
        return self._outputs([struct_of_aval(a) for a in self._program_info.closed.out_avals])


class ProgramInfo:
    """Everything ``trace`` learns: the jaxpr, trees, donation per leaf, placements."""

    def __init__(self, jitted, closed, in_tree, out_tree, donated, placements, mesh,
                 trace_seconds, arg_names=()):
        self.jitted, self.closed = jitted, closed
        self.arg_names = arg_names  # each dynamic leaf's name (``x``, ``d['a']``) for errors
        self.in_tree, self.out_tree = in_tree, out_tree
        self.donated, self.placements, self.mesh = donated, placements, mesh
        self.trace_seconds = trace_seconds
        self.name = jitted.name
        self.donate_argnums = jitted.donate_argnums


class Traced(_Stage):
    """``jit(f).trace(*args)``: the traced program; ``.jaxpr`` is its ClosedJaxpr."""

    def __init__(self, info: ProgramInfo):
        self._program_info = info
        self.jaxpr = info.closed
        self.trace_seconds = info.trace_seconds

    mesh = property(operator.attrgetter("_program_info.mesh"))

    @api_boundary
    def lower(self, *, lowering_platforms=None) -> "Lowered":
        """``lowering_platforms``: lower for these platforms ('cpu', 'tpu', 'cuda', 'rocm';
        'gpu' names the GPU present) instead of the default backend's, present or not.
        Several: ``@main`` takes the platform index first (a ``jax.global_constant``)."""
        info = self._program_info
        if jaxpr_is_high(info.closed):
            raise NotImplementedError(
                "jit(...).lower() of a program that stages high-level (hijax) values: traxla "
                "lowers such a program when it is called (call the jitted function instead)")
        start = time.perf_counter()
        platforms = _canonical_lowering_platforms(lowering_platforms)
        if platforms is not None and len(platforms) > 1:
            program = _lower_multi_platform(info, platforms)
        else:
            program = info.jitted._lower_program(info.closed, info.donated, info.placements,
                                                 info.mesh, info.out_tree,
                                                 platform=platforms and platforms[0])
        return Lowered(info, program, time.perf_counter() - start)


def _canonical_lowering_platforms(platforms):
    """JAX's names for the platforms asked for (None: the default backend's)."""
    if platforms is None:
        return None
    if isinstance(platforms, str):
        platforms = (platforms,)
    out = []
    for p in platforms:
        name = str(p).lower()
        if name == "gpu":  # as JAX: the GPU platform present, or the error saying none is
            name = get_backend("gpu").platform
        out.append(name)
    if not out:
        raise ValueError("lowering_platforms must name at least one platform")
    return tuple(out)


def _lower_multi_platform(info, platforms) -> LoweredProgram:
    """A module for several platforms, as JAX's: every function takes the platform index
    first, and each equation whose lowering differs by platform is a ``stablehlo.case``."""
    if info.mesh is not None:
        raise NotImplementedError("lowering for several platforms with shardings: lower for "
                                  "one platform at a time")
    program = info.jitted._lower_program(info.closed, info.donated, info.placements,
                                         info.mesh, info.out_tree, platform=platforms)
    program.platforms = platforms
    return program


class Lowered(_Stage):
    """``jit(f).lower(*args)``: the StableHLO module, ready to compile."""

    def __init__(self, info: ProgramInfo, program: LoweredProgram, seconds: float):
        self._program_info = info
        self._program = program
        self.module = program.module
        self.trace_seconds = info.trace_seconds
        self.lower_seconds = seconds

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        if dialect is None or dialect == "stablehlo":
            if debug_info:
                return self.module.operation.get_asm(enable_debug_info=True)
            return str(self.module)
        if dialect == "hlo":
            return xla_adapter.hlo_text(self.compiler_ir("hlo"), debug_info)
        raise ValueError(f"unknown dialect: {dialect}")

    def compiler_ir(self, dialect: str | None = None):
        """The module (``'stablehlo'``, the default) or its HLO ``XlaComputation``."""
        if dialect is None or dialect == "stablehlo":
            return self.module
        if dialect == "hlo":
            return xla_adapter.hlo_computation(self.module)
        raise ValueError(f"unknown dialect: {dialect}")

    def cost_analysis(self):
        """XLA's cost estimate (flops, bytes accessed...) of the module as lowered, before
        any optimization (as JAX's; ``compile().cost_analysis()`` estimates the optimized
        one)."""
        mesh = self._program_info.mesh
        platform = None if mesh is None else mesh.devices.flat[0].platform
        return xla_adapter.hlo_cost_analysis(get_backend(platform).client,
                                             self.compiler_ir("hlo"))

    @api_boundary
    def compile(self, compiler_options: CompilerOptions | None = None) -> "Compiled":
        info = self._program_info
        if self._program.platforms is not None:
            raise NotImplementedError(
                f"compiling a module lowered for several platforms {self._program.platforms}: "
                "its @main takes the platform index first; lower for one platform to compile "
                "it, or export it (traxla.export) to call it from another program.")
        options = dict(info.jitted.compiler_options or {})
        options.update(compiler_options or {})
        executable = info.jitted._executable(self._program, info.closed, info.mesh,
                                             options or None)
        compiled = Compiled(info, self._program, executable)
        compiled.lower_seconds = self.lower_seconds
        return compiled


class Compiled(_Stage):
    """A compiled executable: ``as_text()`` is XLA's optimized HLO; call it to run."""

    def __init__(self, info: ProgramInfo, program: LoweredProgram, executable):
        self._program_info = info
        self._program = program
        self.executable = executable
        self.compile_seconds = executable.compile_seconds

    def as_text(self) -> str:
        return self.executable.as_text()

    def cost_analysis(self) -> dict:
        return self.executable.cost_analysis()

    def report(self):
        """Where this compilation's time went and which source lines produced the
        program (``traxla.diagnostics.CompileReport``)."""
        return jit_hooks.compile_report(self)

    def memory_analysis(self):
        return self.executable.memory_analysis()

    def runtime_executable(self):
        """The underlying PJRT loaded executable."""
        return self.executable.loaded

    def _shardings(self, n, placements):
        if placements is None:
            return [SingleDeviceSharding(get_backend().devices[0])] * n
        return list(placements)

    def _result_shardings(self) -> list:
        return self._shardings(len(self._program_info.closed.out_avals),
                               getattr(self.executable, "out_placements", None))

    @property
    def input_shardings(self):
        info = self._program_info
        return self._inputs(self._shardings(len(info.closed.in_avals), info.placements))

    @property
    def output_shardings(self):
        return self._outputs(self._result_shardings())

    @property
    def out_info(self):
        return self._outputs([struct_of_aval(a, s) for a, s in
                              zip(self._program_info.closed.out_avals, self._result_shardings())])

    def _formats(self, avals, layouts, shardings):
        """Each value's Format: the layout the executable has for it (XLA's default when
        the parameters do not line up one to one with the values) and its sharding."""
        layouts = ([Layout.from_pjrt(l) for l in layouts] if len(layouts) == len(avals) else
                   [Layout(tuple(range(a.ndim)), (), 0) for a in avals])
        return [Format(l, s) for l, s in zip(layouts, shardings)]

    @property
    def input_formats(self):
        info = self._program_info
        avals = info.closed.in_avals
        return self._inputs(self._formats(
            avals, xla_adapter.layouts(self.executable.loaded),
            self._shardings(len(avals), info.placements)))

    @property
    def output_formats(self):
        avals = self._program_info.closed.out_avals
        return self._outputs(self._formats(
            avals, xla_adapter.layouts(self.executable.loaded, outputs=True), self._result_shardings()))

    @api_boundary
    def __call__(self, *args, **kwargs):
        """Runs the executable on arguments of the compiled structure: the dynamic
        arguments only, positional and keyword exactly as at ``lower`` (static arguments
        are part of the program and are not passed again), as JAX's ``Compiled``."""
        info = self._program_info
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != self.in_tree:
            errors = list(equality_errors_pytreedef(in_tree, self.in_tree))
            lines = [f"Function compiled with input pytree does not match the input pytree it "
                     f"was called with. There are {len(errors)} mismatches, including:"]
            for path, thing1, thing2, why in errors:
                root = ("args", "kwargs")[path[0].idx]
                lines.append(f"    * at {root}{tree_util.keystr(tuple(path[1:]))}, seen "
                             f"{thing2} but now given {thing1}, so {why}")
            raise TypeError("\n".join(lines))
        for x in leaves:
            if isinstance(x, Tracer):  # AOT programs have a fixed signature: no transforms
                raise TypeError("Cannot apply JAX transformations to a function lowered and "
                                "compiled for a particular signature. Detected argument of "
                                f"Tracer type {type(x)}.")
        refs = [x for x in leaves if getattr(x, "is_array_ref", False)]
        # a Ref's buffer is updated in place: one that only the Ref holds (copied if shared)
        arrays = [x._donatable() if getattr(x, "is_array_ref", False) else to_array(x)
                  for x in leaves]
        mismatches = []
        for i, (a, expected) in enumerate(zip(arrays, info.closed.in_avals)):
            if a.aval.shape != expected.shape or a.aval.dtype != expected.dtype:
                name = info.arg_names[i] if i < len(info.arg_names) else f"args[{i}]"
                mismatches.append(f"Argument '{name}' compiled with {expected.str_short(False)} "
                                  f"and called with {a.aval.str_short(False)}")
        if mismatches:
            raise TypeError("Argument types differ from the types for which this computation "
                            "was compiled. Perhaps you are calling the compiled executable with "
                            "a different enable_x64 mode than when it was AOT compiled? The "
                            "mismatches are:\n" + "\n".join(mismatches))
        if info.mesh is not None:
            arrays = info.jitted._placed_on(arrays, info.mesh)
        kept = self._program.kept
        outs = self.executable.execute(arrays if kept is None else [arrays[i] for i in kept])
        if refs:  # a Ref argument's final value follows the results: written back, as JAX
            n_results = len(outs) - len(refs)
            for ref, value in zip(refs, outs[n_results:]):
                ref._set_owned(value)
            outs = outs[:n_results]
        return self._outputs(outs)


del Executable

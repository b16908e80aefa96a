"""``python -m traxla inspect path/to/file.py:fn --args "f32[4,8] f32[8,16]"``: traces,
lowers and compiles a user's function at abstract arguments and prints each stage.

    --static n=3          a static (keyword) argument, value read as a Python literal
    --stage jaxpr,report  any of jaxpr, stablehlo, hlo, cost, report, loops, all
"""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
import warnings
from traxla import ShapeDtypeStruct
from traxla.ir.dtypes import _SHORT
import traxla
from traxla.diagnostics.unrolled import UnrolledLoopWarning, find_unrolled_loops, warn as warn_loop

STAGES = ("jaxpr", "stablehlo", "hlo", "cost", "report", "loops")
_ARG = re.compile(r"([a-z]+[0-9]*)\[([0-9,\s]*)\]")


def add_parser(sub):
    p = sub.add_parser("inspect", help="trace, lower and compile a function of your own file "
                                       "and print each stage",
                       description=__doc__)
    p.add_argument("target", help="path/to/file.py:function (a dotted name is looked up "
                                  "attribute by attribute)")
    p.add_argument("--args", default="", help='argument types, e.g. "f32[4,8] f32[8,16] i32[]"')
    p.add_argument("--static", action="append", default=[], metavar="NAME=VALUE",
                   help="a static keyword argument (repeatable)")
    p.add_argument("--stage", default="jaxpr,stablehlo",
                   help=f"comma list of {', '.join(STAGES)} or all (default jaxpr,stablehlo)")
    return p


def parse_arg_types(text: str):
    """``"f32[4,8] i32[]"`` -> ShapeDtypeStructs; raises ValueError naming a bad entry."""
    by_name = {v: k for k, v in _SHORT.items()}
    structs, rest = [], text
    for match in _ARG.finditer(text):
        name, dims = match.group(1), match.group(2)
        if name not in by_name:
            raise ValueError(f"unknown dtype {name!r} in --args {text!r}; use one of "
                             f"{', '.join(sorted(by_name))}")
        shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
        structs.append(ShapeDtypeStruct(shape, by_name[name]))
        rest = rest.replace(match.group(0), " ", 1)
    if rest.strip():
        raise ValueError(f"could not read {rest.strip()!r} in --args {text!r}; write each "
                         "argument as dtype[dims], e.g. f32[4,8] or i32[]")
    return structs


def parse_static(items):
    static = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise ValueError(f"--static {item!r}: write NAME=VALUE, e.g. --static n=3")
        try:
            static[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            static[name] = value  # a bare word: a string
    return static


def load_function(target: str):
    path, sep, name = target.rpartition(":")
    if not sep or not path:
        raise ValueError(f"{target!r}: write path/to/file.py:function")
    path = os.path.abspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    module_name = "_traxla_inspect_" + re.sub(r"\W", "_", os.path.splitext(
        os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(os.path.dirname(path))
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise AttributeError(f"{path} has no {name!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{target} is not a function")
    return obj


def run(args, out=None) -> int:
    out = out or sys.stdout
    stages = STAGES if args.stage == "all" else tuple(s.strip() for s in args.stage.split(","))
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        print(f"traxla inspect: unknown stage(s) {unknown}; choose from {', '.join(STAGES)} "
              "or all", file=sys.stderr)
        return 2
    try:
        fun = load_function(args.target)
        structs = parse_arg_types(args.args)
        static = parse_static(args.static)
    except (ValueError, OSError, AttributeError, TypeError) as e:
        print(f"traxla inspect: {e}", file=sys.stderr)
        return 2
    jitted = traxla.jit(fun, static_argnames=tuple(static) or None)
    # Each unrolled loop is described once: by the loops stage when asked for, otherwise by
    # the warning (re-issued after the trace); the compile report then only counts them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnrolledLoopWarning)
        traced = jitted.trace(*structs, **static)
    loops = find_unrolled_loops(traced.jaxpr)
    if "loops" not in stages and traxla.config.read("warn_unrolled_loops"):
        for loop in loops:
            warn_loop(loop)
    print(f"== {args.target}({', '.join(s.dtype.name + str(list(s.shape)) for s in structs)}"
          + "".join(f", {k}={v!r}" for k, v in static.items()) + ")", file=out)
    if "jaxpr" in stages:
        print(f"== jaxpr ({len(traced.jaxpr.eqns)} equations, traced in "
              f"{traced.trace_seconds:.3f} s)", file=out)
        print(traced.jaxpr, file=out)
    if "loops" in stages:
        print(f"== unrolled loops: {len(loops)}", file=out)
        for loop in loops:
            print(loop.describe(), file=out)
    if not set(stages) & {"stablehlo", "hlo", "cost", "report"}:
        return 0
    lowered = traced.lower()
    if "stablehlo" in stages:
        print(f"== StableHLO (lowered in {lowered.lower_seconds:.3f} s)", file=out)
        print(lowered.as_text(debug_info=True), file=out)
    if "hlo" in stages:
        print("== HLO", file=out)
        print(lowered.as_text("hlo"), file=out)
    if not set(stages) & {"cost", "report"}:
        return 0
    compiled = lowered.compile()
    if "cost" in stages:
        print(f"== XLA cost analysis (compiled in {compiled.compile_seconds:.3f} s)", file=out)
        for key, value in sorted(compiled.cost_analysis().items()):
            print(f"  {key:28s} {value:g}", file=out)
    if "report" in stages:
        print("== compile report", file=out)
        report = compiled.report()
        report.loops_described = True  # above, as the loops stage or the warning
        print(report, file=out)
    return 0

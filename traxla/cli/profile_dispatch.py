"""``python -m traxla profile-dispatch``: where a cached ``jit`` call's microseconds go.

Times each stage of the hit path separately, on the same compiled program, as medians
of interleaved repeats: flatten (arguments to leaves: traxla's ``tree_flatten`` and the
hit path's compiled structure matcher), key (the avals signature), lookup (the cache dictionary),
execute (enqueueing the program on device buffers), wrap (result buffers to Arrays and
the output tree), and the whole call, for one array argument and for a 100-leaf pytree.
"""
from __future__ import annotations

import statistics
import time

import numpy as np
from traxla import tree_util
from traxla.api.call_signatures import matcher_for
from traxla.runtime.array import arrays_from_buffers
import traxla


def add_parser(sub):
    p = sub.add_parser("profile-dispatch",
                       help="where a cached jit call's microseconds go (flatten, key, lookup, "
                            "execute, wrap)")
    p.add_argument("--calls", type=int, default=2000, help="calls per repeat (default 2000)")
    p.add_argument("--repeats", type=int, default=5, help="repeats; medians are printed")
    p.add_argument("--clock", choices=("wall", "thread"), default="wall",
                   help="wall clock (default) or the calling thread's CPU time (steadier on a "
                        "loaded machine; leaves out work on other threads)")
    return p


_clock = [time.perf_counter]


def _per_call_us(fn, calls):
    clock = _clock[0]
    start = clock()
    for _ in range(calls):
        fn()
    return (clock() - start) / calls * 1e6


def _stages(jitted, args, calls, repeats):

    out = jitted(*args)
    tree_util.tree_map(lambda a: a.block_until_ready(), out)
    leaves, in_tree = tree_util.tree_flatten((args, {}))
    avals = tuple(a.aval for a in leaves)
    entry = next(iter(jitted._compiled.values()))
    bufs = [a._buf for a in leaves]
    kept = bufs if entry.kept is None else [bufs[i] for i in entry.kept]
    out_bufs = entry.run(kept)
    match = matcher_for(in_tree.children()[0])
    if jitted._tree_fast:  # pytree hit path: compiled matcher, then the avals list
        aval_list = list(avals)
        candidates = jitted._tree_fast.structures[0][1]

        def lookup():
            for known, hit in candidates:
                if known == aval_list:
                    return hit
    else:
        def lookup():
            return jitted._fast.get(avals)
    stages = {
        "flatten (tree_util)": lambda: tree_util.tree_flatten((args, {})),
        "flatten (compiled matcher)": lambda: match(args),
        "key (avals)": lambda: [a.aval for a in leaves],
        "lookup (hit-path cache)": lookup,
        "execute (enqueue)": lambda: entry.run(kept),
        "wrap (Arrays + tree)": lambda: entry.out_tree.unflatten(
            arrays_from_buffers(entry.out_avals, out_bufs)),
        "whole cached call": lambda: jitted(*args),
    }
    samples = {name: [] for name in stages}
    for _ in range(repeats):
        for name, fn in stages.items():
            samples[name].append(_per_call_us(fn, calls))
    jitted(*args)
    return {name: statistics.median(v) for name, v in samples.items()}


def run(args) -> int:

    thread_clock = getattr(args, "clock", "wall") == "thread"
    _clock[0] = time.thread_time if thread_clock else time.perf_counter

    x = traxla.device_put(np.arange(4, dtype=np.float32))
    params = {f"layer{i:02d}": {"w": traxla.device_put(np.full((4,), i, np.float32)),
                                "b": traxla.device_put(np.zeros((4,), np.float32))}
              for i in range(50)}
    cases = {
        "jit(lambda x: x + 1.0), one f32[4] argument": (traxla.jit(lambda x: x + 1.0), (x,)),
        "jit of a 100-leaf pytree (50 x {w, b})": (
            traxla.jit(lambda p: p["layer00"]["w"] + p["layer49"]["b"]), (params,)),
    }
    for title, (jitted, call_args) in cases.items():
        figures = _stages(jitted, call_args, args.calls, args.repeats)
        print(f"== {title}: median us per call of {args.repeats} x {args.calls} "
              f"({getattr(args, 'clock', 'wall')} clock)")
        width = max(map(len, figures))
        for name, us in figures.items():
            print(f"  {name.ljust(width)} {us:8.2f}")
        print()
    print("The hit path takes the compiled matcher (calls on Arrays alone: none) plus key, "
          "lookup, execute and wrap;\nexecute is jaxlib's execute_sharded + "
          "consume_with_handlers, the floor for any Python dispatcher.")
    return 0

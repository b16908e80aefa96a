"""Differential run on one accelerator, JAX and traxla in separate processes, one after the
other (one process at a time can hold a TPU):

    python tools/tpu_diff.py jax OUT.pkl       # JAX evaluates the corpus, saves results
    python tools/tpu_diff.py traxla OUT.pkl    # traxla evaluates it, compares, prints a summary

The corpus is tests/test_jaxpr_vs_jax.py's (its numeric part) and tests/_linalg_programs.py's
(every linalg function and gradient, and issue #43's linalg programs, to float32 tolerance), run in groups of programs
sharing one executable. A program whose lowering for the platform has the same structure in
both (ops and custom-call targets; JAX's is saved by the JAX process) must give bit-identical
results; the others must agree to the corpus tolerance. Exit status 1 when a result differs
beyond that or traxla fails where JAX ran."""
from __future__ import annotations

import os
import pickle
import re
import sys
import time
import traceback

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [REPO, os.path.join(REPO, "tests")]

GROUP = 32
_OP = re.compile(r"((?:stablehlo|chlo|func|sdy)\.[a-z_]+)")
_CC = re.compile(r"custom_call @([\w.$-]+)")


def structure(text: str) -> str:
    ops = [m.group(1) for line in text.splitlines()
           for m in [_OP.search(line.split(" = ", 1)[-1])] if m]
    return " ".join(ops) + " | " + " ".join(sorted(set(_CC.findall(text))))


def _leaves(tree):
    from _corpus import leaves
    return [np.asarray(x) for x in leaves(tree)]


def _evaluate(ns, names, corpus, run_group, build):
    """{name: [arrays]} and {name: error}: groups first, one by one where a group fails."""
    results, errors = {}, {}
    for i in range(0, len(names), GROUP):
        group = names[i:i + GROUP]
        try:
            outs = run_group([build(corpus[n], ns) for n in group],
                             [corpus[n].args for n in group], ns.jit)
            for n, out in zip(group, outs):
                results[n] = _leaves(out)
            continue
        except Exception:  # noqa: BLE001 - find which program fails
            pass
        for n in group:
            try:
                results[n] = _leaves(run_group([build(corpus[n], ns)], [corpus[n].args],
                                               ns.jit)[0])
            except Exception as e:  # noqa: BLE001
                errors[n] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return results, errors


def main(which: str, path: str) -> int:
    start = time.time()
    import test_jaxpr_vs_jax as C
    from _corpus import run_group
    from _linalg_programs import corpus as linalg_corpus
    corpus = dict(C.CORPUS)
    corpus.update(linalg_corpus(C.Case))  # linalg values and gradients, issue #43's programs
    names = [n for n in corpus if n not in C.KNOWN_NUMERIC]
    ns = C.JAX if which == "jax" else C.TRAXLA
    mod = sys.modules["jax" if which == "jax" else "traxla"]
    platform = mod.devices()[0].platform
    print(f"{which}: {len(names)} programs on {mod.devices()[0]!r} ({platform})", flush=True)
    results, errors = _evaluate(ns, names, corpus, run_group, C._build)
    shapes = {}
    for n in names:
        try:
            fn = C._build(corpus[n], ns)
            text = ns.jit(fn).trace(*corpus[n].args).lower(
                lowering_platforms=(platform,)).as_text()
            shapes[n] = structure(text)
        except Exception as e:  # noqa: BLE001
            shapes[n] = f"ERROR {type(e).__name__}"
    if which == "jax":
        with open(path, "wb") as f:
            pickle.dump({"platform": platform, "shapes": shapes, "errors": errors,
                         "results": results}, f)
        print(f"jax: {len(results)} ran, {len(errors)} failed, saved {path} "
              f"in {time.time() - start:.0f}s")
        return 0
    with open(path, "rb") as f:
        saved = pickle.load(f)  # our own file, written by the JAX process above
    jax_platform, jax_shapes, jax_errors = saved["platform"], saved["shapes"], saved["errors"]
    want = saved["results"]
    if jax_platform != platform:
        print(f"WARNING: JAX ran on {jax_platform}, traxla on {platform}")
    identical, close, same_lowering_not_identical, bad = 0, 0, [], []
    for n in names:
        if n in jax_errors:
            continue
        if n in errors:
            bad.append(f"{n}: traxla failed where JAX ran: {errors[n]}")
            continue
        w = want.get(n, [])
        g = results[n]
        if len(w) != len(g):
            bad.append(f"{n}: {len(g)} results, JAX {len(w)}")
            continue
        same = shapes.get(n) == jax_shapes.get(n)
        bits = all(a.shape == b.shape and a.dtype == b.dtype and
                   a.tobytes() == b.tobytes() for a, b in zip(g, w))
        if bits:
            identical += 1
            continue
        try:
            for a, b in zip(g, w):
                np.testing.assert_allclose(a.astype(np.float64) if a.dtype.kind == "V" else a,
                                           b, rtol=max(corpus[n].rtol, 1e-5), atol=1e-5)
            close += 1
            if same:
                same_lowering_not_identical.append(n)
        except (AssertionError, TypeError, ValueError) as e:
            bad.append(f"{n}: {str(e).strip().splitlines()[0][:160]}"
                       f"{' (same lowering)' if same else ''}")
    print(f"== traxla vs JAX on {platform}: {identical} bit-identical, {close} close, "
          f"{len(bad)} differ; JAX failed {len(jax_errors)}, skipped; "
          f"{time.time() - start:.0f}s")
    if same_lowering_not_identical:
        print(f"same lowering structure but not bit-identical ({len(same_lowering_not_identical)}):"
              f" {', '.join(same_lowering_not_identical[:20])}")
    for line in bad:
        print("DIFFER", line)
    for n, e in sorted(jax_errors.items()):
        print("JAX-FAILED", n, e)
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1], sys.argv[2]))
    except Exception:  # noqa: BLE001 - a summary line either way
        traceback.print_exc()
        print(f"== {sys.argv[1]} differential run FAILED to complete")
        sys.exit(2)

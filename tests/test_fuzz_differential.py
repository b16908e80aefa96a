"""The differential fuzzer (tools/fuzz_differential.py) in CI: a few dozen random programs
over the lax primitives, with a fixed seed, run in this process and compared with JAX for
values, jaxpr text and errors. The long run (10,000 programs) is in docs/reliability.md."""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("jax")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import fuzz_differential as fd  # noqa: E402
import fuzz_recipes as fr  # noqa: E402

SEED = 20261205


def test_a_short_fuzz_run_agrees_with_jax():
    summary = fd.run(SEED, 30, workers=0)
    failures = "\n".join(f"program {i}: {bucket}\n{fr.describe(recipe)}\n{detail}"
                         for i, bucket, detail, recipe in summary.failures
                         if bucket in fd.FAILING)
    assert summary.counts["crashes"] == 0, failures
    assert summary.counts["wrong-values"] == 0, failures
    assert summary.counts["jaxpr-differs"] == 0, failures
    assert summary.counts["error-differs"] == 0, failures
    assert sum(summary.counts.values()) == 30
    assert summary.counts["ok"] >= 20  # most programs are valid and run to the end
    assert summary.line().startswith(f"fuzz seed={SEED} programs=30: ok=")


def test_recipes_are_deterministic_and_json():
    import json
    a, b = fd.recipe_for(7, 3), fd.recipe_for(7, 3)
    assert a == b and json.loads(json.dumps(a)) == a
    assert fd.recipe_for(7, 4) != a


def test_the_comparison_can_fail():
    # a wrong value, dtype, weak type or error class is reported, not passed
    recipe = {"transform": "eager", "exact": True}
    one = np.ones(3, np.float32)
    assert fd.compare_values(recipe, one, one) is None
    assert "values differ" in fd.compare_values(recipe, one, np.nextafter(one, 2))
    assert "dtype" in fd.compare_values(recipe, one, one.astype(np.float16))
    assert "structure" in fd.compare_values(recipe, (one,), one)
    assert "-0.0" not in (fd.compare_values(recipe, np.float32(-0.0), np.float32(0.0)) or "")
    assert fd.compare_values(recipe, np.float32(-0.0), np.float32(0.0)) is not None
    assert fd.compare_values(recipe, np.float32(np.nan), np.float32(np.nan)) is None
    ok, err = ("ok", one), ("error", TypeError("bad"))
    assert fd._compare_outcomes("value", recipe, err, ("error", ValueError("bad")))[0] == \
        "error-differs"
    assert fd._compare_outcomes("value", recipe, ("error", KeyError("x")), ok)[0] == "crashes"
    assert fd._compare_outcomes("value", recipe, ok, err)[0] == "wrong-values"
    assert fd._compare_outcomes("jaxpr", recipe, ("ok", "a"), ("ok", "b"))[0] == "jaxpr-differs"
    assert fd._compare_outcomes("value", recipe, ("error", TypeError("x")),
                                ("error", TypeError("y")))[0] == "message-differs"
    # JAX prints an integer param as np.int64(1) or 1 depending on its caches
    assert fd._compare_outcomes("value", recipe, ("error", ValueError("axes (1,) bad")),
                                ("error", ValueError("axes (np.int64(1),) bad")))[0] == \
        "same-error"


def test_a_jax_failure_only_when_lowering_is_a_jax_bug():
    # JAX traced an invalid program and failed lowering it; traxla refused it while tracing
    ours = ("error", ValueError("duplicate value in 'axes' of reduction: (1, 1)"))
    MLIRError = type("MLIRError", (Exception,), {})
    for theirs in (("error", ValueError("Cannot lower jaxpr with verifier errors:\n...")),
                   ("error", MLIRError("Operation creation failed:\nerror: ..."))):
        assert fd._jax_fails_late(ours, theirs)
    assert not fd._jax_fails_late(ours, ("error", MLIRError("another failure")))
    assert not fd._jax_fails_late(("error", KeyError("x")),
                                  ("error", MLIRError("Operation creation failed:")))


_FAKE_WORKER = ("import os, signal, sys, time; print('{\"ready\": true}', flush=True); "
                "sys.stdin.readline(); ")


def test_answers_arriving_together_are_all_read():
    # a fast program's stage lines and answer reach the pipe in one piece: a buffered
    # readline took them all and select then waited for more (a false "hung" crash)
    action = ("sys.stdout.write('{\"stage\": \"traxla\"}\\n{\"stage\": \"jax\"}\\n'"
              "'{\"bucket\": \"ok\", \"detail\": null}\\n'); sys.stdout.flush(); time.sleep(30)")
    w = fd.Worker(timeout=5, command=[sys.executable, "-c", _FAKE_WORKER + action])
    try:
        assert w.run(fd.recipe_for(SEED, 0)) == ("ok", None)
    finally:
        w.proc.kill()
        w.proc.wait()


@pytest.mark.parametrize("action, bucket_expected, expected", [
    ("print('{\"stage\": \"traxla\"}', flush=True); os.kill(os.getpid(), signal.SIGSEGV)",
     "crashes", "died"),
    ("time.sleep(30)", "crashes", "hung"),
    # killed while JAX ran (XLA's constant folder dies of SIGFPE on a uint8 rem by zero)
    ("print('{\"stage\": \"jax\"}', flush=True); os.kill(os.getpid(), signal.SIGFPE)",
     "jax-bug", "while JAX ran"),
])
def test_a_dying_or_hanging_worker_is_counted_as_a_crash(action, bucket_expected, expected):
    # a segfault (or a hang) in a worker is a crash of that program, not the end of the run
    # (a hang is waited for 1 s here, then 0.5 s more for the worker to end: the budgets
    # are parameters; a dying worker's end of output arrives at once)
    w = fd.Worker(timeout=1 if expected == "hung" else 3, reap_timeout=0.5,
                  command=[sys.executable, "-c", _FAKE_WORKER + action])
    try:
        bucket, detail = w.run(fd.recipe_for(SEED, 0))
    finally:
        w.close()
    assert bucket == bucket_expected and expected in detail
    assert w.proc is None  # the next program gets a fresh worker

"""Unrolled-loop compile predictions are ranges calibrated on measured compiles, and the
scan-vs-unrolled benchmark keeps to a time budget."""
import collections

import pytest

from traxla.cli import bench
from traxla.diagnostics import unrolled


@pytest.fixture
def fresh_observations(monkeypatch):
    observed = collections.deque(maxlen=16)
    monkeypatch.setattr(unrolled, "_observed", observed)
    return observed


def test_uncalibrated_prediction_is_a_wide_range_around_the_model(fresh_observations):
    # compiles measured on the project's 2-core machine, quiet
    for n, seconds in ((100, 0.042), (200, 1.07), (601, 0.79), (2000, 13.5), (6000, 26.4)):
        lo, hi = unrolled.predicted_compile_range(n)
        assert lo < seconds < hi, (n, seconds, lo, hi)
    assert "not calibrated" in unrolled.calibration_note()


def test_measured_compiles_move_the_range(fresh_observations):
    quiet = unrolled.predicted_compile_range(2000)
    # A loaded machine compiles 10x slower than the model: predictions follow.
    for n in (200, 600, 1000):
        unrolled.record_compile(n, 10 * unrolled._model_seconds(n))
    lo, hi = unrolled.predicted_compile_range(2000)
    assert lo > quiet[1] and lo < 10 * unrolled._model_seconds(2000) < hi
    assert unrolled.calibration_note() == "calibrated on 3 compiles measured in this process"
    # Tiny programs (fixed costs) do not calibrate.
    unrolled.record_compile(3, 100.0)
    assert len(fresh_observations) == 3


def test_the_nearest_sizes_calibrate(fresh_observations):
    unrolled.record_compile(40, 50 * unrolled._model_seconds(40))  # far away, very slow
    for n in (1000, 1500, 2500):
        unrolled.record_compile(n, unrolled._model_seconds(n))
    lo, hi = unrolled.predicted_compile_range(2000)
    assert lo < unrolled._model_seconds(2000) < hi < 2 * unrolled._model_seconds(2000)


def test_extrapolation_scales_the_largest_measurement():
    model = unrolled._model_seconds
    measured = [(100, 2 * model(100)), (600, 3 * model(600))]
    assert unrolled.extrapolated_compile_seconds(6000, measured) == pytest.approx(
        3 * model(6000))


def test_budget_skips_with_a_note_and_reports_progress(monkeypatch):
    lines, progress = [], []
    monkeypatch.setattr(bench, "PROGRESS_S", 0.0)
    rows = bench.sweep([bench.traxla_framework()], [60], compile_cap_s=1e-6,
                       log=lines.append, progress=progress.append)
    unrolled_row, scan_row = rows
    assert unrolled_row.mode == "python for" and unrolled_row.compile_s != unrolled_row.compile_s
    assert "over the 1e-06 s budget; --no-budget runs it" in unrolled_row.note
    assert scan_row.compile_s > 0 and not scan_row.note
    assert progress == []  # the skipped compile printed no progress line
    rows = bench.sweep([bench.traxla_framework()], [60, 70], compile_cap_s=None,
                       log=lines.append, progress=progress.append)
    assert all(r.compile_s > 0 for r in rows)   # no budget: everything compiles
    # the first length has no measurement to predict from; the second does
    assert len(progress) == 1 and "70-step unrolled loop, predicted" in progress[0]


def test_a_loop_traced_again_warns_once_under_the_default_filter():
    import warnings

    import numpy as np

    import traxla
    import traxla.numpy as jnp
    from traxla.diagnostics import UnrolledLoopWarning

    def f(W, h):
        for _ in range(40):
            h = jnp.tanh(W @ h)
        return h

    W = np.eye(8, dtype=np.float32)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        jitted = traxla.jit(f)
        jitted.trace(W, np.ones(8, np.float32))
        jitted.trace(W, np.ones((8, 2), np.float32))  # a second trace of the same loop
    assert len([w for w in rec if issubclass(w.category, UnrolledLoopWarning)]) == 1

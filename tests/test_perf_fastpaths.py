"""The eager and cached-call fast paths (issue #18) agree with the ordinary Python
paths, and each cause of falling back takes the ordinary path with the same result."""
import math

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla.numpy import _eager

X = np.arange(4, dtype=np.float32)


def _fresh_stats():
    return dict(_eager.stats)


def _delta(before, key):
    return _eager.stats[key] - before[key]


def test_eager_operator_and_ufunc_take_fast_path_and_agree():
    x = traxla.device_put(X)
    y = traxla.device_put(np.ones((4, 4), np.float32))
    before = _fresh_stats()
    results = {"x + 1": x + 1, "2.5 * x": 2.5 * x, "sin": tnp.sin(x), "y @ y": y @ y,
               "x < 2": x < 2, "-x": -x}
    assert _delta(before, "fast") == len(results)
    expected = {"x + 1": X + 1, "2.5 * x": 2.5 * X, "sin": np.sin(X), "y @ y": np.full((4, 4), 4.0),
                "x < 2": X < 2, "-x": -X}
    for name, value in results.items():
        np.testing.assert_allclose(np.asarray(value), expected[name], rtol=1e-6, err_msg=name)
    assert (x + 1).dtype == np.float32 and not (x + 1).aval.weak_type
    assert (x < 2).dtype == np.bool_


def test_python_scalar_is_transferred_once():
    x = traxla.device_put(X)
    x + 7.25
    before = _fresh_stats()
    for _ in range(3):
        out = x + 7.25
    assert _delta(before, "scalar_misses") == 0 and _delta(before, "scalar_hits") == 3
    np.testing.assert_array_equal(np.asarray(out), X + 7.25)


def test_scalar_cache_keeps_signed_zero_and_int_apart():
    x = traxla.device_put(np.array([1.0, -1.0], np.float32))
    assert np.all(np.signbit(np.asarray(tnp.copysign(x, -0.0))))
    assert not np.any(np.signbit(np.asarray(tnp.copysign(x, 0.0))))
    i = traxla.device_put(np.array([5], np.int32))
    assert (i + 1).dtype == np.int32 and (i + 1.0).dtype == np.float32


def test_scalar_dtype_follows_x64():
    with traxla.config.flag("enable_x64", True):
        x = traxla.device_put(np.arange(3, dtype=np.float64))
        out = x + 0.1
        assert out.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(out), np.arange(3) + 0.1)
        i = traxla.device_put(np.arange(3, dtype=np.int64))
        big = i + 2 ** 40
        assert big.dtype == np.int64 and int(np.asarray(big)[2]) == 2 + 2 ** 40
    out32 = traxla.device_put(X) + 0.1
    assert out32.dtype == np.float32


@pytest.mark.parametrize("cause", ["numpy operand", "bool scalar", "out-of-range int",
                                   "tracer", "debug_nans", "disable_jit", "sharded"])
def test_each_fallback_cause_takes_the_python_path(cause):
    x = traxla.device_put(X)
    before = _fresh_stats()
    if cause == "numpy operand":
        out, want = tnp.add(x, X), X + X
    elif cause == "bool scalar":
        out, want = x * True, X
    elif cause == "out-of-range int":  # left to the ordinary path's handling
        out, want = x + 2 ** 40, tnp.add.__wrapped_eager__(x, 2 ** 40)
    elif cause == "tracer":
        out = traxla.jit(lambda v: tnp.sin(v) + 1.0)(x)
        want = np.sin(X) + 1
        assert _delta(before, "fast") == 0
    elif cause == "debug_nans":
        with traxla.config.flag("debug_nans", True):
            out, want = x + 1.0, X + 1
    elif cause == "disable_jit":
        with traxla.disable_jit():
            out, want = tnp.cos(x), np.cos(X)
    else:
        mesh = traxla.sharding.Mesh(np.array(traxla.devices()[:1]), ("a",))
        placed = traxla.device_put(X, traxla.sharding.NamedSharding(
            mesh, traxla.sharding.PartitionSpec("a")))
        out, want = placed + 1.0, X + 1
    assert _delta(before, "fallback") >= 1
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_deleted_operand_raises_clearly():
    x = traxla.device_put(X)
    x + 1.0
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        x + 1.0


def test_shape_errors_match_the_python_path():
    x = traxla.device_put(X)
    y = traxla.device_put(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(4,\), \(3,\)"):
        x + y


def test_nan_signed_scalar_values():
    x = traxla.device_put(X)
    assert np.all(np.isnan(np.asarray(x + math.nan)))
    assert np.all(np.isinf(np.asarray(x - math.inf)))

"""Configuration context managers are per thread, as in JAX 0.10.2 (issue #27 item 2): a
``with`` block in one thread changes nothing another thread reads, traces, compiles or
runs; ``config.update`` stays global. Each case runs two threads in lockstep (barriers):
one inside the block, one outside, both checked while the block is open."""
import logging
import threading

import numpy as np
import pytest

import jax
import traxla
import traxla.numpy as jnp
from traxla.ir.config import config

# name -> a value for the block (each differs from the default)
CONTEXTS = {"enable_x64": True, "default_matmul_precision": "highest",
            "numpy_rank_promotion": "raise", "numpy_dtype_promotion": "strict",
            "debug_nans": True, "debug_infs": True, "log_compiles": True,
            "enable_checks": True, "disable_jit": True}


def _in_lockstep(inside, outside, timeout=60):
    """Runs ``inside(sync)`` and ``outside(sync)`` in two threads; ``sync()`` is a barrier
    both call at the same points. Returns their results; re-raises their exceptions."""
    barrier = threading.Barrier(2, timeout=timeout)
    results, errors = {}, []

    def run(name, fn):
        try:
            results[name] = fn(barrier.wait)
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=run, args=("inside", inside)),
               threading.Thread(target=run, args=("outside", outside))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results["inside"], results["outside"]


def _context(lib, name, value):
    if name == "disable_jit":
        return lib.disable_jit(value)
    return getattr(lib, name)(value)


def _value(lib, name):
    if lib is jax:
        return getattr(jax.config, "jax_" + name)
    return config.read("check_jaxprs" if name == "enable_checks" else name)


@pytest.mark.parametrize("lib", [jax, traxla], ids=["jax", "traxla"])
@pytest.mark.parametrize("name", sorted(CONTEXTS))
def test_a_block_sets_its_thread_only(lib, name):
    value = CONTEXTS[name]
    default = _value(lib, name)

    def inside(sync):
        with _context(lib, name, value):
            sync()  # both threads: the block is open
            seen = _value(lib, name)
            sync()
        return seen

    def outside(sync):
        sync()
        seen = _value(lib, name)
        sync()
        return seen

    assert _in_lockstep(inside, outside) == (value, default)
    assert _value(lib, name) == default


def test_update_stays_global_and_a_block_keeps_its_value():
    # as jax.config.update: every thread sees the new value, except one inside a block
    def inside(sync):
        with traxla.numpy_rank_promotion("warn"):
            sync()
            sync()  # the other thread updates the global value here
            during = config.read("numpy_rank_promotion")
        return during, config.read("numpy_rank_promotion")

    def outside(sync):
        sync()
        config.update("numpy_rank_promotion", "raise")
        sync()
        return config.read("numpy_rank_promotion")

    try:
        assert _in_lockstep(inside, outside) == (("warn", "raise"), "raise")
        assert config.read("numpy_rank_promotion") == "raise"
    finally:
        config.update("numpy_rank_promotion", "allow")


def test_x64_block_traces_compiles_and_runs_for_its_thread_only():
    double = traxla.jit(lambda x: x * 2 + 1)
    scalars = traxla.jit(lambda x: x + 1.5)
    x = np.arange(3)
    double(x), scalars(np.float32(1))  # cached (and on the hit paths) outside any block

    def probe():
        return (double(x).dtype, scalars(np.float32(1)).dtype, jnp.asarray(1.0).dtype,
                (jnp.arange(3) + 1).dtype, (traxla.device_put(np.ones(2)) * 2.0).dtype,
                traxla.config.x64_enabled)  # JAX's older spelling, as jaxopt reads it

    def inside(sync):
        with traxla.enable_x64():
            sync()
            first = probe()
            sync()
            second = probe()  # now cached for this thread's flags
        return first, second, probe()

    def outside(sync):
        sync()
        first = probe()
        sync()
        return first, probe()

    (in1, in2, after), (out1, out2) = _in_lockstep(inside, outside)
    wide = (np.int64, np.float32, np.float64, np.int64, np.float64, True)
    narrow = (np.int32, np.float32, np.float32, np.int32, np.float32, False)
    assert jax.config.x64_enabled is False
    assert in1 == in2 == wide
    assert out1 == out2 == after == narrow


def test_trace_and_executable_caches_key_on_each_threads_context():
    traces = []

    def f(x):
        traces.append(config.read("default_matmul_precision"))
        return x @ x

    jitted = traxla.jit(f)
    m = np.eye(2, dtype=np.float32)
    jitted(m)  # default precision, cached

    def inside(sync):
        with traxla.default_matmul_precision("highest"):
            sync()
            out = jitted(m)
            sync()
        return np.asarray(out)

    def outside(sync):
        sync()
        out = jitted(m)
        sync()
        return np.asarray(out)

    inside_out, outside_out = _in_lockstep(inside, outside)
    np.testing.assert_array_equal(inside_out, m)
    np.testing.assert_array_equal(outside_out, m)
    assert traces == [None, "highest"]  # one trace per context, none served across


def test_strict_promotion_in_one_thread_only():
    a, b = jnp.ones(2, jnp.int32), jnp.ones(2, jnp.float32)

    def inside(sync):
        with traxla.numpy_dtype_promotion("strict"):
            sync()
            try:
                a + b
            except traxla.errors.TypePromotionError:
                refused = True
            else:
                refused = False
            sync()
        return refused

    def outside(sync):
        sync()
        out = (a + b).dtype
        sync()
        return out

    assert _in_lockstep(inside, outside) == (True, np.float32)


def test_debug_nans_in_one_thread_only():
    log = traxla.jit(jnp.log)
    x = jnp.asarray(-1.0)
    log(x)  # cached, on the hit path

    def inside(sync):
        with traxla.debug_nans(True):
            sync()
            with pytest.raises(FloatingPointError):
                log(x)
            with pytest.raises(FloatingPointError):
                jnp.log(x)
            sync()
        return True

    def outside(sync):
        sync()
        out = (float(log(x)), float(jnp.log(x)))
        sync()
        return out

    inside_ok, outside_out = _in_lockstep(inside, outside)
    assert inside_ok and np.isnan(outside_out).all()


def test_disable_jit_in_one_thread_only():
    seen = {}

    def f(x):
        seen[threading.current_thread().name] = type(x).__name__
        return x + 1

    jitted = traxla.jit(f)

    def inside(sync):
        with traxla.disable_jit():
            sync()
            jitted(np.float32(1))
            sync()
        return seen[threading.current_thread().name]

    def outside(sync):
        sync()
        jitted(np.float32(2))
        sync()
        return seen[threading.current_thread().name]

    inside_kind, outside_kind = _in_lockstep(inside, outside)
    assert inside_kind != "DynamicJaxprTracer" and "Tracer" not in inside_kind
    assert "Tracer" in outside_kind


def test_log_compiles_in_one_thread_only(caplog):
    def inside(sync):
        with traxla.log_compiles(True):
            sync()
            traxla.jit(lambda x: x - 3.0)(np.ones(5, np.float32))
            sync()

    def outside(sync):
        sync()
        traxla.jit(lambda x: x - 4.0)(np.ones(6, np.float32))
        sync()

    with caplog.at_level(logging.WARNING, logger="traxla"):
        _in_lockstep(inside, outside)
    compiling = [r.getMessage() for r in caplog.records if "Compiling" in r.getMessage()]
    assert any("float32[5]" in m for m in compiling), compiling
    assert not any("float32[6]" in m for m in compiling), compiling

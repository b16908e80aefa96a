"""Cache-miss explanations (trace and compile caches), cache_info and the retrace
budget of traxla.diagnostics."""
import json
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import traxla
from traxla import diagnostics


@pytest.fixture
def explain(caplog):
    traxla.config.update("explain_cache_misses", True)
    caplog.set_level(logging.WARNING, logger="traxla")
    try:
        yield caplog
    finally:
        traxla.config.update("explain_cache_misses", False)


def _messages(caplog, level="TRACING"):
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(level)]


def _fresh():
    def step(x, params, scale=1):
        return x * scale + params["w"]
    return step


X3 = np.ones(3, np.float32)


@pytest.mark.parametrize("second, expected", [
    ((np.ones(4, np.float32), {"w": 1.0}), "at x, now f32[4] and before f32[3] (shape changed)"),
    ((np.ones(3, np.int32), {"w": 1.0}), "at x, now i32[3] and before f32[3] (dtype changed)"),
    ((X3, {"w": np.float32(1.0)}),
     "at params['w'], now f32[]{weak_type=False} and before f32[]{weak_type=True} "
     "(weak type changed)"),
    ((X3, {"w": 1.0, "b": 2.0}),
     "at input path args[1], now dict with keys ['b', 'w'] and before dict with keys ['w'], "
     "so the dict keys changed"),
    ((X3, [1.0]), "at input path args[1], now list and before dict, so the pytree "
                  "structure changed"),
])
def test_trace_miss_names_path_and_change(explain, second, expected):
    f = traxla.jit(_fresh())
    f(X3, {"w": 1.0})
    assert "never seen function with these jit options before (first trace)" in \
        _messages(explain)[-1]
    if isinstance(second[1], list):
        f = traxla.jit(lambda x, params: x + params[0] if isinstance(params, list)
                       else x + params["w"])
        f(X3, {"w": 1.0})
    f(*second)
    message = _messages(explain)[-1]
    assert "TRACING CACHE MISS at " + __file__ in message
    assert "previously seen cache keys differ" in message
    assert expected in message, message


def test_trace_miss_reports_the_closest_cached_entry(explain):
    # Cached f32[3] then f32[4]: a new i32[4] differs from f32[4] in one field (dtype) and
    # from f32[3] in two (shape and dtype), so f32[4] is the entry reported.
    f = traxla.jit(lambda x: x * 2)
    f(np.ones(3, np.float32))
    f(np.ones(4, np.float32))
    f(np.ones(4, np.int32))
    message = _messages(explain)[-1]
    assert "all 2 previously seen cache keys differ" in message
    assert "at x, now i32[4] and before f32[4] (dtype changed)" in message, message
    # Across leaves: the entry with the fewest differing leaves wins, whatever its order.
    g = traxla.jit(lambda xs: xs[0] + xs[1] + xs[2])
    g([np.ones(3, np.float32)] * 3)
    g([np.ones(3, np.float32), np.ones(3, np.float32), np.ones(3, np.int32)])
    g([np.ones(3, np.int32)] * 3)
    message = _messages(explain)[-1]
    assert message.count("(dtype changed)") == 2, message


def test_trace_miss_static_argument(explain):
    f = traxla.jit(_fresh(), static_argnames="scale")
    f(X3, {"w": 1.0}, scale=2)
    f(X3, {"w": 1.0}, scale=3)
    message = _messages(explain)[-1]
    assert "different static arguments:" in message
    assert "* at static argument scale, now 3 and before 2" in message
    assert "defined at " + __file__ in message


def test_trace_miss_config(explain):
    f = traxla.jit(_fresh())
    f(X3, {"w": 1.0})
    with traxla.config.flag("enable_x64", True):
        f(X3, {"w": 1.0})
    assert "config enable_x64 differs: now True and before False" in _messages(explain)[-1]


def test_compile_miss_when_the_trace_is_shared(explain):
    fun = _fresh()
    traxla.jit(fun)(np.ones(5, np.float32), {"w": 1.0})   # traces both shapes
    traxla.jit(fun)(X3, {"w": 1.0})
    g = traxla.jit(fun)                                    # its own compile cache
    g(X3, {"w": 1.0})
    assert "first compilation by this jit object (the traced jaxpr was reused)" in \
        _messages(explain, "COMPILATION")[-1]
    n_traces = len(_messages(explain))
    g(np.ones(5, np.float32), {"w": 1.0})
    message = _messages(explain, "COMPILATION")[-1]
    assert "at x, now f32[5] and before f32[3] (shape changed)" in message
    assert len(_messages(explain)) == n_traces              # no retrace: a compile miss only


@pytest.mark.parametrize("second, kwargs, expected", [
    ((np.ones(3, np.int32), {"w": 1.0}), {}, "at x, now i32[3] and before f32[3] (dtype changed)"),
    ((X3, {"w": np.float32(1.0)}), {},
     "at params['w'], now f32[]{weak_type=False} and before f32[]{weak_type=True}"),
    ((X3, {"w": 1.0, "b": 2.0}), {}, "at input path args[1], now dict with keys ['b', 'w']"),
    ((X3, {"w": 1.0}), {"scale": 3}, "at static argument scale, now 3 and before 2"),
    ((X3, {"w": 1.0}), {"x64": True}, "config enable_x64 differs: now True and before False"),
])
def test_compile_miss_explains_every_kind_of_change(explain, second, kwargs, expected):
    fun = _fresh()
    x64 = kwargs.pop("x64", False)

    def call(jitted, args, **kw):
        with traxla.config.flag("enable_x64", x64 and args is second):
            return jitted(*args, **kw)

    first = (X3, {"w": 1.0})
    shared = traxla.jit(fun, static_argnames="scale")
    call(shared, first, scale=2)
    call(shared, second, **{"scale": 2, **kwargs})      # both traces are cached now
    own = traxla.jit(fun, static_argnames="scale")      # compiles, never traces
    call(own, first, scale=2)
    n_traces = len(_messages(explain))
    call(own, second, **{"scale": 2, **kwargs})
    assert len(_messages(explain)) == n_traces
    message = _messages(explain, "COMPILATION")[-1]
    assert "previously seen cache keys differ" in message
    assert expected in message, message


def test_no_log_when_off(caplog):
    caplog.set_level(logging.WARNING, logger="traxla")
    f = traxla.jit(_fresh())
    f(X3, {"w": 1.0})
    f(np.ones(4, np.float32), {"w": 1.0})
    assert not _messages(caplog)


def test_cache_info_counts():
    fun = _fresh()
    f = traxla.jit(fun)
    for n in (3, 4, 3, 4, 3):
        f(np.ones(n, np.float32), {"w": 1.0})
    info = f.cache_info()
    assert (info.traces, info.compiles, info.trace_cache_size, info.compile_cache_size) == \
        (2, 2, 2, 2)
    assert diagnostics.cache_info(f) == info
    g = traxla.jit(fun)
    g(X3, {"w": 1.0})
    # another jit of the same function: neither traces nor compiles (f's trace and
    # executable are shared, as in JAX), though it has its own cache entry
    assert g.cache_info() == diagnostics.CacheInfo(0, 0, 2, 1)


def test_retrace_budget_raises_with_the_diff():
    f = diagnostics.retrace_budget(traxla.jit(_fresh()), 1, action="raise")
    f(np.ones(1, np.float32), {"w": 1.0})
    f(np.ones(2, np.float32), {"w": 1.0})
    with pytest.raises(diagnostics.RetraceBudgetExceeded,
                       match=r"traced 3 times, more than its retrace budget allows \(1 "
                             r"retraces\)(.|\n)*at x, now f32\[3\] and before f32\[[12]\]"):
        f(np.ones(3, np.float32), {"w": 1.0})


def test_retrace_budget_config_warns():
    f = traxla.jit(_fresh())
    with traxla.config.flag("max_retraces", 0):
        f(X3, {"w": 1.0})
        with pytest.warns(diagnostics.RetraceWarning, match="retrace budget"):
            f(np.ones(2, np.float32), {"w": 1.0})
    with pytest.raises(ValueError, match="'warn' or 'raise'"):
        diagnostics.retrace_budget(f, 1, action="ignore")


SHARDED = """
import json, logging, io
import numpy as np
import traxla as jax
from traxla.sharding import PartitionSpec as P, AxisType
jax.config.update('num_cpu_devices', 4)
stream = io.StringIO()
handler = logging.StreamHandler(stream)
logging.getLogger('traxla').addHandler(handler)
jax.config.update('explain_cache_misses', True)
mesh = jax.make_mesh((2, 2), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))
f = jax.jit(lambda a: a * 2)
x = np.ones((4, 4), np.float32)
f(jax.device_put(x, jax.NamedSharding(mesh, P('x', 'y'))))
f(jax.device_put(x, jax.NamedSharding(mesh, P('x', None))))
assert f.cache_info().compiles == 2, f.cache_info()
print(json.dumps(stream.getvalue()))
"""


def test_compile_miss_on_sharding_change():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(SHARDED)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = json.loads(proc.stdout.strip().splitlines()[-1])
    compile_misses = [m for m in log.split("COMPILATION CACHE MISS")[1:]]
    assert compile_misses, log
    last = compile_misses[-1]
    assert "different argument placements (shardings):" in last
    assert "* at a, now" in last and "(sharding changed)" in last


def test_function_redefined_in_a_loop(explain):
    for _ in range(2):
        traxla.jit(lambda x: x + 1)(X3)   # a new lambda every iteration: never cached
    message = _messages(explain)[-1]
    assert "never seen function with these jit options before" in message
    assert "maybe the function is being re-defined repeatedly" in message


def test_explain_cache_misses_context_is_per_block(caplog):
    """``with traxla.explain_cache_misses():`` (JAX's config State) logs inside the block only."""
    caplog.set_level(logging.WARNING, logger="traxla")
    f = traxla.jit(lambda x: x * 2)
    f(np.ones(3, np.float32))
    with traxla.explain_cache_misses():
        assert traxla.explain_cache_misses.value is True
        f(np.ones(4, np.float32))
    f(np.ones(5, np.float32))
    assert traxla.explain_cache_misses.value is False
    messages = _messages(caplog)
    assert len(messages) == 1 and "now f32[4] and before f32[3]" in messages[0], messages

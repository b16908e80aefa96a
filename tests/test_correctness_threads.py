"""Eight Python threads sharing one process: tracing, new-shape jits, cached calls, eager
ops, make_jaxpr, grad and vmap at once -- every result checked, no spurious errors, and
each program traced and compiled once however many threads miss it together."""
import sys
import threading

import numpy as np

import traxla
import traxla.numpy as jnp
from traxla import lax

N_THREADS = 8
ITERATIONS = 28
N_SHAPES = 6

trace_counts: dict = {}
_count_lock = threading.Lock()


def _counted(x):
    with _count_lock:  # runs only while tracing: counts traces per shape
        trace_counts[x.shape] = trace_counts.get(x.shape, 0) + 1
    return jnp.sin(x) * 2.0 + 1.0


new_shape_jit = traxla.jit(_counted)
cached_jit = traxla.jit(lambda x, y: x @ y + 1.0)


def abs_val(x):
    return x if x > 0 else -x


def steps(x, n):
    for _ in range(n):
        x = x * 2.0
    return x


static_jit = traxla.jit(steps, static_argnames="n")


def _running_sum(c, e):
    return c + e, c


def _row_total(r):
    return lax.scan(_running_sum, 0.0, r)[0]


def compare(x):
    y = x * 2.0 + 1.0
    return (jnp.sin(y) > -2.0) & (y * y >= 0.0)


def _worker(tid, barrier, failures):
    rng = np.random.default_rng(tid)
    a = np.ones((3, 3), np.float32)
    b = np.arange(9, dtype=np.float32).reshape(3, 3)
    expected_cached = a @ b + 1.0
    barrier.wait()
    for i in range(ITERATIONS):
        try:
            v = rng.standard_normal(4).astype(np.float32)
            kind = (tid + i) % 7
            if kind == 0:  # a traced comparison, staged: the jaxpr must be this thread's
                jaxpr = traxla.make_jaxpr(compare)(v)
                assert str(jaxpr) == EXPECTED_JAXPR, str(jaxpr)
            elif kind == 1:  # new shapes, shared by every thread: compiled once per shape
                n = 1 + (tid * ITERATIONS + i) % N_SHAPES
                x = np.linspace(-1, 1, n, dtype=np.float32)
                np.testing.assert_allclose(np.asarray(new_shape_jit(x)), np.sin(x) * 2 + 1,
                                           rtol=1e-5, atol=1e-6)
            elif kind == 2:
                np.testing.assert_allclose(np.asarray(cached_jit(a, b)), expected_cached)
            elif kind == 3:  # eager primitives
                out = jnp.where(jnp.asarray(v) > 0, jnp.exp(v), v * 3.0)
                np.testing.assert_allclose(np.asarray(out), np.where(v > 0, np.exp(v), v * 3),
                                           rtol=1e-5)
            elif kind == 4:  # Python control flow under grad (concrete JVP tracers)
                g = traxla.grad(abs_val)(float(v[0]))
                assert float(g) == (1.0 if v[0] > 0 else -1.0)
            elif kind == 5:  # vmap, and a scan under vmap
                # (the functions are module-level: the threads share one program, as in
                # JAX; fresh lambdas would trace and compile again on every call)
                out = traxla.vmap(_row_total)(np.stack([v, v * 2]))
                np.testing.assert_allclose(np.asarray(out), [v.sum(), 2 * v.sum()], rtol=1e-5)
            else:  # static arguments, passed by position and by keyword
                k = 1 + i % 3
                assert float(static_jit(1.5, k)) == 1.5 * 2 ** k
                assert float(static_jit(1.5, n=k)) == 1.5 * 2 ** k
        except Exception as e:  # noqa: BLE001 - every failure is collected and reported
            failures.append(f"thread {tid} iteration {i}: {type(e).__name__}: {e}")


EXPECTED_JAXPR = str(traxla.make_jaxpr(compare)(np.zeros(4, np.float32)))


def _run_threads():
    # Switch threads every few microseconds (instead of 5 ms), so that they interleave
    # inside traces: shared trace state shows up within a few iterations.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        return _start_and_join()
    finally:
        sys.setswitchinterval(interval)


def _start_and_join():
    failures: list = []
    barrier = threading.Barrier(N_THREADS)
    threads = [threading.Thread(target=_worker, args=(t, barrier, failures))
               for t in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_eight_threads_no_errors_no_wrong_results_compile_once():
    for _ in range(2):  # repeatedly: the second round runs on warm caches
        failures = _run_threads()
        assert failures == [], "\n".join(failures[:10])
    assert sorted(trace_counts) == [(n,) for n in range(1, N_SHAPES + 1)]
    assert all(c == 1 for c in trace_counts.values()), trace_counts
    # the main thread is left as it was: eager evaluation, tracing and grad all work
    assert str(traxla.make_jaxpr(compare)(np.zeros(4, np.float32))) == EXPECTED_JAXPR
    assert float(traxla.grad(abs_val)(-2.0)) == -1.0
    assert float(jnp.sin(0.0)) == 0.0


def test_tracer_from_another_thread_is_refused_not_misused():
    leaked = []

    def keep(x):
        leaked.append(x)
        return x

    traxla.jit(keep)(1.0)  # the tracer is dead once its trace ends
    box = []
    t = threading.Thread(target=lambda: box.append(_error_of(lambda: leaked[0] + 1)))
    t.start()
    t.join()
    assert type(box[0]).__name__ == "UnexpectedTracerError"


def test_each_thread_has_its_own_trace_while_tracing():
    started, release = threading.Event(), threading.Event()
    results = {}

    def slow(x):
        started.set()
        release.wait(10)
        return x + 1.0

    def tracer_thread():
        results["jaxpr"] = str(traxla.make_jaxpr(slow)(1.0))

    t = threading.Thread(target=tracer_thread)
    t.start()
    started.wait(10)
    try:  # while the other thread is inside its trace, this one evaluates eagerly
        assert float(jnp.asarray(2.0) * 3.0) == 6.0
        assert isinstance(jnp.asarray(2.0) * 3.0, traxla.Array)
    finally:
        release.set()
        t.join()
    assert "add" in results["jaxpr"]


def _error_of(thunk):
    try:
        thunk()
    except Exception as e:  # noqa: BLE001
        return e
    return None

"""Bounded caches: many shapes through one jitted function stay under the bound, evicted and
deleted functions' executables are freed, and clear_caches() empties everything."""
import gc
import weakref

import numpy as np
import pytest

import traxla
import traxla.numpy as jnp
from traxla.runtime import dispatch

N_SHAPES = 30
BOUND = 6


@pytest.fixture
def small_bounds():
    old = {k: traxla.config.read(k) for k in ("jit_cache_size", "trace_cache_size")}
    traxla.config.update("jit_cache_size", BOUND)
    traxla.config.update("trace_cache_size", BOUND)
    try:
        yield
    finally:
        for k, v in old.items():
            traxla.config.update(k, v)


def _executables(jitted):
    return [weakref.ref(e.executable) for e in jitted._compiled.values()]


def test_many_shapes_stay_under_the_bound_and_evicted_executables_are_freed(small_bounds):
    def body(x):
        return jnp.cos(x) + 1.0

    f = traxla.jit(body)
    seen = []
    for n in range(1, N_SHAPES + 1):
        x = np.full(n, 0.5, np.float32)
        np.testing.assert_allclose(np.asarray(f(traxla.device_put(x))), np.cos(x) + 1, rtol=1e-6)
        seen += _executables(f)
        assert len(f._compiled) <= BOUND and len(f._fast) <= BOUND
        assert len(f._traced) <= BOUND
    gc.collect()
    alive = {id(r()) for r in seen if r() is not None}
    assert len(alive) <= BOUND  # the evicted ones are gone
    # the most recent shapes are still cached: calling again does not trace
    assert f(np.ones(N_SHAPES, np.float32)).shape == (N_SHAPES,)
    last = _executables(f)
    del f
    gc.collect()
    # the executables are the function's, shared by its jits (as JAX's caches): they go
    # with the function
    del body
    gc.collect()
    assert all(r() is None for r in last)


def test_deleting_a_jitted_function_frees_its_executables():
    f = traxla.jit(lambda x: x * 3.0 - 1.0)
    for n in (2, 3, 4):
        f(np.ones(n, np.float32))
    refs = _executables(f)
    assert len(refs) == 3 and all(r() is not None for r in refs)
    del f
    gc.collect()
    assert all(r() is None for r in refs)


def test_clear_caches_empties_jit_and_eager_caches_and_programs_still_run():
    f = traxla.jit(lambda x: x + 2.0)
    assert float(f(1.0)) == 3.0
    # a NumPy operand takes the one-equation eager path (a device Array or Python scalar
    # would run tanh as a cached jitted program, which clear_caches empties too)
    assert float(jnp.tanh(np.float32(0.0))) == 0.0
    assert len(f._compiled) == 1 and len(dispatch._eager_cache) > 0
    traxla.clear_caches()
    assert len(f._compiled) == 0 and len(f._traced) == 0 and len(dispatch._eager_cache) == 0
    assert float(f(1.0)) == 3.0  # traced and compiled again
    f.clear_cache()
    assert len(f._compiled) == 0
    assert float(f(2.0)) == 4.0


def test_eager_cache_is_bounded():
    old = traxla.config.read("eager_cache_size")
    traxla.config.update("eager_cache_size", 4)
    try:
        for n in range(1, 9):
            np.testing.assert_allclose(np.asarray(jnp.negative(np.ones(n, np.float32))),
                                       -np.ones(n))
            assert len(dispatch._eager_cache) <= 4
    finally:
        traxla.config.update("eager_cache_size", old)


def _count_compiles(monkeypatch, lib):
    """How many XLA compiles ``lib`` ("traxla" or "jax") makes from now on."""
    count = [0]
    if lib == "jax":
        from jax._src import compiler as module
        name = "backend_compile_and_load"
    else:
        from traxla.runtime.xla_adapter import compiling as module
        name = "compile"
    original = getattr(module, name)

    def counted(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)
    monkeypatch.setattr(module, name, counted)
    if lib == "traxla":  # (the adapter package re-exports it)
        from traxla.runtime import xla_adapter
        monkeypatch.setattr(xla_adapter, name, counted)
    return count


@pytest.mark.parametrize("lib", ["traxla", "jax"])
def test_jits_of_one_function_share_its_executables_as_in_jax(monkeypatch, lib):
    """``jit(f)(x)`` written twice (a library wrapping ``f`` on each call) compiles once; a
    different donation, a new function object or clear_caches() compiles again."""
    jax = pytest.importorskip("jax") if lib == "jax" else traxla
    np_ = jax.numpy

    def f(x):
        return np_.sin(x) * 2.0 + 1.0

    x = np.linspace(0, 1, 5, dtype=np.float32)
    count = _count_compiles(monkeypatch, lib)
    first = np.asarray(jax.jit(f)(x))
    assert count[0] == 1
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), first)
    assert count[0] == 1  # shared
    jax.jit(f, donate_argnums=0)(jax.device_put(x))
    assert count[0] == 2  # donation changes the program
    jax.jit(lambda x: f(x))(x)
    assert count[0] == 3  # another function
    jax.jit(f)(np.ones(3, np.float32))
    assert count[0] == 4  # another shape
    jax.clear_caches()
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), first)
    assert count[0] == 5


def _step(c, e):
    return c + e, c


def _below_3(c):
    return c[0] < 3


def _double(c):
    return c[0] + 1, c[1] * 2.0


def _add_one(v):
    return v + 1.0


def _sub_one(v):
    return v - 1.0


def _scan_row(r):
    return traxla.lax.scan(_step, 0.0, r)[0]


@pytest.mark.parametrize("lib", ["traxla", "jax"])
def test_eager_loops_and_conds_compile_once_as_in_jax(monkeypatch, lib):
    """A scan, while_loop or cond run eagerly again with the same function and types reuses
    its program (the jaxpr derived from the cached trace is the same object), as in JAX."""
    jax = pytest.importorskip("jax") if lib == "jax" else traxla
    lax = jax.lax
    x = np.arange(4, dtype=np.float32)
    def body(i, c):
        return c + x
    runs = {  # (the functions are made once: a new function object traces again, in JAX too)
        "scan": lambda: lax.scan(_step, 0.0, x)[0],
        "while": lambda: lax.while_loop(_below_3, _double, (0, 1.0))[1],
        "fori": lambda: lax.fori_loop(0, 3, body, x),
        "cond": lambda: lax.cond(True, _add_one, _sub_one, x),
    }
    if lib == "traxla":  # (JAX's own vmap of the same, below)
        runs["vmap of scan"] = lambda: traxla.vmap(_scan_row)(np.ones((2, 4), np.float32))
    else:
        def scan_row(r):
            return lax.scan(_step, 0.0, r)[0]
        runs["vmap of scan"] = lambda: jax.vmap(scan_row)(np.ones((2, 4), np.float32))
    count = _count_compiles(monkeypatch, lib)
    for name, run in runs.items():
        first = np.asarray(run())
        before = count[0]
        np.testing.assert_array_equal(np.asarray(run()), first)
        assert count[0] == before, f"{name} compiled again"

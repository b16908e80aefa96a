"""The hit path of a jit with static arguments (traxla/api/static_hits.py): a cached call
runs without the slow path, agrees with it, and every other kind of call (a new static
value, an unhashable one, a keyword, a placed Array, a container, a configuration block,
a deleted or donated Array) takes the slow path with the slow path's result or error."""
import sys

import numpy as np
import pytest

import traxla
from traxla.api import static_hits

X = np.arange(4, dtype=np.float32)


def _python_calls_during(fn, *args, **kwargs):
    names = []

    def profile(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_qualname)
    sys.setprofile(profile)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return names, result


def test_cached_static_call_takes_the_hit_path_and_agrees():
    f = traxla.jit(lambda x, n: x * n + 1.0, static_argnums=1)
    x = traxla.device_put(X)
    first = f(x, 3)
    f(x, 3)  # (the first hit hashes its key; the memo of the last hit then answers)
    names, out = _python_calls_during(f, x, 3)  # (f(array, static): the memo, inlined)
    assert names == ["PjitFunction.__call__"]
    np.testing.assert_array_equal(np.asarray(out), X * 3 + 1)
    np.testing.assert_array_equal(np.asarray(first), X * 3 + 1)
    assert out.aval is first.aval and out._placement is None
    assert f._fast.lastn[0] is f._static_hits[2].tag
    assert f._fast.last_as[:2] == (x.aval, 3)
    # another static value: compiled once, then a hit too; the two alternate correctly
    np.testing.assert_array_equal(np.asarray(f(x, 2)), X * 2 + 1)
    for _ in range(2):
        f(x, 2)
        names, out = _python_calls_during(f, x, 2)
        assert names == ["PjitFunction.__call__"]
        np.testing.assert_array_equal(np.asarray(out), X * 2 + 1)
        names, out = _python_calls_during(f, x, 3)  # (not the memo's: the hit function)
        assert names == ["PjitFunction.__call__", "hit", "ShapedArray.__hash__"]
        np.testing.assert_array_equal(np.asarray(out), X * 3 + 1)
    # a placed Array, a deleted one: not the memo's
    with pytest.raises(RuntimeError, match="deleted"):
        y = traxla.device_put(X)
        f(y, 3), f(y, 3)
        y.delete()
        f(y, 3)
    placed = traxla.device_put(X, traxla.devices()[0])
    np.testing.assert_array_equal(np.asarray(f(placed, 3)), X * 3 + 1)
    # an equal static value that is another object: found by hashing, the same entry
    assert f.cache_info().compiles == 2
    np.testing.assert_array_equal(np.asarray(f(x, int("3"))), X * 3 + 1)
    assert f.cache_info().compiles == 2


def test_several_static_positions_and_tree_results():
    g = traxla.jit(lambda n, x, m, y: ({"s": x * n + y}, x - m), static_argnums=(0, -2))
    x, y = traxla.device_put(X), traxla.device_put(X + 1)
    want = ({"s": X * 2 + X + 1}, X - 5)
    for _ in range(3):
        out = g(2, x, 5, y)
        np.testing.assert_array_equal(np.asarray(out[0]["s"]), want[0]["s"])
        np.testing.assert_array_equal(np.asarray(out[1]), want[1])
    names, _ = _python_calls_during(g, 2, x, 5, y)
    assert names[:2] == ["PjitFunction.__call__", "hit"] and "_call_slow" not in str(names)


@pytest.mark.parametrize("cause", ["unhashable", "keyword", "placed array", "numpy argument",
                                   "container", "inside a trace", "thread flag block",
                                   "deleted argument", "debug_nans"])
def test_static_call_fallback_causes(cause):
    f = traxla.jit(lambda x, n: x / n, static_argnums=1)
    x = traxla.device_put(X)
    f(x, 2), f(x, 2)
    want = X / 2
    if cause == "unhashable":
        with pytest.raises(ValueError, match="Non-hashable static arguments"):
            f(x, [2])
        out = f(x, 2)
    elif cause == "keyword":
        out = f(x, n=2)
    elif cause == "placed array":
        mesh = traxla.sharding.Mesh(np.array(traxla.devices()[:1]), ("a",))
        placed = traxla.device_put(X, traxla.sharding.NamedSharding(
            mesh, traxla.sharding.PartitionSpec("a")))
        out = f(placed, 2)
        assert out.committed
    elif cause == "numpy argument":
        out = f(X, 2)
    elif cause == "container":
        h = traxla.jit(lambda t, n: t[0] / n, static_argnums=1)
        out = h((x,), 2)
        out = h((x,), 2)
    elif cause == "inside a trace":
        out = traxla.jit(lambda u: f(u, 2))(x)
    elif cause == "thread flag block":
        with traxla.config.flag("enable_x64", True):
            out = f(x, 2)
        assert out.dtype == np.float32
    elif cause == "deleted argument":
        y = traxla.device_put(X)
        f(y, 2)
        y.delete()
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            f(y, 2)
        return
    else:
        with traxla.config.flag("debug_nans", True):  # (a thread-local block)
            with pytest.raises(FloatingPointError):
                f(x * 0, 0)
        traxla.config.update("jax_debug_nans", True)
        try:
            with pytest.raises(FloatingPointError):
                f(x * 0, 0)
        finally:
            traxla.config.update("jax_debug_nans", False)
        out = f(x, 2)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    f(x, 2), f(x, 2)  # (back on the hit path, after a configuration change too)
    names, out = _python_calls_during(f, x, 2)
    assert names == ["PjitFunction.__call__"]  # (f(array, static)'s memo, inlined)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_static_hit_donation_and_eviction():
    f = traxla.jit(lambda x, n: x + n, static_argnums=1, donate_argnums=0)
    for _ in range(2):
        x = traxla.device_put(X)
        np.testing.assert_array_equal(np.asarray(f(x, 1)), X + 1)
        assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x, 1)
    with traxla.config.flag("jit_cache_size", 1):
        g = traxla.jit(lambda x, n: x * n, static_argnums=1)
        y = traxla.device_put(X)
        g(y, 2), g(y, 2)
        g(y, 3)  # evicts n=2: its hit-path entry and the memo go with it
        assert all(k[1:] != (y.aval, 2) for k in g._fast)
        np.testing.assert_array_equal(np.asarray(g(y, 2)), X * 2)


def test_make_hit_checks_each_argument():
    from traxla.api.call_signatures import HitTable
    table = HitTable()
    hit = static_hits.make_hit(table, 3, {1})
    x = traxla.device_put(X)
    assert hit(x, 1, x) is static_hits.MISS  # nothing cached
    assert hit(x, 1, X) is static_hits.MISS and hit(X, 1, x) is static_hits.MISS
    assert hit(x, {}, x) is static_hits.MISS  # unhashable: left to the slow path
    assert static_hits.fast_key({}, table, (x, 1, X), {1}, (x.aval, x.aval)) is None


def test_hit_paths_come_back_after_a_configuration_change():
    """A configuration change empties every hit path; the next call under the global flags
    puts its entry back (it used to stay on the slow path for good)."""
    f = traxla.jit(lambda x: x + 1.0)
    x = traxla.device_put(X)
    f(x), f(x)
    assert len(f._fast) == 1
    with traxla.config.flag("enable_x64", True):  # a change, then another on leaving
        f(x)
    assert len(f._fast) == 0
    f(x), f(x)
    names, out = _python_calls_during(f, x)
    assert names == ["PjitFunction.__call__"]
    np.testing.assert_array_equal(np.asarray(out), X + 1)
    traxla.config.update("jax_debug_nans", True)  # a global switch that needs the slow path
    try:
        f(x)
        assert len(f._fast) == 0
    finally:
        traxla.config.update("jax_debug_nans", False)
    f(x)
    assert len(f._fast) == 1


def test_static_arguments_by_keyword_take_the_hit_path():
    f = traxla.jit(lambda x, n=1, *, scale=False: x * n + (0.5 if scale else 0.0),
                   static_argnames=("n", "scale"))
    x = traxla.device_put(X)
    for _ in range(3):  # each call form, compiled once (the two orders share a program)
        np.testing.assert_array_equal(np.asarray(f(x, n=3)), X * 3)
        np.testing.assert_array_equal(np.asarray(f(x, scale=True, n=2)), X * 2 + 0.5)
        np.testing.assert_array_equal(np.asarray(f(x, n=2, scale=True)), X * 2 + 0.5)
        np.testing.assert_array_equal(np.asarray(f(x, 4, scale=True)), X * 4 + 0.5)
    assert f.cache_info().compiles == 3
    f(x, n=3)  # (the memo of the last hit)
    names, out = _python_calls_during(f, x, n=3)
    assert names == ["PjitFunction.__call__", "call_with_keywords", "hit"]
    np.testing.assert_array_equal(np.asarray(out), X * 3)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f(x, n=[3])
    # a keyword that is not static, a tracer, a thread's flag block: the slow path
    g = traxla.jit(lambda x, y, n: x * n + y, static_argnames="n")
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(g(x, y=x, n=2)), X * 3)
    assert not g._static_hits
    np.testing.assert_array_equal(np.asarray(traxla.jit(lambda u: f(u, n=3))(x)), X * 3)
    h = traxla.jit(lambda u, n: u / n, static_argnames="n")
    h(x, n=2.0), h(x, n=2.0)
    with traxla.config.flag("debug_nans", True):
        with pytest.raises(FloatingPointError):
            h(x * 0, n=0.0)
    np.testing.assert_array_equal(np.asarray(f(x, n=3)), X * 3)


def test_every_keyword_order_of_a_cached_call_takes_the_hit_path():
    """Static arguments by keyword in another order than the call that compiled the program
    share its program and get a hit path of their own (the first order used to be the only
    one), which goes with the program when it is evicted."""
    f = traxla.jit(lambda x, a=1, b=2: x * a + b, static_argnames=("a", "b"))
    x = traxla.device_put(X)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(x, a=3, b=1)), X * 3 + 1)
        np.testing.assert_array_equal(np.asarray(f(x, b=1, a=3)), X * 3 + 1)
    assert f.cache_info().compiles == 1
    for kwargs in ({"a": 3, "b": 1}, {"b": 1, "a": 3}):
        f(x, **kwargs)  # (then the memo of the last hit answers, without hashing)
        names, out = _python_calls_during(f, x, **kwargs)
        assert names == ["PjitFunction.__call__", "call_with_keywords", "hit"], kwargs
        np.testing.assert_array_equal(np.asarray(out), X * 3 + 1)
    (entry,) = set(f._fast.values())
    assert len(entry.more_keys) == 1 and len(f._fast) == 2
    with traxla.config.flag("jit_cache_size", 1):
        np.testing.assert_array_equal(np.asarray(f(x, b=0, a=2)), X * 2)  # evicts (3, 1)
    assert all(e is not entry for e in f._fast.values())
    np.testing.assert_array_equal(np.asarray(f(x, b=1, a=3)), X * 3 + 1)

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
    assert _delta(before, "fallback") == 0
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
    assert _delta(before, "scalar_misses") == 0 and _delta(before, "fallback") == 0
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
    elif cause == "out-of-range int":  # left to the ordinary path: JAX's OverflowError
        with pytest.raises(OverflowError, match="overflow was encountered"):
            tnp.add._func.__wrapped_eager__(x, 2 ** 40)  # the function the ufunc object calls
        with pytest.raises(OverflowError, match="overflow was encountered"):
            x + 2 ** 40
        assert _delta(before, "fallback") >= 1
        return
    elif cause == "tracer":
        out = traxla.jit(lambda v: tnp.sin(v) + 1.0)(x)
        want = np.sin(X) + 1
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


# -- cached jit calls: the Array-arguments and compiled-matcher pytree hit paths ----------------
def _tree_params(n=5):
    return {f"l{i}": {"w": traxla.device_put(np.full((2,), i, np.float32)),
                      "b": traxla.device_put(np.ones((2,), np.float32))} for i in range(n)}


def test_pytree_call_hits_the_compiled_matcher_path_and_agrees():
    f = traxla.jit(lambda p: p["l0"]["w"] + p["l4"]["b"] * 2.0)  # prunes unused leaves
    params = _tree_params()
    first = f(params)
    assert f._tree_fast, "the first call registers the pytree signature"
    again = f(params)
    np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
    np.testing.assert_array_equal(np.asarray(again), [2.0, 2.0])
    # new Arrays with equal (not identical) avals hit too; new values are used
    params2 = _tree_params()
    params2["l0"]["w"] = traxla.device_put(np.array([5.0, 6.0], np.float32))
    assert f._tree_fast.lookup((params2,)) is not None
    np.testing.assert_array_equal(np.asarray(f(params2)), [7.0, 8.0])
    # a different shape misses and recompiles through the slow path
    params2["l0"]["w"] = traxla.device_put(np.zeros((3, 2), np.float32))
    assert f._tree_fast.lookup((params2,)) is None
    assert np.asarray(f(params2)).shape == (3, 2)


class _Box:
    def __init__(self, v):
        self.v = v


traxla.tree_util.register_pytree_node(_Box, lambda b: ((b.v,), None), lambda _, c: _Box(*c))


@pytest.mark.parametrize("cause", ["custom node", "numpy leaf", "kwargs", "sharded leaf",
                                   "namedtuple"])
def test_pytree_fast_path_fallback_causes(cause):
    import collections
    Pair = collections.namedtuple("Pair", "a b")
    x = traxla.device_put(X)
    f = traxla.jit(lambda t, **kw: traxla.tree_util.tree_leaves(t)[0] * 3.0)
    if cause == "custom node":
        arg, kwargs = [_Box(x)], {}
    elif cause == "numpy leaf":
        arg, kwargs = [X, x], {}
    elif cause == "kwargs":
        arg, kwargs = [x], {"k": x}
    elif cause == "namedtuple":
        arg, kwargs = Pair(x, x), {}
    else:
        mesh = traxla.sharding.Mesh(np.array(traxla.devices()[:1]), ("a",))
        arg = [traxla.device_put(X, traxla.sharding.NamedSharding(
            mesh, traxla.sharding.PartitionSpec("a")))]
        kwargs = {}
    for _ in range(2):
        out = f(arg, **kwargs)
        np.testing.assert_allclose(np.asarray(out), X * 3.0)
    registered = bool(f._tree_fast)
    if cause == "namedtuple":  # a builtin node: served by the fast path
        assert registered and f._tree_fast.lookup((arg,)) is not None
    else:
        assert not registered or f._tree_fast.lookup((arg,)) is None


def test_donated_argument_on_the_fast_paths():
    f = traxla.jit(lambda x: x + 1.0, donate_argnums=0)
    g = traxla.jit(lambda t: t["x"] + 1.0, donate_argnums=0)
    for fn, wrap in ((f, lambda a: a), (g, lambda a: {"x": a})):
        for _ in range(3):  # the second and third calls take the hit path
            x = traxla.device_put(X)
            out = fn(wrap(x))
            np.testing.assert_array_equal(np.asarray(out), X + 1.0)
            assert x.is_deleted()


def test_callback_carrying_program_on_the_fast_paths():
    seen = []

    def record(v):
        seen.append(np.asarray(v).copy())
        return v

    f = traxla.jit(lambda t: traxla.pure_callback(
        record, traxla.ShapeDtypeStruct((4,), np.float32), t["x"]) * 2.0)
    x = traxla.device_put(X)
    for _ in range(3):
        out = f({"x": x})
        np.testing.assert_array_equal(np.asarray(out), X * 2.0)
    assert len(seen) == 3


def test_x64_switch_recompiles_on_both_fast_paths():
    f = traxla.jit(lambda x: x * 2)
    g = traxla.jit(lambda t: t[0] * 2)
    x = traxla.device_put(X)
    assert f(x).dtype == np.float32 and g((x,)).dtype == np.float32
    with traxla.config.flag("enable_x64", True):
        x64 = traxla.device_put(np.arange(4, dtype=np.float64))
        assert f(x64).dtype == np.float64 and g((x64,)).dtype == np.float64
        assert f(x).dtype == np.float32
    assert f(x).dtype == np.float32 and g((x,)).dtype == np.float32


def test_profile_dispatch_prints_every_stage(capsys):
    from traxla.__main__ import main
    assert main(["profile-dispatch", "--calls", "20", "--repeats", "1"]) == 0
    text = capsys.readouterr().out
    for stage in ("flatten (tree_util)", "flatten (compiled matcher)", "key (avals)",
                  "lookup (hit-path cache)", "execute (enqueue)", "wrap (Arrays + tree)",
                  "whole cached call"):
        assert text.count(stage) == 2, stage


def test_promotion_mode_is_part_of_the_cache_key():
    f = traxla.jit(lambda a, b: a + b)
    a = traxla.device_put(np.ones(2, np.float32))
    b = traxla.device_put(np.ones(2, np.int32))
    assert f(a, b).dtype == np.float32 and (a + b).dtype == np.float32
    traxla.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        with pytest.raises(traxla.dtypes.TypePromotionError):
            f(a, b)
        with pytest.raises(traxla.dtypes.TypePromotionError):
            a + b
    finally:
        traxla.config.update("jax_numpy_dtype_promotion", "standard")
    assert f(a, b).dtype == np.float32


def test_scalar_cache_is_bounded_and_threads_share_it():
    import threading
    x = traxla.device_put(X)
    x + 0.5  # compiled once up front: concurrent first traces are the correctness work's topic
    limit = _eager.scalar_cache_limit
    _eager.scalar_cache_limit = 8
    errors = []

    def work(offset):
        try:
            for i in range(20):
                v = float(offset * 100 + i)
                np.testing.assert_array_equal(np.asarray(x + v), X + np.float32(v))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert len(_eager._scalar_cache) <= 8 + 3
    finally:
        _eager.scalar_cache_limit = limit


def test_clear_caches_empties_the_scalar_cache():
    x = traxla.device_put(X)
    x + 3.5
    assert _eager._scalar_cache
    traxla.clear_caches()
    assert not _eager._scalar_cache
    np.testing.assert_array_equal(np.asarray(x + 3.5), X + 3.5)


# -- the compiled structure matchers: every difference falls back --------------------
def _identity_jit():
    return traxla.jit(lambda t: t)


@pytest.mark.parametrize("cause", ["OrderedDict for dict", "list for tuple", "other key",
                                   "extra key", "None for Array", "Array for None",
                                   "nested dict for leaf", "bool leaf"])
def test_matcher_structure_differences_take_the_slow_path(cause):
    import collections
    x, y = traxla.device_put(X), traxla.device_put(X + 1)
    base = {"a": x, "b": (y, None)}
    f = _identity_jit()
    f(base)
    f(base)
    assert f._tree_fast.lookup((base,)) is not None
    other = {
        "OrderedDict for dict": collections.OrderedDict(a=x, b=(y, None)),
        "list for tuple": {"a": x, "b": [y, None]},
        "other key": {"a": x, "c": (y, None)},
        "extra key": {"a": x, "b": (y, None), "c": x},
        "None for Array": {"a": None, "b": (y, None)},
        "Array for None": {"a": x, "b": (y, x)},
        "nested dict for leaf": {"a": {"z": x}, "b": (y, None)},
        "bool leaf": {"a": True, "b": (y, None)},
    }[cause]
    assert f._tree_fast.lookup((other,)) is None
    out = f(other)
    # the result has the structure of the argument, not of the cached call
    assert (traxla.tree_util.tree_structure(out)
            == traxla.tree_util.tree_structure(other)), cause
    assert type(out) is type(other)
    for got, want in zip(traxla.tree_util.tree_leaves(out),
                         traxla.tree_util.tree_leaves(other)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_matcher_mismatch_reads_no_array_back(monkeypatch):
    """A structure that differs costs a few checks: nothing formats (or reads back) the
    arguments, as an error message naming the subtree would."""
    f = _identity_jit()
    x = traxla.device_put(X)
    f({"a": x})
    f({"a": x})
    reads = []
    monkeypatch.setattr(traxla.runtime.array.ArrayImpl, "__repr__",
                        lambda self: reads.append(1) or "Array(...)")
    assert f._tree_fast.lookup(({"b": x},)) is None
    assert f._tree_fast.lookup(([x],)) is None
    assert not reads


def test_matcher_leaves_follow_sorted_keys_and_namedtuple_order():
    import collections
    Pair = collections.namedtuple("Pair", "second first")
    f = traxla.jit(lambda t: t["z"] - t["a"].first * 10.0 - t["a"].second * 100.0)
    vals = [traxla.device_put(np.float32(v)) for v in (1.0, 2.0, 3.0)]
    arg = {"z": vals[0], "a": Pair(vals[1], vals[2])}
    for _ in range(3):
        assert float(f(arg)) == 1.0 - 30.0 - 200.0
    assert f._tree_fast.lookup((arg,)) is not None


def test_many_structures_stay_bounded_and_correct():
    from traxla.api import call_signatures
    f = traxla.jit(lambda t: traxla.tree_util.tree_leaves(t)[0] + 1.0)
    x = traxla.device_put(X)
    for rounds in range(2):
        for n in range(call_signatures.MAX_STRUCTURES + 3):
            arg = {f"k{i}": x for i in range(n + 1)}
            np.testing.assert_array_equal(np.asarray(f(arg)), X + 1.0)
    assert len(f._tree_fast.structures) <= call_signatures.MAX_STRUCTURES


def test_structure_too_large_for_a_matcher_still_runs(monkeypatch):
    from traxla.api import call_signatures
    monkeypatch.setattr(call_signatures, "MAX_NODES", 4)
    call_signatures._matchers.clear()
    f = traxla.jit(lambda t: t[0] + t[4])
    arg = [traxla.device_put(X) for _ in range(5)]
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(arg)), X + X)
    assert f._tree_fast.lookup((arg,)) is None


# -- the Array-arguments hit path: each other kind of argument takes the slow path -----
@pytest.mark.parametrize("cause", ["numpy argument", "python scalar", "placed array", "keyword",
                                   "inside a trace", "second signature", "deleted argument"])
def test_array_call_fallback_causes(cause):
    f = traxla.jit(lambda a, b: a * 2.0 + b)
    x, y = traxla.device_put(X), traxla.device_put(X + 1)
    f(x, y)
    want = X * 2.0 + (X + 1)
    if cause == "numpy argument":
        out = f(x, X + 1)
    elif cause == "python scalar":
        out, want = f(x, 3.0), X * 2.0 + 3.0
    elif cause == "placed array":
        mesh = traxla.sharding.Mesh(np.array(traxla.devices()[:1]), ("a",))
        placed = traxla.device_put(X + 1, traxla.sharding.NamedSharding(
            mesh, traxla.sharding.PartitionSpec("a")))
        out = f(x, placed)
    elif cause == "keyword":
        out = f(x, b=y)
    elif cause == "inside a trace":
        out = traxla.jit(lambda u, v: f(u, v))(x, y)
    elif cause == "second signature":
        z = traxla.device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
        out, want = f(z, z), np.arange(6).reshape(2, 3) * 3.0
        np.testing.assert_allclose(np.asarray(f(x, y)), X * 2.0 + X + 1)
    else:
        f(x, y)
        y.delete()
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            f(x, y)
        return
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(x, y)), X * 2.0 + X + 1, rtol=1e-6)


def test_equal_avals_are_shared_objects():
    """Transfers and program outputs share one aval object per type, so a loop feeding a
    result back in compares signatures by identity."""
    f = traxla.jit(lambda v: v * 0.5)
    x = traxla.device_put(X)
    y = f(x)
    assert y.aval is x.aval is traxla.device_put(X + 3).aval
    for _ in range(3):
        y = f(y)
    np.testing.assert_allclose(np.asarray(y), X / 16)


def test_hit_table_memo_is_forgotten_on_every_removal():
    f = traxla.jit(lambda v: v + 1.0)
    x = traxla.device_put(X)
    z = traxla.device_put(np.ones((2, 3), np.float32))
    for _ in range(2):  # alternating signatures: the memo follows, results stay right
        np.testing.assert_array_equal(np.asarray(f(x)), X + 1.0)
        np.testing.assert_array_equal(np.asarray(f(z)), np.full((2, 3), 2.0))
    assert f._fast.last1[0] is z.aval
    f.clear_cache()
    assert f._fast.last1 == (None, None) and not f._fast
    np.testing.assert_array_equal(np.asarray(f(x)), X + 1.0)  # compiled again
    np.testing.assert_array_equal(np.asarray(f(x)), X + 1.0)  # a hit: remembered
    assert f._fast.last1[0] is x.aval
    # an eviction by the bounded executable cache forgets it too
    with traxla.config.flag("jit_cache_size", 1):
        g = traxla.jit(lambda v: v * 3.0)
        g(x), g(x)
        assert g._fast.last1[0] is x.aval
        g(z)  # evicts x's executable
        assert g._fast.last1[0] is not x.aval
        np.testing.assert_array_equal(np.asarray(g(x)), X * 3.0)


def test_hit_table_two_argument_memo():
    from traxla.api.call_signatures import HitTable
    table = HitTable()
    a, b = object(), object()
    assert table.lookup2(a, b) is None and table.last2 == (None, None, None)
    table[(a, b)] = "entry"
    assert table.lookup2(a, b) == "entry" and table.last2 == (a, b, "entry")
    assert table.lookup2(b, a) is None and table.last2 == (a, b, "entry")
    table.pop((a, b))
    assert table.last2 == (None, None, None) and table.lookup2(a, b) is None


def test_binary_operators_across_clear_caches_and_dtypes():
    x, y = traxla.device_put(X), traxla.device_put(X + 2)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(x * y), X * (X + 2))
    traxla.clear_caches()
    np.testing.assert_array_equal(np.asarray(x * y), X * (X + 2))
    i = traxla.device_put(np.arange(4, dtype=np.int32))
    for _ in range(2):
        out = i * i
        assert out.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(out), np.arange(4) ** 2)
        np.testing.assert_array_equal(np.asarray(x * y), X * (X + 2))


def test_unary_function_of_a_python_scalar_takes_the_fast_path():
    before = _fresh_stats()
    out = tnp.sin(0.5)
    out = tnp.sin(0.5)
    assert _delta(before, "fallback") == 0
    assert out.dtype == np.float32 and out.aval.weak_type
    np.testing.assert_allclose(np.asarray(out), np.sin(np.float32(0.5)), rtol=1e-6)


def test_unusual_state_tokens_balance_and_other_threads_stay_exact():
    """The hit paths' one read (``ir.thread_state.unusual``: a token per open trace or
    thread-local flag block, in any thread) is empty again after tracing, transforms and
    flag blocks, even failing ones; while another thread is inside a trace, a cached call
    here still runs, and a jit called inside that trace is still staged there."""
    import threading
    from traxla.ir.thread_state import unusual

    f = traxla.jit(lambda x: x * 2.0)
    x = traxla.device_put(X)
    f(x)
    traxla.grad(lambda v: tnp.sum(f(v)))(x)
    traxla.make_jaxpr(f)(x)
    with traxla.enable_x64():
        f(x)
    with pytest.raises(ZeroDivisionError):
        traxla.make_jaxpr(lambda v: 1 / 0)(x)
    assert unusual == []

    inside, release, seen = threading.Event(), threading.Event(), {}

    def traced(v):
        inside.set()
        release.wait(10)
        return f(v) + f(x)  # f(x): concrete Arrays, still staged inside a trace

    worker = threading.Thread(target=lambda: seen.update(jaxpr=traxla.make_jaxpr(traced)(x)))
    worker.start()
    assert inside.wait(10)
    assert unusual  # the other thread's trace
    np.testing.assert_array_equal(np.asarray(f(x)), X * 2.0)  # here: eager, the cached program
    release.set()
    worker.join(10)
    assert [e.primitive.name for e in seen["jaxpr"].jaxpr.eqns].count("jit") == 2
    assert unusual == []


def _python_calls_during(fn, *args):
    """The Python functions entered (``sys.setprofile``'s 'call' events) while ``fn`` runs."""
    import sys
    names = []

    def profile(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_qualname)
    sys.setprofile(profile)
    try:
        result = fn(*args)
    finally:
        sys.setprofile(None)
    return names, result


def test_cached_calls_enter_no_python_function_beyond_the_call(monkeypatch):
    """Work per cached call (issue #31), counted rather than timed: a one-Array call runs
    its program through the entry's direct parts (C calls, no runner frame) and makes its
    result inline, and so does a call of two Arrays; a call on a tuple is matched and run by
    the structure's compiled hit function (no flattening, no slow path)."""
    f = traxla.jit(lambda x: x * 2.0)
    g = traxla.jit(lambda x, y: x * y)
    h = traxla.jit(lambda t: t[0] + t[1])
    x = traxla.device_put(X)
    for _ in range(2):
        f(x), g(x, x), h((x, x))
    names, out = _python_calls_during(f, x)
    assert names == ["PjitFunction.__call__"]
    np.testing.assert_array_equal(np.asarray(out), X * 2)
    assert out.aval is f(x).aval and out._placement is None
    names, out = _python_calls_during(g, x, x)
    assert names == ["PjitFunction.__call__"]
    np.testing.assert_array_equal(np.asarray(out), X * X)
    h((x, x))  # (the first hit compares its avals with the candidates, then remembers them)
    names, out = _python_calls_during(h, (x, x))
    assert names == ["PjitFunction.__call__", "hit"]  # (call_signatures.compile_hit)
    assert not any("_call_slow" in n or "flatten" in n for n in names)
    np.testing.assert_array_equal(np.asarray(out), X + X)


def test_cached_calls_with_jaxlib_tracebacks_on_keep_them_on():
    """While jaxlib's tracebacks are on (JAX's oracle in the same process), the hit paths
    run through the runner that switches them off around the call, and leave them on."""
    from jaxlib import _jax
    f = traxla.jit(lambda x: x + 1.0)
    g = traxla.jit(lambda x, y: x - y)
    x = traxla.device_put(X)
    f(x), g(x, x)
    before = _jax.tracebacks_enabled()
    _jax.set_tracebacks_enabled(True)
    try:
        names, out = _python_calls_during(f, x)
        assert _jax.tracebacks_enabled()
        assert "make_runner.<locals>.run" in names
        np.testing.assert_array_equal(np.asarray(out), X + 1)
        np.testing.assert_array_equal(np.asarray(g(x, x)), X - X)
        assert _jax.tracebacks_enabled()
    finally:
        _jax.set_tracebacks_enabled(before)
    names, _ = _python_calls_during(f, x)
    assert names == ["PjitFunction.__call__"]


def test_one_argument_call_edge_cases_of_the_split_first_argument():
    """``__call__(a, /, *rest, **kwargs)``: no argument, a keyword named like the first
    parameter, and a Python scalar all reach the function as written."""
    f = traxla.jit(lambda *xs: sum(xs, tnp.zeros(())))
    assert float(f()) == 0.0
    k = traxla.jit(lambda a=1.0: a * 2)
    assert float(k(a=tnp.float32(3.0))) == 6.0
    assert float(k()) == 2.0
    assert float(k(2.0)) == 4.0
    with pytest.raises(TypeError):
        traxla.jit(lambda x: x)()

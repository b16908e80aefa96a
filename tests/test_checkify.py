"""traxla.experimental.checkify against jax.experimental.checkify: the same programs give
the same error messages (user checks with formatted payloads, NaN, division by zero,
out-of-bounds indexing) under jit, vmap, cond, scan and while."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp
from traxla.experimental import checkify as tcheckify

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax.experimental import checkify as jcheckify  # noqa: E402

T = SimpleNamespace(np=tnp, lax=tlax, jit=traxla.jit, vmap=traxla.vmap, ck=tcheckify)
J = SimpleNamespace(np=jnp, lax=jax.lax, jit=jax.jit, vmap=jax.vmap, ck=jcheckify)


def _main(ns):
    def f(x, i):
        ns.ck.check(x > 0, "{x} needs to be positive!", x=x)
        y = ns.np.log(x - 5.0)
        z = ns.np.arange(3.0)[i]
        return 1 / x + y + z
    return ns.jit(ns.ck.checkify(f, errors=ns.ck.all_checks))


def _loops(ns):
    def f(xs, n):
        def body(c, x):
            ns.ck.check(x < 10, "x too big: {}", x)
            return c + x, c
        total, _ = ns.lax.scan(body, np.float32(0), xs)
        y = ns.lax.cond(total > 5, lambda t: (ns.ck.check(t < 50, "total {}", t), t)[1],
                        lambda t: t, total)

        def wbody(c):
            ns.ck.check(c < 3, "c={}", c)
            return c + 1
        return y, ns.lax.while_loop(lambda c: c < n, wbody, np.int32(0))
    return ns.jit(ns.ck.checkify(f))


def _div(ns):
    return ns.jit(ns.ck.checkify(lambda x, y: x // y, errors=ns.ck.div_checks))


MAIN_ARGS = [(3.0, 1), (-3.0, 1), (6.0, 1), (6.0, 5)]
LOOP_ARGS = [([1, 2, 3], 2), ([1, 2, 30], 2), ([1, 2, 3], 5), ([20, 20, 20], 2)]


def _results(ns):
    out = []
    main, loops, div = _main(ns), _loops(ns), _div(ns)
    for x, i in MAIN_ARGS:
        err, y = main(np.float32(x), np.int32(i))
        out.append((err.get(), repr(np.asarray(y).tolist())))
    for xs, n in LOOP_ARGS:
        err, y = loops(np.float32(xs), np.int32(n))
        out.append((err.get(), repr([np.asarray(v).tolist() for v in y])))
    for y in (2, 0):
        err, q = div(np.int32(7), np.int32(y))
        out.append((err.get(), np.asarray(q).tolist() if y else None))
    batched = ns.jit(ns.vmap(ns.ck.checkify(_unjitted_main(ns), errors=ns.ck.all_checks)))
    err, _ = batched(np.float32([1.0, -2.0, 7.0]), np.int32([0, 1, 2]))
    out.append(err.get())
    if ns is T:  # (JAX 0.10.2's throw of a vmapped error fails on a missing traceback)
        with pytest.raises(ns.ck.JaxRuntimeError, match=r"^-2.0 needs to be positive"):
            err.throw()
    return out


def _unjitted_main(ns):
    def f(x, i):
        ns.ck.check(x > 0, "{x} needs to be positive!", x=x)
        return 1 / x + ns.np.log(x - 5.0) + ns.np.arange(3.0)[i]
    return f


def test_checkify_matches_jax():
    got, want = _results(T), _results(J)
    for g, w in zip(got, want):
        assert g == w


def test_check_outside_checkify():
    with pytest.raises(tcheckify.JaxRuntimeError, match=r"eager 1.0 \(`check` failed\)"):
        tcheckify.check(tnp.array(False), "eager {}", tnp.array(1.0))
    tcheckify.check(tnp.array(True), "fine")
    with pytest.raises(ValueError, match="was not functionalized"):
        traxla.jit(lambda x: tcheckify.check(x > 0, "no"))(1.0)
    with pytest.raises(TypeError, match="takes a scalar pred"):
        tcheckify.check(np.array(True), "numpy pred")
    with pytest.raises(TypeError, match="PyTrees of arrays"):
        tcheckify.check(tnp.array(True), "{}", "a string")
    # a debug_check is dropped unless checkified
    assert float(traxla.jit(lambda x: (tcheckify.debug_check(x > 0, "dbg"), x)[1])(-1.0)) == -1.0
    err, _ = tcheckify.checkify(lambda x: tcheckify.debug_check(x > 0, "dbg {}", x))(
        tnp.array(-1.0))
    assert err.get() == "dbg -1.0 (`check` failed)"


def test_unfunctionalized_check_under_vmap_names_first_failing_lane():
    xs = tnp.array([1.0, -2.0, -3.0])
    with pytest.raises(tcheckify.JaxRuntimeError, match=r"^bad -2.0 \(`check` failed\)"):
        traxla.vmap(lambda x: tcheckify.check(x > 0, "bad {}", x))(xs)
    err, _ = tcheckify.checkify(traxla.vmap(lambda x: tcheckify.check(x > 0, "bad {}", x)))(xs)
    assert err.get() == "bad -2.0 (`check` failed)"


def test_check_error_and_init_error():
    assert tcheckify.init_error.get() is None
    tcheckify.check_error(tcheckify.init_error)
    err, _ = traxla.jit(tcheckify.checkify(lambda x: tcheckify.check(x > 0, "neg {}", x)))(
        np.float32(-1.0))
    with pytest.raises(tcheckify.JaxRuntimeError, match=r"^neg -1.0 \(`check` failed\)$"):
        tcheckify.check_error(err)
    assert str(err) == "Error(neg -1.0 (`check` failed))"


def _payload_reprs(ns):
    def f(x):
        ns.ck.check(ns.np.all(x < 1), "bad {t}", t={"a": x, "b": x.sum()})
        return x
    out = []
    for g in (ns.ck.checkify(f), ns.ck.checkify(ns.jit(f)), ns.vmap(ns.ck.checkify(f))):
        err, _ = g(ns.np.array([[1.0, np.nan]]))
        out.append(err.get())
    return out


def test_payload_formats_as_arrays_like_jax():
    # the payload reaches the message as Arrays (repr 'Array(nan, dtype=float32)'), as
    # JAX's do (chex's assert_tree_all_finite message)
    got = _payload_reprs(T)
    assert got == _payload_reprs(J)
    assert "'b': Array(nan, dtype=float32)" in got[0]
    # eagerly too (JAX's eager check loses its traceback info under pytest: not compared)
    with pytest.raises(tcheckify.JaxRuntimeError, match=r"'b': Array\(3\., dtype=float32, weak"):
        tcheckify.check(tnp.array(False), "bad {t}", t={"b": tnp.array(3.0)})


def _sharded(ns, api):
    """checkify through pmap and shard_map (a check inside the body, and a collective)."""
    def f(x):
        ns.ck.check(ns.np.all(x > 0), "neg {x}", x=x)
        return ns.np.log(x) + ns.lax.pmean(x, "i")
    mesh = api.make_mesh((1,), ("i",), axis_types=(api.sharding.AxisType.Auto,))
    smap = api.shard_map(f, mesh=mesh, in_specs=api.sharding.PartitionSpec("i"),
                         out_specs=api.sharding.PartitionSpec("i"))
    out = []
    for wrapped, x in ((api.pmap(f, axis_name="i"), np.float32([[-1.0, 2.0]])),
                       (api.pmap(f, axis_name="i"), np.float32([[1.0, 2.0]])),
                       (smap, np.float32([-1.0, 2.0])), (api.jit(smap), np.float32([3.0, 2.0]))):
        err, y = ns.ck.checkify(wrapped)(x)
        out.append((err.get(), repr(np.asarray(y).tolist())))
    return out


def test_checkify_looks_inside_shard_map_and_pmap():
    # as JAX's: each shard's error leaves stacked, so the error is batched, one per shard
    assert _sharded(T, traxla) == _sharded(J, jax)


def _static_inside(ns):
    """The Pallas sparse page's pattern: checkify of a jit whose static argument is passed
    by keyword. checkify closes over the arguments (JAX does), so ``sizes`` stays a hashable
    tuple instead of becoming tracers."""
    @ns.ck.checkify
    @ns.jit(static_argnums=(2,))
    def block_slice(x, starts, sizes):
        ns.ck.check(starts[0] % sizes[0] == 0, "Starts must be divisible by size.")
        return x[:sizes[0]] * 2
    x = ns.np.arange(8.0)
    outs = []
    for starts in ((4, 2), (3, 2)):
        err, r = block_slice(x, starts=starts, sizes=(2, 2))
        outs.append((err.get(), np.asarray(r)))
    return outs


def test_checkify_of_jit_with_static_arguments_by_keyword_matches_jax():
    got, want = _static_inside(T), _static_inside(J)
    assert [e for e, _ in got] == [e for e, _ in want]
    for (_, g), (_, w) in zip(got, want):
        np.testing.assert_array_equal(g, w)

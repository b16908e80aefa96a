"""Sharding in the type, on 8 CPU devices. The tests' scripts run in a fresh process,
since the device count is fixed when the backend starts: all of them in one
(tests/_device_scripts.py: ScriptBatch), each after the prelude in its own namespace."""
import json

import numpy as np
import pytest

from _device_scripts import ScriptBatch

PRELUDE = """
import json, sys
import numpy as np
import traxla as jax
import traxla.numpy as jnp
from traxla.sharding import PartitionSpec as P, AxisType
jax.config.update('num_cpu_devices', 8)
mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Explicit))
"""


_SCRIPTS = ScriptBatch(__file__, "run", PRELUDE)


def run(body: str):
    return json.loads(_SCRIPTS.stdout(body).strip().splitlines()[-1])


def test_article_examples_reproduce():
    out = run("""
        res = {}
        with jax.sharding.set_mesh(mesh):
            a = jax.device_put(jnp.zeros((8, 16)), jax.NamedSharding(mesh, P('x', 'y')))
            b = jax.device_put(jnp.zeros((16, 4)), jax.NamedSharding(mesh, P('y', None)))
            res['typeof'] = f"{jax.typeof(a)} {jax.typeof(b)}"
            try:
                jax.make_jaxpr(lambda p, q: p @ q)(a, b)
            except jax.errors.ShardingTypeError as e:
                res['dot_error'] = str(e)
            c = jax.device_put(jnp.zeros((8, 16)), jax.NamedSharding(mesh, P('y', 'x')))
            try:
                jax.make_jaxpr(lambda p, q: p + q)(a, c)
            except jax.errors.ShardingTypeError as e:
                res['add_error'] = str(e)
            def f(p, q):
                return jax.lax.dot_general(p, q, (((1,), (0,)), ((), ())), out_sharding=P('x', None))
            res['jaxpr'] = str(jax.make_jaxpr(f)(a, b))
            h = jax.device_put(jnp.zeros((8, 16)),
                               jax.NamedSharding(mesh, P('x', 'y'), memory_kind='pinned_host'))
            res['host'] = str(jax.typeof(h))
        res['jax_imported'] = 'jax' in sys.modules
        print(json.dumps(res))
    """)
    assert out["typeof"] == "float32[8@x,16@y] float32[16@y,4]"
    assert out["dot_error"] == (
        "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. "
        "Please specify the output sharding via the `out_sharding` parameter. "
        "Got lhs_contracting_spec=('y',) and rhs_contracting_spec=('y',)")
    assert out["add_error"] == "add got incompatible shardings for broadcasting: ('x', 'y'), ('y', 'x')."
    assert out["jaxpr"] == (
        "{ lambda ; a:f32[8@x,16@y] b:f32[16@y,4]. let\n"
        "    c:f32[8@x,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
        "  in (c,) }")
    assert out["host"] == "float32<host>[8@x,16@y]"
    assert not out["jax_imported"]


def test_sharded_programs_match_unsharded_numbers_and_promised_shardings():
    out = run("""
        res = {}
        rng = np.random.RandomState(0)
        A = rng.randn(8, 16).astype(np.float32); B = rng.randn(16, 4).astype(np.float32)
        C = rng.randn(4, 8).astype(np.float32)
        for types in ['Explicit', 'Auto']:
            m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(getattr(AxisType, types),) * 2)
            with jax.sharding.set_mesh(m):
                a = jax.device_put(A, jax.NamedSharding(m, P('x', 'y')))
                b = jax.device_put(B, jax.NamedSharding(m, P('y', None)))
                c = jax.device_put(C, jax.NamedSharding(m, P(None, 'x')))
                chain = jax.jit(lambda a, b, c: jax.lax.dot_general(
                    jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=P('x', None)),
                    c, (((1,), (0,)), ((), ())), out_sharding=P('x', None)))
                out = chain(a, b, c)
                res[types + '_chain'] = bool(np.allclose(np.asarray(out), A @ B @ C, atol=1e-3))
                res[types + '_chain_sharding'] = str(out.sharding.spec)
                res[types + '_typeof'] = str(jax.typeof(out))
                red = jax.jit(lambda a: (jnp.sum(a, axis=1), jnp.max(a)))(a)
                res[types + '_reduce'] = bool(np.allclose(np.asarray(red[0]), A.sum(1), atol=1e-4)
                                              and np.isclose(float(red[1]), A.max()))
                res[types + '_reduce_sharding'] = str(red[0].sharding.spec)
                compiled = jax.jit(lambda a, b: jax.lax.dot_general(
                    a, b, (((1,), (0,)), ((), ())), out_sharding=P('x', None))).lower(a, b).compile()
                res[types + '_collective'] = 'all-reduce' in compiled.as_text()
                shards = out.addressable_shards
                res[types + '_shards'] = [len(shards), list(np.asarray(shards[0].data).shape)]
        print(json.dumps(res))
    """)
    for types in ("Explicit", "Auto"):
        assert out[types + "_chain"] and out[types + "_reduce"]
        # Explicit: the type's spec, dimension for dimension; Auto: the compiler's choice,
        # read as JAX reads an HloSharding (no trailing Nones)
        assert out[types + "_chain_sharding"] == ("P('x', None)" if types == "Explicit"
                                                  else "P('x',)")
        assert out[types + "_collective"]
        assert out[types + "_shards"] == [8, [2, 8]]
    assert out["Explicit_typeof"] == "float32[8@x,8]"
    assert out["Auto_typeof"] == "float32[8,8]"  # under Auto axes the type stays quiet
    assert out["Explicit_reduce_sharding"] == "P('x',)"


def test_sharding_errors_and_partial_replication():
    out = run("""
        res = {}
        with jax.sharding.set_mesh(mesh):
            try:
                jax.device_put(jnp.zeros((6, 16)), jax.NamedSharding(mesh, P('x', 'y')))
            except ValueError as e:
                res['divisible'] = str(e)
            b = jax.device_put(np.arange(64, dtype=np.float32).reshape(16, 4),
                               jax.NamedSharding(mesh, P('y', None)))
            res['partial'] = np.asarray(b).tolist() == np.arange(64).reshape(16, 4).tolist()
            res['partial_shard'] = list(np.asarray(b.addressable_shards[1].data).shape)
            try:  # (JAX's rule: a sharded dim may change size if it still divides evenly)
                jax.make_jaxpr(lambda x: x[1:2])(b)
            except jax.errors.ShardingTypeError as e:
                res['slice'] = str(e)
            res['slice_even'] = str(jax.make_jaxpr(lambda x: x[1:3])(b).out_avals[0])
            res['split_even'] = float(jnp.split(b, [4])[1].sum())
        # (outside the 8-device mesh context: inside it JAX refuses an array on one device)
        one = jax.make_mesh((1,), ('i',), axis_types=(AxisType.Explicit,))
        c = jax.device_put(np.arange(8.0).reshape(2, 4), jax.NamedSharding(one, P(None, 'i')))
        res['size_one_axis'] = [str(jax.typeof(c[:, 1:3])), np.asarray(c[::1, 0]).tolist()]
        try:
            jax.config.update('num_cpu_devices', 4)
        except RuntimeError as e:
            res['late'] = str(e)
        print(json.dumps(res))
    """)
    assert "divisible by 4" in out["divisible"]
    assert out["partial"] and out["partial_shard"] == [8, 4]
    assert out["slice"] == (
        "slicing on sharded dims where out dim (1) is not divisible by mesh axes (2) with spec "
        "(y) is not implemented. Got input type=f32[16@y,4] and output shape=(1, 4)")
    assert out["slice_even"] == "float32[2@y,4]" and out["split_even"] == 1896.0
    assert out["size_one_axis"] == ["float32[2,2@i]", [0.0, 4.0]]
    assert "must run before the CPU backend is first used" in out["late"]


def test_shard_map_collectives_match_numpy():
    out = run("""
        res = {}
        m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)  # arguments left unplaced
        x = np.arange(128.).reshape(8, 16).astype(np.float32)
        blocks = x.reshape(4, 2, 2, 8).transpose(0, 2, 1, 3)  # [xi, yi] -> (2, 8) block
        def smap(f, out_specs):
            # (check_vma=False: an all_gather's result is typed as varying, as in JAX)
            return jax.shard_map(f, mesh=m, in_specs=P('x', 'y'), out_specs=out_specs,
                                 check_vma=False)
        psum = smap(lambda a: jax.lax.psum(a, 'x'), P(None, 'y'))(x)
        res['psum'] = bool(np.allclose(np.asarray(psum), x.reshape(4, 2, 16).sum(0)))
        pmax = smap(lambda a: jax.lax.pmax(a, 'x'), P(None, 'y'))(x)
        res['pmax'] = bool(np.allclose(np.asarray(pmax), x.reshape(4, 2, 16).max(0)))
        pmin = smap(lambda a: jax.lax.pmin(a, ('x', 'y')), P())(x)
        res['pmin'] = bool(np.allclose(np.asarray(pmin), blocks.min(axis=(0, 1))))
        gathered = smap(lambda a: jax.lax.all_gather(a, 'x', tiled=True), P(None, 'y'))(x)
        res['all_gather'] = bool(np.allclose(np.asarray(gathered), x))
        stacked = smap(lambda a: jax.lax.all_gather(a, 'y'), P('x'))(x)
        res['all_gather_stacked'] = list(stacked.shape)
        perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
        shifted = smap(lambda a: jax.lax.ppermute(a, 'x', perm), P('x', 'y'))(x)
        res['ppermute'] = bool(np.allclose(np.asarray(shifted), np.roll(x, 2, axis=0)))
        scattered = smap(lambda a: jax.lax.psum_scatter(a, 'y', scatter_dimension=1, tiled=True),
                         P('x', 'y'))(x)
        ref = np.concatenate([b0 + b1 for b0, b1 in zip(*(np.split(x[:, :8], 1) + np.split(x[:, 8:], 1)))], 0)
        ref = x[:, :8] + x[:, 8:]                        # each y-block pair summed, split over y
        res['psum_scatter'] = bool(np.allclose(np.asarray(scattered), ref))
        idx = smap(lambda a: a * 0 + jax.lax.axis_index('x') * 10 + jax.lax.axis_index('y'),
                   P('x', 'y'))(x)
        expected = np.repeat(np.repeat(np.arange(4)[:, None] * 10 + np.arange(2)[None, :], 2, 0), 8, 1)
        res['axis_index'] = bool(np.allclose(np.asarray(idx), expected))
        closure = jax.jit(lambda x, s: jax.shard_map(lambda a: jax.lax.psum(a * s, 'x'), mesh=m,
                          in_specs=P('x', 'y'), out_specs=P(None, 'y'))(x))(x, 2.0)
        res['closure'] = bool(np.allclose(np.asarray(closure), 2 * x.reshape(4, 2, 16).sum(0)))
        try:
            jax.lax.psum(1.0, 'x')
        except NameError as e:
            res['unbound'] = str(e)
        res['jax_imported'] = 'jax' in sys.modules
        print(json.dumps(res))
    """)
    for key in ("psum", "pmax", "pmin", "all_gather", "ppermute", "psum_scatter", "axis_index",
                "closure"):
        assert out[key], key
    assert out["all_gather_stacked"] == [8, 2, 8]
    assert out["unbound"].startswith("unbound axis name: x")
    assert not out["jax_imported"]


def test_reshard_changes_the_type_and_the_layout():
    out = run("""
        res = {}
        with jax.sharding.set_mesh(mesh):
            a = jax.device_put(np.arange(128.).reshape(8, 16).astype(np.float32),
                               jax.NamedSharding(mesh, P('x', 'y')))
            b = jax.sharding.reshard(a, P('y', None))
            res['eager'] = [str(jax.typeof(b)), str(b.sharding.spec)]
            f = jax.jit(lambda a: jax.sharding.reshard(a * 2, P(None, 'x')))
            c = f(a)
            res['jit'] = [str(jax.typeof(c)), str(c.sharding.spec),
                          bool(np.allclose(np.asarray(c), 2 * np.arange(128.).reshape(8, 16)))]
            res['jaxpr'] = str(jax.make_jaxpr(lambda a: jax.sharding.reshard(a, P(None, 'x')))(a))
            # the article's failing matmul, fixed by resharding the contracting dimension away
            q = jax.device_put(np.ones((16, 4), np.float32), jax.NamedSharding(mesh, P('y', None)))
            fixed = jax.jit(lambda p, q: jax.sharding.reshard(p, P('x', None)) @ jax.sharding.reshard(q, P()))(a, q)
            res['fixed'] = [str(jax.typeof(fixed)), float(np.asarray(fixed).sum())]
        print(json.dumps(res))
    """)
    assert out["eager"] == ["float32[8@y,16]", "P('y', None)"]
    assert out["jit"] == ["float32[8,16@x]", "P(None, 'x')", True]
    assert out["jaxpr"] == ("{ lambda ; a:f32[8@x,16@y]. let b:f32[8,16@x] = reshard a in (b,) }")
    assert out["fixed"] == ["float32[8@x,4]", float(np.arange(128.).sum() * 4)]


def test_shard_map_on_a_one_device_mesh_runs_in_process():
    import traxla
    from traxla import lax
    from traxla.sharding import P as P_
    m = traxla.make_mesh((1,), ("i",), axis_types=(traxla.sharding.AxisType.Auto,))
    f = traxla.shard_map(lambda x: lax.psum(x, "i") + lax.axis_index("i"), mesh=m,
                         in_specs=P_("i"), out_specs=P_(), check_vma=False)  # (axis_index varies)
    np.testing.assert_array_equal(np.asarray(f(np.ones(4, np.float32))), np.ones(4))
    np.testing.assert_array_equal(np.asarray(traxla.jit(f)(np.ones(4, np.float32))), np.ones(4))


def test_mlp_training_step_sharded_equals_unsharded():
    out = run("""
        res = {}
        rng = np.random.RandomState(0)
        X = rng.randn(16, 8).astype(np.float32); Y = rng.randn(16, 4).astype(np.float32)
        params = [(rng.randn(8, 32).astype(np.float32) * 0.3, np.zeros(32, np.float32)),
                  (rng.randn(32, 4).astype(np.float32) * 0.3, np.zeros(4, np.float32))]
        def loss(params, x, y):
            h = x
            for i, (W, b) in enumerate(params):
                h = h @ W + b
                if i == 0:
                    h = jnp.tanh(h)
            return jnp.mean((h - y) ** 2)
        @jax.jit
        def step(params, x, y):
            g = jax.grad(loss)(params, x, y)
            return [(W - 0.1 * gW, b - 0.1 * gb) for (W, b), (gW, gb) in zip(params, g)], loss(params, x, y)
        p1, l1 = step(params, X, Y)
        leaves1 = jax.tree_util.tree_leaves(p1)
        for types in ['Auto', 'Explicit']:
            m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(getattr(AxisType, types),) * 2)
            with jax.sharding.set_mesh(m):
                xs = jax.device_put(X, jax.NamedSharding(m, P('x', None)))
                ys = jax.device_put(Y, jax.NamedSharding(m, P('x', None)))
                ps = jax.device_put(params, jax.NamedSharding(m, P()))
                p2, l2 = step(ps, xs, ys)
                res[types] = [abs(float(l1) - float(l2)) < 1e-5,
                              all(np.allclose(np.asarray(a), np.asarray(b), atol=1e-5)
                                  for a, b in zip(leaves1, jax.tree_util.tree_leaves(p2))),
                              str(jax.tree_util.tree_leaves(p2)[0].sharding.spec)]
        print(json.dumps(res))
    """)
    assert out["Auto"][:2] == [True, True]
    assert out["Explicit"] == [True, True, "P(None, None)"]  # updates stay where the parameters live


def test_collective_derivatives_inside_shard_map():
    out = run("""
        res = {}
        m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)  # arguments left unplaced
        x = np.arange(128.).reshape(8, 16).astype(np.float32)
        perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
        def body(a):
            _, back = jax.vjp(lambda b: jax.lax.ppermute(b, 'x', perm), a)
            (ct,) = back(a)
            _, back_g = jax.vjp(lambda b: jax.lax.all_gather(b, 'x', tiled=True), a)
            (ct_g,) = back_g(jnp.ones((8, 8), jnp.float32))
            _, t = jax.jvp(lambda b: jax.lax.pmax(b, 'x'), (a,), (jnp.ones_like(a),))
            return ct, ct_g, t
        f = jax.shard_map(body, mesh=m, in_specs=P('x', 'y'), out_specs=(P('x', 'y'), P('x', 'y'), P(None, 'y')))
        ct, ct_g, t = f(x)
        res['ppermute'] = bool(np.allclose(np.asarray(ct), np.roll(x, -2, axis=0)))  # inverse shift
        res['all_gather'] = bool(np.allclose(np.asarray(ct_g), 4.0))  # summed over 4 x-devices
        res['pmax_jvp'] = bool(np.allclose(np.asarray(t), 1.0))
        print(json.dumps(res))
    """)
    assert out == {"ppermute": True, "all_gather": True, "pmax_jvp": True}


def test_cached_single_device_entry_is_not_reused_for_an_auto_sharded_argument():
    out = run("""
        m = jax.make_mesh((4, 2), ('x', 'y'))  # Auto axes: the aval carries no sharding
        f = jax.jit(lambda a: a * 2)
        x = np.arange(16.).reshape(8, 2).astype(np.float32)
        f(jnp.asarray(x))  # caches the single-device executable under the aval
        with jax.sharding.set_mesh(m):
            y = f(jax.device_put(x, jax.NamedSharding(m, P('x', None))))
        print(json.dumps([bool(np.allclose(np.asarray(y), 2 * x)), str(y.sharding.spec)]))
    """)
    assert out == [True, "P('x', None)"]


def test_special_elementwise_operations_keep_explicit_shardings():
    # lax.square, lgamma, erfc, real/imag/conj and complex are elementwise in JAX too:
    # an explicitly sharded operand types, and the result keeps its sharding (ffi.md's
    # jnp.square on a batch-sharded array)
    out = run("""
        res = {}
        x = jax.device_put(np.arange(1, 33, dtype=np.float32).reshape(8, 4),
                           jax.NamedSharding(mesh, P('x', None)))
        for name, f in [('square', jax.lax.square), ('lgamma', jax.lax.lgamma),
                        ('erfc', jax.lax.erfc), ('conj', jax.lax.conj),
                        ('complex', lambda v: jax.lax.complex(v, v)),
                        ('igamma', lambda v: jax.lax.igamma(v, v))]:
            y = jax.jit(f)(x)
            res[name] = str(jax.typeof(y).sharding.spec)
        res['square_value'] = np.asarray(jax.jit(jax.lax.square)(x)).tolist() == \
            (np.arange(1, 33, dtype=np.float32).reshape(8, 4) ** 2).tolist()
        print(json.dumps(res))
    """)
    assert out.pop("square_value")
    assert out == {k: "P('x', None)" for k in
                   ("square", "lgamma", "erfc", "conj", "complex", "igamma")}


def test_custom_derivatives_and_ffi_calls_take_explicitly_sharded_operands():
    # ffi.md: a custom_vjp around an ffi_call, called on a batch-sharded array. The
    # custom_vjp's results are typed as its function's; an FFI call's are replicated
    # (JAX's ffi_call_abstract_eval), XLA gathering the operand
    out = run("""
        res = {}
        x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4),
                           jax.NamedSharding(mesh, P('x', None)))

        @jax.custom_vjp
        def f(v):
            return jnp.sin(v) * 2
        f.defvjp(lambda v: (f(v), v), lambda v, g: (g * 2 * jnp.cos(v),))
        y = jax.jit(f)(x)
        res['vjp'] = str(jax.typeof(y).sharding.spec)
        res['vjp_value'] = bool(np.allclose(np.asarray(y), 2 * np.sin(np.asarray(x))))
        g = jax.custom_jvp(lambda v: v * 3)
        g.defjvp(lambda p, t: (g(p[0]), t[0] * 3))
        res['jvp'] = str(jax.typeof(jax.jit(g)(x)).sharding.spec)
        call = jax.ffi.ffi_call("not_registered", jax.ShapeDtypeStruct((8, 4), jnp.float32))
        res['ffi'] = str(jax.make_jaxpr(call)(x).jaxpr.outvars[0].aval.sharding.spec)
        print(json.dumps(res))
    """)
    assert out == {"vjp": "P('x', None)", "vjp_value": True, "jvp": "P('x', None)",
                   "ffi": "P(None, None)"}

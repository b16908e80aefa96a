"""Behaviours of JAX's sharding pages (parallel.md, shard_map.md) on 8 CPU devices:
each script runs in a fresh process under JAX and under traxla (through the ``jax``
import hook of tools/doc_cells.py), and the two must print the same."""
from __future__ import annotations

import textwrap

import pytest

from _device_scripts import REPO, ForkServer, jax_output, run_script, script_env


_PRELUDE = """
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
if sys.argv[1] == "traxla":
    sys.path.insert(0, {tools!r})
    import doc_cells
    doc_cells.install_traxla_as_jax()
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P, AxisType
"""


def _run(library, body):
    code = _PRELUDE.format(tools=str(REPO / "tools")) + textwrap.dedent(body)
    return run_script(code, argv=(library,))


# traxla's side: each script runs in a process of its own, forked from one that ran the
# prelude's imports once (tests/_device_scripts.py: ForkServer).
_TRAXLA = ForkServer(_PRELUDE.format(tools=str(REPO / "tools")), env=script_env(),
                     cwd=str(REPO), argv=("traxla",))


def _same_as_jax(body):
    ours = _TRAXLA.stdout(body)
    # keyed on the body alone: the prelude names this checkout's path
    assert ours == jax_output("sharding_docs\n" + textwrap.dedent(body),
                              lambda: _run("jax", body))
    return ours


def test_eager_shard_map_prints_every_devices_block():
    out = _same_as_jax("""
        mesh = jax.make_mesh((2, 2), ('i', 'j'))
        x = jax.device_put(jnp.arange(16).reshape(4, 4), jax.NamedSharding(mesh, P('i', 'j')))

        @jax.shard_map(mesh=mesh, in_specs=P('i', 'j'), out_specs=P('i', None))
        def f(x):
            print(x)
            y = jax.lax.psum(x, 'j')
            z = jax.lax.fori_loop(0, 2, lambda i, c: c + jax.lax.psum(c, 'i'), 2 * y)
            print(z)
            return z
        print(repr(f(x)))
    """)
    assert "On cpu:3 at mesh coordinates (i, j,) = (1, 1):\n[[10 11]\n [14 15]]\n" in out


def test_sharding_reprs_and_compiler_chosen_specs():
    _same_as_jax("""
        d = jax.devices()[0]
        print(str(d), repr(d))
        mesh = jax.make_mesh((4, 2), ('X', 'Y'))
        print(mesh.abstract_mesh)
        x = jax.device_put(np.arange(32.).reshape(8, 4), jax.NamedSharding(mesh, P('X', 'Y')))
        print(jax.typeof(x).sharding)
        for types in ('Explicit', 'Auto'):
            m = jax.make_mesh((4, 2), ('X', 'Y'), axis_types=(getattr(AxisType, types),) * 2)
            with jax.set_mesh(m):
                x = jax.device_put(np.arange(32.).reshape(8, 4), P('X'))
                print(types, jax.jit(lambda x: x * 2)(x).sharding.spec, (x + 1).sharding.spec,
                      jax.jit(lambda x: x.T)(x).sharding.spec)
    """)


def test_explicit_dot_out_sharding_and_sharding_errors():
    _same_as_jax("""
        mesh = jax.make_mesh((4, 2), ('X', 'Y'))
        with jax.set_mesh(mesh):
            a = jax.device_put(np.arange(8 * 16.).reshape(8, 16), P('X', 'Y'))
            b = jax.device_put(np.arange(16 * 4.).reshape(16, 4), P('Y', None))
            for dot in (jnp.dot, jnp.matmul, jax.lax.dot):
                c = dot(a, b, out_sharding=P('X', None))
                print(jax.typeof(c), np.allclose(c, np.asarray(a) @ np.asarray(b)))
            try:
                jnp.dot(a, b)
            except Exception as e:
                print(type(e).__name__, e)
            p = jax.device_put(np.ones((4, 4), np.int32), P('X', None))
            q = jax.device_put(np.ones((4, 4), np.int32), P(None, 'X'))
            try:
                p + q
            except Exception as e:
                print(type(e).__name__, e)
    """)


def test_custom_derivatives_of_explicitly_sharded_operands():
    _same_as_jax("""
        mesh = jax.make_mesh((8,), ('b',))
        jax.set_mesh(mesh)
        x = jax.device_put(np.ones((16, 4), np.float32), jax.NamedSharding(mesh, P('b')))
        f = lambda x: jnp.sum(jax.nn.relu(x) * 2 + jax.nn.sigmoid(x))
        print(jax.typeof(jax.nn.sigmoid(x)), jax.jit(f)(x), jax.typeof(jax.grad(f)(x)))

        @jax.custom_vjp
        def g(x):
            return jnp.sin(x)
        g.defvjp(lambda x: (jnp.sin(x), x), lambda r, t: (jnp.cos(r) * t,))
        print(jax.typeof(g(x)), jax.typeof(jax.grad(lambda x: g(x).sum())(x)))
    """)


def test_varying_manual_axes_types_pvary_and_checks():
    _same_as_jax("""
        mesh = jax.make_mesh((2, 2), ('i', 'j'))
        jax.set_mesh(mesh)
        x = jax.device_put(jnp.arange(8.).reshape(4, 2), P('i'))
        y = jnp.ones((2, 2))
        z = jax.device_put(jnp.ones((2, 4)), P(None, 'j'))

        @jax.shard_map(in_specs=(P('i'), P(), P(None, 'j')), out_specs=P('i', 'j'))
        def f(x, y, z):
            a = x * 2 + y
            b = jnp.sin(a) + jax.lax.axis_index('j')
            c = jax.lax.psum(b, 'i')
            e = jax.lax.all_gather(x, 'i', tiled=True)
            print(jax.typeof(a), jax.typeof(b), jax.typeof(c), jax.typeof(e),
                  sorted(jax.typeof(c).manual_axis_type.varying))
            return c + z + e.sum()
        f(x, y, z)                        # eager: the types as a traced body's
        jax.jit(f)(x, y, z)

        @jax.shard_map(in_specs=(P('i'), P()), out_specs=P('i', 'j'))
        def g(x, y):
            return x * jax.lax.pcast(y, 'j', to='varying') + y
        print(jax.make_jaxpr(g)(x, y))

        for fun in (lambda v: v, jax.jit(lambda v: v)):
            try:
                jax.shard_map(fun, in_specs=P('i'), out_specs=P())(x)
            except ValueError as e:
                print(e)
        try:
            jax.shard_map(lambda v: v, in_specs=P('i'), out_specs=P())(np.ones(4))
        except ValueError as e:
            print(e)

        @jax.shard_map(in_specs=(P('i'), P()), out_specs=P('i'))
        def h(x, y):
            def body(carry, _):
                c1, c2 = carry
                return (c2, c1), ()
            y = jax.lax.pcast(y, 'i', to='varying')
            (x_, y_), _ = jax.lax.scan(body, (x, y), (), length=2)
            return x_, y_
        print(h(x, y))
    """)


def test_gradients_through_pvary_casts():
    _same_as_jax("""
        mesh = jax.make_mesh((4, 2), ('i', 'j'))
        jax.set_mesh(mesh)
        x = jax.device_put(jnp.arange(8.).reshape(4, 2), P('i', 'j'))
        y = jnp.arange(1., 3.)

        def loss(x, y):
            @jax.shard_map(in_specs=(P('i', 'j'), P()), out_specs=P())
            def f(a, b):  # b (invariant) is cast to varying over i and j: pvary
                return jax.lax.psum((jnp.sin(a) * b).sum(), ('i', 'j'))
            return f(x, y)
        gx, gy = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, y)
        print(np.round(np.asarray(gx), 5), np.round(np.asarray(gy), 5))
        t = jax.jvp(lambda y: loss(x, y), (y,), (jnp.ones(2),))[1]
        print(np.round(np.asarray(t), 4))
    """)


def test_results_split_over_axes_in_other_than_mesh_order_keep_their_spec():
    _same_as_jax("""
        mesh = jax.make_mesh((4, 2), ('batch', 'feats'))
        jax.set_mesh(mesh)
        w = jax.device_put(np.ones((8, 3), np.float32),
                           jax.NamedSharding(mesh, P(('feats', 'batch'))))
        g = jax.jit(jax.grad(lambda w: (jnp.sin(w) ** 2).sum()))(w)
        print(g.sharding, jax.typeof(g))
        print(jax.jit(lambda a, b: jnp.allclose(a, b))(g, g))
    """)


def test_eager_shard_map_bodies_with_transformations_keys_and_pytrees():
    _same_as_jax("""
        mesh = jax.make_mesh((4,), ('i',))
        jax.set_mesh(mesh)
        x = jax.device_put(jnp.arange(8.), P('i'))

        @jax.shard_map(in_specs=P('i'), out_specs={'a': P('i'), 'b': P(), 'c': P()})
        def f(x):
            g = jax.grad(lambda v: (jnp.sin(v) * 2).sum())(x)
            r = jax.random.normal(jax.random.key(0), (2,))  # (a key made in the body)
            return {'a': g + jnp.dot(x, x), 'b': 3.0, 'c': r}
        out = f(x)
        print(jax.tree.map(lambda v: (np.round(np.asarray(v), 4), jax.typeof(v)), out))

        @jax.shard_map(in_specs=P('i'), out_specs=P('i'))
        def h(x):
            y = jax.lax.cond(x[0] > 3, lambda v: v * 2, lambda v: v - 1, x)
            z = jax.vmap(lambda a: a + jax.lax.axis_index('i'))(y)
            return jnp.where(z > 2, z, 0).astype(jnp.int32)
        print(h(x), jax.typeof(h(x)))
        print(jax.shard_map(lambda a: jnp.zeros((2,), jnp.float32), in_specs=P('i'),
                            out_specs=P('i'))(x))
    """)


def test_control_flow_types_include_varying_manual_axes():
    _same_as_jax("""
        mesh = jax.make_mesh((4,), ('i',))
        jax.set_mesh(mesh)
        x = jax.device_put(jnp.arange(8.), P('i'))
        bodies = [
            lambda a: jax.lax.fori_loop(0, 3, lambda i, c: c + a, jnp.zeros(2)),
            lambda a: jax.lax.cond(a[0] > 2, lambda: a, lambda: jnp.ones(2)),
            lambda a: jax.lax.while_loop(lambda c: c[0] < 10, lambda c: c + a + 1,
                                         jnp.zeros(2)),
            lambda a: jax.lax.fori_loop(0, 3, lambda i, c: c + a,
                                        jax.lax.pcast(jnp.zeros(2), 'i', to='varying')),
        ]
        for body in bodies:
            try:
                print(jax.jit(jax.shard_map(body, in_specs=P('i'), out_specs=P('i')))(x))
            except TypeError as e:
                print(e)
    """)


def test_layout_formats_of_compiled_programs():
    _same_as_jax("""
        from jax.experimental.layout import Layout, Format, with_layout_constraint
        from jax.sharding import SingleDeviceSharding
        duck = jax.ShapeDtypeStruct((512, 1024), jnp.float32)
        apply_exe = jax.jit(lambda x, y: (x[0, :], y[:, 0]), in_shardings=Format(Layout.AUTO),
                            out_shardings=Format(Layout.AUTO)).trace(duck, duck).lower().compile()
        arg_formats, kwarg_formats = apply_exe.input_formats
        print(arg_formats, kwarg_formats, apply_exe.output_formats)
        init_exe = jax.jit(lambda x, y: (x * 2, y * 3), out_shardings=arg_formats).trace(
            duck, duck).lower().compile()
        print(init_exe.output_formats == arg_formats)

        @jax.jit
        def f(x):
            return with_layout_constraint(x.T, Layout(major_to_minor=(0, 1))) * 2
        print(f(jnp.ones((2, 3))))
        s = SingleDeviceSharding(jax.devices()[0])
        print(jax.jit(lambda a: a + 1, in_shardings=s, out_shardings=s)(jnp.ones(3)))
    """)


def test_device_put_inside_jit_moves_between_memories():
    _same_as_jax("""
        from jax.sharding import Mesh, NamedSharding
        mesh = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ('x', 'y'))
        s_dev = NamedSharding(mesh, P('x', 'y'))
        s_host = s_dev.with_memory_kind('pinned_host')
        arr_host = jax.device_put(np.arange(8.).reshape(2, 4), s_host)
        print(arr_host.sharding.memory_kind, jax.typeof(arr_host))
        out = jax.jit(lambda x: jax.device_put(x, s_dev) + 1, out_shardings=s_dev)(arr_host)
        print(out, out.sharding.memory_kind)
        g = jax.jit(lambda x: jax.device_put(x * 2, s_host), out_shardings=s_host)
        print(jax.make_jaxpr(g)(jnp.ones((2, 4))).out_avals[0])
        back = g(jnp.ones((2, 4)))
        print(back, back.sharding.memory_kind)
    """)

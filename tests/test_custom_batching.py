"""``custom_batching.custom_vmap`` and ``sequential_vmap`` against JAX 0.10.2: values,
printed jaxprs, the JVP (itself a custom_vmap_call), the custom_vjp-around-custom_vmap
pattern of JAX's documentation, and JAX's errors."""
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _define(api, np_):
    @api.custom_batching.custom_vmap
    def f(x, y):
        return x + y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        return xs * ys, True

    @api.custom_vjp
    @api.custom_batching.custom_vmap
    def g(x, y):
        return np_.sin(x) * y

    @g.def_vmap
    def g_rule(axis_size, in_batched, xs, ys):
        return np_.cos(xs) * ys, True

    def g_fwd(x, y):
        return g(x, y), (np_.cos(x), np_.sin(x), y)

    def g_bwd(res, ct):
        cos_x, sin_x, y = res
        return cos_x * ct * y, sin_x * ct

    g.defvjp(g_fwd, g_bwd)

    @api.custom_batching.sequential_vmap
    def h(x, y):
        return x * 2 + y
    return f, g, h


@pytest.fixture(scope="module")
def both():
    return _define(traxla, tnp), _define(jax, jnp)


def test_vmap_uses_the_rule_and_calls_use_the_function(both):
    (f, _, _), (jf, _, _) = both
    xs, ys = np.arange(3.0, dtype=np.float32), np.arange(1.0, 4.0, dtype=np.float32)
    np.testing.assert_array_equal(traxla.vmap(f)(xs, ys), xs * ys)
    np.testing.assert_array_equal(traxla.jit(traxla.vmap(f))(xs, ys), xs * ys)
    assert float(f(1.0, 2.0)) == 3.0 == float(traxla.jit(f)(1.0, 2.0))
    assert str(traxla.make_jaxpr(f)(1.0, 2.0)) == str(jax.make_jaxpr(jf)(1.0, 2.0))
    assert (str(traxla.make_jaxpr(traxla.vmap(f))(xs, ys))
            == str(jax.make_jaxpr(jax.vmap(jf))(xs, ys)))


def test_jvp_is_a_custom_vmap_call_of_the_jvp(both):
    (f, _, _), (jf, _, _) = both
    xs = np.arange(3.0, dtype=np.float32)
    ones = np.ones(3, np.float32)
    t = traxla.jvp(traxla.vmap(f), (xs, xs), (ones, ones))
    j = jax.jvp(jax.vmap(jf), (xs, xs), (ones, ones))
    for a, b in zip(t, j):
        np.testing.assert_array_equal(a, b)
    t = traxla.vmap(lambda x: traxla.jvp(f, (x, 2.0), (1.0, 0.0)))(xs)
    j = jax.vmap(lambda x: jax.jvp(jf, (x, 2.0), (1.0, 0.0)))(xs)
    for a, b in zip(t, j):
        np.testing.assert_array_equal(a, b)
    assert (str(traxla.make_jaxpr(lambda x, y: traxla.jvp(f, (x, y), (x, y)))(1.0, 2.0))
            == str(jax.make_jaxpr(lambda x, y: jax.jvp(jf, (x, y), (x, y)))(1.0, 2.0)))


def test_custom_vjp_around_custom_vmap(both):
    (_, g, _), (_, jg, _) = both
    np.testing.assert_array_equal(traxla.vmap(g)(np.zeros(3, np.float32), np.ones(3, np.float32)),
                                  jax.vmap(jg)(jnp.zeros(3), jnp.ones(3)))
    assert float(traxla.grad(g)(0.0, 1.0)) == float(jax.grad(jg)(0.0, 1.0)) == 1.0


def test_sequential_vmap_loops_with_lax_map(both):
    (_, _, h), (_, _, jh) = both
    xs = np.arange(3.0, dtype=np.float32)
    np.testing.assert_array_equal(traxla.vmap(h, in_axes=(0, None))(xs, 1.0), xs * 2 + 1)
    assert (str(traxla.make_jaxpr(traxla.vmap(h, in_axes=(0, None)))(xs, 1.0))
            == str(jax.make_jaxpr(jax.vmap(jh, in_axes=(0, None)))(xs, 1.0)))


def test_errors_as_jax():
    @traxla.custom_batching.custom_vmap
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap "
                                             "function f using def_vmap"):
        f(1.0)

    @f.def_vmap
    def bad_rule(axis_size, in_batched, x):
        return (x, x), True
    with pytest.raises(ValueError, match=r"structure of output value and output batching "
                                         r"specification returned by custom vmap rule \(bad_rule\)"):
        traxla.vmap(f)(tnp.ones(2))

    @traxla.custom_batching.custom_vmap
    def k(x):
        return x * 2

    k.def_vmap(lambda n, b, x: (x * 2, True))
    with pytest.raises(ValueError, match="Linearization failed to produce known values"):
        traxla.grad(k)(1.0)

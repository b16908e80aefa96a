"""``jax.typeof(x).sharding`` (an aval's sharding, JAX's NamedSharding on an abstract mesh)
and the ``out_sharding=`` / ``device=`` arguments libraries pass it back into (optax's
``tree_utils``, flax's ``Dropout``, chex's sharding checks). JAX is the oracle."""
from __future__ import annotations

import inspect

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import traxla as tx
import traxla.numpy as jnp
from traxla.sharding import NamedSharding, PartitionSpec as P


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_typeof_sharding_matches_jax(shape):
    s = tx.typeof(jnp.ones(shape)).sharding
    j = jax.typeof(jjnp.ones(shape)).sharding
    assert repr(s) == repr(j)
    assert tuple(s.spec) == tuple(j.spec)
    assert s.mesh.empty and s.memory_kind is None and s.num_devices == 0
    assert s.is_fully_replicated
    assert not s.mesh.are_all_axes_explicit and not s.mesh.are_all_axes_auto
    assert isinstance(s, tx.sharding.NamedSharding) and isinstance(s, tx.sharding.Sharding)
    with pytest.raises(ValueError, match="device_set is not implemented for "
                                         "`jax.sharding.AbstractMesh`."):
        s.device_set


def test_typeof_sharding_of_scalars_and_tracers():
    assert repr(tx.typeof(1.0).sharding) == repr(jax.typeof(1.0).sharding)
    seen = []
    tx.jit(lambda x: seen.append(repr(tx.typeof(x).sharding)) or x)(jnp.ones((2, 3)))
    assert seen == ["NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None, None))"]


def test_aval_sharding_update_and_constructor():
    s = tx.typeof(jnp.ones((2, 3))).sharding
    u = s.update(spec=P(None))
    assert repr(u) == repr(jax.typeof(jjnp.ones((2, 3))).sharding.update(spec=jax.P(None)))
    # JAX's flax.core.axes_scan rebuilds avals from it: a sharding naming no Explicit axis
    # is the plain type
    a = tx.core.ShapedArray((2,), np.float32, sharding=u)
    assert a == tx.core.ShapedArray((2,), np.float32) and str(a) == "float32[2]"
    with pytest.raises(TypeError, match="must be a NamedSharding"):
        tx.core.ShapedArray((2,), np.float32, sharding="x")


def test_explicit_sharding_on_the_abstract_mesh():
    mesh = tx.sharding.make_mesh((1,), ("x",))
    x = tx.device_put(jnp.ones(4), NamedSharding(mesh, P("x")))
    s = tx.typeof(x).sharding
    assert s.mesh == mesh.abstract_mesh and tuple(s.spec) == ("x",) and s.memory_kind is None
    assert s.mesh.are_all_axes_explicit and s.is_fully_replicated  # one device
    assert tx.core.ShapedArray((4,), np.float32, sharding=s) == tx.typeof(x)
    # a concrete mesh's sharding keeps its device memory kind, as JAX's
    assert NamedSharding(mesh, P("x")).memory_kind == "device"


def test_out_sharding_from_typeof_is_accepted():
    x = jnp.arange(6.0).reshape(2, 3)
    s = tx.typeof(x).sharding
    key = tx.random.key(0)
    np.testing.assert_array_equal(tx.random.bernoulli(key, 0.5, (2, 3), out_sharding=s),
                                  tx.random.bernoulli(key, 0.5, (2, 3)))
    np.testing.assert_array_equal(tx.random.normal(key, (2, 3), out_sharding=s),
                                  tx.random.normal(key, (2, 3)))
    empty = NamedSharding(s.mesh, P())
    assert float(jnp.tensordot(x, x, 2, out_sharding=empty)) == 55.0
    np.testing.assert_array_equal(jnp.dot(x, x.T, out_sharding=empty), np.dot(x, x.T))
    np.testing.assert_array_equal(jnp.matmul(x, x.T, out_sharding=empty), np.dot(x, x.T))
    np.testing.assert_array_equal(jnp.einsum("ij,kj->ik", x, x, out_sharding=empty),
                                  np.dot(x, x.T))
    for f in (jnp.zeros, jnp.ones, jnp.empty):
        assert f((2, 3), out_sharding=s).shape == (2, 3)
    np.testing.assert_array_equal(jnp.zeros_like(x, out_sharding=s), np.zeros((2, 3)))
    np.testing.assert_array_equal(jnp.arange(4, out_sharding=NamedSharding(s.mesh, P())),
                                  np.arange(4))


def test_device_argument_of_creation_functions():
    d = tx.devices()[0]
    np.testing.assert_array_equal(jnp.arange(3, device=d), np.arange(3))
    np.testing.assert_array_equal(jnp.full((2,), 7, device=d), [7, 7])
    np.testing.assert_array_equal(jnp.asarray([1, 2], device=d), [1, 2])
    np.testing.assert_array_equal(tx.jit(lambda x: jnp.ones_like(x, device=d))(jnp.zeros(2)),
                                  [1.0, 1.0])
    s = tx.typeof(jnp.ones(3)).sharding
    js = jax.typeof(jjnp.ones(3)).sharding
    with pytest.raises(ValueError) as e:
        jnp.zeros(3, device=d, out_sharding=s)
    with pytest.raises(ValueError) as je:
        jjnp.zeros(3, device=jax.devices()[0], out_sharding=js)
    assert str(e.value) == str(je.value)


def test_partition_spec_outside_a_mesh_is_jax_error():
    with pytest.raises(ValueError) as e:
        jnp.zeros(3, out_sharding=P())
    with pytest.raises(ValueError) as je:
        jjnp.zeros(3, out_sharding=jax.P())
    assert str(e.value) == str(je.value)


@pytest.mark.parametrize("name", ["normal", "bernoulli", "uniform"])
def test_sampler_signatures_name_out_sharding(name):
    # optax.tree_utils reads the signature to decide whether to pass out_sharding
    assert "out_sharding" in inspect.signature(getattr(tx.random, name)).parameters
    assert (list(inspect.signature(getattr(tx.random, name)).parameters)
            == list(inspect.signature(getattr(jax.random, name)).parameters))


@pytest.mark.parametrize("name", ["zeros", "ones", "full", "zeros_like", "ones_like",
                                  "full_like", "arange", "asarray", "array", "empty"])
def test_creation_signatures_take_device_and_out_sharding(name):
    params = inspect.signature(getattr(jnp, name)).parameters
    assert params["device"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["out_sharding"].default is None


def test_eval_shape_keeps_an_explicit_sharding():
    # flax's nnx.eval_shape reads abs_model.p.sharding.spec
    mesh = tx.sharding.make_mesh((1,), ("x",))
    x = tx.device_put(jnp.ones((4, 2)), NamedSharding(mesh, P("x")))
    out = tx.eval_shape(lambda x: x * 2, x)
    assert tuple(out.sharding.spec) == ("x", None) and out.sharding.mesh == mesh.abstract_mesh
    # the default type names no sharding: none on the struct, as JAX's
    assert tx.eval_shape(lambda: jnp.ones(3)).sharding is None
    assert repr(tx.eval_shape(lambda: jnp.ones(3))) == repr(jax.eval_shape(lambda: jjnp.ones(3)))
    # a struct with it traces and lowers (inside the mesh context and outside it)
    assert tx.jit(lambda y: y + 1).lower(out).as_text()
    with tx.sharding.set_mesh(mesh):
        assert tx.jit(lambda y: y + 1).lower(out).as_text()

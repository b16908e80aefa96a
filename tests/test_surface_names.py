"""Names of JAX 0.10.2's public surface that traxla added from the module-surface
allow-list (tests/_module_surface_missing.py), each against JAX: ``jax.smap``, ``jax.ds``,
and the top-level config states of features traxla does not have."""
from __future__ import annotations

import numpy as np
import pytest

import jax
import traxla as tx


def test_smap_on_a_one_device_mesh():
    x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    outs = []
    for api in (jax, tx):
        mesh = api.make_mesh((1,), ("x",), axis_types=(api.sharding.AxisType.Auto,))
        with api.set_mesh(mesh):
            f = api.smap(lambda a, b: a * 2 + b.sum(), in_axes=(0, None), out_axes=0,
                         axis_name="x")
            g = api.smap(in_axes=1, out_axes=1, axis_name="x")(
                lambda a: api.lax.psum(a, "x") + api.lax.axis_index("x"))
            outs.append([np.asarray(f(x, np.ones(3, np.float32))), np.asarray(api.jit(g)(x))])
            for bad in (dict(in_axes=[0], out_axes=0, axis_name="x"),
                        dict(in_axes=0, out_axes=0.5, axis_name="x"),
                        dict(in_axes=0, out_axes=0, axis_name=("x",))):
                with pytest.raises(TypeError, match="smap"):
                    api.smap(lambda a: a, **bad)
    for ours, theirs in zip(*outs):
        np.testing.assert_array_equal(ours, theirs)


def test_ds_slices_refs():
    outs = []
    for api in (jax, tx):
        assert repr(api.ds(2, 3)) == "Slice(start=2, size=3, stride=1)"

        def f(i, api=api):
            r = api.new_ref(api.numpy.arange(8))
            r[api.ds(i, 3)] = api.numpy.zeros(3, np.int32)
            return r[...], r[api.ds(1, 2)]
        outs.append([np.asarray(v) for v in api.jit(f)(2)])
    for ours, theirs in zip(*outs):
        np.testing.assert_array_equal(ours, theirs)
    from traxla.experimental import pallas as pl
    assert tx.ds is pl.ds


@pytest.mark.parametrize("name,other", [("auto_pcast", False),
                                        ("remove_size_one_mesh_axis_from_type", True),
                                        ("thread_guard", True),
                                        ("array_garbage_collection_guard", "fatal")])
def test_unsupported_config_states(name, other):
    ours, theirs = getattr(tx, name), getattr(jax, name)
    assert ours.value == theirs.value
    with ours(theirs.value):  # JAX's default: what traxla does
        assert ours.value == theirs.value
    with pytest.raises(NotImplementedError, match=f"jax_{name}"):
        with ours(other):
            pass
    if name == "array_garbage_collection_guard":
        for api in (jax, tx):
            with pytest.raises(ValueError, match="new enum value must be None or in"):
                with getattr(api, name)("x"):
                    pass
            with pytest.raises(TypeError, match="requires an argument"):
                with getattr(api, name)():
                    pass


def test_abstract_device():
    reprs = []
    for api in (jax, tx):
        dev = api.sharding.AbstractDevice(device_kind="cpu", num_cores=None, platform="cpu")
        same = api.sharding.AbstractDevice(device_kind="cpu", num_cores=None, platform="cpu")
        assert dev == same and hash(dev) == hash(same)
        assert dev != api.sharding.AbstractDevice(device_kind="cpu", num_cores=2,
                                                  platform="cpu")
        mesh = api.sharding.AbstractMesh((1,), ("x",), abstract_device=dev)
        assert mesh.abstract_device == dev
        reprs.append((repr(dev), repr(mesh)))
    assert reprs[0] == reprs[1]


def test_argnums_partial():
    import jax.api_util as japi
    import jax.extend.linear_util as jlu
    import traxla.api_util as tapi
    import traxla.extend.linear_util as tlu
    from jax._src.api_util import debug_info as jdebug
    from traxla.api_util import debug_info as tdebug
    outs = []
    for api_util, lu, dbg in ((japi, jlu, jdebug), (tapi, tlu, tdebug)):
        fn = lambda a, b, c: a * 100 + b * 10 + c  # noqa: E731
        f = lu.wrap_init(fn, debug_info=dbg("test", fn, (1, 2, 3), {}))
        g, dyn = api_util.argnums_partial(f, (0, -1), (1, 2, 3))
        h, dyn2 = api_util.argnums_partial(f, 1, ([1], 2, 3), require_static_args_hashable=False)
        outs.append((dyn, g.call_wrapped(7, 9), dyn2))
        with pytest.raises(ValueError, match="Non-hashable static arguments"):
            api_util.argnums_partial(f, 0, (1, [2], 3))
        with pytest.raises(ValueError, match="must have value greater than or equal"):
            api_util.argnums_partial(f, 5, (1, 2, 3))
    assert outs[0] == outs[1] == ((1, 3), 729, (2,))

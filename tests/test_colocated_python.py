"""``jax.experimental.colocated_python`` on the (single-process) CPU backend."""
from __future__ import annotations

import importlib.util
import pickle

import numpy as np
import pytest

import traxla
import traxla.experimental.colocated_python as cp
from traxla.sharding import NamedSharding, PartitionSpec as P


def _inc(x):
    return x + 1


class _Adder:
    def __init__(self, increment):
        self.increment = increment

    def add(self, x):
        return x + self.increment


@pytest.fixture
def pickling(monkeypatch):
    """Ships functions with the standard pickle (enough for module-level functions), so
    the call path runs whether or not cloudpickle is installed."""
    monkeypatch.setattr(cp.serialization, "_serialize", pickle.dumps)
    monkeypatch.setattr(cp.serialization, "_deserialize", pickle.loads)


def test_colocated_cpu_devices_of_cpu_devices_are_themselves():
    devices = traxla.devices()
    assert cp.colocated_cpu_devices(devices) == list(devices)
    mesh = traxla.sharding.Mesh(np.array(devices[:1]), ("x",))
    assert cp.colocated_cpu_devices(mesh) == mesh


@pytest.mark.skipif(importlib.util.find_spec("cloudpickle") is not None,
                    reason="cloudpickle is installed")
def test_call_without_cloudpickle_raises_jaxs_error():
    f = cp.colocated_python(_inc)
    with pytest.raises(ModuleNotFoundError, match='No module named "cloudpickle"'):
        f(np.float32(1))
    adder = cp.colocated_python_class(_Adder)(1)  # made lazily: no error yet
    with pytest.raises(ModuleNotFoundError):
        adder.add(np.float32(1))


def test_call_runs_the_shipped_function(pickling):
    mesh = traxla.sharding.Mesh(np.array(traxla.devices()[:1]), ("x",))
    x = traxla.device_put(np.int32(1), NamedSharding(mesh, P()))
    f = cp.colocated_python(_inc)
    y = f(x)
    assert int(y) == 2 and y.sharding == x.sharding
    spec = traxla.ShapeDtypeStruct((), np.int32, sharding=x.sharding)
    g = f.specialize(in_specs=((spec,), {}), out_specs_fn=lambda s: s)
    assert int(g(x)) == 2
    with pytest.raises(ValueError):
        g(traxla.device_put(np.float32(1), NamedSharding(mesh, P())))
    with pytest.raises(ValueError, match="already specified"):
        g.specialize(out_specs_fn=lambda s: s)
    with pytest.raises(ValueError, match="No devices found"):
        cp.colocated_python(_inc)()
    adder = cp.colocated_python_class(_Adder)(5)
    assert int(adder.add(x)) == 6


def test_serialization_submodules_ship_meshes_and_shardings_by_device_id():
    from traxla.experimental.colocated_python import func, serialization  # noqa: F401
    reducers = {traxla.sharding.Mesh: serialization._reduce_mesh,
                NamedSharding: serialization._reduce_named_sharding,
                traxla.sharding.SingleDeviceSharding: serialization._reduce_single_device_sharding,
                serialization.DeviceList: serialization._reduce_device_list}
    devices = traxla.devices()
    mesh = traxla.sharding.Mesh(np.array(devices[:1]), ("x",))
    for obj in (mesh, traxla.sharding.NamedSharding(mesh, traxla.sharding.PartitionSpec("x")),
                traxla.sharding.SingleDeviceSharding(devices[0]),
                serialization.DeviceList(devices[:1])):
        unreduce, args = reducers[type(obj)](obj)
        back = unreduce(*args)
        assert back == obj and type(back) is type(obj)
        if importlib.util.find_spec("cloudpickle") is not None:
            assert serialization._deserialize(serialization._serialize(obj)) == obj


def test_partition_spec_pickles_as_its_entries():
    for p in (P("x"), P(("x", "y"), None), P(), P(P.UNCONSTRAINED, "x")):
        assert pickle.loads(pickle.dumps(p)) == p and repr(pickle.loads(pickle.dumps(p))) == repr(p)

"""``jax.experimental.colocated_python``: run a Python function (or the methods of a
Python object) on the CPU devices colocated with the devices of its arguments.

As JAX's, the function is shipped to the hosts of those devices serialized with
``cloudpickle`` (so without cloudpickle installed a call raises JAX's
``ModuleNotFoundError``). traxla's backends are single-process: the colocated host is
this one, and the deserialized function runs here, on the argument Arrays themselves.
"""
from __future__ import annotations


import numpy as np

from traxla import tree_util
from traxla.api.shape_dtype_struct import ShapeDtypeStruct
from traxla.runtime.backend import devices as _devices
from traxla.runtime.placement import Mesh

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]


def colocated_cpu_devices(devices_or_mesh):
    """The CPU devices colocated with ``devices_or_mesh`` (a sequence of devices, or a
    mesh: then a mesh of the same shape); a CPU device is its own colocated device."""
    if isinstance(devices_or_mesh, Mesh):
        mesh = devices_or_mesh
        flat = colocated_cpu_devices(tuple(mesh.devices.flat))
        grid = np.empty(len(flat), dtype=object)
        grid[:] = flat
        return Mesh(grid.reshape(mesh.devices.shape), mesh.axis_names, mesh.axis_types)
    devices = tuple(devices_or_mesh)
    if all(d.platform == "cpu" for d in devices):
        return list(devices)
    per_process: dict = {}
    for d in reversed(list(_devices("cpu"))):
        per_process.setdefault(d.process_index, []).append(d)
    out = []
    for d in devices:
        try:
            out.append(per_process.get(d.process_index, []).pop())
        except IndexError:
            raise ValueError(
                f"Process {d.process_index} does not have enough local CPU devices") from None
    return out


def _serialize(obj) -> bytes:
    """``obj`` as the bytes shipped to the colocated host (JAX's serialization)."""
    try:
        import cloudpickle
    except ImportError:
        cloudpickle = None
    if cloudpickle is None:
        raise ModuleNotFoundError('No module named "cloudpickle"')
    return cloudpickle.dumps(obj)


def _deserialize(data: bytes):
    import cloudpickle
    return cloudpickle.loads(data)


def _spec(x):
    return ShapeDtypeStruct(x.shape, x.dtype, sharding=getattr(x, "sharding", None))


def _same_spec(a, b):
    return (tuple(a.shape) == tuple(b.shape) and np.dtype(a.dtype) == np.dtype(b.dtype)
            and (a.sharding is None or b.sharding is None or a.sharding == b.sharding))


class _Specialization:
    __slots__ = ("in_specs", "out_specs_fn", "devices")

    def __init__(self, in_specs=None, out_specs_fn=None, devices=None):
        self.in_specs, self.out_specs_fn, self.devices = in_specs, out_specs_fn, devices

    def update(self, in_specs=None, out_specs_fn=None, devices=None):
        for name, new in (("in_specs", in_specs), ("out_specs_fn", out_specs_fn),
                          ("devices", devices)):
            if new is not None and getattr(self, name) is not None:
                raise ValueError(f"{name} already specified")
        return _Specialization(self.in_specs if in_specs is None else in_specs,
                               self.out_specs_fn if out_specs_fn is None else out_specs_fn,
                               self.devices if devices is None else tuple(devices))


class _ColocatedFunction:
    """A colocated Python callable: ``specialize(...)`` narrows it, a call runs it."""

    def __init__(self, fun, specialization=None):
        self.fun = fun
        self._specialization = specialization or _Specialization()

    def specialize(self, in_specs=None, out_specs_fn=None, devices=None):
        """A copy told its input specs (``((args...), {kwargs})`` of ShapeDtypeStructs),
        how its output specs follow from the input specs, or its devices (which lets a
        function without arguments run)."""
        return _ColocatedFunction(self.fun, self._specialization.update(
            in_specs=in_specs, out_specs_fn=out_specs_fn, devices=devices))

    def __call__(self, *args, **kwargs):
        fun = _deserialize(_serialize(self.fun))  # what the colocated host runs
        return _run(self._specialization, fun, args, kwargs)


def _run(spec, fun, args, kwargs):
    """Runs ``fun`` (on the colocated host: here) after checking its specialization."""
    leaves = tree_util.tree_leaves((args, kwargs))
    if spec.in_specs is not None:
        want = tree_util.tree_leaves(spec.in_specs)
        got = [_spec(x) for x in leaves]
        if len(want) != len(got) or not all(map(_same_spec, want, got)):
            raise ValueError(f"Input specs in specialization {spec.in_specs} do not match "
                             f"the call's inputs {tree_util.tree_map(_spec, (args, kwargs))}")
    if not leaves and spec.devices is None:
        raise ValueError("No devices found. colocated_python function without input "
                         "arguments must be first specialized with devices.")
    out = fun(*args, **kwargs)
    if spec.out_specs_fn is not None:
        want = tree_util.tree_leaves(spec.out_specs_fn(
            *tree_util.tree_map(_spec, args), **tree_util.tree_map(_spec, kwargs)))
        got = [_spec(x) for x in tree_util.tree_leaves(out)]
        if len(want) != len(got) or not all(map(_same_spec, want, got)):
            raise ValueError("The colocated Python function's outputs do not match the "
                             "specs out_specs_fn gave.")
    return out


def colocated_python(fun):
    """``fun`` as a colocated Python callable, without specialization."""
    return _ColocatedFunction(fun)


def colocated_python_class(cls):
    """A wrapper class whose instances keep their constructor's arguments; the real
    object is made (on the colocated host) at the first method call, and each method
    call runs there."""

    class Wrapper:
        def __init__(self, *args, **kwargs):
            self._ctor = (args, kwargs)
            self._instance = None

        def _real(self):
            if self._instance is None:  # the class and its arguments, shipped once
                real_cls, args, kwargs = _deserialize(_serialize((cls, *self._ctor)))
                self._instance = real_cls(*args, **kwargs)
            return self._instance

        def __getattr__(self, name):
            if name.startswith("_"):
                raise AttributeError(name)
            getattr(cls, name)  # AttributeError for a name the class does not have

            def method(*args, **kwargs):
                return _run(_Specialization(), getattr(self._real(), name), args, kwargs)
            return method

    Wrapper.__name__ = Wrapper.__qualname__ = cls.__name__
    Wrapper.__doc__ = cls.__doc__
    return Wrapper

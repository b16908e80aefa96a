"""``traxla.ffi``: call native XLA FFI handlers from traced code, with JAX's interface.

A C++ handler written against the headers jaxlib ships (``include_dir()``) is built into a
shared library, its handler symbols wrapped with ``pycapsule`` and registered with
``register_ffi_target``; ``ffi_call(target, result_shape_dtypes)(*arrays, **attributes)``
then binds an ``ffi_call`` equation that lowers to ``stablehlo.custom_call``. The call has
no derivative (wrap it in ``custom_jvp``/``custom_vjp``) and batches by ``vmap_method``.
"""
from __future__ import annotations

import ctypes
from collections.abc import Mapping, Sequence

import numpy as np

from traxla.ir import dtypes as _dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.ffi import VMAP_METHODS, ffi_call_p, hashable_attributes
from traxla.lax import aval_of as _aval_of
from traxla.lowering.rules.ffi import build_ffi_lowering_function, ffi_lowering  # noqa: F401
from traxla.runtime.xla_adapter import callbacks as _xla

__all__ = ["build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir",
           "pycapsule", "register_ffi_target", "register_ffi_target_as_batch_partitionable",
           "register_ffi_type", "register_ffi_type_id"]


def register_ffi_target(name: str, fn, platform: str = "cpu", api_version: int = 1, **kwargs):
    """Registers a foreign function target: ``fn`` is a PyCapsule holding the handler (or a
    dict of FFI stage name -> capsule); ``api_version`` 1 is the typed FFI, 0 the legacy
    custom-call API."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_ffi_target: the target name must be a non-empty string, "
                        f"got {name!r}")
    return _xla.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_ffi_type_id(name: str, obj, platform: str = "cpu"):
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(name: str, type_registration, platform: str = "cpu"):
    """Registers a user type (``{"type_id": capsule, "type_info": capsule}``) for FFI state."""
    return _xla.register_custom_type(name, type_registration, platform=platform)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    _xla.register_custom_call_as_batch_partitionable(name)


def pycapsule(funcptr):
    """Wraps a ``ctypes`` function pointer (e.g. ``ctypes.cdll.LoadLibrary(p).MyHandler``)
    in the PyCapsule ``register_ffi_target`` takes."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    builder = ctypes.pythonapi.PyCapsule_New
    builder.restype = ctypes.py_object
    builder.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return builder(funcptr, None, destructor(0))


def include_dir() -> str:
    """The directory holding the XLA FFI headers bundled with jaxlib (``xla/ffi/api/ffi.h``)."""
    return _xla.jaxlib_include_dir()


def _result_avals(results) -> tuple:
    avals = []
    for idx, r in enumerate(results):
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise ValueError("All elements of result_shape_dtypes must have 'shape' and 'dtype' "
                             f"attributes. Got {r} at position {idx}.")
        dtype = r.dtype if isinstance(r.dtype, _dtypes.ExtendedDType) else np.dtype(r.dtype)
        avals.append(ShapedArray(tuple(int(d) for d in r.shape), dtype))
    return tuple(avals)


def _layout_for_lowering(aval, layout=None):
    """A major-to-minor layout (or None: row-major) as the minor-to-major order XLA uses."""
    if layout is None:
        return tuple(reversed(range(len(aval.shape))))
    if hasattr(layout, "major_to_minor"):
        if getattr(layout, "tiling", None) is not None:
            raise ValueError("The FFI does not support layouts with tiling")
        return tuple(layout.major_to_minor[::-1])
    layout = tuple(int(i) for i in layout)
    if sorted(layout) != list(range(len(aval.shape))):
        raise ValueError(f"ffi_call: the layout {layout} is not a permutation of the "
                         f"dimensions of {aval.str_short()}")
    return layout[::-1]


def _layouts_for_lowering(avals, layouts, what, kind):
    """One lowering layout a value (row-major where ``layouts`` is None); ``what`` and ``kind``
    name the values in the error for a count that does not match."""
    if layouts is None:
        return tuple(_layout_for_lowering(a) for a in avals)
    if len(layouts) != len(avals):
        raise ValueError(f"The number of {what} ({len(avals)}) must equal the number of {kind} "
                         f"layouts ({len(layouts)}).")
    return tuple(map(_layout_for_lowering, avals, layouts))


_ATTRIBUTE_SCALARS = (bool, int, float, str, bytes, np.bool_, np.integer, np.floating)


def _check_attribute(target, key, value):
    """Refuses, at call time, an attribute the typed FFI cannot encode (JAX fails later,
    in lowering, with a less specific message)."""
    if isinstance(value, _ATTRIBUTE_SCALARS) or isinstance(value, np.dtype):
        if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
            raise OverflowError(f"ffi_call to `{target}`: attribute {key}={value} does not fit "
                                "in int64; pass it as np.uint64 or split it")
        return
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"ffi_call to `{target}`: array attribute {key} has dtype "
                            f"{value.dtype}; the FFI takes arrays of booleans, integers or "
                            "floats")
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"ffi_call to `{target}`: dictionary attribute {key} has a "
                                f"non-string key {k!r}")
            _check_attribute(target, f"{key}.{k}", v)
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_attribute(target, f"{key}[{i}]", v)
        return
    raise TypeError(f"ffi_call to `{target}`: unsupported attribute type for {key}: "
                    f"{type(value).__name__} ({value!r}). FFI attributes are NumPy or Python "
                    "scalars, strings, NumPy arrays, dtypes, and dicts/sequences of those.")


def ffi_call(target_name: str, result_shape_dtypes, *, has_side_effect: bool = False,
             vmap_method: str | None = None, input_layouts=None, output_layouts=None,
             input_output_aliases: dict | None = None, custom_call_api_version: int = 4,
             legacy_backend_config: str | None = None):
    """A function calling the FFI target ``target_name``: positional arguments are its input
    arrays, keyword arguments its attributes; it returns one array, or a list/tuple of
    arrays when ``result_shape_dtypes`` is a sequence."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    if isinstance(result_shape_dtypes, Sequence):
        multiple_results = True
        result_avals = _result_avals(result_shape_dtypes)
        out_layouts = output_layouts
    else:
        multiple_results = False
        result_avals = _result_avals([result_shape_dtypes])
        out_layouts = (output_layouts,)
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires "
                         f"custom_call_api_version < 4; got {custom_call_api_version}.")

    def wrapped(*args, **kwargs):
        in_avals = [_aval_of(x) for x in args]
        in_layouts = _layouts_for_lowering(in_avals, input_layouts, "input arguments", "input")
        res_layouts = _layouts_for_lowering(result_avals, out_layouts, "outputs", "output")
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = int(i), int(o)
            if i >= len(args):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                                 f"input index {i} outside the range [0, {len(args)}).")
            if o >= len(result_avals):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                                 f"output index {o} outside the range [0, {len(result_avals)}).")
            a, r = in_avals[i], result_avals[o]
            if a.shape != r.shape or a.dtype != r.dtype:
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                                 f"referring to an input with abstract value {a} and an output "
                                 f"with a different abstract value {r}.")
            if in_layouts[i] != res_layouts[o]:
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                                 f"referring to an input with layout {in_layouts[i]} and an "
                                 f"output with a different layout {res_layouts[o]}.")
            aliases.append((i, o))
        for key, value in kwargs.items():
            _check_attribute(target_name, key, value)
        results = ffi_call_p.bind(
            *args, result_avals=result_avals, vmap_method=vmap_method,
            target_name=target_name, has_side_effect=has_side_effect,
            input_layouts=in_layouts, output_layouts=res_layouts,
            input_output_aliases=tuple(aliases), custom_call_api_version=custom_call_api_version,
            legacy_backend_config=legacy_backend_config,
            attributes=hashable_attributes(kwargs))
        if multiple_results:
            return tuple(results) if isinstance(result_shape_dtypes, tuple) else list(results)
        return results[0]

    return wrapped

"""Calls out of a program: the host callbacks ``compile_and_load`` takes, custom-call
libraries shipped by jaxlib (LAPACK), and user FFI targets and types (``traxla.ffi``)."""
from __future__ import annotations

import os
import pickle

import numpy as np
import jaxlib
from jaxlib import lapack as _lapack_module
from jaxlib import xla_client as _xc

from traxla.runtime.xla_adapter.clients import _lock

def host_callback_objects(client, host_callbacks) -> list:
    """What ``compile_and_load`` takes for a module's host callbacks: the Python callables of
    the CPU/GPU FFI callback target as they are; a TPU send/recv callback (the lowering's
    ``SendRecvCallback``: channels and the shapes crossing them) as the client's callback
    object over those channels, as JAX's ``_emit_tpu_python_callback`` makes it."""
    out = []
    for cb in host_callbacks:
        if hasattr(cb, "send_channels"):
            shape = lambda a: _xc.Shape.array_shape(np.dtype(a.dtype), tuple(a.shape))  # noqa: E731
            cb = client.make_python_callback_from_host_send_and_recv(
                cb, [shape(a) for a in cb.operand_avals], [shape(a) for a in cb.result_avals],
                list(cb.send_channels), list(cb.recv_channels), pickle.dumps)
        out.append(cb)
    return out


# -- custom-call libraries shipped by jaxlib (registered once, on first use) ----------------------

_registered_libraries: set = set()


def register_custom_call_library(name: str):
    """Registers a jaxlib kernel library's typed-FFI targets with the CPU platform, once per
    process. ``lapack``: ``jaxlib.lapack``'s ``lapack_{s,d,c,z}*_ffi`` targets; its
    ``initialize()`` imports ``scipy.linalg.cython_lapack`` for the LAPACK symbols (about
    0.2 s), so it runs only when a program calls one of them."""
    if name in _registered_libraries:
        return
    with _lock:
        if name in _registered_libraries:
            return
        if name != "lapack":
            raise ValueError(f"traxla does not know the custom-call library {name!r}")
        _lapack_module._lapack.initialize()
        for target, capsule, api_version in _lapack_module.registrations()["cpu"]:
            _xc.register_custom_call_target(target, capsule, platform="cpu",
                                            api_version=api_version)
        _registered_libraries.add(name)


# -- user FFI targets (traxla.ffi) -----------------------------------------------------------

def register_custom_call_target(name: str, fn, platform: str = "cpu", api_version: int = 1,
                                **kwargs):
    """Registers a native handler (a PyCapsule, or a dict of stage capsules) with XLA."""
    return _xc.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_custom_type(name: str, type_registration, platform: str = "cpu"):
    return _xc.register_custom_type(name, type_registration, platform=platform)


def register_custom_call_as_batch_partitionable(name: str):
    _xc.register_custom_call_as_batch_partitionable(name)


def registered_custom_call_targets(platform: str = "cpu") -> set:
    try:
        return set(_xc.custom_call_targets(platform))
    except Exception:  # noqa: BLE001  (an unknown platform has none)
        return set()


def jaxlib_include_dir() -> str:
    """The C++ headers jaxlib ships (``xla/ffi/api/ffi.h`` and friends)."""
    root = jaxlib.__file__ and os.path.dirname(os.path.abspath(jaxlib.__file__))
    if not root:
        paths = list(getattr(jaxlib, "__path__", []))
        if not paths:
            raise RuntimeError("Cannot determine jaxlib directory: neither __file__ nor "
                               "__path__ is available")
        root = paths[0]
    return os.path.join(root, "include")

"""Compiled and exported programs as bytes: executables for the persistent compilation cache,
StableHLO portable artifacts for ``traxla.export``."""
from __future__ import annotations

from jaxlib import _jax
from jaxlib import xla_client as _xc
from jaxlib.mlir.dialects import stablehlo as hlo

from traxla.runtime.xla_adapter.callbacks import host_callback_objects
from traxla.runtime.xla_adapter.compiling import _apply_compiler_options, compile_options

# -- persistent compilation cache (runtime/compilation_cache.py) --------------------------------

def serialize_executable(loaded) -> bytes:
    return loaded.serialize()


def deserialize_executable(client, blob: bytes, devices_, host_callbacks=(),
                           compiler_options=None, options=None):
    """A loaded executable from ``serialize_executable``'s bytes; programs with host
    callbacks get the current process's callables (never none: that crashes). ``options``:
    the compile options it was compiled with when not the single-device ones (SPMD)."""
    opts = options
    if opts is None:
        opts = compile_options(device=devices_[0] if len(devices_) == 1 else None)
        _apply_compiler_options(opts, compiler_options)
    kwargs = {"host_callbacks": host_callback_objects(client, host_callbacks)} if host_callbacks else {}
    return client.deserialize_executable(blob, _xc.DeviceList(tuple(devices_)), opts, **kwargs)


def compile_options_fingerprint(num_partitions: int = 1, compiler_options=None) -> bytes:
    opts = compile_options(num_partitions)
    _apply_compiler_options(opts, compiler_options)
    return opts.SerializeAsString()


# -- exported artifacts (traxla/export): StableHLO portable artifacts, shape refinement -----

def stablehlo_export_version() -> str:
    """The StableHLO version exports target: one at least 4 weeks old, as JAX picks, so
    that consumers updated monthly can read them."""
    return hlo.get_version_from_compatibility_requirement(
        hlo.StablehloCompatibilityRequirement.WEEK_4)


def serialize_portable_artifact(module) -> bytes:
    """A module as the versioned (VHLO) bytecode ``Exported.mlir_module_serialized`` holds
    (does not change ``module``). Mixed serialization, as JAX's export with its CPU and TPU
    clients (``serialize_with_sdy``): the plain form also simplifies the module (folds a
    ``case`` on a constant index, drops side-effect-free loops), which JAX's artifacts keep."""
    return _jax.mlir.serialize_portable_artifact(module, stablehlo_export_version(), True)

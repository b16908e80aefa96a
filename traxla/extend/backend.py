"""``jax.extend.backend``: the PJRT clients behind the devices, XLA compile options and the
caches of compiled programs."""
from __future__ import annotations

from traxla.ir.config import config as _config
from traxla.runtime import backend as _backend
from traxla.runtime import cache as _cache
from traxla.runtime.compiler import get_compile_options  # noqa: F401


def get_backend(platform=None):
    """The PJRT client of ``platform`` (``'cpu'``, ``'gpu'``, ``'tpu'``; None: the default
    one); a client passed in is returned as it is."""
    if platform is not None and not isinstance(platform, str):
        return platform
    return _backend.get_backend(platform).client


def backends() -> dict:
    """The started platforms' clients by platform name (the default one started first)."""
    _backend.get_backend()
    return {name: b.client for name, b in _backend._backends.items()}


def backend_xla_version(platform=None):
    """The plugin's ``xla_version`` attribute; None for a client that has none (CPU)."""
    client = get_backend(platform)
    return getattr(client, "xla_version", None)


def get_default_device():
    """The device new arrays and programs go to: ``config.default_device`` (a device, or a
    platform name: its first local device), else the default backend's first local one."""
    device = _config.read("default_device")
    if isinstance(device, str):
        return _backend.local_devices(backend=device)[0]
    return device if device is not None else _backend.local_devices()[0]


def clear_in_memory_compilation_cache() -> None:
    """Forgets every compiled program (traxla's caches of traced jaxprs go too): the next
    call of each compiles again."""
    _cache.clear_caches()


def register_backend_cache(cache, for_what: str):
    """Registers ``cache`` (with ``cache_clear()``) to be emptied by ``jax.clear_caches``."""
    del for_what
    _cache.on_clear(cache.cache_clear)


def clear_backends(_crash=False):
    raise NotImplementedError(
        "jax.extend.backend.clear_backends: traxla keeps its PJRT clients for the life of "
        "the process (arrays and compiled programs hold them); clear_caches() forgets "
        "compiled programs")


def register_backend_factory(name, factory, *, priority=0, fail_quietly=True,
                             experimental=False, make_topology=None, c_api=None):
    raise NotImplementedError(
        f"jax.extend.backend.register_backend_factory({name!r}): traxla starts only its own "
        "PJRT clients (cpu, cuda, tpu); user backend factories are not supported")


import jaxlib._ifrt_proxy as ifrt_proxy  # noqa: E402  (jaxlib's IFRT proxy client module)

__all__ = ["backend_xla_version", "backends", "clear_backends",
           "clear_in_memory_compilation_cache", "get_backend", "get_compile_options",
           "get_default_device", "ifrt_proxy", "register_backend_cache",
           "register_backend_factory"]

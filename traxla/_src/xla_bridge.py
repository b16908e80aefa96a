"""``jax._src.xla_bridge``: the backends. ``_backends`` is the live dict of the backends
started so far, by platform (empty before the first computation), as JAX's (its values are
traxla's Backend objects: ``.platform``, ``.devices``, ``.client``)."""
from __future__ import annotations

from traxla.runtime.backend import (_backends, default_backend, devices,  # noqa: F401
                                    get_backend as _get_backend, local_devices)
from traxla.api.environment import (device_count, local_device_count,  # noqa: F401
                                    process_count, process_index)


def get_backend(platform=None):
    """The platform's PJRT client, as JAX's (``.platform``, ``.devices()``,
    ``.compile_and_load``: what the autodidax notebook compiles and runs with)."""
    return _get_backend(platform).client


def backends():
    """Every platform's backend, starting the default one first if none is yet."""
    _get_backend()
    return dict(_backends)


def backends_are_initialized() -> bool:
    return bool(_backends)

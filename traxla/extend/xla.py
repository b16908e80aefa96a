"""``jax.extend.xla``: compiler passes written in Python. A callback registered with
``register_hlo_module_transformation`` receives each module XLA compiles (a serialized
``HloModuleProto``) at a pipeline stage and returns a changed one, or None."""
from __future__ import annotations

import enum
import logging

from traxla.runtime import backend as _backend

try:
    import jaxlib._xla as _xla
except ImportError:  # pragma: no cover - an older jaxlib
    _xla = None

logger = logging.getLogger(__name__)


class PipelineStage(enum.Enum):
    PRE_SCHEDULER = 0
    POST_SCHEDULER = 1


def _platforms(platforms) -> list:
    if platforms is None:
        return list(dict.fromkeys(["cpu", "cuda", "tpu"]))
    if isinstance(platforms, str):
        return [platforms]
    return list(dict.fromkeys(platforms))


def _check(what, stage):
    if _xla is None:
        raise NotImplementedError(f"{what} requires jaxlib version >= 0.10.2")
    if not isinstance(stage, PipelineStage):
        raise TypeError(f"stage must be a PipelineStage enum, got {type(stage)}")


def register_hlo_module_transformation(callback, *, name: str,
                                       stage: PipelineStage = PipelineStage.PRE_SCHEDULER,
                                       platforms=None) -> None:
    """Runs ``callback(hlo_module_proto_bytes) -> bytes | None`` on every module compiled
    from now on for ``platforms`` (None: all), at ``stage``; passes registered at one stage
    run in registration order."""
    _check("register_hlo_module_transformation", stage)
    platforms = _platforms(platforms)
    if "cpu" in platforms:
        _xla.register_xla_transform(name, stage.value, callback)

    def register_on_client(client):
        if client.platform in platforms and client.platform != "cpu":
            try:
                _xla.register_xla_transform_c_api(client, name, stage.value, callback)
            except RuntimeError:
                logger.debug("Could not register XLA transform via C API for client "
                             "platform %s", client.platform)

    if any(p != "cpu" for p in platforms):
        for b in list(_backend._backends.values()):
            register_on_client(b.client)
        _backend.initialization_hooks.append(register_on_client)


def clear_hlo_module_transformation(name: str,
                                    stage: PipelineStage = PipelineStage.PRE_SCHEDULER,
                                    platforms=None) -> bool:
    """Removes a registered pass; whether it was found."""
    _check("clear_hlo_module_transformation", stage)
    platforms = _platforms(platforms)
    cleared = False
    if "cpu" in platforms:
        cleared |= bool(_xla.clear_xla_transform(name, stage.value))
    for b in list(_backend._backends.values()):
        if b.client.platform in platforms and b.client.platform != "cpu":
            try:
                cleared |= bool(_xla.clear_xla_transform_c_api(b.client, name, stage.value))
            except RuntimeError:
                pass
    return cleared


__all__ = ["PipelineStage", "clear_hlo_module_transformation",
           "register_hlo_module_transformation"]

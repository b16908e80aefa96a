"""Multi-process jobs: ``initialize`` joins processes into one device mesh (CPU
collectives over Gloo/TCP), through jaxlib's distributed runtime."""
from __future__ import annotations

from traxla.ir.config import config
from traxla.runtime.xla_adapter import clients as _xla


def initialize(coordinator_address: str, num_processes: int, process_id: int,
               local_device_count: int | None = None):
    """Call in every process before the first traxla computation."""
    if _xla.backend_started("cpu"):
        raise RuntimeError("traxla.distributed.initialize must be called before the CPU backend "
                           "is first used.")
    if local_device_count is not None:
        config.update("num_cpu_devices", local_device_count)
    host = coordinator_address.rsplit(":", 1)[0]
    _xla.initialize_distributed(coordinator_address, num_processes, process_id, host)


def is_initialized() -> bool:
    """Whether this process joined a distributed job (``initialize``)."""
    return _xla.distributed_client() is not None


def shutdown():
    _xla.shutdown_distributed()


def barrier(name: str, timeout_ms: int = 60000):
    _xla.distributed_barrier(name, timeout_ms)


def process_index() -> int:
    return _xla.process_index()


def process_count() -> int:
    return _xla.process_count()

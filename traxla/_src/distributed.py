"""``jax._src.distributed``: ``global_state``, this process's place in a multi-process job
(``client`` is None until ``jax.distributed.initialize``), as JAX's (orbax reads it)."""
from __future__ import annotations

from traxla.runtime.xla_adapter import clients as _xla


class State:
    """The distributed runtime's state: ``client``, ``process_id``, ``num_processes``."""

    @property
    def client(self):
        return _xla.distributed_client()

    @property
    def process_id(self) -> int:
        return _xla.process_index()

    @property
    def num_processes(self) -> int:
        return _xla.process_count()


global_state = State()

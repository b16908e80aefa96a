"""TPU interpret mode switched on for every ``pallas_call`` (``pltpu.force_tpu_interpret_mode``,
``pltpu.set_tpu_interpret_mode``) and its parameters (``pltpu.InterpretParams``).

traxla's interpret mode runs a kernel's grid in order, one invocation at a time (see
``traxla.experimental.pallas``): there is no simulated shared memory to reset and no
concurrency, so races cannot occur and ``detect_races`` finds none; DMAs complete when they
start (JAX's ``dma_execution_mode="eager"``)."""
from __future__ import annotations

import contextlib
import dataclasses
import threading
from typing import Any

__all__ = ["InterpretParams", "force_tpu_interpret_mode", "set_tpu_interpret_mode",
           "reset_tpu_interpret_mode_state", "forced_interpret_params", "interpreting",
           "kernel_interpret_mode"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class InterpretParams:
    """Parameters for TPU interpret mode (JAX 0.10.2's fields; see the module docstring
    for what traxla's sequential interpreter makes of them)."""
    detect_races: bool = False
    out_of_bounds_reads: str = "raise"
    skip_floating_point_ops: bool = False
    uninitialized_memory: str = "nan"
    num_cores_or_threads: int = 1
    vector_clock_size: int | None = None
    logging_mode: Any = None
    dma_execution_mode: str = "on_wait"
    random_seed: int | None = None
    grid_point_recorder: Any = None
    allow_hbm_allocation_in_run_scoped: bool = False
    buffer_bounds: str = "logical"

    def __post_init__(self):
        if self.uninitialized_memory not in ("nan", "zero"):
            raise ValueError(f"uninitialized_memory must be 'nan' or 'zero', got "
                             f"{self.uninitialized_memory!r}")
        if self.skip_floating_point_ops:
            raise NotImplementedError("pltpu.InterpretParams(skip_floating_point_ops=True) "
                                      "is not implemented by traxla's interpret mode")

    def get_uninitialized_array(self, shape, dtype):  # JAX's helper of the same name
        from traxla.experimental.pallas.kernel_refs import uninitialized
        return uninitialized(shape, dtype, self.uninitialized_memory)


class _State(threading.local):
    def __init__(self):
        self.local = _UNSET


_UNSET = object()
_global: list = [None]
_state = _State()


def forced_interpret_params():
    """The ``InterpretParams`` forced on every ``pallas_call`` now, or None."""
    local = _state.local
    return _global[0] if local is _UNSET else local


@contextlib.contextmanager
def force_tpu_interpret_mode(params: InterpretParams = InterpretParams()):
    """Every ``pallas_call`` run under this context manager runs in interpret mode with
    ``params`` (``params=None`` switches forcing off)."""
    prev, _state.local = _state.local, params
    try:
        yield
    finally:
        _state.local = prev


def set_tpu_interpret_mode(params: InterpretParams = InterpretParams()):
    """Forces interpret mode (``params``; None: off) for every later ``pallas_call``."""
    _global[0] = params


class _Kernels(threading.local):
    def __init__(self):
        self.stack = []


_kernels = _Kernels()


@contextlib.contextmanager
def interpreting(params):
    """Marks the kernel body run inside as interpreted: in TPU interpret mode (``params``
    an InterpretParams, given or forced) or JAX's generic one (``interpret=True``)."""
    _kernels.stack.append("tpu" if params is not None else "generic")
    try:
        yield
    finally:
        _kernels.stack.pop()


def kernel_interpret_mode():
    """``"tpu"`` or ``"generic"`` inside an interpreted kernel body, else None."""
    return _kernels.stack[-1] if _kernels.stack else None


def reset_tpu_interpret_mode_state():
    """JAX resets the simulated TPU's shared state here; traxla's interpreter keeps none
    between kernels, so there is nothing to reset."""

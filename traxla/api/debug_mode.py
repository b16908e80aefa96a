"""Debugging switches of ``jit``: ``disable_jit()`` (run jitted functions as plain Python),
``log_compiles`` (log each compilation, as JAX's ``jax_log_compiles``) and the
``debug_nans``/``debug_infs`` checks of jitted results (``runtime/debug_checks.py``)."""
from __future__ import annotations

import contextlib

from traxla.ir.config import config
from traxla.runtime import debug_checks

# the calling thread's flags (``with disable_jit():`` is per thread), read on the call path
flags = config.current
log_compile = debug_checks.log_compile


def slow_path_only() -> bool:
    """True while a switch needs every jitted call to take the checked (slow) path."""
    return flags.disable_jit or flags.no_execution or debug_checks.enabled()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, jitted functions run as plain Python, op by op (``jax.disable_jit``):
    prints and Python control flow see concrete values."""
    with config.thread_local("disable_jit", disable):
        yield


__all__ = ["disable_jit", "log_compile", "slow_path_only"]

"""Debugging switches of ``jit``: ``disable_jit()`` (run jitted functions as plain Python),
``log_compiles`` (log each compilation, as JAX's ``jax_log_compiles``) and the
``debug_nans``/``debug_infs`` checks of jitted results (``runtime/debug_checks.py``)."""
from __future__ import annotations

import contextlib

from traxla.ir.config import config
from traxla.runtime import debug_checks

# [disable_jit], mirrored from the config for the call path
flags = [bool(config.read("disable_jit"))]


def _on_update(name, value):
    if name == "disable_jit":
        flags[0] = bool(value)


config.on_update(_on_update)
log_compile = debug_checks.log_compile


def slow_path_only() -> bool:
    """True while a switch needs every jitted call to take the checked (slow) path."""
    return flags[0] or debug_checks.enabled()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, jitted functions run as plain Python, op by op (``jax.disable_jit``):
    prints and Python control flow see concrete values."""
    with config.flag("disable_jit", disable):
        yield


__all__ = ["disable_jit", "log_compile", "slow_path_only"]

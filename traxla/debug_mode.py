"""Debugging switches of ``jit``: ``disable_jit()`` (run jitted functions as plain Python),
``log_compiles`` (log each compilation, as JAX's ``jax_log_compiles``) and the
``debug_nans``/``debug_infs`` checks of jitted results (``runtime/debug_checks.py``)."""
from __future__ import annotations

import contextlib
import logging

from .ir.config import config
from .runtime import debug_checks

logger = logging.getLogger("traxla")

# [disable_jit, log_compiles], mirrored from the config for the call path
flags = [bool(config.read("disable_jit")), bool(config.read("log_compiles"))]


def _on_update(name, value):
    if name == "disable_jit":
        flags[0] = bool(value)
    elif name == "log_compiles":
        flags[1] = bool(value)


config.on_update(_on_update)


def slow_path_only() -> bool:
    """True while a switch needs every jitted call to take the checked (slow) path."""
    return flags[0] or debug_checks.enabled()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, jitted functions run as plain Python, op by op (``jax.disable_jit``):
    prints and Python control flow see concrete values."""
    with config.flag("disable_jit", disable):
        yield


def log_compile(name: str, avals, seconds: float):
    if flags[1]:
        logger.warning("Compiling %s with global shapes and types %s.", name, list(avals))
        logger.warning("Finished XLA compilation of jit(%s) in %.9f sec", name, seconds)


__all__ = ["disable_jit", "log_compile", "slow_path_only"]

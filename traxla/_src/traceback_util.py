"""``jax._src.traceback_util``: the traceback filtering libraries register with, traxla's
own (``traxla/ir/traceback_util.py``): ``api_boundary`` marks a public entry point whose
exceptions lose the frames of excluded paths, and ``register_exclusion`` adds a library's
path to those (and to the frames skipped when recording source lines)."""
from __future__ import annotations

import functools

from traxla.ir import traceback_util as _filtering
from traxla.ir.traceback_util import (UnfilteredStackTrace, _exclude_paths,  # noqa: F401
                                      filtering_mode, include_frame)
from traxla.tracer.traces import register_exclusion as _register_source


def register_exclusion(path: str) -> None:
    _filtering.register_exclusion(path)
    _register_source(path)


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    """JAX's signature (the repro options are accepted and have no effect in traxla)."""
    if fun is None:
        return functools.partial(api_boundary, repro_api_name=repro_api_name,
                                 repro_user_func=repro_user_func)
    return _filtering.api_boundary(fun)


def is_under_reraiser(e: BaseException) -> bool:
    return isinstance(e.__cause__, UnfilteredStackTrace)

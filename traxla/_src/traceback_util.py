"""``jax._src.traceback_util``: traceback filtering hooks libraries register with.

traxla does not rewrite tracebacks (JAX's ``jax_traceback_filtering=off``): ``api_boundary``
returns the function's calls unchanged, and the registered paths are kept in
``_exclude_paths`` (and used to skip frames when recording source lines)."""
from __future__ import annotations

import functools

from traxla.tracer.traces import _PACKAGE_DIR, register_exclusion as _register_source

_exclude_paths: list[str] = [_PACKAGE_DIR]


def register_exclusion(path: str) -> None:
    if path not in _exclude_paths:
        _exclude_paths.append(path)
    _register_source(path)


class UnfilteredStackTrace(Exception):
    pass


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    """Marks a public API function (a plain pass-through: no traceback filtering)."""
    if fun is None:
        return functools.partial(api_boundary, repro_api_name=repro_api_name,
                                 repro_user_func=repro_user_func)

    @functools.wraps(fun)
    def reraise_with_filtered_traceback(*args, **kwargs):
        __tracebackhide__ = True
        return fun(*args, **kwargs)
    return reraise_with_filtered_traceback


def is_under_reraiser(e: BaseException) -> bool:
    return False


def filtering_mode() -> str:
    return "off"

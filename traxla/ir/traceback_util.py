"""Tracebacks without traxla's own frames, as JAX's ``traceback_util``.

An exception raised below a public entry point (a jitted call, ``grad``, ``vmap``,
``make_jaxpr``, an eager operation...) reaches the user with traxla's frames removed, so the
user's own line is the last one printed, followed by JAX's note saying so. The outermost
entry point on the stack does the filtering (``api_boundary`` composes with itself); nothing
happens unless an exception propagates, so the success path pays nothing (hot paths put
``try: ... except Exception as e: filter_exception(e); raise`` inline, which costs nothing
when no exception is raised).

``config.update("jax_traceback_filtering", mode)`` or ``JAX_TRACEBACK_FILTERING=mode``:

- ``auto`` (the default): ``tracebackhide`` under IPython, ``quiet_remove_frames`` otherwise;
- ``off``: the full traceback;
- ``tracebackhide``: frames kept, traxla's marked ``__tracebackhide__`` (IPython hides them);
- ``remove_frames``: the filtered traceback, and the unfiltered one as the ``__cause__``
  (an ``UnfilteredStackTrace``);
- ``quiet_remove_frames``: the filtered traceback and a note.

Lives in ``ir/`` (beside the configuration it reads) so that every layer above can mark its
entry points.
"""
from __future__ import annotations

import functools
import os
import traceback
import types

from traxla.ir.config import config

FILTERING_MODES = ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto")

# Every file under the package directory is traxla's own (its examples and tests live outside).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_exclude_paths: list[str] = [_PACKAGE_DIR]
_included: dict[str, bool] = {}  # filename -> kept in filtered tracebacks

# The code objects of the functions that form a boundary (``api_boundary``'s wrapper and the
# functions that filter inline): an exception below one of them is filtered by the outermost.
_boundary_codes: set = set()

_jax_message_append = (
    'The stack trace below excludes JAX-internal frames.\n'
    'The preceding is the original exception that occurred, unmodified.\n'
    '\n--------------------')

_simplified_tb_msg = ("For simplicity, JAX has removed its internal frames from the "
                      "traceback of the following exception. Set "
                      "JAX_TRACEBACK_FILTERING=off to include these.")
_NOTE = "--------------------\n" + _simplified_tb_msg


class UnfilteredStackTrace(Exception):
    pass



def register_exclusion(path: str) -> None:
    """Frames from files under ``path`` are left out of filtered tracebacks too."""
    _exclude_paths.append(os.path.abspath(path))
    _included.clear()


_included_for: list = [()]  # the exclusions _included was computed for


def include_filename(filename: str) -> bool:
    # (libraries edit _exclude_paths in place, as flax's show/hide_flax_in_tracebacks do)
    if _included_for[0] != tuple(_exclude_paths):
        _included.clear()
        _included_for[0] = tuple(_exclude_paths)
    kept = _included.get(filename)
    if kept is None:
        path = os.path.abspath(filename)
        kept = not any(path == p or path.startswith(p + os.sep) for p in _exclude_paths)
        _included[filename] = kept
    return kept


def include_frame(f: types.FrameType) -> bool:
    return include_filename(f.f_code.co_filename)


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the excluded frames (None when none is left)."""
    out = None
    for f, lineno in reversed(list(traceback.walk_tb(tb))):
        if include_frame(f):
            out = types.TracebackType(out, f, f.f_lasti, lineno)
    return out


def _add_call_stack_frames(tb: types.TracebackType) -> types.TracebackType:
    """``tb`` continued up the call stack (the unfiltered trace of ``remove_frames``), up to
    the first run of module-level frames, as JAX does (not past a REPL's exec point)."""
    out = tb
    reached_module_level = False
    for f, lineno in traceback.walk_stack(tb.tb_frame):
        if "importlib._bootstrap" in f.f_code.co_filename:
            continue
        if reached_module_level and f.f_code.co_name != "<module>":
            break
        if include_frame(f):
            out = types.TracebackType(out, f, f.f_lasti, lineno)
        if f.f_code.co_name == "<module>":
            reached_module_level = True
    return out


def _under_boundary(e: BaseException) -> bool:
    """Whether an outer boundary is on the stack above the frame handling ``e`` (it filters)."""
    tb = e.__traceback__
    if tb is None:
        return False
    f = tb.tb_frame.f_back
    while f is not None:
        if f.f_code in _boundary_codes:
            return True
        f = f.f_back
    return False


def _running_under_ipython() -> bool:
    try:
        get_ipython()  # noqa: F821 (defined by IPython)
        return True
    except NameError:
        return False


def _ipython_supports_tracebackhide() -> bool:
    try:
        import IPython
    except ImportError:
        return False
    return IPython.version_info[:2] >= (7, 17)


def filtering_mode() -> str:
    mode = config.read("traceback_filtering")
    if mode is None or mode == "auto":
        if _running_under_ipython() and _ipython_supports_tracebackhide():
            return "tracebackhide"
        return "quiet_remove_frames"
    return mode


def filter_exception(e: Exception) -> None:
    """Called in a boundary's ``except`` block, before a bare ``raise``: gives ``e`` the
    filtered traceback (and the note or cause) unless filtering is off or an outer boundary
    will do it."""
    mode = filtering_mode()
    if mode == "off" or _under_boundary(e):
        return
    tb = e.__traceback__
    if mode == "tracebackhide":
        for f, _ in traceback.walk_tb(tb):
            if not include_frame(f):
                f.f_locals["__tracebackhide__"] = True
        return
    if mode not in ("quiet_remove_frames", "remove_frames"):
        raise ValueError(f"JAX_TRACEBACK_FILTERING={mode} is not a valid value.")
    e.with_traceback(filter_traceback(tb))
    if mode == "quiet_remove_frames":
        # (Python 3.10 has no exception notes: the filtered traceback alone)
        if hasattr(e, "add_note") and _NOTE not in getattr(e, "__notes__", ()):
            e.add_note(_NOTE)
        return
    msg = "".join(traceback.format_exception_only(type(e), e)).strip()
    unfiltered = UnfilteredStackTrace(f"{msg}\n\n{_jax_message_append}")
    unfiltered.with_traceback(_add_call_stack_frames(tb))
    unfiltered.__cause__ = e.__cause__
    unfiltered.__context__ = e.__context__
    unfiltered.__suppress_context__ = e.__suppress_context__
    e.__cause__ = unfiltered
    e.__context__ = None


def register_boundary(fun):
    """Marks a function that filters inline (``except Exception as e: filter_exception(e)``)
    as a boundary, so that boundaries below it leave the filtering to it."""
    code = getattr(getattr(fun, "__func__", fun), "__code__", None)
    if code is not None:
        _boundary_codes.add(code)
    return fun


def api_boundary(fun):
    """Wraps ``fun`` so that exceptions raised below it have traxla's frames filtered out."""

    @functools.wraps(fun)
    def reraise_with_filtered_traceback(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise

    return reraise_with_filtered_traceback


_boundary_codes.add(api_boundary(lambda: None).__code__)

"""``traxla.profiler`` (``jax.profiler``): XLA's profiler (traces for TensorBoard and
Perfetto, a profiler server, trace annotations) and device memory profiles, through
jaxlib's own profiler modules (held by the runtime's adapter)."""
from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import json
import os
import pathlib
import socketserver
import threading

from traxla.runtime.xla_adapter import clients as _xla
from traxla.runtime.backend import available_platforms, get_backend
from traxla.version import __version__ as _version

_profiler = _xla.profiler
ProfileOptions = _profiler.ProfileOptions
ProfileData = _xla.profile_data.ProfileData
ProfileEvent = _xla.profile_data.ProfileEvent
ProfilePlane = _xla.profile_data.ProfilePlane
_server = [None]


def start_server(port: int, requires_backend: bool = True):
    """Starts the profiler server on ``port`` (TensorBoard's "capture profile")."""
    if _server[0] is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    if requires_backend:
        get_backend()
    _server[0] = _profiler.start_server(port)
    return _server[0]


def stop_server():
    """Stops the running profiler server."""
    if _server[0] is None:
        raise ValueError("No active profiler server.")
    _server[0] = None  # dropping it stops it


def register_subprocess(pid: int, port: int):
    """Profiles a subprocess's profiler server alongside this process (CPU only)."""
    return _profiler.register_subprocess(pid, port)


class _State:
    def __init__(self):
        self.session = None
        self.log_dir = None
        self.perfetto_trace = self.perfetto_link = False
        self.lock = threading.Lock()


_state = _State()


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
                profiler_options=None) -> None:
    """Starts a profiler trace, saved to ``log_dir`` by ``stop_trace`` (one at a time)."""
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run "
                               "at a time.")
        _profiler.clear_metadata()
        get_backend()
        _profiler.set_metadata("jax_version", _version)
        _profiler.set_metadata("jaxlib_version", _xla.JAXLIB_VERSION)
        for platform in available_platforms():
            backend = get_backend(platform)
            _profiler.set_metadata(f"{backend.platform}_version",
                                   getattr(backend.client, "platform_version", ""))
        _state.session = _profiler.ProfilerSession(profiler_options or ProfileOptions())
        _state.perfetto_trace = bool(create_perfetto_trace or create_perfetto_link)
        _state.perfetto_link = bool(create_perfetto_link)
        _state.log_dir = str(log_dir)


def _write_perfetto_trace_file(log_dir):
    folders = (pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir()
    latest = max(folders, key=os.path.getmtime)
    try:
        trace_json, = latest.glob("*.trace.json.gz")
    except ValueError as e:
        raise ValueError(f"Invalid trace folder: {latest}") from e
    with gzip.open(trace_json, "rb") as fp:
        trace = json.load(fp)
    trace.pop("metadata", None)
    out = latest / "perfetto_trace.json.gz"
    with gzip.open(out, "w") as fp:
        fp.write(json.dumps(trace).encode("utf-8"))
    return out


class _PerfettoServer(http.server.SimpleHTTPRequestHandler):
    """Serves the trace to ui.perfetto.dev (which fetches it from the browser)."""

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        return super().end_headers()

    def do_GET(self):
        self.server.last_request = self.path
        return super().do_GET()

    def do_POST(self):
        self.send_error(404, "File not found")


def _host_perfetto_trace_file(path, port=9001):
    """Prints the Perfetto UI link and serves ``path`` until the UI has fetched it."""
    directory, filename = os.path.split(path)
    handler = functools.partial(_PerfettoServer, directory=directory)
    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(("127.0.0.1", port), handler) as httpd:
        print(f"Open URL in browser: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/"
              f"{filename}")
        while httpd.__dict__.get("last_request") != "/" + filename:
            httpd.handle_request()


def stop_trace():
    """Stops the running trace and writes it under the ``log_dir`` of ``start_trace``."""
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started")
        _state.session.stop_and_export(_state.log_dir)
        if _state.perfetto_trace:
            path = _write_perfetto_trace_file(_state.log_dir)
            if _state.perfetto_link:
                _host_perfetto_trace_file(path)
        _state.session, _state.log_dir = None, None
        _state.perfetto_trace = _state.perfetto_link = False
        _profiler.clear_metadata()


def stop_and_get_fdo_profile():
    """Stops the running trace and returns its FDO profile (GPU only, as in JAX)."""
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started")
        xspace = _state.session.stop()
        _state.session, _state.log_dir = None, None
        _profiler.clear_metadata()
        return _profiler.get_fdo_profile(xspace)


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
          profiler_options=None):
    """A profiler trace of the block, saved to ``log_dir``."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation(_profiler.TraceMe):
    """A named event on the trace timeline spanning the ``with`` block."""


class StepTraceAnnotation(TraceAnnotation):
    """A step event (``step_num=``) the profiler analyses step by step."""

    def __init__(self, name: str, **kwargs):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """``func`` wrapped in a TraceAnnotation named after it (or ``name``)."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def device_memory_profile(backend=None) -> bytes:
    """A gzipped ``pprof`` profile of the device memory in use (arrays, executables)."""
    return gzip.compress(_xla.heap_profile(get_backend(backend).client))


def save_device_memory_profile(filename, backend=None) -> None:
    """Writes ``device_memory_profile(backend)`` to ``filename``."""
    with open(filename, "wb") as f:
        f.write(device_memory_profile(backend))


__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane",
           "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "trace"]

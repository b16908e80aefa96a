"""``traxla.profiler`` as ``jax.profiler``: traces written for TensorBoard and Perfetto with
the annotations in them, device memory profiles, the server, and JAX's errors."""
import glob
import gzip
import json
import os
import socket

import pytest

import traxla
import traxla.numpy as tnp


def test_trace_writes_xplane_and_perfetto_files_with_annotations(tmp_path):
    @traxla.profiler.annotate_function
    def step(x):
        return (x @ x.T).block_until_ready()

    with traxla.profiler.trace(str(tmp_path), create_perfetto_trace=True):
        with traxla.profiler.TraceAnnotation("my_label"):
            step(tnp.ones((64, 64)))
        with traxla.profiler.StepTraceAnnotation("train", step_num=1):
            pass
    files = glob.glob(os.path.join(tmp_path, "plugins", "profile", "*", "*"))
    assert any(f.endswith(".xplane.pb") for f in files)
    perfetto = [f for f in files if f.endswith("perfetto_trace.json.gz")]
    assert perfetto
    with gzip.open(perfetto[0]) as fp:
        events = json.load(fp)["traceEvents"]
    names = {e.get("name") for e in events}
    assert "my_label" in names
    assert any(n and "step" in n for n in names)


def test_one_trace_at_a_time_and_stop_without_start(tmp_path):
    traxla.profiler.start_trace(str(tmp_path))
    try:
        with pytest.raises(RuntimeError, match="Profile has already been started"):
            traxla.profiler.start_trace(str(tmp_path))
    finally:
        traxla.profiler.stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        traxla.profiler.stop_trace()


def test_device_memory_profile_is_gzipped_pprof(tmp_path):
    keep = tnp.ones((256, 256))  # noqa: F841  (something on the device)
    profile = traxla.profiler.device_memory_profile()
    assert isinstance(profile, bytes) and gzip.decompress(profile)
    path = tmp_path / "memory.prof"
    traxla.profiler.save_device_memory_profile(str(path))
    assert path.stat().st_size > 0


def test_server_starts_once():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    traxla.profiler.start_server(port)
    try:
        with pytest.raises(ValueError, match="Only one profiler server"):
            traxla.profiler.start_server(port)
    finally:
        traxla.profiler.stop_server()
    with pytest.raises(ValueError, match="No active profiler server"):
        traxla.profiler.stop_server()

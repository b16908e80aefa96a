"""A jitted program with host callbacks called 10,000 times keeps its memory flat."""
from __future__ import annotations

import gc
import os

import numpy as np

import traxla
from traxla.experimental import io_callback


class SDS:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def test_ten_thousand_callback_calls_do_not_leak():
    spec = SDS((4,), np.float32)
    count = [0]

    def host(x):
        count[0] += 1
        return np.asarray(x) * 2

    @traxla.jit
    def f(x):
        y = traxla.pure_callback(host, spec, x)
        return io_callback(host, spec, y, ordered=True) + 1.0

    x = traxla.device_put(np.arange(4, dtype=np.float32))
    for _ in range(1000):  # warm up: caches, allocator pools
        f(x)
    gc.collect()
    before, objects_before = _rss_kib(), len(gc.get_objects())
    for _ in range(10_000):
        out = f(x)
    gc.collect()
    growth, object_growth = _rss_kib() - before, len(gc.get_objects()) - objects_before
    np.testing.assert_allclose(np.asarray(out), np.arange(4) * 4 + 1)
    assert count[0] == 2 * 11_000
    # A leak of even one 16-byte buffer per call would be 160 KiB; allow allocator noise.
    assert growth < 1024, f"RSS grew by {growth} KiB over 10,000 calls"
    assert object_growth < 100, f"{object_growth} Python objects more after 10,000 calls"

"""``device_put(x, device)`` with an explicit Device (or single-device sharding) inside
traced code, against JAX: one ``device_put`` equation with the destination per operand
(constants staged too), values unchanged, ``grad`` through it (the transpose moves the
cotangent back: ``srcs`` = the device, always copying) and ``vmap`` through it."""
from __future__ import annotations

import numpy as np
import pytest

import traxla

jax = pytest.importorskip("jax")

X = np.arange(3, dtype=np.float32)
XS = np.arange(6, dtype=np.float32).reshape(2, 3)


def _programs(lib):
    device = lib.devices()[0]

    def f(x):
        return lib.device_put(x * 2, device) + 1

    def loss(x):
        return f(x).sum()
    return {
        "device": (lambda x: f(x), X),
        "single-device sharding": (
            lambda x: lib.device_put(x, lib.sharding.SingleDeviceSharding(device)), X),
        "pytree with a Python scalar": (
            lambda x: lib.device_put({"a": x, "b": (x, 2.0)}, device), X),
        "constant": (lambda x: x + lib.device_put(np.ones(3, np.float32), device), X),
        "default device": (lambda x: lib.device_put(x), X),
        "grad": (lib.grad(loss), X),
        "vmap": (lib.vmap(f), XS),
    }


NAMES = sorted(_programs(jax))


@pytest.mark.parametrize("name", NAMES)
def test_jaxpr_as_jax(name):
    fun, arg = _programs(traxla)[name]
    j_fun, _ = _programs(jax)[name]
    assert str(traxla.make_jaxpr(fun)(arg)) == str(jax.make_jaxpr(j_fun)(arg))


@pytest.mark.parametrize("name", NAMES)
def test_values_as_jax(name):
    fun, arg = _programs(traxla)[name]
    j_fun, _ = _programs(jax)[name]
    got, want = traxla.jit(fun)(arg), jax.jit(j_fun)(arg)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_eager_device_put_to_a_device_still_transfers():
    out = traxla.device_put(X, traxla.devices()[0])
    assert isinstance(out, traxla.Array)
    np.testing.assert_array_equal(out, X)

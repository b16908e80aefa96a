"""Transfer guards (``jax.transfer_guard`` and its three directions) against JAX 0.10.2:
which transfers are refused or logged at each level, JAX's messages, the config options."""
from __future__ import annotations

import logging
import threading

import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest

import traxla
import traxla.numpy as jnp
from tests._device_scripts import run_json_script
from tests._outcomes import error_of

LEVELS = ["allow", "log", "disallow", "log_explicit", "disallow_explicit"]


def _cases(lib, np_lib):
    f = lib.jit(lambda a: a + 1)
    x = np_lib.arange(3.)
    return x, {
        "jit numpy": lambda: f(np.arange(3.)),
        "jit python scalar": lambda: f(1.0),
        "jit numpy scalar": lambda: f(np.float32(1.0)),
        "jit device array": lambda: f(x),
        "array of numpy": lambda: np_lib.array(np.arange(3.)),
        "asarray of list": lambda: np_lib.asarray([1, 2]),
        "array plus numpy": lambda: x + np.ones(3),
        "array plus int": lambda: x + 1,
        "array times float": lambda: x * 2.0,
        "zeros": lambda: np_lib.zeros(3),
        "mean": lambda: np_lib.mean(x.reshape(1, 3), axis=0),
        "normal": lambda: lib.random.normal(lib.random.key(0), (3,)),
        "device_put": lambda: lib.device_put(np.arange(3.)),
        "asarray back": lambda: np.asarray(x),
        "tolist": lambda: x.tolist(),
        "float": lambda: float(x.sum()),
        "device_get": lambda: lib.device_get(x),
        "repr": lambda: repr(x),
    }


def _outcomes(lib, np_lib, level):
    x, cases = _cases(lib, np_lib)
    with lib.transfer_guard(level):
        return {name: error_of(fn) or "ok" for name, fn in cases.items()}


@pytest.mark.parametrize("level", ["disallow", "disallow_explicit"])
def test_refused_transfers_and_messages_match_jax(level):
    theirs = _outcomes(jax, jnp_jax, level)
    ours = _outcomes(traxla, jnp, level)
    assert ours == theirs
    assert theirs["jit numpy"] == (
        "JaxRuntimeError: INVALID_ARGUMENT: Disallowed host-to-device transfer: "
        "aval=ShapedArray(float32[3]), dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0),"
        " memory_kind=device)")
    assert ours["jit device array"] == ours["asarray back"] == ours["device_get"] == "ok"
    # explicit transfers pass "disallow" and not "disallow_explicit"
    assert (ours["device_put"] == "ok") == (level == "disallow")


def test_refused_transfer_is_jax_runtime_error():
    with traxla.transfer_guard("disallow"):
        with pytest.raises(traxla.errors.JaxRuntimeError, match="Disallowed host-to-device"):
            traxla.jit(lambda a: a)(np.ones(2, np.float32))


@pytest.mark.parametrize("level", ["log", "log_explicit"])
def test_logged_transfers(level, caplog):
    f = traxla.jit(lambda a: a * 2)
    with caplog.at_level(logging.WARNING, logger="traxla"):
        with traxla.transfer_guard(level):
            f(np.arange(3, dtype=np.int32))
            traxla.device_put(np.float32(1))
            f(jnp.arange(3))  # already on the device: nothing to log
    logged = [r.getMessage() for r in caplog.records]
    expected = ["host-to-device transfer: aval=ShapedArray(int32[3]), dst_sharding="
                "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"]
    if level == "log_explicit":  # explicit transfers are logged too
        expected.append("host-to-device transfer: aval=ShapedArray(float32[]), dst_sharding="
                        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)")
    assert logged == expected


def test_allow_is_silent(caplog):
    with caplog.at_level(logging.WARNING, logger="traxla"):
        for level in ("allow", None):
            with traxla.transfer_guard_host_to_device(level):
                traxla.jit(lambda a: a)(np.ones(2))
    assert not caplog.records


def test_config_update_sets_every_direction():
    names = ["jax_transfer_guard_host_to_device", "jax_transfer_guard_device_to_device",
             "jax_transfer_guard_device_to_host", "jax_transfer_guard"]
    assert [getattr(traxla.config, n) for n in names] == [getattr(jax.config, n) for n in names]
    try:
        traxla.config.update("jax_transfer_guard", "disallow")
        assert [getattr(traxla.config, n) for n in names] == ["disallow"] * 4
        with pytest.raises(traxla.errors.JaxRuntimeError, match="Disallowed host-to-device"):
            traxla.jit(lambda a: a)(np.ones(2))
        with traxla.transfer_guard_host_to_device("allow"):  # a block overrides it
            traxla.jit(lambda a: a)(np.ones(2))
    finally:
        traxla.config.update("jax_transfer_guard", None)
    assert traxla.config.jax_transfer_guard_host_to_device is None
    traxla.jit(lambda a: a)(np.ones(2))


def test_context_manager_values_and_thread_locality():
    with traxla.transfer_guard("log"):
        assert traxla.transfer_guard_host_to_device.value == "log"
        assert traxla.config.jax_transfer_guard == "log"
        seen = []
        t = threading.Thread(target=lambda: seen.append(traxla.transfer_guard_device_to_host.value))
        t.start()
        t.join()
        assert seen == [None]  # another thread keeps the global value
    assert traxla.transfer_guard_device_to_device.value is None


@pytest.mark.parametrize("call", [
    lambda lib: lib.config.update("jax_transfer_guard", "nope"),
    lambda lib: lib.transfer_guard("nope").__enter__(),
    lambda lib: lib.transfer_guard_device_to_host(3).__enter__(),
    lambda lib: lib.transfer_guard_host_to_device().__enter__(),
    lambda lib: lib.transfer_guard(),
])
def test_bad_values_raise_jax_errors(call):
    theirs = error_of(lambda: call(jax))
    assert theirs is not None
    assert error_of(lambda: call(traxla)) == theirs


_D2D = """
import json, numpy as np
import {lib} as lib, {lib}.numpy as jnp
d = lib.devices()
x = jnp.arange(3.)
from tests._outcomes import error_of
out = {{}}
def attempt(name, fn):
    out[name] = error_of(fn) or "ok"
one = lib.sharding.SingleDeviceSharding(d[1])
with lib.transfer_guard_device_to_device("disallow"):
    attempt("out_shardings", lambda: lib.jit(lambda a: a * 2, out_shardings=one)(x))
    attempt("mixed", lambda: lib.jit(lambda a, b: a + b)(x, lib.device_put(x, d[1])))
    attempt("committed", lambda: lib.jit(lambda a: a + 1)(lib.device_put(x, d[1])))
    attempt("explicit", lambda: lib.device_put(x, d[1]))
    attempt("numpy", lambda: lib.jit(lambda a: a * 2, out_shardings=one)(np.ones(3)))
with lib.transfer_guard("disallow_explicit"):
    attempt("explicit refused", lambda: lib.device_put(x, d[1]))
print(json.dumps(out))
"""


def test_device_to_device_guard_on_two_devices():
    theirs = run_json_script(_D2D, "jax", 2)
    ours = run_json_script(_D2D, "traxla", 2)
    assert ours == theirs
    assert theirs["mixed"].startswith("JaxRuntimeError: INVALID_ARGUMENT: Disallowed "
                                      "device-to-device transfer: aval=ShapedArray(float32[3]), "
                                      "sharding=SingleDeviceSharding(device=CpuDevice(id=0)")
    assert theirs["committed"] == theirs["explicit"] == theirs["numpy"] == "ok"


def test_device_to_host_guard_asks_for_arrays_off_the_cpu_only():
    # (no accelerator here: a stand-in device; JAX's CPU arrays are read in place, no transfer)
    from traxla.runtime import transfer_guard as guard

    class Accelerator:
        platform = "tpu"

        def __repr__(self):
            return "TpuDevice(id=0)"
    with traxla.transfer_guard_device_to_host("disallow"):
        with pytest.raises(traxla.errors.JaxRuntimeError,
                           match=r"Disallowed device-to-host transfer: shape=\(3\), "
                                 r"dtype=float32, device=TpuDevice\(id=0\)"):
            guard.device_to_host((3,), np.dtype(np.float32), Accelerator)
        with guard.explicit():  # device_get: allowed under "disallow"
            guard.device_to_host((3,), np.dtype(np.float32), Accelerator)
        np.asarray(jnp.arange(3.0))  # a CPU array: no transfer

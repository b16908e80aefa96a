"""Host callbacks lowered for TPU as JAX's ``_emit_tpu_python_callback`` lowers them: the
operands sent to the host and the results received, on one token chain, over channels the
runtime hands to the client's send/recv callback. (JAX lowers callbacks for TPU only with a
TPU backend, so there is no JAX module to compare with here; XLA:CPU has no send/recv, so
the programs run only on a TPU: tests/test_tpu_linalg.py.)"""
import re

import numpy as np
import pytest

import traxla
from traxla.lowering import module as lowering_module
from traxla.lowering.rules.callbacks import SendRecvCallback, take_callback_error
from traxla.runtime import xla_adapter

jax = pytest.importorskip("jax")


def _lower_for_tpu(f, *args):
    traxla.devices()  # the backend is started (it sets the default platform) before
    closed = traxla.make_jaxpr(f)(*args)
    lowering_module.set_default_platform("tpu")
    try:
        module = lowering_module.lower_jaxpr(closed, "f")
    finally:
        lowering_module.set_default_platform(traxla.default_backend())
    return str(module), lowering_module.host_callbacks_of(module)


def _channels(text, op):
    return [int(c) for c in re.findall(
        rf'"stablehlo\.{op}".*?channel_handle<handle = (\d+), type = (?:2|3)>', text)]


def test_tpu_callbacks_send_operands_and_receive_results_in_order():
    x = np.arange(4, dtype=np.float32)

    def f(a):
        traxla.debug.print("a = {}", a, ordered=True)
        b = traxla.pure_callback(lambda v: v * 2, jax.ShapeDtypeStruct((4,), np.float32), a)
        return traxla.experimental.io_callback(lambda v: v > 1,
                                               jax.ShapeDtypeStruct((4,), np.bool_), b,
                                               ordered=True)

    text, callbacks = _lower_for_tpu(f, x)
    assert "xla_ffi_python" not in text  # no CPU callback target on TPU
    assert _channels(text, "send") == [1, 3, 5] and _channels(text, "recv") == [2, 4, 6]
    assert text.count('_xla_host_transfer_handler_name = "pjrt_rendezvous"') == 6
    assert all(isinstance(cb, SendRecvCallback) for cb in callbacks)
    printed, pure, io = callbacks
    assert (printed.send_channels, printed.recv_channels) == ((1,), (2,))
    # debug.print returns nothing: a dummy f32[] received makes its token wait for it
    assert printed.dummy_recv and printed.result_avals[0].shape == ()
    assert pure.result_avals[0].shape == (4,) and not pure.dummy_recv
    assert io.result_avals[0].dtype == np.bool_  # booleans cross as booleans on TPU
    # the ordered effects share one token chain: the io_callback's send takes the token of
    # debug.print's recv; the unordered pure_callback starts a token of its own
    tokens = re.findall(r'(%\d+)(?::2)? = "stablehlo\.(send|recv)"\((%[\w#]+)(?:, (%[\w#]+))?', text)
    io_send = [t for t in tokens if t[1] == "send"][2]
    first_recv = [t for t in tokens if t[1] == "recv"][0]
    assert io_send[3] == f"{first_recv[0]}#1"
    assert text.count("stablehlo.create_token") == 2


def test_tpu_callback_without_operands_or_results_uses_dummy_transfers():
    text, (cb,) = _lower_for_tpu(lambda: traxla.debug.print("hello"))
    assert cb.dummy_send and cb.operand_avals[0].shape == (1,)  # f32[1] sent, as JAX
    assert cb.dummy_recv
    assert "dense<0.000000e+00> : tensor<1xf32>" in text
    out = cb(np.zeros(1, np.float32))  # what XLA calls on the host
    assert len(out) == 1 and out[0].shape == () and out[0].dtype == np.float32


def test_tpu_callback_empty_results_are_constants_not_received():
    x = np.arange(3, dtype=np.float32)
    shapes = (jax.ShapeDtypeStruct((3,), np.float32), jax.ShapeDtypeStruct((0,), np.float32))
    text, (cb,) = _lower_for_tpu(
        lambda a: traxla.pure_callback(lambda v: (v + 1, np.zeros((0,), np.float32)),
                                       shapes, a), x)
    assert [a.shape for a in cb.result_avals] == [(3,)]
    assert "dense<> : tensor<0xf32>" in text
    out = cb(x)  # the host returns only the non-empty results
    assert len(out) == 1
    np.testing.assert_array_equal(out[0], x + 1)


def test_tpu_callback_results_are_checked_on_the_host():
    x = np.arange(3, dtype=np.float32)
    _, (cb,) = _lower_for_tpu(lambda a: traxla.pure_callback(
        lambda v: v[:2], jax.ShapeDtypeStruct((3,), np.float32), a), x)
    with pytest.raises(RuntimeError, match="Incorrect output shape for return value #0"):
        cb(x)
    # (called outside a program, the failure also stays pending for the next effects_barrier:
    # taken here so that it does not fail a later test in this process)
    assert take_callback_error() is not None


def test_runtime_turns_a_send_recv_callback_into_the_clients_callback_object():
    x = np.arange(4, dtype=np.float32)
    _, callbacks = _lower_for_tpu(lambda a: traxla.pure_callback(
        lambda v: v * 2, jax.ShapeDtypeStruct((4,), np.float32), a), x)
    plain = lambda *args: args  # noqa: E731  (a CPU callback target's callable passes as is)
    client = traxla.runtime.backend.get_backend().client
    objects = xla_adapter.host_callback_objects(client, [plain, *callbacks])
    assert objects[0] is plain
    assert type(objects[1]).__name__ == "PyCapsule"

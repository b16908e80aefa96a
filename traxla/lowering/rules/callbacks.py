"""Lowering of the host-callback primitives (``ir/rules/callbacks.py``) to a typed-FFI
custom call of jaxlib's ``xla_ffi_python_cpu_callback`` target, as JAX emits it (on TPU:
host send/recv, ``emit_tpu_callback`` below): the only
attribute is ``index``, the position of the Python callable in the list the module is
compiled with (``ModuleBuilder.host_callbacks``). Ordered effects take the region's token as
their first operand and give the next one as their first result.

XLA copies whatever the callable returns into its buffers without looking at it, so the
callable is wrapped in a ``HostCallback`` that checks the count, shape and dtype of every
result first, and that records any exception (with its traceback) for the runtime to raise
as a Python exception naming the callback."""
from __future__ import annotations

import sys
import threading
import traceback

import numpy as np

import copy
import logging

from traxla import errors
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray, physical_aval
from traxla.ir.rules.callbacks import (callback_name, debug_callback_p, debug_print_p, io_callback_p,
                                   pure_callback_p)
from traxla.lowering.mlir import aval_type, constant, hlo, ir, sdy
from traxla.lowering.registry import mark_platform_sensitive, register_lowering

PYTHON_CPU_CALLBACK = "xla_ffi_python_cpu_callback"
# The CUDA plugin's target (jaxlib notes §8): written as JAX names it, not yet run on a GPU.
PYTHON_GPU_CALLBACK = "xla_ffi_python_gpu_callback"


# XLA calls back on its own threads: the first failure is kept here for the caller.
_errors: list = []
_lock = threading.Lock()


def take_callback_error():
    """A ``CallbackError`` for the first exception a callback raised since the last call
    (None if none did); the original exception, with its traceback, is its ``__cause__``."""
    with _lock:
        first = _errors[:1]
        _errors.clear()
    if not first:
        return None
    return callback_error(first[0][1])


def callback_error(e: BaseException):
    """JAX's runtime error for a callback that raised ``e`` (``errors.CallbackError``, a
    JaxRuntimeError): ``INTERNAL: CpuCallback error calling callback: `` and the traceback."""
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()
    err = errors.CallbackError(f"INTERNAL: CpuCallback error calling callback: {tb}")
    err.__cause__ = e
    return err


def _record(host, e):
    with _lock:
        if not _errors:
            _errors.append((host, e))


class HostCallback:
    """The callable XLA calls: NumPy operands in, a checked tuple of NumPy results out."""

    __slots__ = ("callback", "name", "kind", "result_avals", "bool_operands", "has_token",
                 "bool_wire", "__weakref__")

    def __init__(self, callback, kind, result_avals, bool_operands, has_token, bool_wire=True):
        self.callback = callback
        self.name = callback_name(callback)
        self.kind = kind
        self.result_avals = tuple(result_avals)
        self.bool_operands = tuple(bool_operands)
        self.has_token = has_token
        self.bool_wire = bool_wire  # booleans cross as uint8 (False: as booleans, on TPU)

    def __call__(self, *args):
        token = ()
        if self.has_token:
            token, args = (args[0],), args[1:]
        try:
            if any(self.bool_operands):
                args = [np.asarray(a, np.bool_) if b else a
                        for a, b in zip(args, self.bool_operands)]
            outs = self.callback(*args)
            outs = self.check_results(outs)
        except BaseException as e:  # surfaced by the runtime as a Python exception
            _record(self, e)
            raise
        return token + outs

    def check_results(self, outs):
        expected = self.result_avals
        if outs is None:
            outs = ()
        if not isinstance(outs, (tuple, list)):
            raise RuntimeError(
                f"{self.kind} callback {self.name!r} must return a sequence of arrays, got "
                f"{type(outs).__name__}")
        if len(outs) != len(expected):
            raise RuntimeError(
                "Mismatched number of outputs from callback. "
                f"Expected: {len(expected)}, Actual: {len(outs)}")
        checked = []
        for i, (out, aval) in enumerate(zip(outs, expected)):
            value = np.asarray(out)
            if value.dtype.kind in "biufc":  # 64-bit results become 32-bit without x64, as JAX
                canonical = dtypes.canonicalize(value.dtype)
                if canonical != value.dtype:
                    value = value.astype(canonical)
            if value.shape != tuple(aval.shape):
                raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                                   f"Expected: {tuple(aval.shape)}, Actual: {value.shape}")
            if value.dtype != aval.dtype:
                raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                                   f"Expected: {aval.dtype}, Actual: {value.dtype}")
            if value.dtype == np.bool_ and self.bool_wire:
                value = value.astype(np.uint8)
            checked.append(np.require(value, requirements="C"))  # (keeps 0-d arrays 0-d)
        return tuple(checked)


def _layout(aval) -> ir.Attribute:
    """Row-major (the minor-to-major order is the reversed dimension list)."""
    dims = np.arange(len(aval.shape) - 1, -1, -1, dtype=np.int64) if aval.shape else np.zeros(
        (0,), np.int64)
    return ir.DenseIntElementsAttr.get(dims, type=ir.IndexType.get())


def _token_layout():
    return ir.DenseIntElementsAttr.get(np.zeros((0,), np.int64), type=ir.IndexType.get())


def _wire_aval(aval):
    """Booleans cross as uint8 (the callback handler rejects i1 buffers); key arrays as their
    key data (their physical array)."""
    if dtypes.is_extended(aval.dtype):
        return physical_aval(aval)
    return aval.update(dtype=np.dtype(np.uint8)) if aval.dtype == np.bool_ else aval


def emit_callback(ctx, operands, callback, *, kind, result_avals, ordered, side_effect,
                  operand_avals=None):
    """Emits the custom call; returns the result values (the token is threaded on
    ``ctx.module.token``). ``operand_avals``: the operands' types (default: the
    equation's operands)."""
    module = ctx.module
    in_avals = list(ctx.avals_in if operand_avals is None else operand_avals)
    if module.platform == "tpu":
        return emit_tpu_callback(ctx, operands, callback, kind=kind, result_avals=result_avals,
                                 ordered=ordered, side_effect=side_effect, in_avals=in_avals)
    bool_in = [a.dtype == np.bool_ for a in in_avals]
    wire_in = [_wire_aval(a) for a in in_avals]
    wire_out = [_wire_aval(a) for a in result_avals]
    ops = [hlo.convert(aval_type(w), x) if b else x for x, b, w in zip(operands, bool_in, wire_in)]
    host = HostCallback(callback, kind, result_avals, bool_in, has_token=ordered)
    index = module.add_host_callback(host)
    result_types = [aval_type(a) for a in wire_out]
    operand_layouts = [_layout(a) for a in wire_in]
    result_layouts = [_layout(a) for a in wire_out]
    if ordered:
        token = module.token if module.token is not None else hlo.create_token()
        ops = [token] + ops
        result_types = [hlo.TokenType.get()] + result_types
        operand_layouts = [_token_layout()] + operand_layouts
        result_layouts = [_token_layout()] + result_layouts
    u64 = ir.IntegerType.get_unsigned(64)
    i32 = ir.IntegerType.get_signless(32)
    op = hlo.CustomCallOp(
        result_types, ops,
        call_target_name=ir.StringAttr.get(
            PYTHON_GPU_CALLBACK if module.platform in ("cuda", "gpu") else PYTHON_CPU_CALLBACK),
        has_side_effect=ir.BoolAttr.get(side_effect),
        api_version=ir.IntegerAttr.get(i32, 4),
        backend_config=ir.DictAttr.get({"index": ir.IntegerAttr.get(u64, index)}),
        operand_layouts=ir.ArrayAttr.get(operand_layouts),
        result_layouts=ir.ArrayAttr.get(result_layouts))
    _place_on_one_device(module, op, len(result_types))
    results = list(op.results)
    if ordered:
        module.token, results = results[0], results[1:]
    # uint8 -> bool: nonzero is true
    return [hlo.convert(aval_type(a), x) if a.dtype == np.bool_ else x
            for x, a in zip(results, result_avals)]


# -- TPU: the operands sent to the host, the results received (JAX's _emit_tpu_python_callback)

_SEND_TO_HOST, _RECV_FROM_HOST = 2, 3  # stablehlo.ChannelHandle types
_RENDEZVOUS = "pjrt_rendezvous"


class SendRecvCallback:
    """A TPU host callback: XLA sends the operands over ``send_channels`` and receives the
    results over ``recv_channels``. The runtime makes jaxlib's callback object of it (the
    client's ``make_python_callback_from_host_send_and_recv``, in ``xla_adapter``) when it
    compiles the module; ``host`` is the ``HostCallback`` wrapper the host calls."""

    __slots__ = ("host", "operand_avals", "result_avals", "send_channels", "recv_channels",
                 "dummy_send", "dummy_recv", "empty_results")

    def __init__(self, host, operand_avals, result_avals, send_channels, recv_channels,
                 dummy_send, dummy_recv, empty_results):
        self.host = host
        self.operand_avals, self.result_avals = tuple(operand_avals), tuple(result_avals)
        self.send_channels, self.recv_channels = tuple(send_channels), tuple(recv_channels)
        self.dummy_send, self.dummy_recv = dummy_send, dummy_recv
        self.empty_results = tuple(empty_results)

    def __call__(self, *args):
        if self.dummy_send:  # the f32[1] sent so that a callback without operands runs
            args = ()
        outs = self.host(*args)
        if self.dummy_recv:  # the f32[] received so that the token waits for the callback
            return (np.zeros((), np.float32),)
        # TPU cannot receive empty arrays: those results are constants in the program
        return tuple(o for o, empty in zip(outs, self.empty_results) if not empty)


def _host_transfer(op, channel):
    op.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get({
        "_xla_host_transfer_handler_name": ir.StringAttr.get(_RENDEZVOUS),
        "_xla_host_transfer_rendezvous": ir.StringAttr.get(str(channel))})


def emit_tpu_callback(ctx, operands, callback, *, kind, result_avals, ordered, side_effect,
                      in_avals):
    """``stablehlo.send`` of each operand and ``stablehlo.recv`` of each result, on one token
    chain (the region's token when ``ordered``), as JAX lowers callbacks on TPU."""
    module = ctx.module
    in_avals = [physical_aval(a) if dtypes.is_extended(a.dtype) else a for a in in_avals]
    returns_token = kind in ("debug", "debug_print") or ordered
    host = HostCallback(callback, kind, result_avals, [False] * len(in_avals), has_token=False,
                        bool_wire=False)
    token = module.token if ordered and module.token is not None else hlo.create_token()
    send_channels, send_avals = [], list(in_avals)
    sends = list(operands)
    if not sends:
        sends = [constant(np.zeros(1, np.float32), np.float32)]
        send_avals = [ShapedArray((1,), np.dtype(np.float32))]
    for value in sends:
        channel = module.next_channel()
        send = hlo.SendOp([value], token, hlo.ChannelHandle.get(channel, _SEND_TO_HOST),
                          is_host_transfer=ir.BoolAttr.get(True))
        _host_transfer(send, channel)
        _place_on_one_device(module, send, 1)
        token = send.result
        send_channels.append(channel)
    empty = [any(d == 0 for d in a.shape) for a in result_avals]
    received = [a for a, e in zip(result_avals, empty) if not e]
    dummy_recv = returns_token and not received
    recv_channels, recv_avals, outs = [], [], []
    for aval in ([ShapedArray((), np.dtype(np.float32))] if dummy_recv else received):
        channel = module.next_channel()
        recv = hlo.RecvOp([aval_type(aval), hlo.TokenType.get()], token,
                          hlo.ChannelHandle.get(channel, _RECV_FROM_HOST),
                          is_host_transfer=ir.BoolAttr.get(True))
        _host_transfer(recv, channel)
        _place_on_one_device(module, recv, 2)
        value, token = recv.results
        outs.append(value)
        recv_avals.append(aval)
        recv_channels.append(channel)
    module.add_host_callback(SendRecvCallback(
        host, send_avals, recv_avals, send_channels, recv_channels,
        dummy_send=not operands, dummy_recv=dummy_recv, empty_results=empty))
    if ordered:
        module.token = token
    if dummy_recv:
        outs = []
    received_outs = iter(outs)
    return [constant(np.zeros(a.shape, a.dtype), a.dtype) if e else next(received_outs)
            for a, e in zip(result_avals, empty)]


def _place_on_one_device(module, op, num_results):
    """In an SPMD program (outside ``shard_map``) the callback runs once, on device 0, with
    whole values, as JAX places it (a maximal sharding): the partitioner requires a side-effecting
    op to carry a sharding."""
    partitions = module.module.operation.attributes["mhlo.num_partitions"]
    if module.mesh_stack or ir.IntegerAttr(partitions).value <= 1:
        return
    if not getattr(module, "_maximal_mesh_emitted", False):
        module._maximal_mesh_emitted = True
        with ir.InsertionPoint.at_block_begin(module.module.body):
            sdy.MeshOp(_MAXIMAL_MESH, sdy.MeshAttr.get([], [0]))
    op.attributes["sdy.sharding"] = sdy.TensorShardingPerValueAttr.get(
        [sdy.TensorShardingAttr.get(_MAXIMAL_MESH, []) for _ in range(max(num_results, 1))])


_MAXIMAL_MESH = "maximal_mesh_0"


class DebugPrintFormatter:
    """Formats and prints ``debug_print``'s operands as JAX's ``_format_print_callback``."""

    __slots__ = ("fmt", "in_tree", "static_args", "np_printoptions", "has_placeholders",
                 "logging_record", "__weakref__")

    def __init__(self, fmt, in_tree, static_args, np_printoptions, has_placeholders,
                 logging_record):
        self.fmt, self.in_tree, self.static_args = fmt, in_tree, dict(static_args)
        self.np_printoptions = dict(np_printoptions)
        self.has_placeholders, self.logging_record = has_placeholders, logging_record

    def __repr__(self):
        return f"debug.print({self.fmt!r})"

    def __call__(self, *dyn_args):
        n = len(self.static_args) + len(dyn_args)
        dyn = iter(dyn_args)
        leaves = [self.static_args[i] if i in self.static_args else next(dyn) for i in range(n)]
        args, kwargs = self.in_tree.unflatten(leaves)
        if self.has_placeholders:
            with np.printoptions(**self.np_printoptions):
                msg = self.fmt.format(*args, **kwargs)
        else:
            msg = " ".join((self.fmt, *(str(a) for a in args)))
        if self.logging_record is not None:
            record = copy.copy(self.logging_record)
            record.msg = msg
            logging.getLogger("traxla").handle(record)
        else:
            sys.stdout.write(msg + "\n")
        return ()


def _debug_callback(ctx, *args, callback, effect, partitioned):
    emit_callback(ctx, args, callback, kind="debug", result_avals=(), ordered=effect.ordered,
                  side_effect=True)
    return []


def _debug_print(ctx, *args, fmt, ordered, partitioned, in_tree, static_args, np_printoptions,
                 has_placeholders, logging_record):
    callback = DebugPrintFormatter(fmt, in_tree, static_args, np_printoptions,
                                   has_placeholders, logging_record)
    emit_callback(ctx, args, callback, kind="debug_print", result_avals=(), ordered=ordered,
                  side_effect=True)
    return []


def _pure_callback(ctx, *args, callback, result_avals, sharding, vmap_method):
    return emit_callback(ctx, args, callback, kind="pure", result_avals=result_avals,
                         ordered=False, side_effect=False)


def _io_callback(ctx, *args, callback, result_avals, sharding, ordered):
    return emit_callback(ctx, args, callback, kind="io", result_avals=result_avals,
                         ordered=ordered, side_effect=True)


register_lowering(debug_callback_p, _debug_callback)
register_lowering(debug_print_p, _debug_print)
register_lowering(pure_callback_p, _pure_callback)
register_lowering(io_callback_p, _io_callback)
for _p in (debug_callback_p, debug_print_p, pure_callback_p, io_callback_p):
    mark_platform_sensitive(_p)  # the callback's target is the platform's


def _check(ctx, *args, debug, **params):
    if debug:  # a debug_check outside checkify is dropped
        return []
    raise ValueError(
        "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
        "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
        "functionalizing it through `checkify.checkify`.")


from traxla.ir.rules.callbacks import check_p  # noqa: E402

register_lowering(check_p, _check)

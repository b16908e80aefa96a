"""Eager fast path for ``jnp`` functions and Array operators.

Outside any trace, a ``jnp`` ufunc or operator applied to default-device Arrays (and
Python ``int``/``float`` operands) runs as one cached compiled program per signature,
as JAX's jit-wrapped ufuncs do: no per-op dtype promotion in Python, no one-equation
dispatch per primitive. A Python scalar becomes a weakly typed runtime argument (not a
constant baked into the program, so ``x + i`` over many ``i`` compiles once); its device
copy is cached, so a repeated constant costs no host-to-device transfer.

Anything else (tracers, NumPy or placed/sharded arrays, bools, out-of-range ints,
keyword arguments, debug checks, ``disable_jit``) takes the ordinary Python path,
which computes the same values.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from traxla.api import jit
from traxla.api.jit_placement import pinned_results
from traxla.ir.config import config
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.traceback_util import filter_exception, register_boundary
from traxla.runtime import ArrayImpl
from traxla.runtime import debug_checks, transfer_guard
from traxla.runtime.array import check_not_deleted, default_sharding, device_put_numpy
from traxla.runtime.cache import on_clear
from traxla.runtime.placement import pinned_default as _pinned_default
from traxla.runtime.xla_adapter.execution import RuntimeErrorType, tracebacks_enabled as _tracebacks_enabled
from traxla.tracer import EvalTrace
from traxla.tracer.traces import _state as _trace_state
from traxla.ir.thread_state import unusual as _unusual

# The calling thread's flags. Inside a ``with`` block of any flag (x64, disable_jit, debug
# checks...: per thread) the fast path steps aside: its programs and scalars are keyed by
# argument types alone, made under the global flags.
_flags = config.current

# (dtype, value[, sign of a zero]) -> weakly typed device scalar. Bounded: first in,
# first out beyond ``scalar_cache_limit`` entries.
_scalar_cache: dict = {}
scalar_cache_limit = 1024
# Counts of calls that took the ordinary path and of scalar transfers (fast-path calls are
# not counted: the hot path stays lean).
stats = {"fallback": 0, "scalar_misses": 0}


def _int_bounds(dtype):
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def scalar_operand(x):
    """A cached weakly typed device scalar for a Python int/float; None when out of range."""
    t = type(x)
    # -0.0 == 0.0 (and hashes alike): the sign of a zero is part of its key.
    key = (t, x, math.copysign(1.0, x)) if t is float and x == 0.0 else (t, x)
    arr = _scalar_cache.get(key)
    if arr is not None:
        return arr
    stats["scalar_misses"] += 1
    dtype = dtypes.python_scalar_dtype(x)
    if t is int:
        lo, hi = _int_bounds(dtype)
        if not lo <= x <= hi:
            return None  # the ordinary path raises JAX's OverflowError
    arr = device_put_numpy(np.asarray(x, dtype), ShapedArray((), dtype, True))
    if len(_scalar_cache) >= scalar_cache_limit:
        try:  # first in, first out; another thread may be evicting too
            del _scalar_cache[next(iter(_scalar_cache))]
        except (KeyError, RuntimeError, StopIteration):
            pass
    _scalar_cache[key] = arr
    return arr


def clear_scalar_cache(*_):
    _scalar_cache.clear()


# A scalar's dtype follows enable_x64: any configuration change empties the cache, as
# does ``traxla.clear_caches()``.
config.on_update(clear_scalar_cache)
on_clear(clear_scalar_cache)


_wrapped: dict = {}


def eager_cached(fn):
    """``fn`` with the eager fast path described above (one wrapper per function, so
    ``jnp.add`` and ``+`` share their compiled programs). A hit runs the jitted
    function's cached entry directly: the signature is built while the operands are
    checked, and no ``jit.__call__`` layer is crossed."""
    hit = _wrapped.get(fn)
    if hit is not None:
        return hit
    jitted = jit(fn)
    fast = jitted._fast  # (avals) -> entry; cleared in place, never replaced
    scalars = _scalar_cache

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:  # a boundary of traceback filtering (ir/traceback_util.py)
            # The debug switches (disable_jit, debug_nans/infs) are read on a miss only: any
            # change of them is a configuration change, which empties ``fast`` (see below).
            if not kwargs and (not _unusual or (type(_trace_state.trace) is EvalTrace
                                                 and not _flags.local_blocks)):
                entry = None
                eligible = False
                a = args[0] if len(args) == 1 else None
                # (one committed to the default device runs its programs too: pin)
                if type(a) is ArrayImpl and (a._placement is None
                                             or a._placement is _pinned_default[0]):
                    eligible = True  # one Array: the common case
                    pin = a._placement
                    bufs = [a._buf]
                    last = fast.last1  # see HitTable: the last one-Array hit
                    if last[0] is a.aval:
                        entry = last[1]
                    else:
                        entry = fast.get((a.aval,))
                        if entry is not None:
                            fast.last1 = (a.aval, entry)
                else:
                    avals = []
                    bufs = []
                    pin = None
                    for a in args:
                        t = type(a)
                        if t is ArrayImpl:
                            if a._placement is not None:
                                if a._placement is not _pinned_default[0]:
                                    break
                                pin = a._placement
                        elif t is float or t is int:
                            # A nonzero scalar's key is (type, value); zeros keep their sign.
                            c = scalars.get((t, a)) if a else None
                            if c is None:
                                c = scalar_operand(a)
                                if c is None:
                                    break
                            elif _flags.transfer_guard_host_to_device is not None:
                                # a cached device copy: still a transfer, as in JAX
                                transfer_guard.host_to_device(c.aval, default_sharding)
                            a = c
                        else:
                            break
                        avals.append(a.aval)
                        bufs.append(a._buf)
                    if avals and len(avals) == len(args):
                        eligible = True
                        if len(avals) == 2:  # HitTable.lookup2, inlined for binary operators
                            last = fast.last2
                            if last[0] is avals[0] and last[1] is avals[1]:
                                entry = last[2]
                            else:
                                entry = fast.lookup2(*avals)
                        else:
                            entry = fast.get(tuple(avals))
                if entry is not None:
                    direct = entry.direct  # the common case, inlined (Entry.call)
                    if direct is not None and not _tracebacks_enabled():
                        start, finish, handlers, aval = direct
                        try:
                            buf = finish(start(bufs), handlers)[0]
                        except RuntimeErrorType:
                            check_not_deleted([a for a in args if type(a) is ArrayImpl])
                            raise
                        out = ArrayImpl()
                        out.aval = aval
                        out._buf = buf
                        out._npy = None
                        out._placement = pin
                        return out
                    if pin is None:
                        return entry.call(_operands(args), bufs)
                    return pinned_results(entry.call(_operands(args), bufs))
                if eligible and not (_flags.disable_jit or _flags.debug_nans or _flags.debug_infs):
                    return jitted(*_operands(args))  # the first call compiles the signature
            stats["fallback"] += 1
            if transfer_guard.active("host_to_device") and type(_trace_state.trace) is EvalTrace:
                return _guarded_call(fn, args, kwargs)
            if (_flags.debug_nans or _flags.debug_infs) and type(_trace_state.trace) is EvalTrace:
                return debug_checks.run_deoptimized(fn, args, kwargs)
            return fn(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise

    register_boundary(wrapper)
    wrapper.__wrapped_eager__ = fn
    _wrapped[fn] = wrapper
    return wrapper


def _guarded_call(fn, args, kwargs):
    """``fn(*args, **kwargs)`` under a host-to-device transfer guard: each host operand (a
    Python scalar, a NumPy value) is one transfer of the value as given, as JAX's jitted
    ``jnp`` functions receive it (``x + 1`` sends a weakly typed int32), however ``fn``
    then converts it."""
    for a in (*args, *kwargs.values()):
        t = type(a)
        if t in (bool, int, float, complex):
            aval = ShapedArray((), dtypes.python_scalar_dtype(a), True)
        elif isinstance(a, (np.ndarray, np.generic)):
            aval = ShapedArray(a.shape, dtypes.canonicalize(a.dtype))
        else:
            continue
        transfer_guard.host_to_device(aval, default_sharding)
    with transfer_guard.internal():
        return fn(*args, **kwargs)


def _operands(args) -> list:
    """The fast path's Arrays for ``args`` (Python scalars as their cached device copies)."""
    return [a if type(a) is ArrayImpl else scalar_operand(a) for a in args]

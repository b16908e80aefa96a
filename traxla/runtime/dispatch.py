"""Eager evaluation: each primitive runs as a cached one-equation executable."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from traxla.ir.primitive import typing_rules
from traxla.ir.pytype_registry import value_handler_for
from traxla.ir.sharding_rules import infer_avals
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.elementwise import bitcast_convert_type_p
from traxla.ir.rules import random as _random_rules
from traxla.runtime.array import ArrayImpl, Token, device_put_numpy
from traxla.ir.config import config
from traxla.ir.thread_state import unusual as _unusual
from traxla.runtime import debug_checks
from traxla.runtime.cache import BoundedCache
from traxla.runtime.executable import compile_jaxpr
from traxla.runtime.placement import _config_values, default_placement

_check_flags = debug_checks.flags

# One-primitive executables, bounded (config ``eager_cache_size``), built once per key.
_eager_cache = BoundedCache(lambda: config.read("eager_cache_size"))


def to_array(x) -> ArrayImpl:
    """An Array for a concrete value: Arrays pass through; scalars and NumPy transfer."""
    if type(x) is ArrayImpl:
        return x
    if isinstance(x, Literal):
        return _scalar_array(np.asarray(x.val, x.aval.dtype), x.aval)
    t = type(x)
    if t in (bool, int, float, complex):
        dtype = dtypes.python_scalar_dtype(x)
        if t is int:
            info = np.iinfo(dtype)
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python int {x} too large to convert to {dtype}")
        return _scalar_array(np.asarray(x, dtype), ShapedArray((), dtype, True), fresh=True)
    if isinstance(x, (np.ndarray, np.generic)):
        dtypes.check_valid_array_dtype(x, x.dtype)
        dtype = dtypes.canonicalize(x.dtype)
        host = np.asarray(x, dtype)
        return device_put_numpy(host, ShapedArray(host.shape, dtype, False))
    if isinstance(x, ArrayImpl) or t is Token:  # (a token passes as its buffer)
        return x
    handler = value_handler_for(t)  # JAX's ``canonicalize_value`` handlers (tfp's proxy)
    if handler is not None and type(y := handler(x)) is not t:
        return to_array(y)
    m = getattr(x, "__jax_array__", None)  # JAX's protocol: flax's Variables as operands
    if m is not None:
        return to_array(m())
    raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type; expected an "
                    "array, a NumPy array or a Python scalar.")


def _scalar_array(host, aval, fresh=False) -> ArrayImpl:
    """An Array of a constant; a scalar keeps its host value too (read-only; a copy unless
    ``fresh``: made here), so that reading it back (a traced operation's literal: the 1 of
    ``1 - tanh(x)``) costs no transfer, nor, for bfloat16, a compiled bitcast."""
    out = device_put_numpy(host, aval)
    if host.ndim == 0 and host.dtype != dtypes.float0:
        value = host if fresh else np.array(host)
        value.flags.writeable = False
        out._npy = value
    return out


def _params_key(params: dict):
    return tuple(sorted(params.items()))


def one_equation_jaxpr(prim, in_avals, params) -> ClosedJaxpr:
    invars = [Var(a) for a in in_avals]
    out = infer_avals(prim, list(in_avals), params)
    outs = out if prim.multiple_results else [out]
    outvars = [Var(a) for a in outs]
    return ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(invars, outvars, prim, params)]))


# primitive -> fn(*args, **params): primitives that run in Python outside jit rather than
# as a one-equation executable (host callbacks call their function directly, as JAX does).
# An impl returning NotImplemented hands the call back to the one-equation executable.
eager_impls: dict = {}
# How a primitive runs eagerly on arrays spread over several devices: as a one-equation
# SPMD program, which only the jit layer above can build (it installs this hook).
placed_apply_hook = None


def apply_primitive(prim, args, params):
    outs = apply_primitive_unchecked(prim, args, params)
    if _check_flags.debug_nans or _check_flags.debug_infs:
        debug_checks.check_eager(prim, outs)
    return outs


def apply_primitive_unchecked(prim, args, params):
    impl = eager_impls.get(prim)
    if impl is not None:
        out = impl(*args, **params)
        if out is not NotImplemented:
            return out
    return apply_one_equation(prim, args, params)


def apply_one_equation(prim, args, params, extra_key=()):
    """``prim`` as a cached one-equation executable; ``extra_key`` names what else its
    lowering reads (a flag's value, for an eager impl that keys on it)."""
    arrays = [to_array(a) for a in args]
    if placed_apply_hook is not None:
        for a in arrays:
            if a._placement is not None:
                return placed_apply_hook(prim, arrays, params)
        if ((_config_values.default_device is not None or _unusual)
                and default_placement() is not None):  # (default_device, a mesh context)
            return placed_apply_hook(prim, arrays, params)  # on the default_device named
    in_avals = tuple(a.aval for a in arrays)
    key = (prim, in_avals, _params_key(params))
    if extra_key:
        key += extra_key
    exe = _eager_cache.get(key)
    if exe is None:
        if prim not in typing_rules:  # a user primitive (extend.core) given no def_impl
            raise NotImplementedError(f"Evaluation rule for '{prim.name}' not implemented")

        def build():
            if prim is jit_p:  # a jit equation run eagerly (vmap or jvp of a jit function):
                # its jaxpr compiled as the jit itself, named after it, as JAX's pjit impl
                exe = compile_jaxpr(params["jaxpr"], params["name"])
            else:
                exe = compile_jaxpr(one_equation_jaxpr(prim, in_avals, params), prim.name)
            debug_checks.log_compile(prim.name, in_avals, exe.compile_seconds)
            return exe
        exe = _eager_cache.get_or_create(key, build)
    outs = exe.execute(arrays)
    return outs if prim.multiple_results else outs[0]


def bitcast_to_uint(array: ArrayImpl) -> ArrayImpl:
    """The same bits as an unsigned array (readback of dtypes NumPy's buffer protocol lacks)."""
    target = {2: dtypes.uint16, 1: dtypes.uint8}[array.dtype.itemsize]
    return apply_primitive(bitcast_convert_type_p, [array], {"new_dtype": target})


def eager_cache_size() -> int:
    return len(_eager_cache)


# random_bits and random_split lower by the ``threefry_partitionable`` flag (as JAX's, which
# lower through the flag-reading Threefry implementation): eagerly, a program built under
# the other setting must not serve. The default setting keeps the plain cache key.
def _keyed_by_threefry_partitionable(prim):
    def impl(*args, **params):
        if _flag_values.threefry_partitionable:
            return NotImplemented
        return apply_one_equation(prim, args, params, ("threefry_partitionable", False))
    eager_impls[prim] = impl


_flag_values = config.current
for _prim in (_random_rules.random_bits_p, _random_rules.random_split_p):
    _keyed_by_threefry_partitionable(_prim)

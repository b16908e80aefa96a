"""``jax.experimental.colocated_python.func``: a colocated Python function, its
specialization (input specs, output specs, devices) and its call, which ships the
function to the colocated host (here: this process) and checks the specs."""
from __future__ import annotations

import numpy as np

from traxla import tree_util
from traxla.api.shape_dtype_struct import ShapeDtypeStruct
from traxla.experimental.colocated_python import serialization


def _spec(x):
    return ShapeDtypeStruct(x.shape, x.dtype, sharding=getattr(x, "sharding", None))


def _same_spec(a, b):
    return (tuple(a.shape) == tuple(b.shape) and np.dtype(a.dtype) == np.dtype(b.dtype)
            and (a.sharding is None or b.sharding is None or a.sharding == b.sharding))


class _Specialization:
    __slots__ = ("in_specs", "out_specs_fn", "devices")

    def __init__(self, in_specs=None, out_specs_fn=None, devices=None):
        self.in_specs, self.out_specs_fn, self.devices = in_specs, out_specs_fn, devices

    def update(self, in_specs=None, out_specs_fn=None, devices=None):
        for name, new in (("in_specs", in_specs), ("out_specs_fn", out_specs_fn),
                          ("devices", devices)):
            if new is not None and getattr(self, name) is not None:
                raise ValueError(f"{name} already specified")
        return _Specialization(self.in_specs if in_specs is None else in_specs,
                               self.out_specs_fn if out_specs_fn is None else out_specs_fn,
                               self.devices if devices is None else tuple(devices))


class _ColocatedFunction:
    """A colocated Python callable: ``specialize(...)`` narrows it, a call runs it."""

    def __init__(self, fun, specialization=None):
        self.fun = fun
        self._specialization = specialization or _Specialization()

    def specialize(self, in_specs=None, out_specs_fn=None, devices=None):
        """A copy told its input specs (``((args...), {kwargs})`` of ShapeDtypeStructs),
        how its output specs follow from the input specs, or its devices (which lets a
        function without arguments run)."""
        return _ColocatedFunction(self.fun, self._specialization.update(
            in_specs=in_specs, out_specs_fn=out_specs_fn, devices=devices))

    def __call__(self, *args, **kwargs):
        # what the colocated host runs
        fun = serialization._deserialize(serialization._serialize(self.fun))
        return _run(self._specialization, fun, args, kwargs)


def _run(spec, fun, args, kwargs):
    """Runs ``fun`` (on the colocated host: here) after checking its specialization."""
    leaves = tree_util.tree_leaves((args, kwargs))
    if spec.in_specs is not None:
        want = tree_util.tree_leaves(spec.in_specs)
        got = [_spec(x) for x in leaves]
        if len(want) != len(got) or not all(map(_same_spec, want, got)):
            raise ValueError(f"Input specs in specialization {spec.in_specs} do not match "
                             f"the call's inputs {tree_util.tree_map(_spec, (args, kwargs))}")
    if not leaves and spec.devices is None:
        raise ValueError("No devices found. colocated_python function without input "
                         "arguments must be first specialized with devices.")
    out = fun(*args, **kwargs)
    if spec.out_specs_fn is not None:
        want = tree_util.tree_leaves(spec.out_specs_fn(
            *tree_util.tree_map(_spec, args), **tree_util.tree_map(_spec, kwargs)))
        got = [_spec(x) for x in tree_util.tree_leaves(out)]
        if len(want) != len(got) or not all(map(_same_spec, want, got)):
            raise ValueError("The colocated Python function's outputs do not match the "
                             "specs out_specs_fn gave.")
    return out


# The other names of JAX's module (mostly its imports), as JAX's
from collections.abc import Callable
from collections.abc import Sequence
from traxla._src.traceback_util import api_boundary
from typing import Any
from typing import Any as ShapeDtypeStructTree
import dataclasses
import inspect
import random
import threading
import traxla as jax
import traxla._src.api as api
import traxla._src.dtypes as dtypes
import traxla._src.interpreters.pxla as pxla
import traxla._src.util as util
import traxla.experimental.colocated_python.func_backend as func_backend
import uuid
import weakref
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's IFRT internals of colocated Python (traxla implements its API its own way)",
      functions='is_prng_key_dtype jax_register_backend_cache make_callable physical_sharding wraps',
      classes='FunctionInfo Specialization',
      modules='ifrt_programs xc')


# -- PRNG keys across the colocated boundary (JAX's helpers; orbax wraps the last one) -------
# (JAX's colocated programs receive and return key arrays as their uint32 data: these turn
# the leaves listed in ``prng_info`` (leaf index -> PRNG implementation) back and forth.
# traxla runs the function in this process with the keys themselves, so its own calls need
# no conversion; the helpers serve code that builds on JAX's.)

def _is_key(x) -> bool:
    from traxla import dtypes
    return dtypes.issubdtype(getattr(x, "dtype", None) or np.float32, dtypes.prng_key)


def _unwrap_prng_keys(args_leaves, prng_info):
    """The listed leaves that are key arrays, as their key data."""
    from traxla import random
    result = list(args_leaves)
    for i in prng_info or ():
        if _is_key(result[i]):
            result[i] = random.key_data(result[i])
    return result


def _wrap_prng_keys(results, prng_info):
    """The listed leaves that are key data, as key arrays of their implementation."""
    from traxla import random
    result = list(results)
    for i, impl in (prng_info or {}).items():
        if not _is_key(result[i]):
            result[i] = random.wrap_key_data(result[i], impl=impl)
    return result


def _make_prng_wrapped_fun(fun, prng_in_info, prng_out_info):
    """``fun`` taking the listed input leaves as key data (wrapped into keys before the
    call) and giving the listed output leaves as key data."""
    import functools

    @functools.wraps(fun)
    def wrapped_fun(*args, **kwargs):
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        args, kwargs = tree_util.tree_unflatten(treedef, _wrap_prng_keys(leaves, prng_in_info))
        result = fun(*args, **kwargs)
        leaves, out_treedef = tree_util.tree_flatten(result)
        return tree_util.tree_unflatten(out_treedef, _unwrap_prng_keys(leaves, prng_out_info))
    return wrapped_fun

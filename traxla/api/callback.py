"""Host callbacks for users: ``pure_callback``, ``io_callback`` and ``effects_barrier``
(JAX's ``jax/_src/callback.py``).

The callback receives NumPy arrays and returns a pytree of array-likes matching
``result_shape_dtypes``; every result is checked for shape and dtype before it reaches the
program (a mismatch raises, never corrupts memory)."""
from __future__ import annotations

import numpy as np

from traxla import tree_util
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.callbacks import VMAP_METHODS, io_callback_p, pure_callback_p
from traxla.lowering.rules.callbacks import HostCallback, callback_error, take_callback_error
from traxla.runtime.dispatch import eager_impls, to_array


class _FlatCallback:
    """A Python function callable with flat arguments and results. Equal for the same
    function and argument structure, so that tracing twice gives equal params."""

    __slots__ = ("callback_func", "in_tree", "__weakref__")

    def __init__(self, callback_func, in_tree):
        self.callback_func = callback_func
        self.in_tree = in_tree

    def __call__(self, *flat_args):
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
        return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

    def __eq__(self, other):
        return (type(other) is _FlatCallback and self.callback_func == other.callback_func
                and self.in_tree == other.in_tree)

    def __hash__(self):
        return hash((self.callback_func, self.in_tree))

    def __repr__(self):
        return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree!r})"


def _check_shape_dtype(shape_dtype):
    if not (hasattr(shape_dtype, "shape") and hasattr(shape_dtype, "dtype")):
        raise TypeError("result_shape_dtypes must be a pytree of objects with .shape and .dtype "
                        f"(such as ShapeDtypeStruct or an array), got {shape_dtype!r}")
    dt = np.dtype(shape_dtype.dtype)
    if dtypes.canonicalize(dt) != dt:
        raise ValueError(
            "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled")


def _result_avals(result_shape_dtypes):
    leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    for leaf in leaves:
        _check_shape_dtype(leaf)
    avals = tuple(ShapedArray(tuple(x.shape), np.dtype(x.dtype)) for x in leaves)
    return avals, out_tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Calls a pure Python function from a traced program (``jax.pure_callback``)."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
            f"but got: {vmap_method}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    out_flat = pure_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                                    result_avals=result_avals, sharding=sharding,
                                    vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, out_flat)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Calls an impure Python function (``jax.experimental.io_callback``); ``ordered=True``
    keeps the calls in program order (threaded through a token)."""
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    out_flat = io_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                                  result_avals=result_avals, sharding=sharding, ordered=ordered)
    return tree_util.tree_unflatten(out_tree, out_flat)


def effects_barrier():
    """Waits until every function dispatched so far has completed its side effects.

    traxla runs a program that calls back to Python to completion before the call returns,
    so there is nothing left to wait for; a callback failure not yet reported is raised."""
    err = take_callback_error()
    if err is not None:
        raise err


# -- outside jit: call the function directly, with the same result checks ---------------

def host_values(args):
    """NumPy values of concrete operands, as the compiled path hands them to callbacks (a
    key array as its key data, as under jit)."""
    return [a if isinstance(a, np.ndarray) else
            np.asarray(a.physical_value()) if dtypes.is_extended(getattr(a, "dtype", None))
            else np.asarray(to_array(a)) for a in args]


def _eager_results_callback(prim, kind):
    def impl(*args, callback, result_avals, **params):
        # typed as under jit (refuses key arrays, with the same message)
        prim.abstract_eval(*[to_array(a).aval for a in args], callback=callback,
                           result_avals=result_avals, **params)
        host = HostCallback(callback, kind, result_avals, [False] * len(args), has_token=False)
        try:  # raised as JAX's, which runs the callback compiled
            outs = host.check_results(callback(*host_values(args)))
        except Exception as e:
            raise callback_error(e) from e
        return [to_array(np.asarray(o, a.dtype) if a.dtype == np.bool_ else o)
                for o, a in zip(outs, result_avals)]
    return impl


eager_impls[pure_callback_p] = _eager_results_callback(pure_callback_p, "pure")
eager_impls[io_callback_p] = _eager_results_callback(io_callback_p, "io")

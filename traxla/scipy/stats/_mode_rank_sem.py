"""``mode``, ``rankdata`` and ``sem`` of ``jax.scipy.stats`` (mode and rankdata need
``traxla.numpy.unique``/``nonzero`` with ``size=``, which they call when present)."""
from __future__ import annotations


import math
from typing import NamedTuple

import numpy as np

from traxla.api import jit
from traxla.batching.batch_trace import vmap
from traxla.ir import dtypes
from traxla import lax, numpy as jnp
from traxla.numpy._promotion import check_arraylike, promote_args_inexact_arrays as promote_args_inexact


def canonicalize_axis(axis, ndim):
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % ndim


def _need(name):
  fn = getattr(jnp, name, None)
  if fn is None:
    raise NotImplementedError(f"this function needs traxla.numpy.{name}, which this build of "
                              "traxla does not provide yet.")
  return fn


def _check_nan_policy_propagate(nan_policy, name):
  """``mode`` and ``rankdata`` take only ``nan_policy="propagate"`` (JAX's errors otherwise)."""
  if nan_policy not in ["propagate", "omit", "raise"]:
    raise ValueError(
      f"Illegal nan_policy value {nan_policy!r}; expected one of "
      "{'propagate', 'omit', 'raise'}"
    )
  if nan_policy == "omit":
    raise NotImplementedError(
      f"Logic for `nan_policy` of {nan_policy} is not implemented"
    )
  if nan_policy == "raise":
    raise NotImplementedError(
      f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
      f"Please check if nans exist in `x` outside of the `{name}` function."
    )


class ModeResult(NamedTuple):
  mode: object
  count: object


def mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
  """Compute the mode (most common value) along an axis of an array."""
  check_arraylike("mode", a)
  x = jnp.atleast_1d(a)

  _check_nan_policy_propagate(nan_policy, "mode")
  if axis is not None:
    axis = canonicalize_axis(axis, x.ndim)

  input_shape = x.shape
  if keepdims:
    if axis is None:
      output_shape = tuple(1 for i in input_shape)
    else:
      output_shape = tuple(1 if i == axis else s for i, s in enumerate(input_shape))
  else:
    if axis is None:
      output_shape = ()
    else:
      output_shape = tuple(s for i, s in enumerate(input_shape) if i != axis)

  if axis is None:
    axis = 0
    x = x.ravel()

  def _mode_helper(x: Array) -> tuple[Array, Array]:
    """Helper function to return mode and count of a given array."""
    if x.size == 0:
      return (jnp.array(np.nan, dtype=dtypes.default_float()),
              jnp.array(0, dtype=dtypes.default_float()))
    else:
      vals, counts = _need('unique')(x, return_counts=True, size=x.size)
      return vals[jnp.argmax(counts)], counts.max()

  x = jnp.moveaxis(x, axis, 0)
  x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
  vals, counts = vmap(_mode_helper, in_axes=1)(x)
  return ModeResult(vals.reshape(output_shape), counts.reshape(output_shape))

def invert_permutation(i: Array) -> Array:
  """Helper function that inverts a permutation array."""
  return jnp.empty_like(i).at[i].set(jnp.arange(i.size, dtype=i.dtype))


def rankdata(
  a: ArrayLike,
  method: str = "average",
  *,
  axis: int | None = None,
  nan_policy: str = "propagate",
) -> Array:
  """Compute the rank of data along an array axis."""
  check_arraylike("rankdata", a)

  _check_nan_policy_propagate(nan_policy, "rankdata")

  if method not in ("average", "min", "max", "dense", "ordinal"):
    raise ValueError(f"unknown method '{method}'")

  if axis is not None:
    return _need('apply_along_axis')(rankdata, axis, a, method)

  a = jnp.ravel(a)
  out_dtype = dtypes.default_float()

  def _rankdata(a: Array) -> Array:
    arr, sorter = lax.sort_key_val(a, jnp.arange(a.size))
    inv = invert_permutation(sorter)

    if method == "ordinal":
      return (inv + 1).astype(out_dtype)
    obs = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
    dense = obs.cumsum()[inv]
    if method == "dense":
      return dense.astype(out_dtype)
    count = _need('nonzero')(obs, size=arr.size + 1, fill_value=obs.size)[0].astype(out_dtype)
    if method == "max":
      return count[dense]
    if method == "min":
      return count[dense - 1] + 1
    if method == "average":
      return .5 * (count[dense] + count[dense - 1] + 1)
    raise ValueError(f"unknown method '{method}'")

  return lax.cond(jnp.any(jnp.isnan(a)),
                  lambda a: jnp.full_like(a, jnp.nan, out_dtype),
                  _rankdata, a)


def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *, keepdims: bool = False) -> Array:
  """Compute the standard error of the mean."""
  b, = promote_args_inexact("sem", a)
  if nan_policy == "propagate":
    size = b.size if axis is None else b.shape[axis]
    return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
  elif nan_policy == "omit":
    count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
    return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
  else:
    raise ValueError(f"{nan_policy} is not supported")


mode = jit(mode, static_argnames=("axis", "nan_policy", "keepdims"))
rankdata = jit(rankdata, static_argnames=("method", "axis", "nan_policy"))
sem = jit(sem, static_argnames=("axis", "nan_policy", "keepdims"))

"""``traxla.nn.initializers``: parameter initializers as ``jax.nn.initializers`` defines them.
Each factory returns ``init(key, shape, dtype=..., out_sharding=None)``, and draws the same
random bits with the same float ops as JAX's, so a given key initializes bit-for-bit the same
parameters."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from traxla import numpy as jnp, random
from traxla.ir import dtypes

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]


@runtime_checkable
class Initializer(Protocol):
    def __call__(self, key, shape, dtype=None, out_sharding=None):
        raise NotImplementedError


def _default(dtype):
    return dtypes.default_float() if dtype is None else dtype


def _no_sharding(out_sharding, name):
    if out_sharding is not None:
        raise NotImplementedError(f"nn.initializers.{name}: out_sharding is not supported by "
                                  "traxla's samplers yet; place the result with device_put.")


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (``key`` unused)."""
    _no_sharding(out_sharding, "zeros")
    return jnp.zeros(shape, _default(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (``key`` unused)."""
    _no_sharding(out_sharding, "ones")
    return jnp.ones(shape, _default(dtype))


def constant(value, dtype=None):
    """An initializer filling with ``value``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "constant")
        return jnp.full(shape, value, dtype=_default(dtype))
    return init


def _scaled(name, sample, scale, dtype):
    """An initializer drawing ``sample(key, shape, dtype)`` times ``scale``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, name)
        dtype = _default(dtype)
        return sample(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform on [0, scale)."""
    return _scaled("uniform", random.uniform, scale, dtype)


def normal(stddev=1e-2, dtype=None):
    """Normal with standard deviation ``stddev``."""
    return _scaled("normal", random.normal, stddev, dtype)


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """Truncated normal on (lower, upper), scaled by ``stddev``."""
    def sample(key, shape, dtype):
        return random.truncated_normal(key, lower, upper, shape, dtype)
    return _scaled("truncated_normal", sample, stddev, dtype)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the in/out sizes times the receptive field (the other non-batch
    dims)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")

    def size(axes):
        return shape[axes] if isinstance(axes, int) else math.prod([shape[i] for i in axes])
    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_dtype(real_dtype):
    return np.dtype(np.complex128) if np.dtype(real_dtype) == np.float64 else np.dtype(np.complex64)


def _complex_uniform(key, shape, dtype):
    key_r, key_theta = random._unstack(random.split(key))  # as JAX iterates: index_in_dim
    real_dtype = np.array(0, dtype).real.dtype
    dtype = _complex_dtype(real_dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    key_r, key_theta = random._unstack(random.split(key))  # as JAX iterates: index_in_dim
    real_dtype = np.array(0, dtype).real.dtype
    dtype = _complex_dtype(real_dtype)
    t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
         * random.uniform(key_r, shape, real_dtype).astype(dtype))
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples with variance ``scale / denominator`` (denominator from the fans by ``mode``)
    from a truncated normal, normal or uniform ``distribution``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "variance_scaling")
        shape = tuple(operator.index(d) for d in (shape if isinstance(shape, Sequence)
                                                  else (shape,)))
        dtype = _default(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        floating = dtypes.is_float(np.dtype(dtype))
        if distribution == "truncated_normal":
            if floating:
                # 0.8796... is the stddev of a standard normal truncated to (-2, 2).
                stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            if floating:
                return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
    return init


def _scaling(scale, mode, distribution):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    return factory


glorot_uniform = xavier_uniform = _scaling(1.0, "fan_avg", "uniform")
glorot_normal = xavier_normal = _scaling(1.0, "fan_avg", "truncated_normal")
lecun_uniform = _scaling(1.0, "fan_in", "uniform")
lecun_normal = _scaling(1.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = _scaling(2.0, "fan_in", "uniform")
he_normal = kaiming_normal = _scaling(2.0, "fan_in", "truncated_normal")
for _name in ("glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform",
              "he_normal"):
    globals()[_name].__name__ = _name


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Uniformly random orthogonal matrices (along ``column_axis``), scaled."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "orthogonal")
        dtype = _default(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Delta-orthogonal convolution kernels: an orthogonal matrix at the spatial center."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "delta_orthogonal")
        dtype = _default(dtype)
        if len(shape) not in [3, 4, 5]:
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(
            key, shape[-2:])
        w = jnp.zeros(shape, dtype=dtype)
        center = tuple((k - 1) // 2 for k in shape[:-2])
        return w.at[center + (Ellipsis,)].set(ortho_matrix)
    return init

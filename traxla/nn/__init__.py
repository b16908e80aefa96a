"""``traxla.nn``: activation functions and friends, as ``jax.nn`` defines them (same
inner ``jit`` names and ``custom_jvp`` rules, so jaxprs print as JAX's)."""
from __future__ import annotations

import functools
import operator

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.autodiff import custom_jvp
from traxla.ir import dtypes
from traxla.ir.config import config
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import ensure_arraylike, promote_args_inexact_arrays as promote_args_inexact
from traxla.numpy._reductions import logsumexp  # noqa: F401  (jax.nn.logsumexp)

__all__ = ["relu", "relu6", "gelu", "silu", "swish", "sigmoid", "softplus", "softmax",
           "log_softmax", "logsumexp", "one_hot", "leaky_relu", "elu", "celu", "selu",
           "log_sigmoid", "soft_sign", "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish",
           "tanh", "standardize", "squareplus", "mish"]

tanh = jnp.tanh


@custom_jvp
@jit
def relu(x):
    """Rectified linear unit ``max(x, 0)``; its derivative at 0 is 0, as JAX's."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@custom_jvp
@jit
def relu6(x):
    """``min(max(x, 0), 6)``."""
    return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))`` (the ``logistic`` primitive)."""
    return lax.logistic(x)


@jit
def softplus(x):
    """``log(1 + exp(x))``, as ``logaddexp(x, 0)``."""
    return jnp.logaddexp(x, 0)


@jit
def soft_sign(x):
    x_arr = ensure_arraylike("soft_sign", x)
    return x_arr / (jnp.abs(x_arr) + 1)


@jit
def silu(x):
    """SiLU / swish: ``x * sigmoid(x)``."""
    x_arr = ensure_arraylike("silu", x)
    return x_arr * sigmoid(x_arr)


swish = silu


@jit
def mish(x):
    x_arr = ensure_arraylike("mish", x)
    return x_arr * jnp.tanh(softplus(x_arr))


@jit
def log_sigmoid(x):
    x_arr = ensure_arraylike("log_sigmoid", x)
    return -softplus(-x_arr)


@jit
def elu(x, alpha=1.0):
    x_arr = ensure_arraylike("elu", x)
    return jnp.where(x_arr > 0, x_arr, alpha * jnp.expm1(jnp.where(x_arr > 0, 0., x_arr)))


@jit
def leaky_relu(x, negative_slope=1e-2):
    x_arr = ensure_arraylike("leaky_relu", x)
    return jnp.where(x_arr >= 0, x_arr, negative_slope * x_arr)


@jit
def hard_tanh(x):
    x_arr = ensure_arraylike("hard_tanh", x)
    return jnp.where(x_arr > 1, 1, jnp.where(x_arr < -1, -1, x_arr))


@jit
def celu(x, alpha=1.0):
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


@jit
def selu(x):
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


@jit
def hard_sigmoid(x):
    return relu6(x + 3.) / 6.


@jit
def hard_silu(x):
    x_arr = ensure_arraylike("hard_silu", x)
    return x_arr * hard_sigmoid(x_arr)


hard_swish = hard_silu


@jit
def squareplus(x, b=4):
    x, b = ensure_arraylike("squareplus", x, b)
    y = x + jnp.sqrt(jnp.square(x) + b)
    return y / 2


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit: the tanh approximation (default) or the exact
    ``x * Phi(x)`` form (``approximate=False``)."""
    [x_arr] = promote_args_inexact("gelu", x)
    dt = lax.dtype_of(x_arr)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dt)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x_arr + 0.044715 * (x_arr ** 3))))
        return x_arr * cdf
    sqrt_half = np.sqrt(0.5).astype(dt)
    return jnp.array(0.5 * x_arr * (lax.erfc(-x_arr * sqrt_half)), dtype=dt)


def _log_softmax(x, axis=-1, where=None):
    x_arr = ensure_arraylike("log_softmax", x)
    x_max = jnp.max(x_arr, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x_arr if where is None else jnp.where(where, x_arr, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


log_softmax = jit_named(_log_softmax, "log_softmax", ("axis",))


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x), axis)``, with the max subtracted for stability: by default (as
    JAX's) its gradient stopped; under ``softmax_custom_jvp`` a custom JVP rule instead."""
    if config.current.softmax_custom_jvp:
        return _softmax(x, axis, where)
    return _softmax_deprecated(x, axis, where)


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis=-1, where=None, initial=-np.inf):
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))


def _softmax_deprecated(x, axis=-1, where=None, initial=-np.inf):
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def _one_hot_impl(x, num_classes, *, dtype, axis):
    ndim = len(lax.shape_of(x))
    axis = operator.index(axis)
    if not -(ndim + 1) <= axis < ndim + 1:
        raise ValueError(f"one_hot: axis {axis} is out of bounds for an output of dimension "
                         f"{ndim + 1}")
    output_pos_axis = axis % (ndim + 1)
    lhs = lax.expand_dims(x, (axis,))
    rhs_shape = [1] * ndim
    rhs_shape.insert(output_pos_axis, num_classes)
    rhs = lax.broadcasted_iota(lax.dtype_of(x), rhs_shape, output_pos_axis)
    return (lhs == rhs).astype(dtype)


_one_hot = jit_named(_one_hot_impl, "_one_hot", ("num_classes", "dtype", "axis"))


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """``x`` (integer class ids) as one-hot vectors of length ``num_classes`` along
    ``axis``; out-of-range ids give all-zero rows."""
    if hasattr(num_classes, "_trace"):
        num_classes._concretization_error(
            "one_hot", "The error arose in jax.nn.one_hot argument `num_classes`.")
    num_classes = operator.index(num_classes)
    x_arr = jnp.asarray(x)
    dtype = dtypes.default_float() if dtype is None else dtypes.to_dtype(dtype)
    return _one_hot(x_arr, num_classes, dtype=dtype, axis=axis)


def _standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                 algorithm="fast"):
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True,
                                where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - \
                jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


standardize = jit_named(_standardize, "standardize", ("axis", "algorithm"))

from traxla.nn._functions import (dot_product_attention, glu, identity, log1mexp,  # noqa: E402,F401
                         logmeanexp, sparse_plus, sparse_sigmoid)
from traxla.nn import initializers  # noqa: E402,F401

__all__ += ["dot_product_attention", "glu", "identity", "log1mexp", "logmeanexp", "sparse_plus",
            "sparse_sigmoid", "initializers"]
from traxla.nn._scaled_matmul import (get_scaled_dot_general_config, scaled_dot_general,  # noqa: E402,F401
                             scaled_matmul)

__all__ += ["get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul"]

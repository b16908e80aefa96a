"""Gamma sampling: the ``random_gamma`` primitive (Marsaglia and Tsang's rejection method per
element, ``_gamma_one``) with its lowering by decomposition, and the ``gamma``/``loggamma``
samplers, bit-for-bit as JAX's (``jax/_src/random/core.py``): the same key splits, the same
loops, the same float ops."""
from __future__ import annotations

import math

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.batching.batch_trace import vmap
from traxla.ir import dtypes
from traxla.ir.rules.random import random_gamma_p
from traxla.lowering.decompose import register_decomposition
from traxla.tracer.staging import trace_to_jaxpr
from traxla.random import (_split, _unstack, exponential, normal, uniform, _canonicalize_dtype,
                           _canonicalize_shape, _check_prng_key, _check_shape, _shape)


def _c(example, value):
    """JAX's ``lax._const`` on a typed array: a NumPy scalar of its dtype."""
    return np.array(value, lax.dtype_of(example))


def _gamma_one(key, alpha, log_space):
    zero, one, two, minus_one = (_c(alpha, v) for v in (0, 1, 2, -1))
    one_over_two, one_over_three = _c(alpha, 0.5), _c(alpha, 1. / 3.)
    squeeze_const = _c(alpha, 0.0331)
    dtype = lax.dtype_of(alpha)

    # alpha < 1 is boosted to alpha + 1: Gamma(alpha) ~ Gamma(alpha + 1) * U^(1 / alpha)
    # (in log space when asked, against underflow for very small alpha).
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(kxvu):
        _, x, v, u = kxvu
        return lax.bitwise_and(
            lax.ge(u, lax.sub(one, lax.mul(squeeze_const, lax.mul(x, x)))),
            lax.ge(lax.log(u), lax.add(lax.mul(x, one_over_two),
                                       lax.mul(d, lax.add(lax.sub(one, v), lax.log(v))))))

    def body_fn(kxvu):
        def next_kxv(kxv):
            key, subkey = _unstack(_split(kxv[0]))
            x = normal(subkey, (), dtype=dtype)
            return key, x, lax.add(one, lax.mul(x, c))

        key, x_key, u_key = _unstack(_split(kxvu[0], 3))
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv,
                                 (x_key, zero, minus_one))
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), uniform(u_key, (), dtype=dtype)

    # The initial state makes cond_fn true.
    key, subkey = _unstack(_split(key))
    _, _, v, _ = lax.while_loop(cond_fn, body_fn, (key, zero, one, two))
    if log_space:
        log_samples = lax.neg(exponential(subkey, (), dtype=dtype))
        log_boost = lax.select(lax.bitwise_or(boost_mask, log_samples == 0), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = 1 - uniform(subkey, (), dtype=dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_impl(key, a, *, log_space):
    a_shape = tuple(a.shape)
    key_ndim = len(key.shape)
    split_count = math.prod(a_shape[key_ndim:])
    keys = lax.reshape(key, (math.prod(key.shape),))
    keys = vmap(_split, in_axes=(0, None))(keys, split_count)
    keys = lax.reshape(keys, (math.prod(keys.shape),))
    alphas = lax.reshape(a, (math.prod(a_shape),))
    samples = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, alphas)
    return lax.reshape(samples, a_shape)


def _build_gamma(avals_in, params):
    return trace_to_jaxpr(lambda key, a: [_gamma_impl(key, a, **params)], list(avals_in))


register_decomposition(random_gamma_p, _build_gamma)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats."""
    return _gamma_sampler("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key, a, shape=None, dtype=None):
    """Logarithms of Gamma(a, 1) floats, sampled in log space (accurate for small ``a``)."""
    return _gamma_sampler("loggamma", key, a, shape, dtype, log_space=True)


def _gamma_sampler(name, key, a, shape, dtype, log_space):
    key, _ = _check_prng_key(name, key)
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
    if shape is not None:
        shape = _canonicalize_shape(shape)
    return _gamma(key, a, shape=shape, dtype=dtype, log_space=log_space)


def _gamma(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = _shape(a)
    else:
        _check_shape("gamma", shape, _shape(a))
    a = lax.convert_element_type(a, dtype)
    if _shape(a) != shape:
        a = jnp.broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, log_space=log_space)


_gamma = jit(_gamma, static_argnames=("shape", "dtype", "log_space"))

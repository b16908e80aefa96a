"""Poisson, binomial and multinomial counts, as JAX samples them: Knuth's product of
uniforms or Hörmann's transformed rejection (PTRS) for the Poisson, inversion by geometric
waiting times or BTRS for the binomial, a scan of binomials for the multinomial."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.ir import dtypes
from traxla.numpy._promotion import (broadcast_shapes as _broadcast_shapes, check_arraylike,
                                     promote_dtypes_inexact)
from traxla.random import (_canonicalize_dtype, _canonicalize_shape, _check_prng_key, _check_shape, _shape,
               _split, _unstack, split, uniform)


def _is_nan(x):
    return lax.ne(x, x)


def _c(example, value):
    return np.array(value, lax.dtype_of(example))


# -- poisson --------------------------------------------------------------------------------------

def _poisson_knuth(key, lam, shape, dtype, max_iters):
    # Knuth: count uniforms until their product drops below exp(-lam) (for small lam).
    def body_fn(carry):
        i, k, rng, log_prod = carry
        rng, subkey = _unstack(_split(rng))
        k = lax.select(log_prod > -lam, k + 1, k)
        u = uniform(subkey, shape, np.float32)
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond_fn(carry):
        i, log_prod = carry[0], carry[3]
        return (log_prod > -lam).any() & (i < max_iters)

    k_init = lax.full_like(lam, 0, dtype, shape)
    log_rate_init = lax.full_like(lam, 0, np.float32, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, key, log_rate_init))[1]
    return (k - 1).astype(dtype)


_poisson_knuth = jit(_poisson_knuth, static_argnums=(2, 3, 4))


def _rejection_loop(propose, key, k_init, accepted, max_iters):
    """Hörmann's transformed rejection, every element at once: each round ``propose`` draws,
    from two fresh keys, ``(k, accept1, reject, accept2)``; an element keeps the first ``k``
    accepted (``accept1 | (~reject & accept2)``). The samples, after at most ``max_iters``
    rounds."""
    def body_fn(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _unstack(_split(key, 3))
        k, accept1, reject, accept2 = propose(subkey_0, subkey_1)
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        accepted |= accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry):
        i, accepted = carry[0], carry[2]
        return (~accepted).any() & (i < max_iters)

    return lax.while_loop(cond_fn, body_fn, (0, k_init, accepted, key))[1]


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    # Hörmann's transformed rejection with squeeze (PTRS), for lam >= 10.
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def propose(subkey_0, subkey_1):
        u = uniform(subkey_0, shape, lam.dtype) - 0.5
        v = uniform(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        return k, accept1, reject, s <= t

    k_init = lax.full_like(lam, -1, lam.dtype, shape)
    accepted = lax.full_like(lam, False, np.dtype("bool"), shape)
    return _rejection_loop(propose, key, k_init, accepted, max_iters).astype(dtype)


_poisson_rejection = jit(_poisson_rejection, static_argnums=(2, 3, 4))


def _poisson(key, lam, shape, dtype):
    # Both samplers run on every element (a select picks one): the loops are vectorized.
    use_knuth = _is_nan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)
    result = lax.select(use_knuth,
                        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


_poisson = jit(_poisson, static_argnums=(2, 3), static_argnames=("shape", "dtype"))


def poisson(key, lam, shape=None, dtype=None):
    """Poisson counts with rate ``lam``."""
    key, _ = _check_prng_key("poisson", key)
    dtype = _canonicalize_dtype(int if dtype is None else dtype)
    shape = _canonicalize_shape(shape) if shape is not None else _shape(lam)
    lam = jnp.broadcast_to(lam, shape)
    lam = lax.convert_element_type(lam, np.float32)
    return _poisson(key, lam, shape=shape, dtype=dtype)


# -- binomial -------------------------------------------------------------------------------------

_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287]


def _stirling_approx_tail(k):
    stirling_tail_vals = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_tail_values = k <= 9
    k = lax.clamp(_c(k, 0.0), k, _c(k, 9.0))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_tail_values, stirling_tail_vals[jnp.asarray(k, dtype="int32")], approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    log1minusprob = jnp.log1p(-prob)

    def body_fn(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = _unstack(split(key))
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(subkey, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        geom_sum = geom_sum + geom
        return i + 1, num_geom_out, geom_sum, key

    def cond_fn(carry):
        i, geom_sum = carry[0], carry[2]
        return (geom_sum <= count).any() & (i < max_iters)

    num_geom_init = lax.full_like(prob, 0, prob.dtype, shape)
    geom_sum_init = lax.full_like(prob, 0, prob.dtype, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, num_geom_init, geom_sum_init, key))[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    # Hörmann's BTRS transformed rejection for count * prob > 10.
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def propose(subkey_0, subkey_1):
        u = uniform(subkey_0, shape, prob.dtype)
        v = uniform(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        return k, accept1, reject, v <= ub

    k_init = lax.full_like(prob, -1, prob.dtype, shape)
    accepted = jnp.full(shape, False, bool)
    return _rejection_loop(propose, key, k_init, accepted, max_iters).astype(dtype)


def _binomial(key, count, prob, shape, dtype):
    if shape is None:
        shape = tuple(_broadcast_shapes(_shape(count), _shape(prob)))
    else:
        _check_shape("binomial", shape, _shape(count), _shape(prob))
    (prob,) = promote_dtypes_inexact(prob)
    count = lax.convert_element_type(count, lax.dtype_of(prob))  # prob may be a folded constant
    count = jnp.broadcast_to(count, shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _is_nan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = _is_nan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & (~invalid), jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count.astype(dtype) - samples)


# JAX's ``@jit(static_argnums=(3, 4), inline=True)``: one compiled program when called
# eagerly (op by op it compiled ~37 programs a call), no jit equation inside a trace.
_binomial = jit(_binomial, static_argnums=(3, 4), inline=True)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts, as floats."""
    key, _ = _check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dtype}")
    if shape is not None:
        shape = _canonicalize_shape(shape)
    return _binomial(key, n, p, shape, dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of ``n`` draws over categories with probabilities ``p``
    (last axis), as a scan of conditional binomials."""
    key, _ = _check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    if shape is None:
        shape = _shape(p)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)

    def f(remainder, ratio_key):
        ratio, key = ratio_key
        count = binomial(key, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    p = jnp.moveaxis(p, -1, 0)
    remaining_probs = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = split(key, _shape(ratios)[0])
    _, counts = lax.scan(f, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype if dtype is not None
                                              else dtypes.default_float())

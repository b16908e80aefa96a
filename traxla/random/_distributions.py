"""The continuous and discrete samplers built on ``uniform``, ``normal`` and ``gamma``:
each is a jitted helper with JAX's name (``_pareto``, ``_t``, ...) whose ops, key splits and
loops are those of ``jax/_src/random/core.py``, so samples are bit-for-bit JAX's and jaxprs
print the same. Helpers JAX marks ``inline=True`` are plain functions here (no ``jit``
equation, as JAX's inlining leaves none)."""
from __future__ import annotations

import math

import numpy as np

import operator

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.ir import dtypes
from traxla.ir.rules.random import random_clone_p
from traxla.numpy._promotion import (broadcast_shapes as _broadcast_shapes, check_arraylike,
                                     promote_dtypes_inexact)
from traxla.random import (_canonicalize_dtype, _canonicalize_shape, _check_prng_key, _check_shape, _shape,
               _split, _unstack, bernoulli, exponential, normal, split, uniform)
from traxla.random._gamma import gamma, loggamma
from traxla.nn import softmax

__all__ = ["ball", "beta", "binomial", "cauchy", "chisquare", "clone", "dirichlet",
           "double_sided_maxwell", "f", "generalized_normal", "geometric", "lognormal",
           "maxwell", "multinomial", "multivariate_normal", "orthogonal", "pareto", "poisson",
           "rademacher", "rayleigh", "t", "triangular", "wald", "weibull_min"]


def _c(example, value):
    """JAX's ``lax._const`` on a typed array: a NumPy scalar of its dtype."""
    return np.array(value, lax.dtype_of(example))


def _is_nan(x):
    return lax.ne(x, x)


def _float_dtype(name, dtype, what="a float"):
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return dtype


def _check_broadcast_shapes(name, shape, *args):
    arg_shapes = [_shape(a) for a in args]
    if shape is None:
        return tuple(_broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    shape = _canonicalize_shape(shape)
    _check_shape(name, shape, *arg_shapes)
    return shape


def _check_all_safe_to_cast(name, dtype, *args):
    """A parameter must not lose precision when converted to the sample dtype (JAX's
    ``dtypes.safe_to_cast``: the promotion of the argument with the dtype is the dtype)."""
    for arg in args:
        arg_dtype = lax.dtype_of(arg) if not isinstance(arg, (int, float, complex)) else None
        if arg_dtype is None or np.dtype(arg_dtype) == np.dtype(dtype):
            continue
        if jnp.result_type(arg, dtype) != np.dtype(dtype):
            raise TypeError(f"In arguments to {name}, cannot safely cast argument of type "
                            f"{jnp.asarray(arg).dtype} to {dtype}")


def _checked_float_args(name, key, shape, dtype, *params):
    """JAX's checks of a float sampler's arguments, in its order: the key, the float dtype,
    ``shape`` against the parameters' broadcast shape, and the parameters' safe cast."""
    key, _ = _check_prng_key(name, key)
    dtype = _float_dtype(name, dtype)
    shape = _check_broadcast_shapes(name, shape, *params)
    _check_all_safe_to_cast(name, dtype, *params)
    return key, shape, dtype


def _linalg(name, fn):
    linalg = getattr(jnp, "linalg", None)
    impl = getattr(linalg, name, None)
    if impl is None:
        raise NotImplementedError(f"traxla.random.{fn} needs traxla.numpy.linalg.{name}, which "
                                  "this build of traxla does not provide yet.")
    return impl


# -- continuous samplers ----------------------------------------------------------------------------

def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy floats."""
    key, _ = _check_prng_key("cauchy", key)
    dtype = _float_dtype("cauchy", dtype)
    return _cauchy(key, _canonicalize_shape(shape), dtype)


def _cauchy(key, shape, dtype):
    _check_shape("cauchy", shape)
    u = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.)
    return lax.tan(lax.mul(_c(u, np.pi), lax.sub(u, _c(u, 0.5))))


_cauchy = jit(_cauchy, static_argnums=(1, 2))


def pareto(key, b, shape=None, dtype=None):
    """Pareto floats with shape parameter ``b``."""
    key, shape, dtype = _checked_float_args("pareto", key, shape, dtype, b)
    return _pareto(key, b, shape=shape, dtype=dtype)


def _pareto(key, b, shape, dtype):
    b = lax.convert_element_type(b, dtype)
    return lax.exp(exponential(key, shape, dtype) / b)


_pareto = jit(_pareto, static_argnums=(2, 3), static_argnames=("shape", "dtype"))


def t(key, df, shape=None, dtype=None):
    """Student's t floats with ``df`` degrees of freedom."""
    key, shape, dtype = _checked_float_args("t", key, shape, dtype, df)
    return _t(key, df, shape=shape, dtype=dtype)


def _t(key, df, shape, dtype):
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = _unstack(_split(key))
    n = normal(key_n, shape, dtype)
    half_df = lax.div(df, _c(n, 2))
    g = gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


_t = jit(_t, static_argnums=(2, 3), static_argnames=("shape", "dtype"))


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square floats with ``df`` degrees of freedom."""
    key, shape, dtype = _checked_float_args("chisquare", key, shape, dtype, df)
    return _chisquare(key, df, shape, dtype, None)


def _chisquare(key, df, shape, dtype, out_sharding):
    df = lax.convert_element_type(df, dtype)
    two = _c(df, 2)
    half_df = lax.div(df, two)
    log_g = loggamma(key, a=half_df, shape=shape, dtype=dtype)
    return lax.mul(jnp.exp(log_g), two)


_chisquare = jit(_chisquare, static_argnums=(2, 3, 4))


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distribution floats."""
    key, shape, dtype = _checked_float_args("f", key, shape, dtype, dfnum, dfden)
    return _f(key, dfnum, dfden, shape, dtype, None)


def _f(key, dfnum, dfden, shape, dtype, out_sharding):
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = _unstack(_split(key))
    chi2_dfn = chisquare(key_dfn, dfnum, shape, dtype)
    chi2_dfd = chisquare(key_dfd, dfden, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


_f = jit(_f, static_argnums=(3, 4, 5))


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats."""
    key, _ = _check_prng_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    _check_all_safe_to_cast("beta", dtype, a, b)
    shape = _check_broadcast_shapes("beta", shape, a, b)
    return _beta(key, a, b, shape=shape, dtype=dtype)


def _beta(key, a, b, shape, dtype):
    a = lax.convert_element_type(a, dtype)
    b = lax.convert_element_type(b, dtype)
    key_a, key_b = _unstack(_split(key))
    a = jnp.broadcast_to(a, shape)
    b = jnp.broadcast_to(b, shape)
    log_gamma_a = loggamma(key_a, a, shape, dtype)
    log_gamma_b = loggamma(key_b, b, shape, dtype)
    # Scaled by the larger of the two, against underflow for small a and b.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


_beta = jit(_beta, static_argnums=(3, 4), static_argnames=("shape", "dtype"))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors along alpha's last axis."""
    key, _ = _check_prng_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    if shape is not None:
        shape = _canonicalize_shape(shape)
    return _dirichlet(key, alpha, shape=shape, dtype=dtype)


def _dirichlet(key, alpha, shape, dtype):
    if not len(_shape(alpha)) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(_shape(alpha))}")
    if shape is None:
        shape = _shape(alpha)[:-1]
    else:
        _check_shape("dirichlet", shape, _shape(alpha)[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    log_gamma_samples = loggamma(key, alpha, shape + _shape(alpha)[-1:], dtype)
    return softmax(log_gamma_samples, -1)


_dirichlet = jit(_dirichlet, static_argnums=(2, 3), static_argnames=("shape", "dtype"))


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability."""
    key, _ = _check_prng_key("rademacher", key)
    dtype = _canonicalize_dtype(int if dtype is None else dtype)
    return _rademacher(key, _canonicalize_shape(shape), dtype, None)


def _rademacher(key, shape, dtype, out_sharding):
    samples = bernoulli(key=key, p=0.5, shape=shape).astype(dtype)
    return (2 * samples - 1).astype(dtype)


_rademacher = jit(_rademacher, static_argnums=(1, 2, 3))


def norm(x, axis):
    """``jnp.linalg.norm(x, axis=axis)`` of a real array (the root of the sum of squares),
    jitted under JAX's name until traxla.numpy.linalg provides it."""
    return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), axis=axis))


_norm_last = jit(norm, static_argnames=("axis",))


def maxwell(key, shape=(), dtype=None):
    """Maxwell floats (the norm of 3 standard normals)."""
    key, _ = _check_prng_key("maxwell", key)
    dtype = _float_dtype("maxwell", dtype)
    return _maxwell(key, _canonicalize_shape(shape), dtype, None)


def _maxwell(key, shape, dtype, out_sharding):
    norm = getattr(getattr(jnp, "linalg", None), "norm", None)  # noqa: F811
    samples = normal(key=key, shape=shape + (3,), dtype=dtype)
    return (norm or _norm_last)(samples, axis=-1)


_maxwell = jit(_maxwell, static_argnums=(1, 2, 3))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell floats with location ``loc`` and scale ``scale``."""
    key, _ = _check_prng_key("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype, "a float")
    return _double_sided_maxwell(key, loc, scale, _canonicalize_shape(shape), dtype)


def _double_sided_maxwell(key, loc, scale, shape, dtype):
    params_shapes = tuple(_broadcast_shapes(_shape(loc), _shape(scale)))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    maxwell_key, rademacher_key = _unstack(_split(key))
    maxwell_rvs = maxwell(maxwell_key, shape=shape, dtype=dtype)
    random_sign = rademacher(rademacher_key, shape=shape, dtype=dtype)
    return random_sign * maxwell_rvs * scale + loc


_double_sided_maxwell = jit(_double_sided_maxwell, static_argnums=(3, 4))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats."""
    key, _ = _check_prng_key("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    return _weibull_min(key, scale, concentration, _canonicalize_shape(shape), dtype)


def _weibull_min(key, scale, concentration, shape, dtype):
    u = uniform(key=key, shape=shape, minval=0, maxval=1, dtype=dtype)
    # Inverse of the CDF 1 - exp(-(x / scale) ** concentration).
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


_weibull_min = jit(_weibull_min, static_argnums=(3, 4))


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Uniformly distributed orthogonal ``n x m`` matrices (QR of a normal matrix)."""
    _m = n if m is None else m
    shape = _canonicalize_shape(shape)
    key, _ = _check_prng_key("orthogonal", key)
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    _check_shape("orthogonal", shape)
    n, _m = _concrete_index(n, "orthogonal"), _concrete_index(_m, "orthogonal")
    return _orthogonal(key, n, _m, shape=shape, dtype=dtype)


def _concrete_index(n, fn):
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"The error occurred in jax.random.{fn}(): an integer is required, "
                        f"got {n!r} (a traced or non-integer value).") from None


def _orthogonal(key, n, _m, shape, dtype):
    z = normal(key, (*shape, max(n, _m), min(n, _m)), dtype)
    q, r = _linalg("qr", "orthogonal")(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < _m else x


_orthogonal = jit(_orthogonal, static_argnums=(1, 2, 3, 4), static_argnames=("shape", "dtype"))


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal floats with shape parameter ``p``."""
    shape = _canonicalize_shape(shape)
    key, _ = _check_prng_key("generalized_normal", key)
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    _check_shape("generalized_normal", shape)
    return _generalized_normal(key, p, shape=shape, dtype=dtype)


def _generalized_normal(key, p, shape, dtype):
    keys = split(key)
    g = gamma(keys[0], 1 / p, shape, dtype)
    r = rademacher(keys[1], shape, dtype)
    return r * g ** (1 / p)


_generalized_normal = jit(_generalized_normal, static_argnums=(2, 3),
                          static_argnames=("shape", "dtype"))


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the ``d``-dimensional unit ``p``-norm ball."""
    shape = _canonicalize_shape(shape)
    key, _ = _check_prng_key("ball", key)
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    _check_shape("ball", shape)
    d = _concrete_index(d, "ball")
    return _ball(key, p, d=d, shape=shape, dtype=dtype)


def _ball(key, p, d, shape, dtype):
    k1, k2 = _unstack(split(key))
    g = generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


_ball = jit(_ball, static_argnums=(2, 3, 4), static_argnames=("d", "shape", "dtype"))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh floats."""
    key, shape, dtype = _checked_float_args("rayleigh", key, shape, dtype, scale)
    return _rayleigh(key, scale, shape=shape, dtype=dtype)


def _rayleigh(key, scale, shape, dtype):
    u = uniform(key, shape, dtype)
    scale = jnp.broadcast_to(scale.astype(dtype), shape)
    log_u = lax.log(u)
    sqrt_u = lax.sqrt(lax.mul(log_u, _c(scale, -2)))
    return lax.mul(scale, sqrt_u)


_rayleigh = jit(_rayleigh, static_argnums=(2, 3), static_argnames=("shape", "dtype"))


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats."""
    key, shape, dtype = _checked_float_args("wald", key, shape, dtype, mean)
    return _wald(key, mean, shape=shape, dtype=dtype)


def _wald(key, mean, shape, dtype):
    k1, k2 = _unstack(_split(key, 2))
    mean = jnp.broadcast_to(mean.astype(dtype), shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


_wald = jit(_wald, static_argnums=(2, 3), static_argnames=("shape", "dtype"))


def geometric(key, p, shape=None, dtype=None):
    """Geometric integers (trials to the first success, >= 1)."""
    key, _ = _check_prng_key("geometric", key)
    dtype = _canonicalize_dtype(int if dtype is None else dtype)
    if not dtypes.is_int(dtype):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = _check_broadcast_shapes("geometric", shape, p)
    return _geometric(key, p, shape, dtype, None)


def _geometric(key, p, shape, dtype, out_sharding):
    check_arraylike("geometric", p)
    p, = promote_dtypes_inexact(p)
    u = uniform(key, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)
    log_u = lax.log(u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
    return g.astype(dtype)


_geometric = jit(_geometric, static_argnums=(2, 3, 4))


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on [left, right] with the given mode."""
    key, shape, dtype = _checked_float_args("triangular", key, shape, dtype, left, mode, right)
    return _triangular(key, left, mode, right, shape=shape, dtype=dtype)


def _triangular(key, left, mode, right, shape, dtype):
    left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """Log-normal floats: exp(sigma * standard normal)."""
    key, _ = _check_prng_key("lognormal", key)
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    if not dtypes.is_inexact(dtype):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    shape = _check_broadcast_shapes("lognormal", shape, sigma)
    _check_all_safe_to_cast("lognormal", dtype, sigma)
    return _lognormal(key, sigma, shape=shape, dtype=dtype)


def _lognormal(key, sigma, shape, dtype):
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(normal(key, shape, dtype) * sigma)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal vectors with the given mean and covariance."""
    key, _ = _check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = lax.dtype_of(mean) if dtype is None else _canonicalize_dtype(dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, "
                         f"got {dtype}")
    if shape is not None:
        shape = _canonicalize_shape(shape)
    return _multivariate_normal(key, mean, cov, shape, dtype, method)


def _multivariate_normal(key, mean, cov, shape, dtype, method):
    if not len(_shape(mean)) >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{len(_shape(mean))}")
    if not len(_shape(cov)) >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{len(_shape(cov))}")
    n = _shape(mean)[-1]
    if _shape(cov)[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {_shape(cov)}.")
    if shape is None:
        shape = tuple(_broadcast_shapes(_shape(mean)[:-1], _shape(cov)[:-2]))
    else:
        _check_shape("normal", shape, _shape(mean)[:-1], _shape(cov)[:-2])
    if method == "svd":
        u, s, _ = _linalg("svd", "multivariate_normal")(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = _linalg("eigh", "multivariate_normal")(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = _linalg("cholesky", "multivariate_normal")(cov)
    normal_samples = normal(key, shape + _shape(mean)[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, normal_samples)


_multivariate_normal = jit(_multivariate_normal, static_argnums=(3, 4, 5))


def clone(key):
    """A copy of ``key`` that key-reuse checking treats as a fresh key."""
    return random_clone_p.bind(key)


from traxla.random._discrete import binomial, multinomial, poisson  # noqa: E402,F401

del math

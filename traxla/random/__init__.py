"""``traxla.random``: counter-based pseudo-randomness as ``jax.random``.

Randomness is a pure function of an explicit key: ``key(seed)`` makes a typed
key (dtype ``key<fry>``, Threefry-2x32), ``split``/``fold_in`` derive new keys,
and every sampler is a deterministic function of ``(key, shape, dtype)``,
bit-for-bit equal to JAX's default implementation under either setting of
``jax_threefry_partitionable`` (True, JAX's default). Legacy raw keys
(``uint32[2]`` from ``PRNGKey``) are accepted wherever JAX accepts them, as
``jax_legacy_prng_key`` and ``jax_enable_custom_prng`` say.

The samplers are jitted helpers with JAX's names (``_normal``,
``_normal_real``, ``_uniform``, ...) so that their jaxprs print as JAX's.
"""
from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.ir import dtypes
from traxla.ir.config import config
from traxla.ir.rules.random import (PRNGImpl, check_key_data, is_key_dtype, key_fry, prngs,
                                    unsupported_prngs, key_dtype_of,
                               random_bits_p, random_fold_in_p, random_seed_p, random_split_p,
                               random_unwrap_p, random_wrap_p, threefry2x32_p, threefry_impl)
from traxla.numpy._promotion import (broadcast_shapes as _np_broadcast_shapes, check_arraylike,
                                     promote_dtypes_inexact)
from traxla.tracer import Tracer
from traxla.random import _impls


__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "key_impl", "split", "fold_in",
           "bits", "uniform", "normal", "randint", "bernoulli", "categorical", "choice",
           "permutation", "truncated_normal", "exponential", "gumbel", "laplace", "logistic",
           "threefry_2x32", "default_prng_impl", "PRNGImpl", "key_dtype"]

_flags = config.current  # the calling thread's view of the flags
UINT_DTYPES = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


# -- utilities --------------------------------------------------------------------------

def _aval(x):
    return lax.aval_of(x)


def _is_key(x) -> bool:
    aval = getattr(x, "aval", None)
    return aval is not None and is_key_dtype(aval.dtype)


def _arraylike(x) -> bool:
    return (isinstance(x, (np.ndarray, np.generic, Tracer)) or hasattr(x, "__traxla_array__")
            or np.isscalar(x))


def _ndim(x) -> int:
    return len(_aval(x).shape) if hasattr(x, "aval") else np.ndim(x)


def _shape(x):
    return tuple(_aval(x).shape) if hasattr(x, "aval") else np.shape(x)


def _astype(x, dtype):
    """``x.astype(dtype)`` (``lax.convert_element_type``: a scalar stays a user-facing
    Array, never an internal Literal)."""
    return lax.convert_element_type(x, dtype)


def _unstack(x):
    """``list(x)`` as JAX iterates a traced array: ``slice`` (strides 1) and ``squeeze``."""
    return [lax.index_in_dim(x, i, 0, keepdims=False) for i in range(_shape(x)[0])]


def _canonicalize_shape(shape):
    """A tuple of Python ints, or JAX's error for anything else."""
    try:
        if not isinstance(shape, Sequence) and hasattr(shape, "__index__"):
            return (operator.index(shape),)  # as JAX: a bare int is a 1-D shape
        return tuple(operator.index(d) for d in shape)
    except Exception:  # noqa: BLE001 - tracers, floats, non-sequences
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, got "
                        f"{shape!r}.\nIf using `jit`, try using `static_argnums` or applying "
                        "`jit` to smaller subfunctions.") from None


def _canonicalize_dtype(dtype):
    if (isinstance(dtype, type) and not issubclass(dtype, np.generic)
            and isinstance(getattr(dtype, "dtype", None), np.dtype)):
        dtype = dtype.dtype  # traxla.numpy's scalar types (jnp.float32, ...)
    return dtypes.to_dtype(dtype)


def _check_shape(name: str, shape, *param_shapes) -> None:
    if param_shapes:
        shape_ = tuple(_np_broadcast_shapes(tuple(shape), *param_shapes))
        if tuple(shape) != shape_:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
                "the result of broadcasting the shapes must equal the shape argument, but got "
                f"result {shape_} for shape argument {tuple(shape)}.")


# -- key operations ---------------------------------------------------------------------

def default_prng_impl() -> PRNGImpl:
    return threefry_impl


def _resolve_impl(impl_spec) -> PRNGImpl:
    if impl_spec is None:
        return threefry_impl
    if isinstance(impl_spec, PRNGImpl):
        return impl_spec
    if type(impl_spec) is _impls.PRNGSpec:
        return impl_spec._impl
    if is_key_dtype(impl_spec):
        return impl_spec.impl
    if type(impl_spec) is str:
        if impl_spec in prngs:
            return prngs[impl_spec]
        if impl_spec in unsupported_prngs:
            key_dtype_of(unsupported_prngs[impl_spec])  # (raises NotImplementedError)
        keys_fmt = ", ".join(f'"{s}"' for s in prngs)
        raise ValueError(f'unrecognized PRNG implementation "{impl_spec}". '
                         f"Did you mean one of: {keys_fmt}?")
    raise TypeError(f"unrecognized type {type(impl_spec)} for specifying PRNG implementation.")


def key_dtype(impl_spec=None):
    return key_dtype_of(_resolve_impl(impl_spec))


def random_seed(seeds, impl: PRNGImpl):
    # As JAX: Python ints go through int64 first (a large hash seeds a key in x32 mode too;
    # there it wraps to int32).
    if isinstance(seeds, int):
        seeds_arr = np.asarray(np.int64(seeds)).astype(dtypes.canonicalize(dtypes.int64))
    elif isinstance(seeds, (np.ndarray, np.generic)):
        seeds_arr = np.asarray(seeds)
        seeds_arr = seeds_arr.astype(dtypes.canonicalize(seeds_arr.dtype))
    elif isinstance(seeds, float):
        raise TypeError(f"PRNG key seed must be an integer; got {seeds!r}.")
    else:
        seeds_arr = seeds
    offset = config.current.random_seed_offset  # jax_random_seed_offset, as JAX's
    if offset:
        seeds_arr = jnp.asarray(seeds_arr) + offset
    return random_seed_p.bind(seeds_arr, impl=impl)


def _key(ctor_name: str, seed, impl_spec):
    impl = _resolve_impl(impl_spec)
    if _is_key(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if _ndim(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                        f"{_shape(seed)} != (). Use jax.vmap for batching")
    return random_seed(seed, impl=impl)


def key(seed, *, impl=None, dtype=None):
    """A scalar typed PRNG key (dtype ``key<fry>``) for an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's name
    """A legacy raw key: the ``uint32[2]`` data of ``key(seed)``."""
    return _return_prng_keys(True, _key("PRNGKey", seed, impl))


def random_wrap(base_arr, *, impl: PRNGImpl):
    if not all(hasattr(base_arr, a) for a in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have ndim, "
                        f"shape, and dtype attributes. Got {base_arr}")
    check_key_data(impl, _aval(base_arr))
    return random_wrap_p.bind(base_arr, impl=impl)


def random_unwrap(keys):
    if not _is_key(keys):
        raise TypeError(f"random_unwrap takes key array operand, got keys.dtype="
                        f"{getattr(keys, 'dtype', type(keys))}")
    return random_unwrap_p.bind(keys)


def _check_prng_key(name: str, key, *, allow_batched: bool = False):
    if _is_key(key):
        wrapped_key, wrapped = key, False
    elif _arraylike(key):
        wrapped_key, wrapped = random_wrap(key, impl=default_prng_impl()), True
        legacy = _flags.legacy_prng_key
        if legacy == "error":
            raise ValueError(_LEGACY_KEY_MESSAGE)
        elif legacy == "warn":
            warnings.warn(_LEGACY_KEY_MESSAGE, stacklevel=2)
        elif _flags.enable_custom_prng:
            warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. "
                          "Assuming valid threefry2x32 key for now.", FutureWarning)
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and _ndim(wrapped_key):
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{_shape(key)} != (). Use jax.vmap for batching.")
    return wrapped_key, wrapped


_LEGACY_KEY_MESSAGE = ("Legacy uint32 key array passed as key to jax.random function. "
                       "Please create keys using jax.random.key(). If use of a raw key array "
                       'was intended, set jax_legacy_prng_key="allow".')


def _return_prng_keys(was_wrapped: bool, key):
    if _flags.enable_custom_prng:
        return key
    return random_unwrap_p.bind(key) if was_wrapped else key


def _random_bits(key, bit_width: int, shape):
    return random_bits_p.bind(key, bit_width=bit_width, shape=tuple(shape))


def fold_in(key, data):
    """A new key from ``key`` and 32 bits of ``data``."""
    key, wrapped = _check_prng_key("fold_in", key)
    if _ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {_shape(data)} != (). Use jax.vmap for batching.")
    key_out = random_fold_in_p.bind(key, jnp.asarray(data, dtype="uint32"))
    return _return_prng_keys(wrapped, key_out)


def _split(key, num=2):
    if _ndim(key):
        raise TypeError("split accepts a single key, but was given a key array of shape "
                        f"{_shape(key)} != (). Use jax.vmap for batching.")
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return random_split_p.bind(key, shape=_canonicalize_shape(shape))


def split(key, num=2):
    """``num`` new keys (or a tuple ``num`` for a shape of keys), on a new leading axis."""
    typed_key, wrapped = _check_prng_key("split", key)
    return _return_prng_keys(wrapped, _split(typed_key, num))


def key_data(keys):
    """The ``uint32[..., 2]`` data underlying a key array."""
    keys, _ = _check_prng_key("key_data", keys, allow_batched=True)
    return random_unwrap_p.bind(keys)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """A key array from ``uint32[..., 2]`` key data."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    return random_wrap(key_bits_array, impl=_resolve_impl(impl))


def key_impl(keys):
    keys, _ = _check_prng_key("key_impl", keys, allow_batched=True)
    return _impls.key_spec(_aval(keys).dtype.impl)


def threefry_2x32(keypair, count):
    """The Threefry-2x32 hash of a ``uint32`` count array under a key pair (JAX's
    ``prng.threefry_2x32``)."""
    key1, key2 = keypair
    if not (lax.dtype_of(key1) == lax.dtype_of(key2) == lax.dtype_of(count) == dtypes.uint32):
        raise TypeError("threefry_2x32 requires uint32 arguments, got "
                        f"{[lax.dtype_of(x) for x in (key1, key2, count)]}")
    shape = _shape(count)
    flat = jnp.ravel(count)
    size = math.prod(shape)
    if size % 2:
        flat = jnp.concatenate([flat, jnp.zeros((1,), dtypes.uint32)])
    half = (size + size % 2) // 2
    x = [lax.slice(flat, (0,), (half,)), lax.slice(flat, (half,), (2 * half,))]
    x = threefry2x32_p.bind(key1, key2, x[0], x[1])
    out = jnp.concatenate(x)
    return lax.reshape(out[:-1] if size % 2 else out, shape)


# -- samplers ---------------------------------------------------------------------------

def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers."""
    key, _ = _check_prng_key("bits", key)
    dtype = dtypes.default_uint() if dtype is None else _canonicalize_dtype(dtype)
    if not dtypes.is_unsigned_int(dtype):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    shape = _canonicalize_shape(shape)
    return _random_bits(key, dtype.itemsize * 8, shape)


def _float_dtype_arg(name, dtype, allow_complex=False):
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    ok = dtypes.is_inexact(dtype) if allow_complex else dtypes.is_float(dtype)
    if not ok:
        what = "a float or complex" if allow_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return dtype


def _float_sampler_args(name, key, shape, dtype):
    """A float sampler's ``(key, shape, dtype)`` checked: one key, a concrete shape, a float
    dtype (the default float for None)."""
    key, _ = _check_prng_key(name, key)
    dtype = _float_dtype_arg(name, dtype)
    return key, _canonicalize_shape(shape), dtype


def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Uniform floats in ``[minval, maxval)``."""
    key, _ = _check_prng_key("uniform", key)
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    shape = _canonicalize_shape(shape)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dtype}")
    return _uniform(key, minval, maxval, shape, dtype)


def _uniform(key, minval, maxval, shape, dtype):
    _check_shape("uniform", shape)
    if not dtypes.is_float(dtype):
        raise TypeError("uniform only accepts floating point dtypes.")
    minval = lax.convert_element_type(minval, dtype)
    maxval = lax.convert_element_type(maxval, dtype)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))

    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    rng_bits = 8 if nmant < 8 else nbits
    bits_ = _random_bits(key, rng_bits, shape)
    uint_dtype = UINT_DTYPES[nbits]
    if rng_bits != nbits:
        bits_ = lax.convert_element_type(bits_, uint_dtype)
    # Random mantissa bits under the exponent of 1.0: a float in [1, 2), minus one.
    float_bits = lax.shift_right_logical(bits_, jnp.array(rng_bits - nmant, uint_dtype))
    float_bits = lax.bitwise_or(
        float_bits, jnp.asarray(np.array(1.0, dtype).view(uint_dtype), dtype=uint_dtype))
    floats = lax.bitcast_convert_type(float_bits, dtype) - jnp.array(1., dtype)
    return lax.max(minval, lax.reshape(floats * (maxval - minval) + minval, shape))


_uniform = jit(_uniform, static_argnums=(3, 4), static_argnames=("shape", "dtype"))


def normal(key, shape=(), dtype=None):
    """Standard normal floats (or complex)."""
    key, _ = _check_prng_key("normal", key)
    shape = _canonicalize_shape(shape)
    dtype = _float_dtype_arg("normal", dtype, allow_complex=True)
    return _normal(key, shape, dtype)


def _normal(key, shape, dtype):
    if dtypes.is_complex(dtype):
        sqrt2 = np.array(np.sqrt(2), dtype)
        key_re, key_im = _unstack(_split(key))
        real_dtype = np.array(0, dtype).real.dtype
        _re = _astype(_normal_real(key_re, shape, real_dtype), dtype)
        _im = _astype(_normal_real(key_im, shape, real_dtype), dtype)
        return (_re + 1j * _im) / sqrt2
    return _normal_real(key, shape, dtype)


def _normal_real(key, shape, dtype):
    _check_shape("normal", shape)
    lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
    hi = np.array(1., dtype)
    u = uniform(key, shape, dtype, lo, hi)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


_normal = jit(_normal, static_argnums=(1, 2))
_normal_real = jit(_normal_real, static_argnums=(1, 2))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats truncated to ``(lower, upper)``."""
    if shape is not None:
        shape = _canonicalize_shape(shape)
    key, _ = _check_prng_key("truncated_normal", key)
    dtype = _canonicalize_dtype(float if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `truncated_normal` must be a float dtype, got {dtype}")
    return _truncated_normal(key, lower, upper, shape, dtype)


def _truncated_normal(key, lower, upper, shape, dtype):
    if shape is None:
        shape = tuple(_np_broadcast_shapes(_shape(lower), _shape(upper)))
    else:
        _check_shape("truncated_normal", shape, _shape(lower), _shape(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    if not dtypes.is_float(dtype):
        raise TypeError("truncated_normal only accepts floating point dtypes.")
    u = uniform(key, shape, dtype, minval=a, maxval=b)
    out = sqrt2 * lax.erf_inv(u)
    # Clamp to the open interval (lower, upper): rounding (or drawing `a`) may land on a bound.
    return jnp.clip(out,
                    lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype=dtype)),
                    lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype=dtype)))


_truncated_normal = jit(_truncated_normal, static_argnums=(3, 4))


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability ``p``."""
    if shape is not None:
        shape = _canonicalize_shape(shape)
    if mode not in ["high", "low"]:
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    key, _ = _check_prng_key("bernoulli", key)
    dtype = lax.dtype_of(p)
    if not dtypes.is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(p, dtype)
    return _bernoulli(key, p, shape=shape, mode=mode)


def _bernoulli(key, p, shape, mode):
    if shape is None:
        shape = _shape(p)
    else:
        _check_shape("bernoulli", shape, _shape(p))
    dtype = lax.dtype_of(p)
    if mode == "high":
        u1, u2 = _unstack(uniform(key, (2, *shape), dtype))
        # resolution of uniform samples is 2 ** -n_mantissa
        u2 *= 2 ** -dtypes.finfo(dtype).nmant
        return u2 < p - u1
    return uniform(key, shape, lax.dtype_of(p)) < p


_bernoulli = jit(_bernoulli, static_argnames=("shape", "mode"))


def exponential(key, shape=(), dtype=None):
    """Exponential floats (rate 1)."""
    key, shape, dtype = _float_sampler_args("exponential", key, shape, dtype)
    return _exponential(key, shape, dtype)


def _exponential(key, shape, dtype):
    _check_shape("exponential", shape)
    u = uniform(key, shape, dtype)
    # 1 - u moves the domain of log to (0, 1]
    return lax.neg(lax.log1p(lax.neg(u)))


_exponential = jit(_exponential, static_argnums=(1, 2))


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel floats."""
    key, shape, dtype = _float_sampler_args("gumbel", key, shape, dtype)
    if mode is None:
        mode = "low"  # JAX's default (jax_use_high_dynamic_range_gumbel=False)
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return _gumbel(key, shape, dtype, mode)


def _gumbel(key, shape, dtype, mode):
    _check_shape("gumbel", shape)
    info = dtypes.finfo(dtype)
    if dtype == dtypes.float32 and mode == "highest":
        if not hasattr(lax, "clz"):
            raise NotImplementedError(
                "gumbel(mode='highest') needs the count-leading-zeros primitive `clz`, which "
                "this build of traxla does not have; use mode='high' or 'low'.")
        finfo = dtypes.finfo(dtype)
        bits_ = _random_bits(key, finfo.bits, (2,) + tuple(shape))
        neg = lax.bitwise_not(bits_)
        lo_bits = _unstack(neg)[1]
        # 64-bit negation of the (hi, lo) pair: the carry goes into hi when lo wraps.
        neg = neg + jnp.array([lo_bits == np.array((1 << finfo.bits) - 1, dtype=np.uint32),
                               jnp.ones_like(lo_bits)], dtype=np.uint32)
        flip_mask = _unstack(bits_)[0] < np.array(1 << (finfo.bits - 1), dtype=np.uint32)
        x = _safe_int_to_float(jnp.where(flip_mask, bits_, neg), dtype=np.float32)
        return jnp.where(flip_mask, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
    if mode in ("high", "highest"):
        high, low = _unstack(_uniform(key, minval=0., maxval=1., shape=(2,) + tuple(shape),
                                      dtype=dtype))
        x = jnp.where(high >= 0.5, high, high + 2 ** -(info.nmant) * low + info.tiny)
        return -jnp.log(-jnp.log1p(-x))
    return -jnp.log(-jnp.log(_uniform(key, minval=info.tiny, maxval=1., shape=shape,
                                      dtype=dtype)))


_gumbel = jit(_gumbel, static_argnums=(1, 2, 3))


def _safe_int_to_float(bits_, dtype):
    """A 64-bit fixed-point fraction (a (hi, lo) uint32 pair) as the nearest float32 below it,
    keeping full precision near zero (JAX's ``_safe_int_to_float``)."""
    finfo = dtypes.finfo(dtype)
    hiclz, loclz = _unstack(lax.clz(bits_))
    hi, lo = _unstack(bits_)
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        jnp.where(hiclz == 32, lax.shift_left(lo, loclz),
                  lax.shift_right_logical(lo, finfo.bits - hiclz)))
    mantissa = lax.shift_right_logical(mantissa,
                                       np.array(finfo.bits - finfo.nmant - 1, dtype=np.uint32))
    mantissa = lax.bitwise_and(mantissa, np.array((1 << finfo.nmant) - 1, dtype=np.uint32))
    exp = lax.shift_left((-finfo.minexp - jnp.where(hiclz == 32, 32 + loclz, hiclz)),
                         np.array(finfo.nmant, dtype=np.uint32))
    exp = lax.bitwise_and(exp, np.array((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1)),
                                        dtype=np.uint32))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), dtype)


def laplace(key, shape=(), dtype=None):
    """Standard Laplace floats."""
    key, shape, dtype = _float_sampler_args("laplace", key, shape, dtype)
    return _laplace(key, shape, dtype)


def _laplace(key, shape, dtype):
    _check_shape("laplace", shape)
    u = uniform(key, shape, dtype, minval=-1. + dtypes.finfo(dtype).epsneg, maxval=1.)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


_laplace = jit(_laplace, static_argnums=(1, 2))


def logistic(key, shape=(), dtype=None):
    """Standard logistic floats."""
    key, shape, dtype = _float_sampler_args("logistic", key, shape, dtype)
    return _logistic(key, shape, dtype)


def _logistic(key, shape, dtype):
    _check_shape("logistic", shape)
    x = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


_logistic = jit(_logistic, static_argnums=(1, 2))


# -- integers ---------------------------------------------------------------------------

def _convert_and_clip_integer(val, dtype):
    """``val`` as ``dtype``, clipped to its range instead of wrapping."""
    val_dtype = lax.dtype_of(val)
    if not (dtypes.is_int(dtype) and dtypes.is_int(val_dtype)):
        raise TypeError("_convert_and_clip_integer only accepts integer dtypes.")
    min_val = lax._const(val, max(dtypes.iinfo(dtype).min, dtypes.iinfo(val_dtype).min))
    max_val = lax._const(val, min(dtypes.iinfo(dtype).max, dtypes.iinfo(val_dtype).max))
    return _astype(jnp.clip(val, min_val, max_val), dtype)


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in ``[minval, maxval)``."""
    key, _ = _check_prng_key("randint", key)
    dtype = _canonicalize_dtype(int if dtype is None else dtype)
    shape = _canonicalize_shape(shape)
    if not dtypes.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    dtype_for_sampling = dtype
    if info.bits < 32:
        # Sample in 32 bits to avoid biased results.
        dtype_for_sampling = dtypes.int32
        minval = _astype(jnp.asarray(minval), "int32").clip(int(info.min), int(info.max))
        maxval = _astype(jnp.asarray(maxval), "int32").clip(int(info.min), int(info.max) + 1)
    return _astype(_randint(key, minval, maxval, shape, dtype_for_sampling), dtype)


def _randint(key, minval, maxval, shape, dtype):
    _check_shape("randint", shape, _shape(minval), _shape(maxval))
    if not dtypes.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    check_arraylike("randint", minval, maxval)
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if not dtypes.is_int(lax.dtype_of(minval)):
        minval = _astype(minval, int)
    if not dtypes.is_int(lax.dtype_of(maxval)):
        maxval = _astype(maxval, int)

    # Where maxval exceeds the dtype's range (randint(key, shape, 0, 256, 'uint8')).
    maxval_out_of_range = lax.gt(
        maxval, _convert_and_clip_integer(jnp.array(dtypes.iinfo(dtype).max, dtype),
                                          lax.dtype_of(maxval)))
    minval = _convert_and_clip_integer(minval, dtype)
    maxval = _convert_and_clip_integer(maxval, dtype)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")

    # Twice the bits the dtype needs, to reduce the modulus bias.
    k1, k2 = _unstack(_split(key))
    higher_bits, lower_bits = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)

    unsigned_dtype = UINT_DTYPES[nbits]
    span = lax.convert_element_type(maxval - minval, unsigned_dtype)
    # span = 1 when maxval <= minval, so that minval is returned.
    span = lax.select(maxval <= minval, lax.full_like(span, 1), span)
    # One larger when maxval is out of range (wrapping to 0 at the type's full range).
    span = lax.select(maxval_out_of_range & (maxval > minval),
                      lax.add(span, lax._const(span, 1)), span)
    # (a * b) % N = [(a % N) * (b % N)] % N with a multiplier of 2**nbits % span.
    multiplier = lax.rem(lax._const(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    random_offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier),
                            lax.rem(lower_bits, span))
    random_offset = lax.rem(random_offset, span)
    return lax.add(minval, lax.convert_element_type(random_offset, dtype))


_randint = jit(_randint, static_argnums=(3, 4))


from traxla.random._choice import (_shuffle, _sort_key_val, _take, _top_k_indices,  # noqa: E402,F401
                      categorical, choice, permutation)


# -- the other samplers live beside this module --------------------------------------------------

from traxla.random._gamma import gamma, loggamma, random_gamma_p  # noqa: E402,F401

__all__ += ["gamma", "loggamma", "random_gamma_p"]
from traxla.random._distributions import (ball, beta, binomial, cauchy, chisquare, clone,  # noqa: E402,F401
                             dirichlet, double_sided_maxwell, f, generalized_normal, geometric,
                             lognormal, maxwell, multinomial, multivariate_normal, orthogonal,
                             pareto, poisson, rademacher, rayleigh, t, triangular, wald,
                             weibull_min)
from traxla.random._distributions import __all__ as _distributions_all  # noqa: E402

__all__ += _distributions_all


def _accept_out_sharding(fn):
    """JAX 0.10's samplers take ``out_sharding=`` (a NamedSharding or a PartitionSpec): the
    sample is drawn as without it, then placed so (``reshard``), as JAX's values do not
    depend on the output sharding."""
    import functools
    import inspect

    if "out_sharding" in inspect.signature(fn).parameters:
        return fn

    @functools.wraps(fn)
    def sampler(*args, out_sharding=None, **kwargs):
        out = fn(*args, **kwargs)
        # None, or a sharding on the empty mesh (``jax.typeof(x).sharding`` outside any
        # mesh): nothing to place
        if out_sharding is None or getattr(getattr(out_sharding, "mesh", None), "empty", False):
            return out
        from traxla.sharding import reshard
        return reshard(out, out_sharding)
    params = list(inspect.signature(fn).parameters.values())
    at = len(params) - (bool(params) and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
    params.insert(at, inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY,
                                        default=None))
    sampler.__signature__ = inspect.signature(fn).replace(parameters=params)
    return sampler


for _name in ("bits", "uniform", "randint", "permutation", "normal", "multivariate_normal",
              "truncated_normal", "bernoulli", "beta", "cauchy", "dirichlet", "exponential",
              "gamma", "loggamma", "poisson", "gumbel", "categorical", "laplace", "logistic",
              "pareto", "t", "chisquare", "f", "rademacher", "maxwell", "orthogonal",
              "generalized_normal", "ball", "rayleigh", "wald", "geometric", "triangular",
              "lognormal"):
    if _name in globals():
        globals()[_name] = _accept_out_sharding(globals()[_name])
del _name

"""PRNG implementations as values (JAX's ``prng.PRNGImpl``): the built-in Threefry
implementation's functions on one key's raw ``uint32[2]`` data, user-defined implementations
(``jax.extend.random.define_prng_impl``), and the lowering of the key primitives on keys of
such an implementation.

A key array of implementation ``impl`` and shape ``s`` has dtype ``key<impl.tag>`` and is
stored as ``uint32[s + impl.key_shape]``. ``random_seed``, ``random_split``, ``random_bits``
and ``random_fold_in`` on it lower to the jaxpr of ``impl.seed`` / ``split`` / ``random_bits``
/ ``fold_in`` vectorized (``vmap``) over ``s``, as JAX's ``mlir.lower_fun`` of the same
functions; eagerly they run as one-equation programs of that lowering.
"""
from __future__ import annotations

import operator

import numpy as np

from traxla import lax, numpy as jnp
from traxla.batching.batch_trace import vmap
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.random import (PRNGImpl, is_key_dtype, prngs, random_bits_p,
                                    random_fold_in_p, random_seed_p, random_split_p,
                                    random_unwrap_p, random_wrap_p, register_builtin_fns,
                                    threefry_impl)
from traxla.lowering.rules.random import register_impl_decomposition
from traxla.state.discharge import discharge_if_needed
from traxla.tracer.staging import trace_to_jaxpr

__all__ = ["PRNGSpec", "define_prng_impl", "resolve_spec", "key_spec", "threefry_seed",
           "threefry_split", "threefry_fold_in", "threefry_random_bits"]


class PRNGSpec:
    """Specifies a PRNG key implementation (what ``define_prng_impl`` returns and
    ``key_impl`` gives for an implementation not registered by name)."""

    __slots__ = ["_impl"]

    def __init__(self, impl):
        self._impl = impl

    def __repr__(self) -> str:
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self) -> str:
        return str(self._impl)

    def __hash__(self) -> int:
        return hash(self._impl)

    def __eq__(self, other) -> bool:
        return isinstance(other, PRNGSpec) and self._impl == other._impl


def define_prng_impl(*, key_shape, seed, split, random_bits, fold_in, name="<unnamed>",
                     tag="?"):
    """A user-defined PRNG implementation, to pass as ``impl=`` to ``jax.random.key`` and
    ``wrap_key_data`` (JAX's ``jax.extend.random.define_prng_impl``)."""
    return PRNGSpec(PRNGImpl(key_shape, seed, split, random_bits, fold_in, name=name, tag=tag))


def resolve_spec(impl_spec):
    """The PRNGImpl of a PRNGSpec, or None for anything else."""
    return impl_spec._impl if type(impl_spec) is PRNGSpec else None


def key_spec(impl: PRNGImpl):
    """``key_impl``'s answer: the name of a registered implementation, else its spec."""
    return impl.name if impl.name in prngs else PRNGSpec(impl)


# -- the Threefry implementation's functions on one key's data (JAX's threefry2x32 module) --

def _wrap_threefry(key, name):
    aval = lax.aval_of(key)
    if is_key_dtype(aval.dtype) or tuple(aval.shape) != (2,) or aval.dtype != dtypes.uint32:
        raise TypeError(f"{name} got invalid prng key.")
    return random_wrap_p.bind(key, impl=threefry_impl)


def threefry_seed(seed):
    """The raw ``uint32[2]`` Threefry key of an integer scalar seed (its 64 bits as two
    words; a 32-bit seed padded with zeros)."""
    seed = jnp.asarray(seed)
    if seed.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
    if not dtypes.is_int(seed.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return random_unwrap_p.bind(random_seed_p.bind(seed, impl=threefry_impl))


def threefry_split(key, shape):
    shape = tuple(operator.index(d) for d in shape)
    keys = random_split_p.bind(_wrap_threefry(key, "threefry_split"), shape=shape)
    return random_unwrap_p.bind(keys)


def threefry_fold_in(key, data):
    data = jnp.asarray(data, dtype="uint32")
    if data.shape:
        raise TypeError(f"threefry_fold_in takes a scalar message, got shape {data.shape}")
    return random_unwrap_p.bind(
        random_fold_in_p.bind(_wrap_threefry(key, "threefry_fold_in"), data))


def threefry_random_bits(key, bit_width, shape):
    """Uniform random bits of the given width and shape from one raw Threefry key."""
    key = _wrap_threefry(key, "threefry_random_bits")
    if bit_width not in (8, 16, 32, 64):
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    return random_bits_p.bind(key, bit_width=bit_width,
                              shape=tuple(operator.index(d) for d in shape))


register_builtin_fns(threefry_impl.name, seed=threefry_seed, split=threefry_split,
                     random_bits=threefry_random_bits, fold_in=threefry_fold_in)


# -- lowering the key primitives through an implementation's functions ---------------------

def _vmapped(n, f):
    for _ in range(n):
        f = vmap(f)
    return f


def _fold_in_fn(impl, keys_shape, msgs_shape, out_shape):
    """``impl.fold_in`` over broadcast keys and messages (scalars stay unbatched)."""
    n, kshape = len(out_shape), tuple(impl.key_shape)

    def fold(keys, msgs):
        if not msgs_shape:
            return _vmapped(len(keys_shape), lambda k: impl.fold_in(k, msgs))(keys)
        if not keys_shape:
            return _vmapped(len(msgs_shape), lambda m: impl.fold_in(keys, m))(msgs)
        keys = jnp.broadcast_to(keys, out_shape + kshape)
        msgs = jnp.broadcast_to(msgs, out_shape)
        return _vmapped(n, impl.fold_in)(keys, msgs)
    return fold


def _build(prim, impl, avals, params):
    kn = len(impl.key_shape)
    shape0 = tuple(avals[0].shape)
    kshape = tuple(impl.key_shape)
    if prim is random_seed_p:
        f, out = _vmapped(len(shape0), impl.seed), (shape0 + kshape, dtypes.uint32)
    else:
        keys_shape = shape0[:len(shape0) - kn]
        if prim is random_split_p:
            shape = tuple(params["shape"])
            f = _vmapped(len(keys_shape), lambda k: impl.split(k, shape))
            out = (keys_shape + shape + kshape, dtypes.uint32)
        elif prim is random_bits_p:
            bit_width, shape = params["bit_width"], tuple(params["shape"])
            f = _vmapped(len(keys_shape), lambda k: impl.random_bits(k, bit_width, shape))
            out = (keys_shape + shape, np.dtype(f"uint{bit_width}"))
        elif prim is random_fold_in_p:
            msgs_shape = tuple(avals[1].shape)
            out_shape = tuple(np.broadcast_shapes(keys_shape, msgs_shape))
            f = _fold_in_fn(impl, keys_shape, msgs_shape, out_shape)
            out = (out_shape + kshape, dtypes.uint32)
        else:  # pragma: no cover - only the four primitives above come here
            raise NotImplementedError(f"{prim.name} through a PRNG implementation")
    closed = trace_to_jaxpr(lambda *args: [f(*args)], [ShapedArray(a.shape, a.dtype, False)
                                                      for a in avals])
    closed = discharge_if_needed(closed)  # (a Pallas kernel in interpret mode uses refs)
    got = closed.jaxpr.outvars[0].aval
    if (tuple(got.shape), got.dtype) != out:
        fn = {random_seed_p: "seed", random_split_p: "split", random_bits_p: "random_bits",
              random_fold_in_p: "fold_in"}[prim]
        raise TypeError(f"the {fn} function of PRNG implementation {impl.name!r} returned "
                        f"{got.str_short(short_dtypes=False)}; {prim.name} needs "
                        f"{ShapedArray(out[0], out[1]).str_short(short_dtypes=False)}")
    return closed


register_impl_decomposition(_build)

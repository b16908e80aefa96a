"""Counter-based randomness: the typed key dtype ``key<fry>`` (Threefry-2x32)
and the primitives on keys, as JAX defines them.

A key array of shape ``s`` has the extended dtype ``key<fry>`` and is stored
as ``s + (2,)`` ``uint32`` words. The primitives:

- ``random_seed[impl=fry]``: integer seeds -> keys of the same shape;
- ``random_wrap[impl=fry]`` / ``random_unwrap``: raw ``uint32[..., 2]`` <-> keys;
- ``random_bits[bit_width shape]``: keys ``s`` -> ``uint<bit_width>[s + shape]``;
- ``random_split[shape]``: keys ``s`` -> keys ``s + shape``;
- ``random_fold_in``: keys and ``uint32`` messages, broadcasting -> keys;
- ``threefry2x32``: the raw hash on ``uint32`` words (two in, two out).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import broadcast_shapes


class PRNGImpl(NamedTuple):
    """A PRNG implementation, as JAX's ``prng.PRNGImpl``: the shape of a key's ``uint32``
    data and the functions on one key's data (``seed :: int[] -> K``, ``split[shape] :: K ->
    K[*shape]``, ``random_bits[bit_width, shape] :: K -> uint<bit_width>[*shape]``,
    ``fold_in :: K -> uint32[] -> K``). Hashes and prints as its tag (``impl=fry`` in
    jaxprs); equal when every field is.

    The key primitives on keys of an implementation other than the built-in Threefry one
    lower by tracing these functions (vectorized over the key array's shape), as JAX's."""

    key_shape: tuple
    seed: Callable
    split: Callable
    random_bits: Callable
    fold_in: Callable
    name: str = "<unnamed>"
    tag: str = "?"

    def __hash__(self) -> int:
        return hash(self.tag)

    def __str__(self) -> str:
        return self.tag

    def __reduce__(self):
        # a registered implementation pickles by name (its functions may be closures)
        if prngs.get(self.name) is self or unsupported_prngs.get(self.name) is self:
            return _registered_impl, (self.name,)
        return type(self), tuple(self)

    def pprint(self) -> str:
        fields = "\n".join(f"  {k} = {v}" for k, v in self._asdict().items())
        return f"{type(self).__name__} [{self.tag}] {{{self.name}}}:\n{fields}"


# The built-in implementations' functions live with the samplers (``traxla.random``), which
# register them here: these forwarders stand in the PRNGImpl fields until then.
_builtin_fns: dict = {}


def _builtin_fn(impl_name: str, op: str):
    def fn(*args, **kwargs):
        try:
            f = _builtin_fns[(impl_name, op)]
        except KeyError:
            raise NotImplementedError(f"the {op} function of the {impl_name!r} PRNG "
                                      "implementation (import traxla.random first)") from None
        return f(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = f"{impl_name.split('x')[0]}_{op}"
    return fn


def _registered_impl(name: str) -> PRNGImpl:
    return prngs.get(name) or unsupported_prngs[name]


def register_builtin_fns(impl_name: str, **fns) -> None:
    _builtin_fns.update({(impl_name, op): f for op, f in fns.items()})


def _builtin(key_shape, name, tag):
    return PRNGImpl(tuple(key_shape), *(_builtin_fn(name, op) for op in
                                        ("seed", "split", "random_bits", "fold_in")),
                    name=name, tag=tag)


threefry_impl = _builtin((2,), "threefry2x32", "fry")
prngs = {threefry_impl.name: threefry_impl}

# The extended dtype of Threefry keys: prints as ``key<fry>``.
key_fry = dtypes.ExtendedDType("key<fry>", threefry_impl.key_shape, dtypes.uint32,
                               impl=threefry_impl)


# JAX's other built-in implementations (``jax.extend.random.rbg_prng_impl``...): known by
# name, refused when used (their keys would need their own seed/split/bits lowerings)
rbg_impl = _builtin((4,), "rbg", "rbg")
unsafe_rbg_impl = _builtin((4,), "unsafe_rbg", "urbg")
unsupported_prngs = {rbg_impl.name: rbg_impl, unsafe_rbg_impl.name: unsafe_rbg_impl}

_key_dtypes = {threefry_impl: key_fry}  # one extended dtype (``key<tag>``) per implementation


def register_prng(impl: PRNGImpl) -> None:
    """JAX's ``prng.register_prng``: ``impl`` known by its name (``key(0, impl=name)``)."""
    if impl.name in prngs:
        raise ValueError(f"PRNG with name {impl.name} already registered: {impl}")
    prngs[impl.name] = impl


def key_dtype_of(impl: PRNGImpl):
    """The key dtype ``key<tag>`` of ``impl``."""
    dt = _key_dtypes.get(impl)
    if dt is not None:
        return dt
    if not isinstance(impl, PRNGImpl):
        raise ValueError(f"unrecognized PRNG implementation {impl!r}")
    if impl in unsupported_prngs.values():
        raise NotImplementedError(f"the {impl.name!r} PRNG implementation: traxla's built-in "
                                  "keys are threefry2x32 keys (and user-defined ones)")
    shape = tuple(impl.key_shape)
    if not all(isinstance(d, (int, np.integer)) and d >= 0 for d in shape):
        raise TypeError(f"PRNG implementation {impl.name!r}: key_shape must be a tuple of "
                        f"nonnegative integers, got {impl.key_shape!r}")
    dt = _key_dtypes[impl] = dtypes.ExtendedDType(f"key<{impl.tag}>", shape, dtypes.uint32,
                                                  impl=impl)
    return dt


def is_key_dtype(dtype) -> bool:
    return isinstance(dtype, dtypes.ExtendedDType) and isinstance(
        getattr(dtype, "impl", None), PRNGImpl)


def _require_keys(name, aval):
    if not is_key_dtype(aval.dtype):
        raise TypeError(f"{name} takes a key array operand (dtype key<fry>), got "
                        f"{aval.str_short(short_dtypes=False)}. Create keys with "
                        "traxla.random.key(seed), or wrap raw uint32[..., 2] key data with "
                        "traxla.random.wrap_key_data.")


# -- typing rules ------------------------------------------------------------------------

def _seed_rule(seeds, *, impl):
    if is_key_dtype(seeds.dtype):
        raise TypeError("random_seed accepts integer seeds, but was given a PRNG key.")
    if not dtypes.is_int(seeds.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short(False)}.")
    return ShapedArray(seeds.shape, key_dtype_of(impl), False)


def check_key_data(impl: PRNGImpl, aval):
    """JAX's checks on raw key data (``uint32`` with trailing shape ``key_shape``)."""
    ndim = len(impl.key_shape)
    if len(aval.shape) < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={len(aval.shape)}")
    if tuple(aval.shape[len(aval.shape) - ndim:]) != tuple(impl.key_shape):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end "
                        f"with {impl.key_shape}; got shape={tuple(aval.shape)} for "
                        f"impl={impl.name}")
    if is_key_dtype(aval.dtype) or aval.dtype not in (dtypes.uint32, dtypes.float0):
        hint = (" (this is already a key array: use it directly, or get its data with "
                "key_data)") if is_key_dtype(aval.dtype) else ""
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={aval.dtype}{hint}")


def _wrap_rule(base, *, impl):
    check_key_data(impl, base)
    return ShapedArray(base.shape[:len(base.shape) - len(impl.key_shape)], key_dtype_of(impl),
                       False)


def _unwrap_rule(keys):
    _require_keys("random_unwrap", keys)
    return ShapedArray(tuple(keys.shape) + keys.dtype.physical_shape, keys.dtype.physical_dtype,
                       False)


def _check_static_shape(name, shape):
    if not isinstance(shape, tuple) or not all(
            isinstance(d, (int, np.integer)) and d >= 0 for d in shape):
        raise TypeError(f"{name} shape must be a tuple of nonnegative integers, got {shape!r}.")


_UINT = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def _bits_rule(keys, *, bit_width, shape):
    _require_keys("random_bits", keys)
    if bit_width not in _UINT:
        raise TypeError(f"random_bits requires an 8-, 16-, 32- or 64-bit field width, got "
                        f"bit_width={bit_width}.")
    _check_static_shape("random_bits", shape)
    return ShapedArray(tuple(keys.shape) + tuple(shape), _UINT[bit_width], False)


def _split_rule(keys, *, shape):
    _require_keys("random_split", keys)
    _check_static_shape("random_split", shape)
    return ShapedArray(tuple(keys.shape) + tuple(shape), keys.dtype, False)


def _fold_in_rule(keys, msgs):
    _require_keys("random_fold_in", keys)
    if msgs.dtype != dtypes.uint32:
        raise TypeError(f"random_fold_in requires uint32 messages, got {msgs.str_short(False)}.")
    shape = broadcast_shapes("random_fold_in", (keys.shape, msgs.shape))
    return ShapedArray(shape, keys.dtype, False)


def _threefry_rule(*args):
    if len(args) != 4:
        raise TypeError(f"threefry2x32 takes 4 operands (key1, key2, x1, x2), got {len(args)}.")
    if any(a.dtype != dtypes.uint32 for a in args):
        raise TypeError("Arguments to threefry2x32 must have uint32 type, got "
                        f"{[a.str_short(False) for a in args]}.")
    shape = broadcast_shapes("threefry2x32", [a.shape for a in args])
    aval = ShapedArray(shape, dtypes.uint32, False)
    return [aval, aval]


random_seed_p = def_typing(Primitive("random_seed"), _seed_rule)
random_wrap_p = def_typing(Primitive("random_wrap"), _wrap_rule)
random_unwrap_p = def_typing(Primitive("random_unwrap"), _unwrap_rule)
random_bits_p = def_typing(Primitive("random_bits"), _bits_rule)
random_split_p = def_typing(Primitive("random_split"), _split_rule)
random_fold_in_p = def_typing(Primitive("random_fold_in"), _fold_in_rule)
threefry2x32_p = def_typing(Primitive("threefry2x32", multiple_results=True), _threefry_rule)

# Params print in sorted order (random_bits[bit_width=32 shape=(3,)]), impl as its tag:
# the default printing already does exactly what JAX prints.
P = {p.name: p for p in (random_seed_p, random_wrap_p, random_unwrap_p, random_bits_p,
                         random_split_p, random_fold_in_p, threefry2x32_p)}


# -- random_gamma (Marsaglia-Tsang sampling, lowered by decomposition) and random_clone ----------

def _gamma_rule(keys, a, *, log_space):
    _require_keys("random_gamma", keys)
    if not dtypes.is_float(a.dtype):
        raise TypeError(f"random_gamma requires a floating-point alpha, got {a.dtype}.")
    if tuple(a.shape[:len(keys.shape)]) != tuple(keys.shape):
        raise TypeError(f"random_gamma: the key array shape {keys.shape} must be a prefix of "
                        f"alpha's shape {a.shape}.")
    return a


random_gamma_p = def_typing(Primitive("random_gamma"), _gamma_rule)
random_clone_p = def_typing(Primitive("random_clone"), lambda x: x)
# random_clone has the zero JVP of the key primitives; random_gamma's JVP is the implicit
# reparameterization gradient (autodiff/rules/random.py), so it stays out of P.
P[random_clone_p.name] = random_clone_p

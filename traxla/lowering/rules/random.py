"""Lowering of the random primitives: Threefry-2x32 in StableHLO integer ops,
and the key operations built from it as JAX's partitionable implementation
(``jax_threefry_partitionable=True``) builds them.

Keys arrive as their physical ``uint32[..., 2]`` arrays. For keys of shape
``s`` and a requested shape ``t``:

- counters are the row-major iota over ``t`` as a 64-bit number, split into
  ``(hi, lo)`` 32-bit words (``iota_2x32_shape``), broadcast over ``s``;
- ``random_bits``: ``b1, b2 = threefry(k1, k2, hi, lo)``; 32 bits: ``b1 ^ b2``;
  8/16 bits: that, truncated; 64 bits: ``(b1 << 32) | b2``;
- ``random_split``: new keys ``[b1, b2]`` (stacked on a trailing axis);
- ``random_fold_in``: ``threefry(k1, k2, 0, msg)`` as the new key;
- ``random_seed``: ``[seed >> 32, seed & 0xFFFFFFFF]`` as ``uint32``.

With ``jax_threefry_partitionable=False`` (read when lowering; the flag is in jit's cache
keys) ``random_bits`` and ``random_split`` follow JAX's original derivation instead:
the words of ``threefry_2x32(key, iota(n))``.

This module also teaches the structural lowering rules (slice, broadcast,
transpose, gather, ...) about extended dtypes: an operation on ``key<fry>[s]`` is the
same operation on the physical ``uint32[s + (2,)]`` with the trailing
dimension carried along.
"""
from __future__ import annotations

import math

import numpy as np

from traxla.ir import dtypes
from traxla.ir.config import config
from traxla.ir.avals import ShapedArray, physical_aval
from traxla.ir.rules import random as R, shape as S
from traxla.ir.rules.elementwise import select_n_p
from traxla.lowering.mlir import constant, create_op, func, hlo, ir, tensor_type
from traxla.lowering.registry import RuleContext, inline_ops, lowering_rules, register_lowering
from traxla.lowering.rules import elementwise as _elementwise_rules  # noqa: F401  (registered before we wrap)
from traxla.lowering.rules import shape as _shape_rules  # noqa: F401
from traxla.lowering.rules.elementwise import compare

U32, U64 = dtypes.uint32, dtypes.uint64


# -- small HLO vocabulary ----------------------------------------------------------------

def _full(value, shape, dtype):
    c = constant(np.asarray(value, dtype), dtype)
    if not shape:
        return c
    return hlo.broadcast_in_dim(tensor_type(shape, dtype), c, [])


def _bcast(x, from_shape, to_shape, dims, dtype):
    """``broadcast_in_dim`` of ``x`` (shape ``from_shape``) to ``to_shape``."""
    if tuple(from_shape) == tuple(to_shape):
        return x
    return hlo.broadcast_in_dim(tensor_type(to_shape, dtype), x, list(dims))


def _lax_bcast(x, from_shape, to_shape, dtype):
    """lax's implicit broadcasting: scalars, and size-1 dims of equal-rank arrays."""
    if not from_shape:
        return _bcast(x, (), to_shape, [], dtype)
    if tuple(from_shape) == tuple(to_shape):
        return x
    if any(f != t for f, t in zip(from_shape, to_shape) if f != 1):
        raise TypeError(f"cannot broadcast {from_shape} to {to_shape}")
    return _bcast(x, from_shape, to_shape, range(len(to_shape)), dtype)


def _key_words(keys, key_shape):
    """The two ``uint32`` words of keys stored as ``key_shape + (2,)``, each of ``key_shape``."""
    n = len(key_shape)
    words = []
    for i in range(2):
        w = hlo.slice(keys, [0] * n + [i], list(key_shape) + [i + 1], [1] * (n + 1))
        words.append(hlo.reshape(tensor_type(key_shape, U32), w))
    return words


def _stack_words(w1, w2, shape):
    """Keys ``shape + (2,)`` from two word arrays of ``shape``."""
    t = tensor_type(tuple(shape) + (1,), U32)
    return hlo.concatenate([hlo.reshape(t, w1), hlo.reshape(t, w2)], len(shape))


def _rotate_left(x, d, shape):
    return hlo.or_(hlo.shift_left(x, _full(d, shape, U32)),
                   hlo.shift_right_logical(x, _full(32 - d, shape, U32)))


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(k1, k2, x1, x2, shape, module=None, key_shape=None):
    """Threefry-2x32 with 20 rounds on ``uint32`` tensors of ``shape`` (the keys of
    ``key_shape`` when given: ``()`` or ``shape``). Lowering for the CPU (``module``'s
    platform), JAX's module: a call of a private ``@threefry2x32`` whose rounds are a
    5-step loop (JAX's ``use_rolled_loops``), which XLA leaves alone; unrolled, XLA folds
    a constant key's hash and the float arithmetic after it into constants, which differ
    from compiled code in the last bit (``uniform(key, minval=, maxval=)`` under jit)."""
    if key_shape is None:
        key_shape = shape
    if module is not None and _outlined(module):
        # The CPU's rolled function, else the other platforms' unrolled one (JAX's rules).
        make = _threefry_function if _rolled(module) else _threefry_unrolled_function
        sym = make(module, tuple(key_shape), tuple(shape))
        call = create_op("func.call", results=(tensor_type(shape, U32),) * 2,
                         operands=(k1, k2, x1, x2),
                         attributes={"callee": ir.FlatSymbolRefAttr.get(sym)})
        return call.results[0], call.results[1]
    if tuple(key_shape) != tuple(shape):
        k1, k2 = (_bcast(k, key_shape, shape, [], U32) for k in (k1, k2))
    return _threefry_unrolled(k1, k2, x1, x2, shape)


def _outlined(module) -> bool:
    """JAX's rule for the other platforms (``inline=False``): the unrolled hash in a private
    ``@threefry2x32``; kept inline for multi-platform and shape-polymorphic modules."""
    return module.platforms is None and not module.dim_vars


def _threefry_unrolled_function(module, key_shape, shape) -> str:
    key = ("threefry2x32_unrolled", key_shape, shape)
    sym = module._functions.get(key)
    if sym is not None:
        return sym
    tk, tx = tensor_type(key_shape, U32), tensor_type(shape, U32)
    fn, sym = _private_function(module, "threefry2x32", [tk, tk, tx, tx], [tx, tx])
    module._functions[key] = sym
    with ir.InsertionPoint(fn.add_entry_block()):
        k1, k2, x1, x2 = fn.arguments
        if key_shape != shape:
            k1, k2 = (_bcast(k, key_shape, shape, [], U32) for k in (k1, k2))
        func.ReturnOp(list(_threefry_unrolled(k1, k2, x1, x2, shape)))
    return sym


def _rolled(module) -> bool:
    """JAX's CPU rule (rolled loops) applies (on an ``_outlined`` module): the CPU."""
    return module.platform == "cpu"


def _private_function(module, name, in_types, out_types):
    with ir.InsertionPoint(module.module.body):
        fn = func.FuncOp(name, ir.FunctionType.get(in_types, out_types))
    fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
    sym = ir.StringAttr(module.symbol_table.insert(fn)).value
    return fn, sym


def _threefry_function(module, key_shape, shape) -> str:
    """``@threefry2x32`` as JAX lowers ``threefry2x32_p`` on the CPU (``lower_fun`` of
    ``_threefry2x32_lowering(use_rolled_loops=True)``): ``fori_loop(0, 5, ...)`` as JAX's
    scan lowers it, a while loop calling the step as ``@closed_call``."""
    key = ("threefry2x32", key_shape, shape)
    sym = module._functions.get(key)
    if sym is not None:
        return sym
    tk, tx = tensor_type(key_shape, U32), tensor_type(shape, U32)
    fn, sym = _private_function(module, "threefry2x32", [tk, tk, tx, tx], [tx, tx])
    module._functions[key] = sym
    i_type = tensor_type((), _index_dtype())
    rot_type = tensor_type((4,), U32)
    with ir.InsertionPoint(fn.add_entry_block()):
        k1, k2, x1, x2 = fn.arguments
        rot0 = constant(np.array(_ROTATIONS[0], np.uint32), U32)
        rot1 = constant(np.array(_ROTATIONS[1], np.uint32), U32)
        k3 = hlo.xor(hlo.xor(k1, k2), _full(0x1BD11BDA, key_shape, U32))
        y1 = hlo.add(x1, _bcast(k1, key_shape, shape, [], U32))
        y2 = hlo.add(x2, _bcast(k2, key_shape, shape, [], U32))
        state = [_full(0, (), _index_dtype()), y1, y2, k2, k3, k1, rot0, rot1]
        types = [i_type, tx, tx, tk, tk, tk, rot_type, rot_type]
        step = _threefry_step_function(module, key_shape, shape, types)
        loop = hlo.WhileOp([i_type] + types, [_full(0, (), _index_dtype())] + state)
        cond = loop.cond.blocks.append(i_type, *types)
        with ir.InsertionPoint(cond):
            hlo.return_([compare(cond.arguments[0], _full(5, (), _index_dtype()), "LT",
                                 _index_dtype())])
        body = loop.body.blocks.append(i_type, *types)
        with ir.InsertionPoint(body):
            args = list(body.arguments)
            new = create_op("func.call", results=types, operands=args[1:],
                            attributes={"callee": ir.FlatSymbolRefAttr.get(step)}).results
            hlo.return_([hlo.add(args[0], _full(1, (), _index_dtype()))] + list(new))
        func.ReturnOp([loop.results[2], loop.results[3]])
    return sym


def _threefry_step_function(module, key_shape, shape, types) -> str:
    """JAX's ``rolled_loop_step`` (the fori body, with its index): four rounds with the
    rotations ``rot0`` (read from the array), the key schedule added, keys and rotation
    arrays rotated."""
    fn, sym = _private_function(module, "closed_call", types, types)
    with ir.InsertionPoint(fn.add_entry_block()):
        i, x0, x1, ka, kb, kc, rot0, rot1 = fn.arguments
        index = _index_dtype()
        i_next = hlo.add(i, _full(1, (), index))
        scalar = tensor_type((), U32)
        for j in range(4):
            r = hlo.reshape(scalar, hlo.slice(rot0, [j], [j + 1], [1]))
            x0 = hlo.add(x0, x1)
            left = hlo.shift_left(x1, _bcast(r, (), shape, [], U32))
            right = hlo.shift_right_logical(
                x1, _bcast(hlo.subtract(_full(32, (), U32), r), (), shape, [], U32))
            x1 = hlo.xor(x0, hlo.or_(left, right))
        x0 = hlo.add(x0, _bcast(ka, key_shape, shape, [], U32))
        x1 = hlo.add(x1, _bcast(kb, key_shape, shape, [], U32))
        count = hlo.convert(scalar, hlo.add(i, _full(1, (), index)))
        x1 = hlo.add(x1, _bcast(count, (), shape, [], U32))
        func.ReturnOp([i_next, x0, x1, kb, kc, ka, rot1, rot0])
    return sym


def _index_dtype():
    """The fori index of JAX's rolled loop: a Python int's dtype (int64 under x64)."""
    return dtypes.int64 if config.read("enable_x64") else dtypes.int32


def _threefry_unrolled(k1, k2, x1, x2, shape):
    ks = [k1, k2, hlo.xor(hlo.xor(k1, k2), _full(0x1BD11BDA, shape, U32))]
    x = [hlo.add(x1, ks[0]), hlo.add(x2, ks[1])]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = hlo.add(x[0], x[1])
            x[1] = hlo.xor(x[0], _rotate_left(x[1], r, shape))
        x[0] = hlo.add(x[0], ks[(i + 1) % 3])
        x[1] = hlo.add(hlo.add(x[1], ks[(i + 2) % 3]), _full(i + 1, shape, U32))
    return x[0], x[1]


def iota_2x32_shape(shape):
    """The row-major index of every element of ``shape`` as a 64-bit number, in
    two ``uint32`` words ``(hi, lo)`` (JAX's ``iota_2x32_shape``)."""
    shape = tuple(shape)
    if not shape:
        zero = _full(0, (), U32)
        return zero, zero
    t64 = tensor_type(shape, U64)
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    iotas = [hlo.iota(t64, dim) for dim in range(len(shape))]  # JAX's op order throughout
    counts = None
    for iota, stride in zip(iotas, strides):
        term = hlo.multiply(_full(stride, shape, U64), iota)
        counts = term if counts is None else hlo.add(counts, term)
    t32 = tensor_type(shape, U32)
    shifted = hlo.shift_right_logical(counts, _full(32, shape, U64))
    lo = hlo.convert(t32, counts)
    return hlo.convert(t32, shifted), lo


def _hash_keys_with_counters(ctx, keys, key_shape, shape):
    """``threefry(k1, k2, hi, lo)`` for every key and every counter of ``shape``:
    two word arrays of ``key_shape + shape``. One key: its words go to the hash as
    scalars, as JAX's."""
    key_shape, shape = tuple(key_shape), tuple(shape)
    out = key_shape + shape
    k1, k2 = _key_words(keys, key_shape)
    if key_shape:
        kdims = range(len(key_shape))
        k1 = _bcast(k1, key_shape, out, kdims, U32)
        k2 = _bcast(k2, key_shape, out, kdims, U32)
    hi, lo = iota_2x32_shape(shape)
    cdims = range(len(key_shape), len(out))
    hi = _bcast(hi, shape, out, cdims, U32)
    lo = _bcast(lo, shape, out, cdims, U32)
    return threefry2x32(k1, k2, hi, lo, out, ctx.module, key_shape=() if not key_shape else out)


# -- the primitives ----------------------------------------------------------------------

def _random_seed(ctx, seeds, *, impl):
    aval = ctx.avals_in[0]
    shape = tuple(aval.shape)
    dtype = aval.dtype
    t32 = tensor_type(shape, U32)
    if dtype.itemsize == 8:
        shift = _full(32, shape, dtype)
        hi = hlo.convert(t32, hlo.shift_right_logical(seeds, shift))
        lo = hlo.convert(t32, seeds)  # integer converts wrap: the low 32 bits
    else:
        # JAX: seed >> 32 is 0 for narrower seeds; seed & 0xFFFFFFFF promotes the seed
        # (sign-extending signed ones) before the conversion to uint32.
        hi = _full(0, shape, U32)
        if dtypes.is_signed_int(dtype) and dtype.itemsize < 4:
            seeds = hlo.convert(tensor_type(shape, dtypes.int32), seeds)
        lo = hlo.convert(t32, seeds)
    return _stack_words(hi, lo, shape)


def _random_wrap(ctx, base, *, impl):
    return base


def _random_unwrap(ctx, keys):
    return keys


def _iota_counts(n, key_shape):
    """JAX's ``threefry_2x32(key, iota(uint32, n))`` counter halves: ``iota(n)`` (padded
    with a 0 to even length) split into its first and second half, each broadcast to
    ``key_shape + (ceil(n / 2),)``."""
    half = (n + 1) // 2
    t = tensor_type((half,), U32)
    x0 = hlo.iota(t, 0)
    x1 = hlo.add(hlo.iota(t, 0), _full(half, (half,), U32))
    if n % 2:  # the padding 0 ends the second half
        x1 = hlo.concatenate([hlo.slice(x1, [0], [half - 1], [1]), _full(0, (1,), U32)], 0)
    out = tuple(key_shape) + (half,)
    dims = [len(key_shape)]
    return _bcast(x0, (half,), out, dims, U32), _bcast(x1, (half,), out, dims, U32)


def _threefry_iota(ctx, keys, key_shape, n):
    """``threefry_2x32(key, iota(uint32, n))`` for every key: ``key_shape + (n,)`` words
    (JAX's non-partitionable derivation, ``jax_threefry_partitionable=False``)."""
    key_shape = tuple(key_shape)
    half = (n + 1) // 2
    out = key_shape + (half,)
    k1, k2 = _key_words(keys, key_shape)
    if key_shape:
        kdims = range(len(key_shape))
        k1 = _bcast(k1, key_shape, out, kdims, U32)
        k2 = _bcast(k2, key_shape, out, kdims, U32)
    y0, y1 = threefry2x32(k1, k2, *_iota_counts(n, key_shape), out, ctx.module,
                          key_shape=() if not key_shape else out)
    words = hlo.concatenate([y0, y1], len(key_shape))
    if n % 2:
        r = len(key_shape)
        words = hlo.slice(words, [0] * (r + 1), list(key_shape) + [n], [1] * (r + 1))
    return words


def _random_bits_original(ctx, keys, bit_width, shape):
    """JAX's ``_threefry_random_bits_original``: ``ceil(bit_width * size / 32)`` words
    hashed from counters ``0, 1, ...``; 64 bits join the first half of the words (high)
    with the second (low); 8 and 16 bits take each word's lowest bits first."""
    key_shape = tuple(ctx.avals_in[0].shape)
    out = key_shape + tuple(shape)
    dtype = ctx.aval_out.dtype
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    if size == 0:
        return _full(0, out, dtype)
    if max_count >= np.iinfo(np.uint32).max:
        raise NotImplementedError("random bits of 2**32 - 1 or more words with "
                                  "jax_threefry_partitionable=False")
    r = len(key_shape)
    words = _threefry_iota(ctx, keys, key_shape, max_count)  # key_shape + (max_count,)
    if bit_width == 64:
        t64 = tensor_type(key_shape + (size,), U64)
        hi = hlo.slice(words, [0] * (r + 1), list(key_shape) + [size], [1] * (r + 1))
        lo = hlo.slice(words, [0] * r + [size], list(key_shape) + [2 * size], [1] * (r + 1))
        bits = hlo.or_(hlo.shift_left(hlo.convert(t64, hi), _full(32, key_shape + (size,), U64)),
                       hlo.convert(t64, lo))
    elif bit_width == 32:
        bits = words
    else:
        per = 32 // bit_width
        wide = key_shape + (max_count, per)
        w = _bcast(words, key_shape + (max_count,), wide, range(r + 1), U32)
        shifts = hlo.multiply(hlo.iota(tensor_type(wide, U32), r + 1), _full(bit_width, wide, U32))
        w = hlo.and_(hlo.shift_right_logical(w, shifts), _full((1 << bit_width) - 1, wide, U32))
        w = hlo.reshape(tensor_type(key_shape + (max_count * per,), U32), w)
        w = hlo.slice(w, [0] * (r + 1), list(key_shape) + [size], [1] * (r + 1))
        bits = hlo.convert(tensor_type(key_shape + (size,), dtype), w)
    return hlo.reshape(tensor_type(out, dtype), bits)


def _partitionable() -> bool:
    return config.read("threefry_partitionable")


def _random_bits(ctx, keys, *, bit_width, shape):
    if not _partitionable():
        return _random_bits_original(ctx, keys, bit_width, shape)
    key_shape = tuple(ctx.avals_in[0].shape)
    out = key_shape + tuple(shape)
    b1, b2 = _hash_keys_with_counters(ctx, keys, key_shape, shape)
    if bit_width == 64:
        t64 = tensor_type(out, U64)
        hi = hlo.shift_left(hlo.convert(t64, b1), _full(32, out, U64))
        return hlo.or_(hi, hlo.convert(t64, b2))
    bits = hlo.xor(b1, b2)
    if bit_width == 32:
        return bits
    return hlo.convert(tensor_type(out, ctx.aval_out.dtype), bits)


def _random_split(ctx, keys, *, shape):
    key_shape = tuple(ctx.avals_in[0].shape)
    if not _partitionable():  # JAX's _threefry_split_original: the words of 2n counters
        n = math.prod(shape)
        words = _threefry_iota(ctx, keys, key_shape, 2 * n)
        return hlo.reshape(tensor_type(key_shape + tuple(shape) + (2,), U32), words)
    b1, b2 = _hash_keys_with_counters(ctx, keys, key_shape, shape)
    return _stack_words(b1, b2, key_shape + tuple(shape))


def _random_fold_in(ctx, keys, msgs):
    keys_aval, msgs_aval = ctx.avals_in
    out = tuple(ctx.aval_out.shape)
    k1, k2 = _key_words(keys, tuple(keys_aval.shape))
    k1 = _lax_bcast(k1, keys_aval.shape, out, U32)
    k2 = _lax_bcast(k2, keys_aval.shape, out, U32)
    msgs = _lax_bcast(msgs, msgs_aval.shape, out, U32)
    # JAX: threefry_2x32(key, threefry_seed(msg)), i.e. the counter pair (msg >> 32, msg).
    b1, b2 = threefry2x32(k1, k2, _full(0, out, U32), msgs, out, ctx.module)
    return _stack_words(b1, b2, out)


def _threefry2x32(ctx, k1, k2, x1, x2):
    out = tuple(ctx.aval_out.shape)
    args = [_lax_bcast(v, a.shape, out, U32) for v, a in zip((k1, k2, x1, x2), ctx.avals_in)]
    return list(threefry2x32(*args, out, ctx.module))


# -- keys of other PRNG implementations ---------------------------------------------------
# JAX lowers random_seed/bits/split/fold_in with ``mlir.lower_fun`` of the implementation's
# functions vectorized over the key shape; the layer that traces (traxla.random) registers
# the builder of that jaxpr, ``build(prim, impl, physical avals_in, params) -> ClosedJaxpr``,
# and this stage emits it inline. The built-in Threefry keys keep the direct lowerings above.
_impl_builders: list = []


def register_impl_decomposition(build) -> None:
    _impl_builders[:] = [build]


def _lower_by_impl(prim, rule, impl_of):
    def lowered(ctx, *args, **params):
        impl = impl_of(ctx, params)
        if impl is R.threefry_impl or impl == R.threefry_impl:
            return rule(ctx, *args, **params)
        if not _impl_builders:
            raise NotImplementedError(f"{prim.name} on keys of the PRNG implementation "
                                      f"{impl.name!r}: traxla.random is not imported")
        from traxla.lowering.module import const_value, emit_jaxpr
        avals = tuple(physical_aval(a) for a in ctx.avals_in)
        closed = _impl_builders[0](prim, impl, avals, params)
        consts = [const_value(v.aval, c) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
        return emit_jaxpr(ctx.module, closed.jaxpr, consts, list(args))[0]
    return lowered


def _keys_impl(ctx, params):
    return ctx.avals_in[0].dtype.impl


def _param_impl(ctx, params):
    return params["impl"]


register_lowering(R.random_seed_p, _lower_by_impl(R.random_seed_p, _random_seed, _param_impl))
register_lowering(R.random_wrap_p, _random_wrap)
register_lowering(R.random_unwrap_p, _random_unwrap)
register_lowering(R.random_bits_p, _lower_by_impl(R.random_bits_p, _random_bits, _keys_impl))
register_lowering(R.random_split_p, _lower_by_impl(R.random_split_p, _random_split, _keys_impl))
register_lowering(R.random_fold_in_p, _lower_by_impl(R.random_fold_in_p, _random_fold_in,
                                                     _keys_impl))
register_lowering(R.threefry2x32_p, _threefry2x32)


# -- structural ops on key arrays ----------------------------------------------------------
# An op on key<fry>[s] is the op on uint32[s + (2,)]: the rule runs with physical avals and
# its params extended over the trailing key dimensions.

def _is_ext(aval) -> bool:
    return isinstance(aval.dtype, dtypes.ExtendedDType)


def _physical_ctx(ctx, avals_in=None):
    return RuleContext(ctx.module, ctx.primitive,
                       [physical_aval(a) for a in (avals_in or ctx.avals_in)],
                       [physical_aval(a) for a in ctx.avals_out])


def _trailing(aval):
    """The extended dtype's physical shape, for the first extended aval."""
    return aval.dtype.physical_shape


def _ext_slice(orig, ctx, x, *, start_indices, limit_indices, strides):
    tail = _trailing(ctx.avals_in[0])
    strides = strides or (1,) * len(start_indices)
    return orig(_physical_ctx(ctx), x, start_indices=tuple(start_indices) + (0,) * len(tail),
                limit_indices=tuple(limit_indices) + tail,
                strides=tuple(strides) + (1,) * len(tail))


def _ext_broadcast_in_dim(orig, ctx, x, *, shape, broadcast_dimensions, sharding=None):
    tail = _trailing(ctx.avals_in[0])
    n = len(shape)
    return orig(_physical_ctx(ctx), x, shape=tuple(shape) + tail,
                broadcast_dimensions=tuple(broadcast_dimensions) + tuple(range(n, n + len(tail))),
                sharding=sharding)


def _ext_reshape(orig, ctx, x, *, new_sizes, dimensions, sharding=None):
    tail = _trailing(ctx.avals_in[0])
    if dimensions is not None:
        n = len(dimensions)
        dimensions = tuple(dimensions) + tuple(range(n, n + len(tail)))
    return orig(_physical_ctx(ctx), x, new_sizes=tuple(new_sizes) + tail, dimensions=dimensions,
                sharding=sharding)


def _ext_transpose(orig, ctx, x, *, permutation):
    tail = _trailing(ctx.avals_in[0])
    n = len(permutation)
    return orig(_physical_ctx(ctx), x,
                permutation=tuple(permutation) + tuple(range(n, n + len(tail))))


def _zero_indices(count):
    i32 = ShapedArray((), dtypes.int32)
    return [constant(np.int32(0), dtypes.int32) for _ in range(count)], [i32] * count


def _ext_dynamic_slice(orig, ctx, x, *indices, slice_sizes):
    tail = _trailing(ctx.avals_in[0])
    zeros, zero_avals = _zero_indices(len(tail))
    pctx = _physical_ctx(ctx, list(ctx.avals_in) + zero_avals)
    return orig(pctx, x, *indices, *zeros, slice_sizes=tuple(slice_sizes) + tail)


def _ext_dynamic_update_slice(orig, ctx, x, update, *indices):
    tail = _trailing(ctx.avals_in[0])
    zeros, zero_avals = _zero_indices(len(tail))
    pctx = _physical_ctx(ctx, list(ctx.avals_in) + zero_avals)
    return orig(pctx, x, update, *indices, *zeros)


def _ext_select_n(orig, ctx, which, *cases):
    which_aval = ctx.avals_in[0]
    out = physical_aval(ctx.aval_out)
    if which_aval.shape:  # the predicate broadcasts over the trailing key dimensions
        which = hlo.broadcast_in_dim(tensor_type(out.shape, which_aval.dtype), which,
                                     list(range(len(which_aval.shape))))
        which_aval = which_aval.update(shape=out.shape)
    pctx = _physical_ctx(ctx, [which_aval] + list(ctx.avals_in[1:]))
    return orig(pctx, which, *cases)


def _ext_gather(orig, ctx, operand, indices, *, dimension_numbers, slice_sizes, **params):
    tail = _trailing(ctx.avals_in[0])
    n = len(ctx.aval_out.shape)
    dn = dimension_numbers._replace(
        offset_dims=tuple(dimension_numbers.offset_dims) + tuple(range(n, n + len(tail))))
    return orig(_physical_ctx(ctx), operand, indices, dimension_numbers=dn,
                slice_sizes=tuple(slice_sizes) + tail, **params)


def _ext_scatter(orig, ctx, operand, indices, updates, *, dimension_numbers, **params):
    """A scatter into keys scatters their data: the trailing key dimensions are window
    dimensions of the updates (so the update region stays on scalars)."""
    tail = _trailing(ctx.avals_in[0])
    n = len(ctx.avals_in[2].shape)
    dn = dimension_numbers._replace(
        update_window_dims=tuple(dimension_numbers.update_window_dims)
        + tuple(range(n, n + len(tail))))
    return orig(_physical_ctx(ctx), operand, indices, updates, dimension_numbers=dn, **params)


def _ext_passthrough(orig, ctx, *args, **params):
    return orig(_physical_ctx(ctx), *args, **params)


def _wrap_for_extended(prim, ext_rule):
    orig = lowering_rules.get(prim)
    if orig is None or getattr(orig, "_handles_extended", False):
        return

    def rule(ctx, *args, **params):
        if any(_is_ext(a) for a in ctx.avals_in) or any(_is_ext(a) for a in ctx.avals_out):
            return ext_rule(orig, ctx, *args, **params)
        return orig(ctx, *args, **params)

    rule._handles_extended = True
    rule.__wrapped__ = orig
    # an inline op's ``attributes_of`` refuses extended dtypes: those come here
    register_lowering(prim, rule, keep_inline=inline_ops.get(prim, (None, None))[1] is not None)


for _prim, _ext in [(S.slice_p, _ext_slice), (S.broadcast_in_dim_p, _ext_broadcast_in_dim),
                    (S.reshape_p, _ext_reshape), (S.transpose_p, _ext_transpose),
                    (S.dynamic_slice_p, _ext_dynamic_slice),
                    (S.dynamic_update_slice_p, _ext_dynamic_update_slice),
                    (select_n_p, _ext_select_n),
                    (S.squeeze_p, _ext_passthrough), (S.rev_p, _ext_passthrough),
                    (S.concatenate_p, _ext_passthrough), (S.stack_p, _ext_passthrough),
                    (S.unstack_p, _ext_passthrough), (S.split_p, _ext_passthrough)]:
    _wrap_for_extended(_prim, _ext)

try:  # gather (integer-array indexing of key arrays), where traxla lowers it
    from traxla.ir.rules.indexing import gather_p as _gather_p, P as _IDX, SCATTERS as _SCATTERS
    from traxla.lowering.rules import indexing as _indexing_rules  # noqa: F401
except ImportError:  # pragma: no cover - an older tree without indexing
    _gather_p = None
if _gather_p is not None:
    _wrap_for_extended(_gather_p, _ext_gather)
    for _name in _SCATTERS:  # ``keys.at[i].set(k)``
        _wrap_for_extended(_IDX[_name], _ext_scatter)


# random_clone is the identity on the key data; random_gamma is lowered by decomposition
# (traxla.random._gamma registers it: JAX lowers it with ``mlir.lower_fun(_gamma_impl)``).
register_lowering(R.random_clone_p, lambda ctx, keys: keys)

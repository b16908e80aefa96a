"""The rest of ``jax.lax``'s operations (issue #12): ``reduce_precision``,
``optimization_barrier``, ``mulhi``, ``reduce_xor``, ``rng_bit_generator``,
``rng_uniform``, ``broadcast_shapes``, ``DotAlgorithmPreset``, ``composite``."""
from __future__ import annotations

import enum
import functools
import operator

import numpy as np

from traxla import tree_util
from traxla.ir.rules.optimization import optimization_barrier_p, reduce_precision_p
from traxla.ir.rules.rng import RandomAlgorithm, rng_bit_generator_p, rng_uniform_p
from traxla.tracer import Tracer


def _concrete_index(value, what):
    if isinstance(value, Tracer):
        value._concretization_error("index", f"The {what} must be a concrete integer.")
    return operator.index(value)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Rounds ``operand`` to a float with ``exponent_bits`` exponent and ``mantissa_bits``
    mantissa bits (XLA's ReducePrecision)."""
    exponent_bits = _concrete_index(exponent_bits, "exponent_bits argument of "
                                    "lax.reduce_precision")
    mantissa_bits = _concrete_index(mantissa_bits, "mantissa_bits argument of "
                                    "lax.reduce_precision")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


def optimization_barrier(operand, /):
    """The pytree ``operand`` unchanged; XLA may not move computation across the barrier."""
    flat, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*flat))


def mulhi(x, y, /):
    """The high half of the double-width product of two integer arrays."""
    from traxla.ir.rules.integer_ops import mulhi_p
    return mulhi_p.bind(x, y)


def reduce_xor(operand, axes):
    """Bitwise XOR of ``operand``'s elements along ``axes``."""
    from traxla.ir.rules.integer_ops import reduce_xor_p
    return reduce_xor_p.bind(operand, axes=tuple(axes))


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """``(new_key, bits)`` from XLA's RngBitGenerator (key: u32[4] or u64[2])."""
    shape = tuple(operator.index(d) for d in shape)
    dtype = np.dtype(dtype)
    if dtype not in {np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    return tuple(rng_bit_generator_p.bind(key, shape=shape, dtype=dtype, algorithm=algorithm,
                                          out_sharding=out_sharding))


def rng_uniform(a, b, shape):
    """Stateful uniform numbers in ``[a, b)`` (XLA's RngUniform; prefer ``traxla.random``)."""
    return rng_uniform_p.bind(a, b, shape=tuple(shape))


def broadcast_shapes(*shapes):
    """The NumPy-style broadcast of ``shapes`` (ranks promoted on the left)."""
    shapes = [tuple(operator.index(d) for d in s) for s in shapes]
    if not shapes:
        return ()
    if len(set(shapes)) == 1:
        return shapes[0]
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + s for s in shapes]
    out = []
    for dims in zip(*padded):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (accepted as ``precision=``; printed by name). On CPU XLA picks
    its default algorithm, which computes each of the supported presets exactly."""

    DEFAULT = 1
    ANY_F8_ANY_F8_F32 = 2
    ANY_F8_ANY_F8_F32_FAST_ACCUM = 3
    ANY_F8_ANY_F8_ANY = 4
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = 5
    F16_F16_F16 = 6
    F16_F16_F32 = 7
    BF16_BF16_BF16 = 8
    BF16_BF16_F32 = 9
    BF16_BF16_F32_X3 = 10
    BF16_BF16_F32_X6 = 11
    BF16_BF16_F32_X9 = 12
    TF32_TF32_F32 = 13
    TF32_TF32_F32_X3 = 14
    F32_F32_F32 = 15
    F64_F64_F64 = 16

    def __repr__(self):
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self):
        return self.name


def composite(decomposition, name, version=0):
    """``decomposition`` as one named ``composite`` operation (keyword arguments become its
    static attributes), lowered to ``stablehlo.composite``."""
    from traxla.errors import UnexpectedTracerError
    from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
    from traxla.ir.rules.composite import composite_p
    from traxla.tracer import make_debug_info, trace_to_jaxpr

    @functools.wraps(decomposition)
    def _decorator(*args, **kwargs):
        if any(isinstance(v, Tracer) for v in kwargs.values()):
            raise UnexpectedTracerError(
                "Found a JAX Tracer as an attribute in the decomposition for the composite op "
                f"'{name}'. This means that the decomposition function closes over a value that "
                "is involved in a JAX transformation. Any values that aren't explicitly known at "
                "compile time must be explicitly passed as arguments to the composite.\n\nNote: "
                "If you are passing jax arrays as attributes, use numpy arrays instead.")
        flat_args, in_tree = tree_util.tree_flatten(args)
        from traxla.lax import aval_of
        avals = [aval_of(x) for x in flat_args]
        out_store = []

        def flat_fun(*xs):
            out = decomposition(*tree_util.tree_unflatten(in_tree, xs), **kwargs)
            leaves, tree = tree_util.tree_flatten(out)
            out_store.append(tree)
            return leaves

        closed = trace_to_jaxpr(flat_fun, avals, make_debug_info(decomposition, "composite", ()))
        tracer_consts = [c for c in closed.consts if isinstance(c, Tracer)]
        if tracer_consts:  # closed-over tracers become leading operands
            j = closed.jaxpr
            moved = [v for v, c in zip(j.constvars, closed.consts) if isinstance(c, Tracer)]
            kept = [(v, c) for v, c in zip(j.constvars, closed.consts) if not isinstance(c, Tracer)]
            closed = ClosedJaxpr(Jaxpr([v for v, _ in kept], moved + j.invars, j.outvars, j.eqns,
                                       j.debug_info), [c for _, c in kept])
        attributes = []
        for k, v in kwargs.items():
            leaves, treedef = tree_util.tree_flatten(v)
            attributes.append((k, tuple(_Hashable(x) if isinstance(x, np.ndarray) else x
                                        for x in leaves), treedef))
        outs = composite_p.bind(*tracer_consts, *flat_args, name=name,
                                attributes=tuple(attributes), version=version, jaxpr=closed)
        return tree_util.tree_unflatten(out_store[0], outs)

    return _decorator


class _Hashable:
    """A NumPy array attribute, hashable by value (JAX's ``HashableArray``)."""

    def __init__(self, val):
        self.val = val

    def __repr__(self):
        return f"HashableArray({self.val!r})"

    def __hash__(self):
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other):
        return isinstance(other, _Hashable) and np.array_equal(self.val, other.val)


def stack(operands, axis=0):
    """The arrays ``operands`` stacked along a new ``axis`` (the ``stack`` primitive)."""
    from traxla.lax import _stack
    return _stack(list(operands), axis)


def unstack(operand, axis=0):
    """``operand`` split into a tuple of arrays along ``axis`` (the ``unstack`` primitive)."""
    from traxla.lax import _unstack
    return tuple(_unstack(operand, axis))


# One Precision enum for traxla.lax (conv_general_dilated takes it too).
from traxla.lax.convolution import _PRECISION_STRINGS, Precision  # noqa: E402


def canonicalize_precision(precision):
    """JAX's ``canonicalize_precision``: None, a pair of ``Precision`` values, or a
    ``DotAlgorithmPreset``."""
    if precision is None:
        return None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            return Precision(precision), Precision(precision)
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, Precision):
        return precision, precision
    elif isinstance(precision, DotAlgorithmPreset):
        return precision
    elif (isinstance(precision, (list, tuple)) and len(precision) == 2
          and all(isinstance(p, Precision) for p in precision)):
        return tuple(precision)
    elif (isinstance(precision, (list, tuple)) and len(precision) == 2
          and all(isinstance(p, str) for p in precision)):
        return canonicalize_precision(precision[0])[0], canonicalize_precision(precision[1])[0]
    raise ValueError(
        "Precision argument must be one of:\n- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        f"- a lax.DotAlgorithm value;\nbut got {precision}.")

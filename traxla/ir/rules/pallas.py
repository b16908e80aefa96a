"""``pallas_call``: a Pallas kernel compiled for a TPU (Mosaic), as one equation.

The equation's operands are the call's arrays (scalar-prefetch operands first); its
results are the kernel's outputs. Everything the lowering needs rides in one param,
``kernel``: a :class:`KernelSpec` holding the kernel's jaxpr (a function of the grid
indices and then of refs: scalar prefetch, input blocks, output blocks, scratch), the
grid, each operand's block shape and index-map jaxpr, and the compiler parameters. The
kernel jaxpr is kept inside that object, not as a jaxpr param, so that whole-program passes
(state discharge, DCE) leave the kernel's refs alone: they are the kernel's state, not
the program's. Interpret mode never makes this equation (it runs the kernel as traxla
operations)."""
from __future__ import annotations

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing

pallas_call_p = Primitive("pallas_call", multiple_results=True)


class BlockMapping:
    """One operand's (or output's) block: the array's aval, the block shape (1 for a
    squeezed dimension, which the kernel's ref lacks), the memory space of its ref
    ("vmem", "smem", "any" or None for the default), and its index map, a closed jaxpr
    from the grid indices (then the scalar-prefetch refs) to the block's indices."""

    __slots__ = ("array_aval", "block_shape", "memory_space", "index_map", "origin",
                 "squeezed")

    def __init__(self, array_aval, block_shape, memory_space, index_map, origin,
                 squeezed=None):
        self.array_aval = array_aval
        self.block_shape = tuple(block_shape)  # a squeezed dimension counts 1 here
        self.squeezed = tuple(squeezed) if squeezed is not None else \
            (False,) * len(self.block_shape)  # those the kernel's ref does not have
        self.memory_space = memory_space
        self.index_map = index_map
        self.origin = origin  # e.g. "inputs[0]", for messages

    def __repr__(self):
        return (f"BlockMapping({self.origin}, block_shape={self.block_shape}, "
                f"memory_space={self.memory_space})")


class KernelSpec:
    """Everything a compiled ``pallas_call`` carries. Two are equal when they describe the
    same kernel (the printed jaxprs, blocks, grid and parameters), so that calling the same
    ``pallas_call`` eagerly again reuses its compiled executable."""

    __slots__ = ("name", "jaxpr", "grid", "in_blocks", "out_blocks", "num_scalar_prefetch",
                 "prefetch_avals", "scratch_avals", "dimension_semantics",
                 "vmem_limit_bytes", "compiler_params", "source", "cost_estimate", "metadata",
                 "_key",
                 "__weakref__")

    def __init__(self, *, name, jaxpr, grid, in_blocks, out_blocks, num_scalar_prefetch,
                 prefetch_avals, scratch_avals, dimension_semantics, vmem_limit_bytes,
                 compiler_params, source, cost_estimate=None, metadata=None):
        self.name = name
        self.jaxpr = jaxpr
        self.grid = tuple(grid)  # None for an axis of traced size (an operand, first)
        self.in_blocks = tuple(in_blocks)
        self.out_blocks = tuple(out_blocks)
        self.num_scalar_prefetch = num_scalar_prefetch
        self.prefetch_avals = tuple(prefetch_avals)
        self.scratch_avals = tuple(scratch_avals)  # (memory space, aval) pairs
        self.dimension_semantics = dimension_semantics
        self.vmem_limit_bytes = vmem_limit_bytes
        self.compiler_params = compiler_params
        self.source = source  # the user's line that made the call, for messages
        # ((field, value) pairs of the call's pl.CostEstimate, sorted by field) or None
        self.cost_estimate = cost_estimate
        self.metadata = metadata  # the call's metadata: sorted (key, value) pairs, or None
        self._key = None

    def key(self):
        if self._key is None:
            blocks = tuple((str(b.array_aval), b.block_shape, b.memory_space, b.squeezed,
                            str(b.index_map)) for b in (*self.in_blocks, *self.out_blocks))
            self._key = (self.name, str(self.jaxpr), self.grid, blocks,
                         self.num_scalar_prefetch, tuple(map(str, self.prefetch_avals)),
                         tuple((sp, str(a)) for sp, a in self.scratch_avals),
                         self.dimension_semantics, self.vmem_limit_bytes,
                         repr(self.compiler_params), len(self.in_blocks),
                         self.cost_estimate, self.metadata)
        return self._key

    def __eq__(self, other):
        return self is other or (type(other) is KernelSpec and self.key() == other.key())

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        return f"KernelSpec({self.name}, grid={self.grid})"


def scaled_cost(cost, factor):
    """A kernel's cost estimate (``KernelSpec.cost_estimate``) times ``factor``, as JAX
    scales it for a batched (the batch size) or JVP (2) call: its remote bytes are 0."""
    if cost is None:
        return None
    return tuple((k, 0 if k == "remote_bytes_transferred" else v * factor) for k, v in cost)


def _pallas_call_typing(*avals_in, kernel, out_avals, input_output_aliases, **_):
    return [ShapedArray(a.shape, a.dtype) for a in out_avals]


def_typing(pallas_call_p, _pallas_call_typing)


# -- TPU kernel operations that only a compiled kernel's jaxpr holds --------------------

class KernelPrimitive(Primitive):
    """An operation only a compiled kernel's jaxpr holds (bound only while the kernel is
    traced for Mosaic; interpret mode runs traxla operations instead). The Mosaic registry
    is its only lowering; the program-level obligations (StableHLO lowering, vmap, JVP) do
    not arise, since no transformation enters a compiled ``pallas_call``'s kernel jaxpr, so
    it is not listed among ``ALL_PRIMITIVES`` (as user primitives are not)."""


roll_p = KernelPrimitive("roll")  # pltpu.roll (tpu.dynamic_rotate)


def _roll_typing(x, shift, *, axis, stride, stride_axis):
    if shift.shape or not np.issubdtype(shift.dtype, np.integer):
        raise TypeError(f"pltpu.roll: the shift must be an integer scalar; got "
                        f"{shift.str_short(False)}.")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def_typing(roll_p, _roll_typing)


bitcast_p = KernelPrimitive("bitcast")  # pltpu.bitcast of a value (tpu.bitcast)


def _bits(dtype) -> int:
    dtype = np.dtype(dtype)
    return 4 if dtype.name in ("int4", "uint4", "float4_e2m1fn") else dtype.itemsize * 8


def _bitcast_typing(x, *, ty):
    shape = list(x.shape)
    shape[-2] = shape[-2] * _bits(x.dtype) // _bits(ty)
    return ShapedArray(tuple(shape), np.dtype(ty))


def_typing(bitcast_p, _bitcast_typing)


# pl.num_programs of a grid axis of traced size (tpu.iteration_bound); a static axis's size
# is a constant and binds nothing, as in JAX
num_programs_p = KernelPrimitive("num_programs")
def_typing(num_programs_p, lambda *, axis: ShapedArray((), np.dtype(np.int32)))

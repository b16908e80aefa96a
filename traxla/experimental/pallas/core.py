"""Pallas's grid and block specifications, ``pallas_call`` and its interpret mode (see the
package docstring)."""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import itertools
import math
import threading
from typing import Any, Callable, Sequence

import numpy as np

from traxla import lax, tree_util
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.runtime.backend import default_backend
from traxla.state.ref import new_ref
from traxla.experimental.pallas.interpret_mode import forced_interpret_params, interpreting
from traxla.experimental.pallas.kernel_refs import (KernelRef, is_semaphore, scratch_ref,
                                                    uninitialized as _uninitialized)
from traxla.tracer import Tracer
import traxla.numpy as jnp


class RevisitMode(enum.Enum):
    """Whether an output buffer supports revisiting (a pipelining hint)."""
    IMMEDIATE = "immediate"
    ANY = "any"


@dataclasses.dataclass(frozen=True)
class Buffered:
    """How a block is buffered in a pipeline (a hint; interpret mode has no pipeline)."""
    buffer_count: int
    use_lookahead: bool = False
    revisit: RevisitMode | None = None


@dataclasses.dataclass(frozen=True)
class MemoryRef:
    """The type of a scratch buffer: an array type in a memory space."""
    inner_aval: Any
    memory_space: Any = None

    def get_array_aval(self):
        return self.inner_aval


class MemorySpace(enum.Enum):
    """Logical, device-agnostic memory spaces."""
    ANY = "any"
    DEFAULT = "default"
    ERROR = "error"
    INDEX = "index"
    KEY = "key"
    HOST = "host"

    def from_type(self, type):
        return MemoryRef(type, memory_space=self)

    def __call__(self, shape, dtype):
        return self.from_type(ShapedArray(tuple(shape), dtypes.canonicalize(np.dtype(dtype))))

    def __str__(self):
        return self.value


ANY = MemorySpace.ANY
HOST = MemorySpace.HOST


@dataclasses.dataclass(frozen=True)
class Squeezed:
    """Represents a one-sized block dimension that is squeezed out in the kernel."""


squeezed = Squeezed()


class _IndexMapFunc:
    """An index map as JAX keeps it (its repr names the function)."""

    def __init__(self, index_map):
        self.index_map = index_map

    def __call__(self, *args):
        return self.index_map(*args)

    def __repr__(self):
        return f"_IndexMapFunc({self.index_map!r})"


@dataclasses.dataclass
class BlockSpec:
    """How an array is sliced for each invocation of a kernel: ``block_shape`` (``int``
    sizes, ``None`` for a squeezed dimension) and ``index_map`` (grid indices -> block
    indices)."""
    block_shape: Sequence[Any] | None = None
    index_map: Callable[..., Any] | None = None
    memory_space: Any | None = dataclasses.field(kw_only=True, default=None)
    pipeline_mode: Buffered | None = None

    def __post_init__(self):
        if self.index_map is not None:
            self.index_map = _IndexMapFunc(self.index_map)

    replace = dataclasses.replace


class NoBlockSpec:
    def __repr__(self):
        return "NoBlockSpec"


no_block_spec = NoBlockSpec()


def _is_valid_grid_dim(dim) -> bool:
    return isinstance(dim, (int, np.integer)) or (hasattr(dim, "shape") and dim.shape == ())


@dataclasses.dataclass(init=False, kw_only=True)
class GridSpec:
    """The grid, the block specs of the inputs and outputs and the scratch shapes of a
    ``pallas_call``."""
    grid: tuple
    grid_names: tuple | None
    in_specs: Any
    out_specs: Any
    scratch_shapes: Any = ()

    def __init__(self, grid=(), in_specs=no_block_spec, out_specs=no_block_spec,
                 scratch_shapes=()):
        if isinstance(in_specs, list):
            in_specs = tuple(in_specs)
        elif in_specs is not no_block_spec and not isinstance(in_specs, Sequence):
            raise ValueError(f"`in_specs` must be a tuple or a list. Found: {in_specs}")
        if isinstance(out_specs, list):
            out_specs = tuple(out_specs)
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.scratch_shapes = tuple(scratch_shapes)
        grid_names = None
        if isinstance(grid, int):
            grid = (grid,)
        elif grid and isinstance(grid[0], tuple):  # a named grid
            grid_names, grid = tuple(n for n, _ in grid), tuple(g for _, g in grid)
        if not all(_is_valid_grid_dim(g) for g in grid):
            raise ValueError(f"Grid must be a tuple of integers or jax.Array, got {grid}")
        self.grid = grid
        self.grid_names = grid_names

    num_scalar_prefetch = 0


# -- the grid a kernel runs in (interpret mode) ------------------------------------------

class _GridEnv(threading.local):
    stack: list = []

    def __init__(self):
        self.stack = []


_grid_env = _GridEnv()


@contextlib.contextmanager
def _grid_point(indices, sizes):
    _grid_env.stack.append((indices, sizes))
    try:
        yield
    finally:
        _grid_env.stack.pop()


def _grid_frame(what):
    if not _grid_env.stack:
        raise AssertionError(f"pallas.{what} can only be called inside a Pallas kernel")
    return _grid_env.stack[-1]


def program_id(axis: int):
    """The index of the current invocation along grid axis ``axis`` (an ``int32``)."""
    indices, _ = _grid_frame("program_id")
    index = indices[axis]
    if isinstance(index, Tracer) and index.aval.dtype == np.int32 and not index.aval.shape:
        return index  # (JAX's grid env hands out the index itself: no conversion)
    return jnp.int32(index)


def num_programs(axis: int):
    """The size of the grid along ``axis`` (an ``int32``)."""
    _, sizes = _grid_frame("num_programs")
    if isinstance(sizes[axis], np.int32):  # a compiled kernel: the static size (as JAX)
        return sizes[axis]
    if sizes[axis] is None:  # a compiled kernel's axis of traced size
        from traxla.ir.rules.pallas import num_programs_p
        return num_programs_p.bind(axis=axis)
    return jnp.int32(sizes[axis])


def when(condition):
    """``@when(c)`` runs the decorated function (of no arguments) where ``c`` holds."""
    def _wrapped(f):
        if isinstance(condition, Tracer):
            lax.cond(condition, f, lambda: None)
        elif bool(condition):
            f()
    return _wrapped


def cdiv(a, b):
    """Ceiling division."""
    if isinstance(a, int) and isinstance(b, int):
        return -(a // -b)
    return lax.div(a + (b - 1), b)


# -- pallas_call ---------------------------------------------------------------------------

def _specs_for(specs, tree, n, what):
    if specs is no_block_spec:
        return [no_block_spec] * n
    if isinstance(specs, (BlockSpec, NoBlockSpec)) and n == 1:
        return [specs]
    try:  # the specs' tree is the values' (a None value has a None spec, and no leaves)
        flat = tree.flatten_up_to(specs)
    except (ValueError, TypeError):
        flat = None
    if flat is None or len(flat) != n:
        flat, _ = tree_util.tree_flatten(
            specs, is_leaf=lambda s: isinstance(s, (BlockSpec, NoBlockSpec)) or s is None)
    if len(flat) != n:
        raise ValueError(f"Pytree for `{what}` and `{'inputs' if what == 'in_specs' else 'out_shape'}`"
                         f" do not match. There are {len(flat)} specs and {n} values.")
    return [no_block_spec if s is None else s for s in flat]


def _block_dim(b):
    """A block dimension as an int, None or Squeezed (``pl.Blocked(n)`` is ``n``)."""
    kind = type(b).__name__
    if kind == "Blocked":
        return b.block_size
    if kind in ("Element", "BoundedSlice", "Indirect"):
        raise NotImplementedError(f"pallas_call in interpret mode: pl.{kind} block "
                                  "dimensions are not implemented by traxla")
    return b


class _Block:
    """Where one array's block lies at a grid point: the start of each dimension, the
    block's sizes, and which dimensions the kernel sees squeezed out."""

    def __init__(self, spec, shape, grid_args):
        if spec is no_block_spec or spec.block_shape is None:
            block_shape = tuple(shape)
        else:
            block_shape = tuple(spec.block_shape)
        if len(block_shape) != len(shape):
            raise ValueError(f"Block shape {block_shape} must have the same number of "
                             f"dimensions as the array shape {tuple(shape)}.")
        index_map = None if spec is no_block_spec else spec.index_map
        indices = (0,) * len(shape) if index_map is None else index_map(*grid_args)
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != len(shape):
            raise ValueError(f"Index map function returned {len(indices)} indices for an "
                             f"array of rank {len(shape)}.")
        block_shape = tuple(map(_block_dim, block_shape))
        self.squeezed = tuple(b is None or isinstance(b, Squeezed) for b in block_shape)
        self.sizes = tuple(1 if s else int(b) for s, b in zip(self.squeezed, block_shape))
        self.starts = tuple(i if s else i * b for i, s, b in zip(indices, self.squeezed,
                                                                 self.sizes))
        self.padded = tuple(max(d, (cdiv(d, b) * b)) for d, b in zip(shape, self.sizes))

    def read(self, x):
        block = lax.dynamic_slice(x, [jnp.asarray(s, np.int32) for s in self.starts],
                                  self.sizes)
        axes = tuple(i for i, s in enumerate(self.squeezed) if s)
        return lax.squeeze(block, axes) if axes else block

    def write(self, x, value):
        value = lax.broadcast_in_dim(value, self.sizes, tuple(
            i for i, s in enumerate(self.squeezed) if not s))
        return lax.dynamic_update_slice(x, value.astype(x.dtype),
                                        [jnp.asarray(s, np.int32) for s in self.starts])


def _pad(x, padded, fill):
    if tuple(x.shape) == tuple(padded):
        return x
    return jnp.pad(x, [(0, p - d) for d, p in zip(x.shape, padded)], constant_values=fill)


def _fill(dtype):
    return np.asarray(_uninitialized((), dtype)).item()


def _interpret(kernel, grid_spec, out_shape, input_output_aliases, args, fill="nan"):
    flat_args, in_tree = tree_util.tree_flatten(args)
    flat_out, out_tree = tree_util.tree_flatten(out_shape)
    nprefetch = grid_spec.num_scalar_prefetch
    # the first ``num_scalar_prefetch`` arguments (pytrees) are the scalar prefetch
    prefetch, prefetch_tree = tree_util.tree_flatten(tuple(args[:nprefetch]))
    operands = flat_args[len(prefetch):]
    operand_tree = tree_util.tree_structure(tuple(args[nprefetch:]))
    in_specs = _specs_for(grid_spec.in_specs, operand_tree, len(operands), "in_specs")
    out_specs = _specs_for(grid_spec.out_specs, tree_util.tree_structure(
        tuple(out_shape) if isinstance(out_shape, list) else out_shape), len(flat_out),
        "out_specs")
    operands = [jnp.asarray(x) for x in operands]
    outs = [_uninitialized(o.shape, o.dtype, fill) for o in flat_out]
    for i, o in input_output_aliases.items():
        outs[o] = jnp.asarray(flat_args[i])
    prefetch_refs = [KernelRef(new_ref(jnp.asarray(x))) for x in prefetch]
    # the kernel's arguments keep the structure of the inputs, outputs (a None in
    # ``out_shape`` or the inputs is passed as None) and scratch shapes, one level spread
    is_scratch = lambda s: isinstance(s, MemoryRef) or is_semaphore(s)  # noqa: E731
    scratch = tree_util.tree_map(lambda t: scratch_ref(t, fill),
                                 tuple(grid_spec.scratch_shapes),
                                 is_leaf=is_scratch)
    out_spread = isinstance(out_shape, (tuple, list))
    prefetch_args = list(tree_util.tree_unflatten(prefetch_tree, prefetch_refs))

    def blocks_at(point):
        grid_args = [jnp.int32(i) for i in point] + prefetch_args
        return ([_Block(s, x.shape, grid_args) for s, x in zip(in_specs, operands)],
                [_Block(s, o.shape, grid_args) for s, o in zip(out_specs, outs)])

    def run_point(point, sizes, padded_outs):
        in_blocks, out_blocks = blocks_at(point)
        in_refs = [KernelRef(new_ref(b.read(x))) for b, x in zip(in_blocks, padded_operands)]
        out_refs = [KernelRef(new_ref(b.read(o))) for b, o in zip(out_blocks, padded_outs)]
        with _grid_point(point, sizes):
            out_args = tree_util.tree_unflatten(out_tree, out_refs)
            kernel(*tree_util.tree_unflatten(in_tree, prefetch_refs + in_refs),
                   *(out_args if out_spread else (out_args,)), *scratch)
        return [b.write(o, r[...]) for b, o, r in zip(out_blocks, padded_outs, out_refs)]

    # arrays padded up to whole blocks (the blocks' sizes do not depend on the grid point)
    in_blocks, out_blocks = blocks_at((0,) * len(grid_spec.grid))
    padded_operands = [_pad(x, b.padded, _fill(x.dtype)) for x, b in zip(operands, in_blocks)]
    padded_outs = [_pad(o, b.padded, _fill(o.dtype)) for o, b in zip(outs, out_blocks)]
    if not any(isinstance(g, Tracer) for g in grid_spec.grid):
        grid = tuple(int(g) for g in grid_spec.grid)
        for point in itertools.product(*map(range, grid)):
            padded_outs = run_point(point, grid, padded_outs)
    else:  # a grid of traced size: a loop over its points, outputs in refs
        sizes = [lax.convert_element_type(jnp.asarray(g), np.int32) for g in grid_spec.grid]
        cells = [new_ref(o) for o in padded_outs]

        def body(t, carry):
            rem, point = t, []
            for size in reversed(sizes):
                point.append(rem % size)
                rem = rem // size
            new = run_point(tuple(reversed(point)), sizes, [c[...] for c in cells])
            for c, v in zip(cells, new):
                c[...] = v
            return carry

        lax.fori_loop(0, math.prod(sizes), body, 0)
        padded_outs = [c[...] for c in cells]
    results = [lax.slice(p, (0,) * p.ndim, tuple(o.shape)) if tuple(p.shape) != tuple(o.shape)
               else p for p, o in zip(padded_outs, outs)]
    return tree_util.tree_unflatten(out_tree, results)


def pallas_call(kernel: Callable[..., None], out_shape: Any, *, grid_spec=None, grid=(),
                in_specs=no_block_spec, out_specs=no_block_spec, scratch_shapes=(),
                input_output_aliases={}, debug: bool = False, interpret: Any = False,
                name: str | None = None, compiler_params=None, cost_estimate=None,
                metadata=None) -> Callable[..., Any]:
    """A function that runs ``kernel`` over ``grid``: its arguments are the inputs, its
    result has the structure of ``out_shape``; ``kernel`` receives a ref per input block,
    then per output block, then per scratch buffer."""
    if grid_spec is None:
        grid_spec = GridSpec(grid, in_specs, out_specs, scratch_shapes)
    else:
        if grid:
            raise ValueError(f"If `grid_spec` is specified, then `grid` must be `()`. It was: {grid}")
        if in_specs is not no_block_spec:
            raise ValueError(f"If `grid_spec` is specified, then `in_specs` must be "
                             f"`no_block_spec`. It was: {in_specs}")
        if out_specs is not no_block_spec:
            raise ValueError(f"If `grid_spec` is specified, then `out_specs` must be "
                             f"`no_block_spec`. It was: {out_specs}")
        if scratch_shapes:
            raise ValueError(f"If `grid_spec` is specified, then `scratch_shapes` must be "
                             f"`()`. It was: {scratch_shapes}")

    def compiled(*args):
        from traxla.experimental.pallas.mosaic_call import compiled_call
        return compiled_call(kernel, grid_spec, out_shape, dict(input_output_aliases),
                             compiler_params, name, args, no_block_spec=no_block_spec,
                             specs_for=_specs_for, grid_point=_grid_point,
                             memory_ref_type=MemoryRef, squeezed_type=Squeezed,
                             cost_estimate=cost_estimate, metadata=metadata)
    # JAX's pallas_call is a jit(inline=True): called eagerly again, the kernel is not
    # traced and lowered again (a cached call); under a trace its equation is inlined
    compiled_jit = []

    def wrapped(*args):
        if not interpret and forced_interpret_params() is None:
            if not compiled_jit:
                from traxla.api.jit_function import jit
                compiled_jit.append(jit(compiled, inline=True))
            return compiled_jit[0](*args)
        params = interpret if not isinstance(interpret, bool) and interpret else \
            forced_interpret_params()
        with interpreting(params):
            return _interpret(kernel, grid_spec, out_shape, dict(input_output_aliases), args,
                              getattr(params, "uninitialized_memory", "nan"))

    wrapped.__name__ = name or getattr(kernel, "__name__", "pallas_call")
    return wrapped

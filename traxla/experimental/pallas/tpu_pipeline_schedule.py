"""The schedule of ``pltpu.emit_pipeline`` (see ``tpu_pipeline``, whose
:class:`BufferedRef` operands it moves): which DMAs start and which are waited for at
each step of the pipeline's loop, after JAX's ``Scheduler`` and ``_emit_pipeline``
operation for operation (the Mosaic module is JAX's); the buffers allocated around the
pipeline (``pl.run_scoped``) or once by the caller (``emit_pipeline_with_allocations``);
the grid split among cores (``core_axis``)."""
from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from traxla import lax, tree_util
from traxla.api.named_scopes import named_scope
from traxla.experimental.pallas import core as plcore
from traxla.experimental.pallas.tpu_pipeline import (BufferedRef, BufferedRefBase,
                                                     BufferType, _Type, _all_less, _differ,
                                                     _is_ref, _ref_shape_dtype, _ref_space,
                                                     _trivially_windowed)
import traxla.numpy as jnp

__all__ = ["Scheduler", "emit_pipeline", "emit_pipeline_with_allocations",
           "fetch_with_lookahead", "sync_copy"]


def _as_u32(x):
    return jnp.uint32(x) if isinstance(x, bool) else x.astype(jnp.uint32)


def fetch_with_lookahead(bref, src_ref, grid, grid_offsets, predicate=True,
                         max_num_fetches=None, update_slots=True):
    """Starts the DMAs of the next blocks that differ from the one before, as far as the
    free slots allow (``pl.Buffered(n, use_lookahead=True)``)."""
    def offset(x):
        return tuple(i + j for i, j in zip(x, grid_offsets, strict=True))

    limit = bref.cumulative_wait_in + bref.buffer_count
    if max_num_fetches is not None:
        once = bref.cumulative_copy_in + max_num_fetches
        limit = lax.select(limit < once, limit, once)

    def cond(carry):
        _, nxt, copied = carry
        within, in_grid = copied < limit, _all_less(nxt, grid)
        return predicate & within & in_grid

    def body(carry):
        cur, nxt, copied = carry
        cur_o, nxt_o = offset(cur), offset(nxt)
        changes = _differ(bref.compute_index(*cur_o), bref.compute_index(*nxt_o))
        at = bref.with_slot_index(copy_in_slot=copied)

        @plcore.when(changes)
        def _():
            at.copy_in(src_ref, nxt_o)
        copied = copied + _as_u32(changes)
        return nxt, _next_index(nxt, grid, allow_overflow=True), copied

    cur = bref.next_fetch_indices
    final, _, copied = lax.while_loop(
        cond, body, (cur, _next_index(cur, grid, allow_overflow=True),
                     bref.cumulative_copy_in))
    bref = bref.with_next_fetch(final)
    if update_slots:
        bref = bref.with_slot_index(copy_in_slot=copied)
    return bref, copied


def _is_bref(x):
    return isinstance(x, BufferedRefBase)


def _map_brefs(f, *trees):
    return tree_util.tree_map(f, *trees, is_leaf=_is_bref)


def _map_if(which, f, *trees):
    return _map_brefs(lambda b, *a: f(b, *a) if getattr(b, which) else b, *trees)


def _filter_indices(indices, grid):
    return tuple(0 if isinstance(g, int) and g == 1 else i
                 for i, g in zip(indices, grid, strict=True))


def _next_index(indices, grid, allow_overflow=False):
    """The grid point after ``indices`` (row-major); with ``allow_overflow`` the first
    axis counts on past its size."""
    out, carry = [], True
    for pos, (i, g) in enumerate(reversed(list(zip(indices, grid, strict=True)))):
        inc = lax.select(carry, i + 1, i)
        carry = False if allow_overflow and pos == len(grid) - 1 else inc == g
        out.append(lax.select(carry, 0, inc))
    out = tuple(reversed(out))
    return out if allow_overflow else _filter_indices(out, grid)


def _prev_index(indices, grid):
    out, borrow = [], True
    for i, g in reversed(list(zip(indices, grid, strict=True))):
        dec = lax.select(borrow, i - 1, i)
        borrow = dec == -1
        out.append(lax.select(borrow, g - 1, dec))
    return _filter_indices(tuple(reversed(out)), grid)


class Scheduler:
    """When each operand's DMAs start and are waited for, at one step of the pipeline."""

    def __init__(self, step, indices, grid, grid_offsets, num_stages, trace_scopes=True,
                 _explicit_indices=False):
        self.step, self.grid, self.grid_offsets = step, grid, grid_offsets
        self.num_stages, self.trace_scopes = num_stages, trace_scopes
        self._explicit_indices = _explicit_indices
        self.num_steps = math.prod(grid)
        self.first_step = step == 0
        self.last_step = step == self.num_steps - 1
        add = self.add_offset = lambda x: tuple(  # noqa: E731
            i + j for i, j in zip(x, grid_offsets, strict=True))
        self.indices = add(indices)
        self.prev_indices = add(_prev_index(indices, grid))
        nxt = _next_index(indices, grid)
        self.next_indices = add(nxt)
        # fetch_indices[k]: the grid point k steps ahead
        self.fetch_indices = [self.indices, self.next_indices]
        for _ in range(num_stages - 1):
            nxt = _next_index(nxt, grid)
            self.fetch_indices.append(add(nxt))

    @contextlib.contextmanager
    def _named_scope(self, name):
        if self.trace_scopes:
            with named_scope(name):
                yield
        else:
            yield

    def grid_env(self):
        if self._explicit_indices:
            return contextlib.nullcontext()
        return plcore._grid_point(self.indices, tuple(
            np.int32(g) if isinstance(g, int) else None for g in self.grid))

    def out_of_fetch(self, bref):
        if not bref.is_buffered:
            return jnp.asarray(False)
        return self.step >= (self.num_steps - bref.buffer_count + 1)

    def _moves(self, bref, a, b):
        if not bref.is_buffered or bref.is_trivial_windowing:
            return False
        if bref.has_indirect:
            return True
        return _differ(bref.compute_index(*a), bref.compute_index(*b))

    def has_changed(self, bref):
        return self._moves(bref, self.indices, self.prev_indices)

    def will_change_current(self, bref):
        return self._moves(bref, self.indices, self.next_indices)

    def will_change_fetch(self, bref):
        if not bref.is_buffered or bref.is_trivial_windowing:
            return False
        if bref.has_indirect:
            return True
        if bref.buffer_count < 2:
            return self.has_changed(bref)
        return _differ(bref.compute_index(*self.fetch_indices[bref.buffer_count - 2]),
                       bref.compute_index(*self.fetch_indices[bref.buffer_count - 1]))

    def alias_local_refs(self, bref, ref):
        return bref.bind_existing_ref(ref, self.indices)

    def unalias_local_refs(self, bref):
        return bref.unbind_refs()

    # -- the schedule ------------------------------------------------------------------

    def initialize_step(self, bref, src_ref, step=0):
        with self._named_scope(f"ep_initialize_{step}"):
            if not bref.is_input or not bref.is_buffered or bref.is_trivial_windowing:
                return bref
            if step + 1 >= bref.buffer_count:
                return bref
            if bref.use_lookahead:
                if step == 0:
                    @plcore.when(self.first_step)
                    def _():
                        bref.copy_in(src_ref, self.add_offset(bref.next_fetch_indices))
                    return bref.advance_copy_in_slot(self.first_step)
                bref, _ = fetch_with_lookahead(bref, src_ref, self.grid, self.grid_offsets,
                                               predicate=self.first_step, max_num_fetches=1)
                return bref
            fetch = self.fetch_indices[step]
            if step == 0:
                predicate = self.first_step
            else:
                prev = self.fetch_indices[step - 1]
                predicate = self.first_step & _differ(bref.compute_index(*fetch),
                                                      bref.compute_index(*prev))

            @plcore.when(predicate)
            def _():
                bref.copy_in(src_ref, fetch)
            return bref.advance_copy_in_slot(predicate)

    def wait_in(self, bref, src_ref):
        if bref.is_trivial_windowing:
            return bref
        pred = self.has_changed(bref) | self.first_step

        @plcore.when(pred)
        @self._named_scope("ep_wait_in")
        def _():
            if bref.is_input:
                bref.wait_in(src_ref, self.indices)
        return bref

    def copy_in(self, bref, src_ref):
        if bref.is_trivial_windowing:
            return bref
        pred = self.will_change_fetch(bref) & ~self.out_of_fetch(bref)
        if bref.is_buffered and bref.buffer_count < 2:  # (no prologue: fetch on step 0)
            pred = pred | self.first_step
        if not bref.is_input:
            return bref
        if bref.use_lookahead:
            bref, _ = fetch_with_lookahead(bref, src_ref, self.grid, self.grid_offsets,
                                           predicate=True)
            return bref

        @plcore.when(pred)
        @self._named_scope("ep_copy_in")
        def _():
            if bref.is_input and bref.is_buffered:
                bref.copy_in(src_ref, self.fetch_indices[bref.buffer_count - 1])
        return bref.advance_copy_in_slot(pred & bref.is_input)

    def wait_out(self, bref, dst_ref):
        if bref.is_trivial_windowing:
            return bref
        pred = self.has_changed(bref) & ~self.first_step

        @plcore.when(pred)
        @self._named_scope("ep_wait_out")
        def _():
            if bref.is_output:  # (the copy out of the step before)
                bref.wait_out(dst_ref, self.prev_indices)
        return bref.advance_wait_out_slot(pred & bref.is_output)

    def copy_out(self, bref, dst_ref):
        if bref.is_trivial_windowing:
            return bref
        pred = self.will_change_current(bref) | self.last_step

        @plcore.when(pred)
        @self._named_scope("ep_copy_out")
        def _():
            if bref.is_output:
                bref.copy_out(dst_ref, self.indices)
        return bref.advance_copy_out_slot(pred & bref.is_output)

    def finalize(self, bref, dst_ref):
        if bref.is_trivial_windowing:
            return

        @plcore.when(self.last_step)
        @self._named_scope("ep_finalize")
        def _():
            if bref.is_output:
                bref.wait_out(dst_ref, self.indices)

    def advance_slots(self, bref):
        if bref.is_input:
            bref = bref.advance_wait_in_slot(self.will_change_current(bref) | self.last_step)
        return bref


def _normalize_specs(specs):
    if not isinstance(specs, (list, tuple)):
        specs = (specs,)
    return tuple(specs)


def _make_pipeline_allocations(*refs, in_specs=(), out_specs=(), tiling=None, grid=()):
    """The :class:`BufferedRef` of each operand (its buffers still scratch types: pass
    them to ``pl.run_scoped``, or as the kernel's scratch shapes, to reuse them across
    several runs of a pipeline)."""
    nin = len(in_specs)
    in_specs, out_specs = _normalize_specs(in_specs), _normalize_specs(out_specs)
    in_refs, out_refs = refs[:nin], refs[nin:]

    def make(spec, ref, kind):
        shape, dtype = _ref_shape_dtype(ref)
        count, lookahead = 2, False
        buffered = spec.pipeline_mode is not None
        if buffered:
            count = spec.pipeline_mode.buffer_count
            lookahead = spec.pipeline_mode.use_lookahead
        if kind is BufferType.OUTPUT and lookahead:
            raise ValueError("Output buffering does not support lookahead.")
        trivial = _trivially_windowed(spec, grid, shape)
        if not buffered and trivial:
            count = 1
        aval = _Type(shape, dtype)
        extra = ({"grid_rank": len(grid), "use_lookahead": lookahead}
                 if kind is BufferType.INPUT else {})
        return BufferedRef.create(spec, aval, kind, count, source_memory_space=_ref_space(ref),
                                  tiling=tiling, is_trivial_windowing=trivial, **extra)

    brefs_in = tree_util.tree_map(lambda s, r: make(s, r, BufferType.INPUT), in_specs,
                                  tuple(in_refs), is_leaf=lambda s: s is None)
    brefs_out = tree_util.tree_map(lambda s, r: make(s, r, BufferType.OUTPUT), out_specs,
                                   tuple(out_refs), is_leaf=lambda s: s is None)
    return (*brefs_in, *brefs_out)


def _partition_grid(grid, core_axis, dimension_semantics):
    """This core's part of the grid and its offsets (``core_axis``: the grid axis, or mesh
    axis name, whose index is the core's)."""
    from traxla.experimental.pallas.tpu import ARBITRARY, PARALLEL
    if core_axis is None:
        return grid, (0,) * len(grid)
    if isinstance(core_axis, int):
        cores, core = plcore.num_programs(core_axis), plcore.program_id(core_axis)
    else:
        cores, core = lax.axis_size(core_axis), lax.axis_index(core_axis)
    from traxla.tracer import Tracer
    if isinstance(cores, Tracer):  # (interpret mode's concrete count is static too)
        raise NotImplementedError(
            f"Cannot partition grid over dynamic number of cores: core_axis={core_axis!r}")
    cores = int(cores)
    if cores == 1:
        return grid, (0,) * len(grid)
    if dimension_semantics is None:
        dimension_semantics = (ARBITRARY,) * len(grid)
    if len(dimension_semantics) != len(grid):
        raise ValueError("dimension_semantics must be the same length as grid.")
    parallel = {i for i, d in enumerate(dimension_semantics)
                if d == PARALLEL or str(getattr(d, "value", d)) == "parallel"}
    if not parallel:
        raise NotImplementedError("Cannot partition over cores without parallel grid "
                                  f"dimensions: dimension_semantics={dimension_semantics}")

    def replace(t, i, v):
        return tuple(v if k == i else x for k, x in enumerate(t))

    divisible = [i for i in sorted(parallel) if isinstance(grid[i], int)
                 and grid[i] % cores == 0]
    if divisible:
        i = divisible[0]
        part = grid[i] // cores
        return replace(grid, i, part), replace((0,) * len(grid), i, core * part)
    dynamic = [i for i in sorted(parallel) if not isinstance(grid[i], int)]
    static = [i for i in sorted(parallel) if isinstance(grid[i], int)]
    if len(dynamic) > 1:
        raise NotImplementedError(f"Cannot partition over multiple dynamic parallel "
                                  f"dimensions: grid={grid}")
    if dynamic and not static:
        i = dynamic[0]
    else:
        largest = max(grid[k] for k in static)
        i = next(k for k in static if grid[k] == largest)
    base, rem = divmod(grid[i], cores)
    iters = jnp.where(core < rem, base + 1, base)
    offset = jnp.where(core < rem, core * iters, core * base + rem)
    return replace(grid, i, iters), replace((0,) * len(grid), i, offset)


def sync_copy(src, dst, indices):
    """Copies between an HBM ref and the block of a :class:`BufferedRef` (one of ``src``,
    ``dst``) at ``indices``, and waits."""
    from traxla.experimental.pallas.tpu_primitives import sync_copy as _sync
    if isinstance(src, BufferedRef):
        if isinstance(dst, BufferedRef):
            raise ValueError("Only one of src or dst can be a BufferedRef.")
        bref, hbm, inward = src, dst, False
    else:
        if not isinstance(dst, BufferedRef):
            raise ValueError("One of src or dst must be a BufferedRef.")
        bref, hbm, inward = dst, src, True
    window = bref.current_ref
    if not bref.is_trivial_windowing:
        shape, dtype = _ref_shape_dtype(hbm)
        hbm_slice = bref.get_dma_slice(_Type(shape, dtype), indices)
        hbm, window = hbm.at[hbm_slice], window.at[bref._to_window_slice(hbm_slice)]
    if inward:
        _sync(hbm, window)
    else:
        _sync(window, hbm)


def _loop_state(tree):
    """Splits a pytree of BufferedRefs into its refs (kept out of the loop's carry, as
    JAX's loops hoist refs into constants) and the values the loop carries."""
    leaves, treedef = tree_util.tree_flatten(tree)
    is_ref = [_is_ref(x) for x in leaves]
    refs = [x for x, r in zip(leaves, is_ref) if r]
    values = [x for x, r in zip(leaves, is_ref) if not r]

    def rebuild(vals):
        it_r, it_v = iter(refs), iter(vals)
        return tree_util.tree_unflatten(treedef, [next(it_r) if r else next(it_v)
                                                  for r in is_ref])
    return values, rebuild


def _run_body(body, scheduler, brefs, scratches, explicit):
    current = _map_brefs(lambda b: b.current_ref, brefs)
    with scheduler._named_scope("ep_run_kernel"):
        if explicit:
            body(scheduler.indices, *current, *scratches)
        else:
            body(*current, *scratches)


def emit_pipeline(body, *, grid, in_specs=(), out_specs=(), tiling=None, core_axis=None,
                  core_axis_name=None, dimension_semantics=None, trace_scopes=True,
                  no_pipelining=False, _explicit_indices=False):
    """A function of refs (``pipeline(*in_refs, *out_refs)``, inside a Pallas TPU kernel)
    that runs ``body`` on each block of ``grid``, the blocks of ``in_specs``/``out_specs``
    double-buffered in VMEM while DMAs move the next ones (see the module docstring).
    ``core_axis``/``core_axis_name`` split the grid's first ``PARALLEL`` dimension among
    cores; ``no_pipelining`` makes every copy synchronous."""
    if any(g <= 0 for g in grid if isinstance(g, int)):
        raise ValueError(f"All elements in the grid must be strictly positive, but got "
                         f"grid={tuple(grid)}")
    if any(not (isinstance(d, int) or getattr(d, "shape", None) == ()) for d in grid):
        raise ValueError("Grid must consist of Python integers and JAX Arrays: "
                         f"{tuple(type(d) for d in grid)}")
    if core_axis is not None and core_axis_name is not None:
        raise ValueError("core_axis and core_axis_name cannot both be provided.")
    grid = tuple(grid)
    in_specs, out_specs = _normalize_specs(in_specs), _normalize_specs(out_specs)
    counts = [s.pipeline_mode.buffer_count
              for s in tree_util.tree_leaves((in_specs, out_specs),
                                             is_leaf=lambda s: hasattr(s, "block_shape"))
              if getattr(s, "pipeline_mode", None) is not None]
    num_stages = max((2, *counts))
    pgrid, offsets = _partition_grid(
        grid, core_axis_name if core_axis is None else core_axis, dimension_semantics)

    def pipeline(*refs, scratches=None, allocations=None, body_prologue=None):
        scratches = () if scratches is None else scratches
        for r in tree_util.tree_leaves(refs, is_leaf=_is_ref):
            if not _is_ref(r):
                raise TypeError(f"emit_pipeline's pipeline takes the kernel's refs (or views "
                                f"of them); got {type(r).__name__} {getattr(r, 'shape', r)}")
        nspecs = len(in_specs) + len(out_specs)  # (each a pytree, as its ref)
        if len(refs) != nspecs:
            raise ValueError(f"emit_pipeline has {nspecs} block specs (inputs, then "
                             f"outputs); its pipeline got {len(refs)} refs")
        if allocations is None:  # the buffers: allocated around this pipeline
            from traxla.experimental.pallas.kernel_refs import run_scoped
            return run_scoped(
                lambda allocs: pipeline(*refs, scratches=scratches, allocations=allocs),
                _make_pipeline_allocations(*refs, in_specs=in_specs, out_specs=out_specs,
                                           grid=pgrid, tiling=tiling))
        allocations = tuple(allocations) if isinstance(allocations, list) else allocations
        return _run_pipeline(body, refs, scratches, allocations, body_prologue, pgrid,
                             offsets, num_stages, trace_scopes, no_pipelining,
                             _explicit_indices)

    return pipeline


def _run_pipeline(body, refs, scratches, allocations, body_prologue, grid, offsets,
                  num_stages, trace_scopes, no_pipelining, explicit):
    num_steps = math.prod(grid)

    def scheduler_at(step, indices):
        return Scheduler(step, indices, grid, grid_offsets=offsets, num_stages=num_stages,
                         trace_scopes=trace_scopes, _explicit_indices=explicit)

    def step_fn(step, carry, rebuild, synchronous):
        values, indices = carry
        brefs = rebuild(values)
        indices = _filter_indices(indices, grid)
        sched = scheduler_at(step, indices)
        with sched.grid_env():
            brefs = _map_brefs(sched.alias_local_refs, brefs, refs)
            if synchronous:
                _map_if("is_input", lambda b, r: sync_copy(r, b, indices), brefs, refs)
            else:
                brefs = _map_brefs(sched.copy_in, brefs, refs)
                brefs = _map_brefs(sched.wait_in, brefs, refs)
            if body_prologue is not None:
                body_prologue()
            _run_body(body, sched, brefs, scratches, explicit)
            if synchronous:
                _map_if("is_output", lambda b, r: sync_copy(b, r, indices), brefs, refs)
            else:
                brefs = _map_brefs(sched.copy_out, brefs, refs)
                brefs = _map_brefs(sched.wait_out, brefs, refs)
                brefs = _map_brefs(sched.advance_slots, brefs)
            if not synchronous:
                brefs = _map_brefs(sched.unalias_local_refs, brefs)
        if synchronous:
            brefs = _map_brefs(sched.unalias_local_refs, brefs)
        return _loop_state(brefs)[0], _next_index(indices, grid)

    def loop(brefs, synchronous):
        start = (0,) * len(grid)
        values, rebuild = _loop_state(brefs)
        values, last = lax.fori_loop(
            0, num_steps, lambda s, c: step_fn(s, c, rebuild, synchronous), (values, start))
        return rebuild(values), last

    if no_pipelining:
        loop(_map_brefs(lambda b: b.initialize_slots(), allocations), True)
        return

    @plcore.when(num_steps > 0)
    def _():
        start = (0,) * len(grid)
        sched = scheduler_at(0, start)
        brefs = _map_brefs(lambda b: b.initialize_slots(), allocations)

        def copy_whole_in(bref, ref):
            if bref.is_trivial_windowing and bref.window_ref is not None:
                sync_copy(ref, bref, start)
        _map_if("is_input", copy_whole_in, brefs, refs)
        with sched.grid_env():  # the first num_stages - 1 blocks of each input, in order
            for k in range(sched.num_stages - 1):
                brefs = _map_brefs(functools.partial(sched.initialize_step, step=k),
                                   brefs, refs)
        brefs, after = loop(brefs, False)
        sched = scheduler_at(num_steps - 1, _prev_index(after, grid))
        with sched.grid_env():
            _map_brefs(sched.finalize, brefs, refs)

        def copy_whole_out(bref, ref):
            if bref.is_trivial_windowing and bref.window_ref is not None:
                sync_copy(bref, ref, start)
        _map_if("is_output", copy_whole_out, brefs, refs)


def emit_pipeline_with_allocations(body, *, grid, in_specs=(), out_specs=()):
    """``(pipeline, make_allocations)``: the pipeline, and a function of the refs giving
    its BufferedRefs (scratch types), to allocate once at the top of a kernel and pass as
    ``pipeline(*refs, allocations=...)`` to every run of the pipeline."""
    make_allocations = functools.partial(_make_pipeline_allocations, in_specs=in_specs,
                                         out_specs=out_specs, grid=tuple(grid))
    return emit_pipeline(body, grid=grid, in_specs=in_specs,
                         out_specs=out_specs), make_allocations

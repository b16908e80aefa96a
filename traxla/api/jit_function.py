"""``jit`` and ``make_jaxpr``: ``JitFunction``, its hit paths (plain Arrays and builtin
containers of Arrays, which skip pytree flattening), the slow path that traces, lowers,
compiles and caches, calls inside another trace (one ``jit`` equation), and the AOT
``trace``/``lower``.

``jit(f)`` keeps two caches: traced jaxprs keyed by (input tree, static arguments, avals,
trace context), shared by nested calls so that a jaxpr used twice is one object (and prints
hoisted); and compiled executables for top-level calls (``jit_caches.py``)."""
from __future__ import annotations

import functools
import inspect
import time

import numpy as np

from traxla.base.wrapping import copy_dict, wraps
from traxla.base.arg_names import leaf_names, memo_hit, names_once, naming_once
from traxla import api_util, tree_util
from traxla.api import debug_mode, hijax_args as _hijax_args, jit_hooks
from traxla.api.call_signatures import MISS as _MISS, Entry as _Entry, HitTable, TreeSignatures
from traxla.api.layouts import Format, sharding_of_format
from traxla.api.device_arrays import _aval, device_put
from traxla.api.static_hits import call_with_keywords as _kw_hit, hit_key as _hit_key
from traxla.api.stages import Lowered, ProgramInfo, Traced, Wrapped, lower_program
from traxla.ir import checker
from traxla.ir.config import config
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.refs import is_ref_aval
from traxla.ir.traceback_util import api_boundary, filter_exception, register_boundary
from traxla.ir.sharding import AbstractMesh, PartitionSpec
from traxla.ir.thread_state import unusual as _unusual
from traxla.base.tree_functions import _prefix_error
from traxla.runtime import ArrayImpl, debug_checks, dispatch, to_array, transfer_guard
from traxla.runtime.array import check_not_deleted, default_sharding, to_default_device
from traxla.runtime.backend import get_backend
from traxla.runtime.cache import BoundedCache
from traxla.runtime.executable import Executable, ShardedExecutable
from traxla.runtime.placement import (NamedSharding, SingleDeviceSharding, default_placement,
    is_pinned_default, pinned_default as _pinned_default, pinned_placement, device_placement,
    device_put_placed, uncommitted)
from traxla.runtime.xla_adapter import RuntimeErrorType, tracebacks_enabled as _tracebacks_enabled
from traxla.sharding import to_named
from traxla.state import jit_refs as _jit_refs, ref as _ref
from traxla.state.discharge import discharge_if_needed
from traxla.tracer import EvalTrace, Tracer, make_debug_info, trace_to_jaxpr, traces as trace_core
from traxla.tracer.interpret import eval_jaxpr, replaying
from traxla.tracer.staging import DynamicJaxprTrace, source_info_of_function
from traxla.tracer.traces import _bottom as _trace_bottom, _state as _trace_state
from traxla.api.jit_caches import (_ClosesOverRefs, _OnMesh, _all_jits, _config_epoch,
                                   _forget_fast, _trace_cache, _trace_context, is_jit_state)
from traxla.api.jit_options import (_device_and_backend_placement, _donation_spec,
                                    _hashable_static)
from traxla.api.jit_sharding import (_mesh_of_program, _module_shardings, _placement_of,
                                     broadcast_prefix_leaves, check_devices)

# The calling thread's flags: a ``with`` block (enable_x64, debug_nans, disable_jit...) sets
# them for its thread only. The hit paths (``_fast``, ``_tree_fast``: keyed by argument types
# alone) hold programs made under the global flags, so a thread inside a block bypasses them
# and never adds to them; the executable cache's keys carry the trace context.
_flags = config.current
# ``PjitFunction.__call__``'s first argument when it has none
_NO_ARGUMENT = object()


def _without_formats(shardings):
    """jit's in/out shardings with each Format its sharding, and a SingleDeviceSharding
    of the default device (where single-device programs run) no constraint at all."""
    is_leaf = lambda x: isinstance(x, (Format, PartitionSpec))  # noqa: E731
    if shardings is None or not any(isinstance(x, (Format, SingleDeviceSharding)) for x in
                                    tree_util.tree_leaves(shardings, is_leaf=is_leaf)):
        return shardings

    def one(x):
        x = sharding_of_format(x)
        if isinstance(x, SingleDeviceSharding):  # another device's: its one-device mesh
            return device_placement(x.device)
        return x
    return tree_util.tree_map(one, shardings, is_leaf=is_leaf)


class PjitFunction(Wrapped):
    """What ``jit`` returns (JAX's type name, which libraries test for; also
    ``JitFunction``)."""

    def __init__(self, fun, static_argnums=None, static_argnames=None, donate_argnums=(),
                 donate_argnames=(), keep_unused=False, inline=False, in_shardings=None,
                 out_shardings=None, compiler_options=None):
        functools.update_wrapper(self, fun, updated=())
        # and fun.__dict__ as JAX's (libraries read back attributes they set on fun)
        copy_dict(self, fun, is_jit_state if isinstance(fun, PjitFunction) else None)
        self.fun = fun
        # Names and positions map onto each other through the signature, as in JAX.
        self.static_argnums, self.static_argnames, _, _ = api_util.resolve_argnums(
            fun, (signature := api_util.signature_or_none(fun)), static_argnums, static_argnames)
        self.donate_argnums, self.donate_argnames = _donation_spec(
            fun, donate_argnums, donate_argnames, self.static_argnums, self.static_argnames)
        self.keep_unused = bool(keep_unused)
        self.inline = bool(inline)
        # (a Format is its sharding: every array is compiled in the default layout)
        self.in_shardings, self.out_shardings = (
            _without_formats(in_shardings), _without_formats(out_shardings))
        self._device_placement = None  # jit(device=, backend=): see _target_mesh
        self.compiler_options = dict(compiler_options) if compiler_options else None
        self._plain = not self.static_argnums and not self.static_argnames
        self._traced = _trace_cache(fun, (self.static_argnums, self.static_argnames))
        _all_jits.add(self)
        self._fast = HitTable()  # (avals of Array arguments) -> entry
        self._tree_fast = TreeSignatures()  # cached calls on builtin containers of Arrays
        # with static arguments: number of arguments -> hit function (and that of two)
        self._static_hits, self._static_hit2 = {}, None
        self._compiled = BoundedCache(lambda: config.read("jit_cache_size"),
                                      on_evict=_forget_fast(self._fast))
        self._lifted = BoundedCache(256)
        self._epoch = _config_epoch[0]
        self._signature, self._names_memo = signature, None  # (see _arg_names)
        self.name = getattr(fun, "__name__", type(fun).__name__)

    @property
    def __signature__(self):
        """The wrapped function's signature, as JAX's jitted functions give it (also with
        ``inspect.signature(f, follow_wrapped=False)``, which chex's fake pmap uses)."""
        return inspect.signature(self.fun)

    # -- the hot path --------------------------------------------------------
    def __call__(self, a=_NO_ARGUMENT, b=_NO_ARGUMENT, /, *rest, **kwargs):
        # A boundary of traceback filtering (ir/traceback_util.py): free unless it raises.
        # (the first two arguments are apart so that a call with one or two builds no
        # argument tuple; ``b is _NO_ARGUMENT``: fewer than two, and ``rest`` is empty)
        try:
            if not kwargs and (not _unusual or (
                    type(_trace_state.trace) is EvalTrace and not _flags.local_blocks)):
                # Only default-device Arrays take these paths; anything else (a placed Array,
                # a NumPy array, a scalar, a tracer) goes to the slow path.
                if b is _NO_ARGUMENT:
                    # (an Array committed to the default device runs its programs too)
                    if type(a) is ArrayImpl and (a._placement is None
                                                 or a._placement is _pinned_default[0]):
                        fast = self._fast
                        last = fast.last1  # one (aval, entry) pair: read once, atomically
                        if last[0] is a.aval:
                            entry = last[1]
                        else:
                            entry = fast.get((a.aval,))
                            if entry is not None:
                                fast.last1 = (a.aval, entry)
                        if entry is not None:
                            direct = entry.direct  # the common case, inlined (Entry.call)
                            if direct is not None and not _tracebacks_enabled():
                                start, finish, handlers, aval = direct
                                try:
                                    buf = finish(start([a._buf]), handlers)[0]
                                except RuntimeErrorType:
                                    check_not_deleted((a,))
                                    raise
                                out = ArrayImpl()
                                out.aval = aval
                                out._buf = buf
                                out._npy = None
                                out._placement = a._placement
                                return out
                            out = entry.call((a,), [a._buf])
                            return out if a._placement is None else pinned_results(out)
                    args = () if a is _NO_ARGUMENT else (a,)
                elif not rest:  # two Arrays: HitTable.lookup2, inlined
                    if (type(a) is ArrayImpl and type(b) is ArrayImpl
                            and (a._placement is None or a._placement is _pinned_default[0])
                            and (b._placement is None or b._placement is _pinned_default[0])):
                        last = self._fast.last2
                        if last[0] is a.aval and last[1] is b.aval:
                            entry = last[2]
                        else:
                            entry = self._fast.lookup2(a.aval, b.aval)
                        if entry is not None:
                            direct = entry.direct
                            if direct is not None and not _tracebacks_enabled():
                                start, finish, handlers, aval = direct
                                try:
                                    buf = finish(start([a._buf, b._buf]), handlers)[0]
                                except RuntimeErrorType:
                                    check_not_deleted((a, b))
                                    raise
                                out = ArrayImpl()
                                out.aval = aval
                                out._buf = buf
                                out._npy = None
                                out._placement = a._placement or b._placement
                                return out
                            out = entry.call((a, b), [a._buf, b._buf])
                            return (out if a._placement is None and b._placement is None
                                    else pinned_results(out))
                    elif self._static_hit2 is not None:  # f(x, static): static_hits.py
                        out = self._static_hit2(a, b)
                        if out is not _MISS:
                            return out
                    args = (a, b)
                else:
                    args = (a, b, *rest)
                    if self._plain and (out := self._fast.call_arrays(args)) is not _MISS:
                        return out
                if self._static_hits:  # a jit with static arguments: static_hits.py
                    if (hit := self._static_hits.get(len(args))) is not None:
                        if (out := hit(*args)) is not _MISS:
                            return out
                for hit in self._tree_fast.hits:  # builtin containers: compile_hit
                    if (out := hit(args)) is not _MISS:
                        return out
                return self._call_slow(args, kwargs)
            args = () if a is _NO_ARGUMENT else (a,) if b is _NO_ARGUMENT else (a, b, *rest)
            if kwargs and self._static_hits and (out := _kw_hit(self, args, kwargs)) is not _MISS:
                return out  # (static arguments by keyword: static_hits.py)
            return self._call_slow(args, kwargs)
        except Exception as e:
            filter_exception(e)
            raise

    # _hit_paths_stale: a configuration change empties every jit's hit paths at once
    # (jit_caches._new_epoch, after bumping the epoch); the hit paths check nothing. A slow
    # call that began before a change (another thread's) adds its entry, then drops it if
    # the epoch moved meanwhile: it was made under the old flags.
    def _forget_fast_paths(self):
        """A configuration change: the hit paths' entries may no longer apply."""
        self._fast.clear()
        self._tree_fast.clear()
        self._epoch = _config_epoch[0]

    def _call_slow(self, args, kwargs):
        if _flags.disable_jit:  # disable_jit(): plain Python
            return self.fun(*args, **kwargs)
        epoch = _config_epoch[0]  # see _hit_paths_stale
        dyn_args, dyn_kwargs, static_key = self._split_static(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        if any(type(x) is _ref.Ref for x in leaves):  # mutated in place (traxla.ref)
            return _jit_refs.call_with_refs(self, args, kwargs)
        if _hijax_args.has_hi_leaves(leaves):  # hijax values (flax's): api/hijax_args.py
            return _hijax_args.call_with_hi_args(self, args, kwargs)
        if type(trace_core._state.trace) is EvalTrace:
            for x in leaves:
                if isinstance(x, Tracer):
                    x._check_alive()
            try:
                arrays = [to_array(x) for x in leaves]
            except (TypeError, OverflowError) as e:
                raise self._argument_error(e, args, kwargs, leaves) from None
            if self.in_shardings is not None:
                arrays = self._apply_in_shardings(arrays, in_tree)
            target = self._target_mesh()
            pinned = False
            if placed := target is not None or any(a._placement is not None for a in arrays):
                check_devices(arrays, lambda: self._arg_names(args, kwargs), self._qualname())
                # committed to the default device (and nothing elsewhere): its programs run
                pinned = target is None and all(a._placement is None or
                                                is_pinned_default(a._placement) for a in arrays)
            if placed and not pinned:
                arrays, target, follows_default = _follow_committed(arrays, target)
                if target is not None or any(a._placement is not None for a in arrays):
                    outs = self._call_sharded(args, kwargs, arrays, in_tree, static_key, target)
                    return _uncommitted_results(outs) if follows_default else outs
            avals = tuple(a.aval for a in arrays)
            key = (in_tree, static_key, avals, _trace_context())
            entry = self._compiled.get(key)
            if entry is None:
                fast = _hit_key(self, args, kwargs, arrays, avals)  # (static_hits.py)
                entry = self._compiled.get_or_create(
                    key, lambda: self._compile(key, args, kwargs, avals, in_tree, fast, epoch))
            elif type(entry) is _Entry and entry.fast_key is not None:
                self._fast.refill(entry, epoch)  # (after a configuration change emptied it)
            if type(entry) is _OnMesh:  # a shard_map inside: the whole program runs on its mesh
                return self._call_sharded(args, kwargs, arrays, in_tree, static_key, entry.mesh)
            if type(entry) is _ClosesOverRefs:  # mutates a Ref it closes over (traxla.ref)
                return _jit_refs.call_closing_over_refs(self, entry.closed, entry.out_tree, arrays,
                                                   key)
            if (self._plain and not kwargs and getattr(entry, "fast_key", None) is None
                    and type(entry) is _Entry and not getattr(entry.executable, "special_outs", ())
                    and not debug_mode.slow_path_only()
                    and not _flags.local_blocks and all(type(a) is ArrayImpl for a in leaves)):
                self._tree_fast.remember(args, in_tree.children()[0], arrays, avals, entry)
                if _config_epoch[0] != epoch:  # see _hit_paths_stale
                    self._tree_fast.clear()
            outs = entry.execute(arrays)
            if _flags.debug_nans or _flags.debug_infs:
                debug_checks.check_program(self.name, self._trace(key, args, kwargs, avals)[0],
                                           arrays, outs)
            outs = tree_util.tree_unflatten(entry.out_tree, outs)
            return pinned_results(outs) if pinned else outs
        if self.compiler_options:
            raise ValueError(
                "`compiler_options` can only be passed to top-level `jax.jit`. Got "
                f"compiler_options={self.compiler_options} specified on a nested jit with name: "
                f"{self.name}")
        return self._bind(args, kwargs, leaves, in_tree, static_key)

    # -- donation, pruning, placement: shared by calls and the AOT stages ------
    def _donated_leaves(self, args, kwargs, in_tree) -> list[bool]:
        """Per flat argument leaf, whether its buffer is donated."""
        if not self.donate_argnums and not self.donate_argnames:
            return [False] * in_tree.num_leaves
        n = len(args)
        static = api_util.static_positions(self.static_argnums, n)
        donated = {i % n if -n <= i < n else i for i in self.donate_argnums}
        flags = []
        for i, a in enumerate(args):
            if i not in static:
                flags += [i in donated] * tree_util.tree_structure(a).num_leaves
        for k in sorted(kwargs):
            if k not in self.static_argnames:
                flags += [k in self.donate_argnames] * tree_util.tree_structure(
                    kwargs[k]).num_leaves
        return flags

    def _lower_program(self, closed, donated, placements, mesh, out_tree=None, platform=None):
        shardings_for = None
        if mesh is not None:
            mesh_platform = mesh.devices.flat[0].platform
            if platform is None and mesh_platform != get_backend().devices[0].platform:
                platform = mesh_platform  # another platform's devices (the CPU beside a TPU)
            def shardings_for(kept_closed, idx):
                return _module_shardings(kept_closed, mesh, [placements[i] for i in idx],
                                         self._out_specs(kept_closed, out_tree))
        return lower_program(closed, self.name, donated, self.keep_unused, shardings_for,
                             out_tree, platform)

    def _executable(self, program, closed, mesh, compiler_options):
        # a Ref argument's final value is an extra result of the discharged program
        out_avals = list(closed.out_avals) + [a.inner_aval.strip_weak_type()
                                              for a in closed.in_avals
                                              if is_ref_aval(a)]
        if mesh is not None:
            exe = ShardedExecutable(program.module, program.in_avals, out_avals, mesh,
                                    compiler_options=compiler_options)
        else:
            exe = Executable(program.module, program.in_avals, out_avals, compiler_options)
        exe.name = self.name
        return exe

    def _target_mesh(self):
        """Where the program runs when no argument is placed: the mesh ``out_shardings``
        names (one on an abstract mesh outside a mesh context names no devices), else the
        device of ``jit(device=, backend=)`` or of ``default_device`` when it is not the
        default backend's first (None: that device, the common case)."""
        if self.out_shardings is not None:
            for s in tree_util.tree_leaves(self.out_shardings):
                if s is not None and not hasattr(s, "_device"):
                    mesh = to_named(s).mesh
                    if not isinstance(mesh, AbstractMesh):
                        return mesh
                    break
        placement = self._device_placement or default_placement()
        return None if placement is None else placement.mesh

    def _out_specs(self, closed, out_tree=None):
        """Per result, the spec ``out_shardings`` asks for (None: as the type says):
        ``out_shardings`` is a pytree prefix of the results (a None in it leaves its subtree
        unspecified), as JAX's."""
        if self.out_shardings is None:
            return None
        n = len(closed.out_avals)
        if out_tree is None:  # (no result structure: one sharding per result, or one for all)
            out = tree_util.tree_leaves(self.out_shardings, is_leaf=lambda x: x is None)
            out = out * n if len(out) == 1 else out
        else:
            is_leaf = lambda x: x is None or isinstance(x, PartitionSpec)  # noqa: E731
            full = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
            try:
                out = tree_util.broadcast_prefix(self.out_shardings, full, is_leaf=is_leaf)
            except ValueError:
                errors = list(_prefix_error((), self.out_shardings, full, is_leaf))
                details = "\n".join(e("pjit out_shardings").args[0] for e in errors)
                raise ValueError(f"Mismatch details ({len(errors)} found):\n{details}") from None
            out = out + [None] * (n - len(out))  # a Ref argument's extra results
        if len(out) != n:
            raise ValueError(f"jit out_shardings has {len(out)} entries but {self.name} returns "
                             f"{n} arrays")
        return [None if s is None else to_named(s).full_spec(len(a.shape))
                for s, a in zip(out, closed.out_avals)]

    def _apply_in_shardings(self, arrays, in_tree):
        """Lays each argument out as ``in_shardings`` says (a prefix of the positional
        arguments): an unplaced array is transferred, a placed one resharded."""
        args_tree = in_tree.children()[0]
        n_args = args_tree.num_leaves
        shardings = broadcast_prefix_leaves(self.in_shardings, args_tree, "jit in_shardings")
        out = list(arrays)
        for i, s in enumerate(shardings[:n_args]):
            if s is None or hasattr(s, "_device"):
                continue
            named = s if isinstance(s, NamedSharding) else to_named(s)
            if out[i]._placement != named:
                out[i] = device_put(out[i], named)
        return out

    def _placed_on(self, arrays, mesh):
        out = []
        for a in arrays:
            if a._placement is None:
                dst = NamedSharding(mesh, PartitionSpec())
                with transfer_guard.moving(a, lambda: dst):
                    a = device_put_placed(np.asarray(a), a.aval, dst)
            out.append(a)
        return out

    def _compile(self, key, args, kwargs, avals, in_tree, fast, epoch):
        """Traces and compiles the program of one cache key (once, however many threads
        miss it together: see ``BoundedCache.get_or_create``)."""
        jit_hooks.on_compile_miss(self, key, args, kwargs)
        closed, out_tree = self._trace(key, args, kwargs, avals)
        if _jit_refs.closes_over_refs(closed):
            return _ClosesOverRefs(closed, out_tree)
        mesh = _mesh_of_program(closed.jaxpr)
        if mesh is not None:
            return _OnMesh(mesh)
        program = self._lower_program(closed, self._donated_leaves(args, kwargs, in_tree),
                                      None, None, out_tree)
        executable = self._executable(program, closed, None, self.compiler_options)
        debug_mode.log_compile(self.name, avals, executable.compile_seconds)
        jit_hooks.after_compile(self, closed, program, executable)
        entry = _Entry(executable, out_tree, program.kept)
        # (a program returning tokens or float0s runs on the slow path, which hands them back)
        if fast and program.kept is None and not getattr(executable, "special_outs", ()):
            fast_key = avals if fast is True else fast  # (a key of static_hits)
            entry.fast_key = fast_key
            self._fast[fast_key] = entry
            if _config_epoch[0] != epoch:  # see _hit_paths_stale
                self._fast.pop(fast_key, None)
        return entry

    def clear_cache(self):
        """Drops this function's compiled executables and traced jaxprs (JAX's
        ``jitted.clear_cache()``)."""
        self._compiled.clear()
        self._fast.clear()
        self._tree_fast.clear()
        self._traced.clear()
        self._lifted.clear()

    def _call_sharded(self, args, kwargs, arrays, in_tree, static_key, mesh=None):
        """Arguments on a mesh: one SPMD executable over its devices, keyed on placements."""
        placed = [a._placement for a in arrays if a._placement is not None]
        mesh = placed[0].mesh if placed else mesh
        for p in placed:
            if not isinstance(p, NamedSharding):
                raise ValueError(f"jit got an argument placed by {p}, which has no mesh spec; "
                                 "device_put it with a NamedSharding first.")
            if p.mesh != mesh:
                raise ValueError(f"jit got arguments on different meshes: {mesh} and {p.mesh}")
        leaves = None
        for i, a in enumerate(arrays):
            if a._placement is None:
                dst = NamedSharding(mesh, PartitionSpec())
                if leaves is None:  # the user's own Arrays move device to device
                    leaves = [id(x) for x in tree_util.tree_leaves(self._split_static(
                        args, kwargs)[:2])] if transfer_guard.active("device_to_device") else ()
                with (transfer_guard.moving(a, lambda: dst) if id(a) in leaves
                      else transfer_guard.internal()):
                    arrays[i] = device_put_placed(a.physical_value(), a.aval, dst)
        avals = tuple(a.aval for a in arrays)
        placements = tuple(a._placement for a in arrays)
        key = (in_tree, static_key, avals, _trace_context(), placements)
        entry = self._compiled.get(key)
        if entry is None:
            def build():
                jit_hooks.on_compile_miss(self, key, args, kwargs)
                closed, out_tree = self._trace(key[:4], args, kwargs, avals)
                program = self._lower_program(closed, self._donated_leaves(args, kwargs, in_tree),
                                              placements, mesh, out_tree)
                executable = self._executable(program, closed, mesh, self.compiler_options)
                jit_hooks.after_compile(self, closed, program, executable)
                return _Entry(executable, out_tree, program.kept)
            entry = self._compiled.get_or_create(key, build)
        check_not_deleted(arrays)  # a deleted multi-device buffer must not reach PJRT
        outs = entry.execute(arrays)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _bind(self, args, kwargs, leaves, in_tree, static_key):
        """Inside another trace: one ``jit`` equation whose param is the traced jaxpr."""
        try:
            avals = tuple(_aval(x) for x in leaves)
        except (TypeError, OverflowError) as e:
            raise self._argument_error(e, args, kwargs, leaves) from None
        key = (in_tree, static_key, avals, _trace_context())
        if replaying():  # as JAX's trace context: a jaxpr being re-run traces apart
            key += ("replaying",)
        hit = self._traced.get(key)
        if hit is not None and any(isinstance(c, Tracer) and not c._trace.alive
                                   for c in hit[0].consts):
            self._traced.pop(key, None)  # it closed over tracers of a trace that has ended
        closed, out_tree = self._trace(key, args, kwargs, avals)
        if not isinstance(trace_core._current_trace, DynamicJaxprTrace):
            if any(is_ref_aval(a) for a in avals) or _jit_refs.closes_over_refs(closed):
                # grad/vmap of a jit taking or closing over refs: evaluated in place, its
                # ref accesses through the transformation's ref rules
                return tree_util.tree_unflatten(out_tree,
                                                _jit_refs.eval_closed_with_refs(closed, leaves))
            # grad/vmap of a jit whose body makes its own refs: they transform the pure version
            closed = discharge_if_needed(closed)
        if self.inline:  # the equations go straight into the enclosing jaxpr
            return tree_util.tree_unflatten(out_tree, eval_jaxpr(closed, (), *leaves))
        operands = list(leaves)
        tracer_consts = [c for c in closed.consts if isinstance(c, Tracer)]
        if tracer_consts:
            lifted = self._lifted.get(id(closed))
            if lifted is None or lifted[0] is not closed:
                lifted = self._lifted[id(closed)] = (closed, _consts_to_invars(closed))
            closed = lifted[1]  # the same object on every call, so nested uses print hoisted
            operands = tracer_consts + operands
        outs = jit_p.bind(*operands, jaxpr=closed, name=self.name)
        return tree_util.tree_unflatten(out_tree, outs)

    # -- tracing -------------------------------------------------------------
    def _split_static(self, args, kwargs):
        if self._plain:
            return args, kwargs, ()
        nums = api_util.static_positions(self.static_argnums, len(args))
        static = tuple((i, _hashable_static(args[i])) for i in sorted(nums))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        static_kw = tuple(sorted((k, _hashable_static(v)) for k, v in kwargs.items()
                                 if k in self.static_argnames))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return dyn_args, dyn_kwargs, (static, static_kw)

    def _trace(self, key, args, kwargs, avals):
        hit = self._traced.get(key)
        if hit is not None:
            return hit
        if _flags.no_tracing:
            raise RuntimeError(f"re-tracing function {source_info_of_function(self.fun)} for "
                               "`jit`, but 'no_tracing' is set")
        with names_once(self, args, kwargs):  # (named once a trace)
            jit_hooks.on_trace_miss(self, key, args, kwargs)
            start = time.perf_counter()
            dyn_args, dyn_kwargs, _ = self._split_static(args, kwargs)
            _, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
            out_store = []

            def flat_fun(*flat):
                a, kw = tree_util.tree_unflatten(in_tree, flat)
                full_args, full_kwargs = self._merge_static(args, kwargs, a, kw)
                out = self.fun(*full_args, **full_kwargs)
                out_leaves, out_tree = tree_util.tree_flatten(out)
                _jit_refs.check_no_refs_returned(out_leaves, debug, out_tree)
                out_store.append(out_tree)
                return out_leaves

            debug = make_debug_info(self.fun, "jit", self._arg_names(args, kwargs))
            closed = trace_to_jaxpr(flat_fun, avals, debug)
            if config.check_jaxprs:  # enable_checks: type-check every traced program
                checker.check_jaxpr(closed)
            result = (closed, out_store[0])
            self._traced[key] = result
            self.last_trace_seconds = time.perf_counter() - start
            return jit_hooks.after_trace(self, key, result)  # may re-roll loops (and re-cache)

    def _merge_static(self, args, kwargs, dyn_args, dyn_kwargs):
        if self._plain:
            return dyn_args, dyn_kwargs
        n = len(args)
        nums = api_util.static_positions(self.static_argnums, n)
        it = iter(dyn_args)
        full_args = [args[i] if i in nums else next(it) for i in range(n)]
        full_kwargs = dict(dyn_kwargs)
        full_kwargs.update({k: v for k, v in kwargs.items() if k in self.static_argnames})
        return full_args, full_kwargs

    def _argument_error(self, error, args, kwargs, leaves):
        """JAX's error for a leaf that is not an array (a string, an object array, an int
        too large for int32...), naming the argument's path."""
        for i, x in enumerate(leaves):
            try:
                to_array(x) if not isinstance(x, Tracer) else None
            except (TypeError, OverflowError) as leaf_error:
                names = self._arg_names(args, kwargs)
                path = names[i] if i < len(names) else f"args[{i}]"
                if isinstance(leaf_error, OverflowError):
                    return OverflowError(
                        "An overflow was encountered while parsing an argument to a jitted "
                        f"computation, whose argument path is {path}. Got {type(x)} with value {x}")
                return TypeError(
                    f"Error interpreting argument to {self.fun} as an abstract array. The "
                    f"problematic value is of type {type(x)} and was passed to the function at "
                    f"path {path}.\nThis typically means that a jit-wrapped function was called "
                    "with a non-array argument, and this argument was not marked as static using "
                    "the static_argnums or static_argnames parameters of jax.jit.")
        return error

    def _qualname(self) -> str:
        return getattr(self.fun, "__qualname__", getattr(self.fun, "__name__", str(self.fun)))

    def _arg_names(self, args, kwargs):
        """Leaf names like ``x`` or ``params['w']`` for error messages."""
        if (names := memo_hit(self, args, kwargs)) is not None:  # (a trace in progress)
            return names
        try:
            sig = self._signature or inspect.signature(self.fun)
            self._signature = sig
            bound = sig.bind(*args, **kwargs)
        except (TypeError, ValueError):
            return ()
        names = []
        n = len(args)
        static_nums = api_util.static_positions(self.static_argnums, n)
        position = 0
        for name, value in bound.arguments.items():
            kind = sig.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                for j, v in enumerate(value):
                    if position not in static_nums:
                        names += leaf_names(f"{name}[{j}]", v)
                    position += 1
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                for k, v in value.items():
                    if k not in self.static_argnames:
                        names += leaf_names(f"{name}['{k}']", v)
                continue
            is_static = (position in static_nums if position < n else False) or name in self.static_argnames
            if position < n:
                position += 1
            if not is_static:
                names += leaf_names(name, value)
        return names

    # -- AOT -----------------------------------------------------------------
    @api_boundary
    @naming_once
    def trace(self, *args, **kwargs) -> Traced:
        dyn_args, dyn_kwargs, static_key = self._split_static(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple(_aval(x) for x in leaves)
        key = (in_tree, static_key, avals, _trace_context())
        start = time.perf_counter()
        closed, out_tree = self._trace(key, args, kwargs, avals)
        placements = [_placement_of(x) for x in leaves]
        if self.in_shardings is not None:
            wanted = broadcast_prefix_leaves(self.in_shardings, in_tree.children()[0],
                                             "jit in_shardings")
            for i, s in enumerate(wanted):
                if s is not None and not hasattr(s, "_device"):
                    placements[i] = to_named(s)
        mesh = next((p.mesh for p in placements if p is not None), None)
        mesh = mesh or self._target_mesh() or _mesh_of_program(closed.jaxpr)
        if mesh is not None:
            placements = [p if p is not None else NamedSharding(mesh, PartitionSpec())
                          for p in placements]
        else:
            placements = None
        info = ProgramInfo(self, closed, in_tree, out_tree,
                           self._donated_leaves(args, kwargs, in_tree), placements, mesh,
                           time.perf_counter() - start, self._arg_names(args, kwargs))
        return Traced(info)

    @api_boundary
    def lower(self, *args, **kwargs) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    @api_boundary
    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info

    def cache_info(self):
        """Traces, compilations and cache sizes of this jitted function
        (``traxla.diagnostics.CacheInfo``)."""
        return jit_hooks.cache_info(self)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self):
        return f"<PjitFunction of {self.fun!r}>"  # as JAX's


JitFunction = PjitFunction
register_boundary(JitFunction.__call__)

_placed_programs: dict = {}


def _apply_placed(prim, arrays, params):
    """Eager evaluation of ``prim`` when an operand spans several devices: a cached
    one-equation ``jit`` (an SPMD program over the operands' mesh), as JAX dispatches it."""
    check_not_deleted(arrays)
    try:
        key = (prim, dispatch._params_key(params))
        hash(key)
    except TypeError:
        key = None
    fn = _placed_programs.get(key) if key is not None else None
    if fn is None:
        run = lambda *xs: prim.bind(*xs, **params)  # noqa: E731
        run.__qualname__ = prim.name  # (the name errors give)
        fn = JitFunction(run)
        fn.name = prim.name
        if key is not None:
            _placed_programs[key] = fn
    # reached from the eager trace, maybe through a transformation's trace that forwarded
    # the operation (grad's known values): the program must run, not be bound again
    with trace_core.set_current_trace(_trace_bottom[0]):
        return fn(*arrays)


def _install_placed_dispatch():
    dispatch.placed_apply_hook = _apply_placed


_install_placed_dispatch()


def _follow_committed(arrays, target):
    """JAX's rule for operands ``default_device`` placed (uncommitted): they go where the
    committed operands are, else where the program runs (``target``; None: the default
    device). Returns the arrays, the mesh to run on, and whether that is the
    ``default_device``'s own (its results are then uncommitted too)."""
    committed = next((a._placement.mesh for a in arrays
                      if a._placement is not None and a._placement.committed), None)
    mesh = committed or target
    default = default_placement()
    follows_default = (committed is None and default is not None and not default.committed
                       and mesh is default.mesh)
    moved = []
    for a in arrays:
        p = a._placement
        if p is not None and not p.committed and p.mesh is not mesh and p.mesh != mesh:
            dst = NamedSharding(mesh, PartitionSpec()) if mesh is not None else None
            with transfer_guard.moving(a, lambda: dst if dst is not None else default_sharding()):
                host = np.asarray(a)
                aval = ShapedArray(a.shape, a.dtype, a.aval.weak_type)
                a = (device_put_placed(host, aval, dst)
                     if mesh is not None else to_default_device(host, aval))
        moved.append(a)
    return moved, mesh, follows_default


def pinned_results(outs):
    """``outs`` (a default-device program's results) committed to the default device, as
    JAX commits the results of committed operands."""
    placement = _pinned_default[0] or pinned_placement(get_backend().devices[0])
    for out in tree_util.tree_leaves(outs):
        if type(out) is ArrayImpl and out._placement is None:
            out._placement = placement
    return outs


def _uncommitted_results(outs):
    for out in tree_util.tree_leaves(outs):
        if isinstance(out, ArrayImpl) and out._placement is not None:
            out._placement = uncommitted(out._placement)
    return outs


def _consts_to_invars(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Closures over an enclosing trace's tracers become leading operands, as in JAX."""
    jaxpr = closed.jaxpr
    moved = [v for v, c in zip(jaxpr.constvars, closed.consts) if isinstance(c, Tracer)]
    kept = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if not isinstance(c, Tracer)]
    new = Jaxpr([v for v, _ in kept], moved + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                jaxpr.debug_info)
    return ClosedJaxpr(new, [c for _, c in kept])


def jit(fun=None, /, *, in_shardings=None, out_shardings=None, static_argnums=None,
        static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
        device=None, backend=None, inline=False, compiler_options=None):
    """Stages ``fun`` out to XLA, compiling once per argument signature. Without
    ``fun`` it is a decorator factory: ``@jit(static_argnums=0)``."""
    options = dict(in_shardings=in_shardings, out_shardings=out_shardings,
                   static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=() if donate_argnums is None else donate_argnums,
                   donate_argnames=() if donate_argnames is None else donate_argnames,
                   keep_unused=keep_unused, inline=inline, compiler_options=compiler_options)
    placement = _device_and_backend_placement(device, backend)
    if fun is None:
        return lambda f: _with_placement(JitFunction(f, **options), placement)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    return _with_placement(JitFunction(fun, **options), placement)


def _with_placement(jitted, placement):
    jitted._device_placement = placement
    return jitted


def make_jaxpr(fun, static_argnums=(), return_shape=False):
    """``make_jaxpr(f)(*args)``: the closed jaxpr of ``f`` at these arguments' types."""
    jitted = JitFunction(fun, static_argnums)

    @wraps(fun)
    @api_boundary
    def make(*args, **kwargs):
        traced = jitted.trace(*args, **kwargs)
        if return_shape:
            return traced.jaxpr, traced.out_info  # ShapeDtypeStructs, as JAX's
        return traced.jaxpr

    make.__module__ = "jax"  # and JAX's name and qualname for the result
    for attr in ("__qualname__", "__name__"):
        if hasattr(fun, attr):
            setattr(make, attr, f"make_jaxpr({getattr(fun, attr)})")
    return make

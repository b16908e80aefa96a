"""``JitFunction``'s slow path: a call that misses the hit paths flattens its arguments,
traces (``_trace``), lowers and compiles (``_compile``) once per cache key, and runs; inside
another trace a call is one ``jit`` equation (``_bind``). The hit paths' entries are added
here and dropped on a configuration change (see ``_hit_paths_stale`` in
``jit_function.py``)."""
from __future__ import annotations

import time

from traxla.base.arg_names import names_once
from traxla import tree_util
from traxla.api import debug_mode, hijax_args as _hijax_args, jit_hooks
from traxla.api.call_signatures import Entry as _Entry
from traxla.api.device_arrays import _aval
from traxla.api.jit_placement import _follow_committed, _uncommitted_results, pinned_results
from traxla.api.hi_lowering import HiProgram, eval_hi, jaxpr_is_high
from traxla.api.stages import lower_program
from traxla.api.static_hits import add_keyword_order as _add_keyword_order, hit_key as _hit_key
from traxla.ir import checker
from traxla.ir.config import config
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.refs import is_ref_aval
from traxla.runtime import ArrayImpl, debug_checks, to_array
from traxla.runtime.backend import get_backend
from traxla.runtime.executable import Executable, ShardedExecutable
from traxla.runtime.placement import is_pinned_default
from traxla.state import jit_refs as _jit_refs, ref as _ref
from traxla.state.discharge import discharge_if_needed
from traxla.tracer import EvalTrace, Tracer, make_debug_info, trace_to_jaxpr, traces as trace_core
from traxla.tracer.interpret import eval_jaxpr, replaying
from traxla.tracer.staging import DynamicJaxprTrace, source_info_of_function
from traxla.api.jit_caches import (_ClosesOverRefs, _OnMesh, _config_epoch, _trace_context,
                                   share_executable, shared_executable)
from traxla.api.jit_sharding import _mesh_of_program, _module_shardings, check_devices

_flags = config.current  # the calling thread's flags (see jit_function.py)


class JitSlowPath:
    """``JitFunction``'s slow path (a base class of it; ``jit_function.py``)."""

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
                if kwargs and not self._plain:  # static keywords in another order
                    _add_keyword_order(self, args, kwargs, arrays, avals, entry, epoch)
            if type(entry) is not _Entry:  # a program of another kind (one test for all)
                if type(entry) is _OnMesh:  # a shard_map inside: the program runs on its mesh
                    return self._call_sharded(args, kwargs, arrays, in_tree, static_key,
                                              entry.mesh)
                if type(entry) is _ClosesOverRefs:  # mutates a Ref it closes over (traxla.ref)
                    return _jit_refs.call_closing_over_refs(self, entry.closed, entry.out_tree,
                                                            arrays, key)
                if type(entry) is HiProgram:  # high-level (hijax) values staged inside
                    return entry(leaves)
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

    # -- lowering and compiling ---------------------------------------------
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

    def _compile(self, key, args, kwargs, avals, in_tree, fast, epoch):
        """Traces and compiles the program of one cache key (once, however many threads
        miss it together: see ``BoundedCache.get_or_create``)."""
        jit_hooks.on_compile_miss(self, key, args, kwargs)
        closed, out_tree = self._trace(key, args, kwargs, avals)
        if jaxpr_is_high(closed):  # a program of arrays of its own: api/hi_lowering.py
            return HiProgram(self, closed, out_tree)
        if _jit_refs.closes_over_refs(closed):
            return _ClosesOverRefs(closed, out_tree)
        mesh = _mesh_of_program(closed.jaxpr)
        if mesh is not None:
            return _OnMesh(mesh)
        donated = self._donated_leaves(args, kwargs, in_tree)
        options = self._sharing_options(donated)
        shared = None if options is None else shared_executable(closed, options)
        if shared is not None:  # another jit of this function compiled it (as JAX shares)
            program, executable = shared
        else:
            program = self._lower_program(closed, donated, None, None, out_tree)
            executable = self._executable(program, closed, None, self.compiler_options)
            if options is not None:
                share_executable(closed, options, (program, executable))
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

    def _sharing_options(self, donated):
        """What besides the traced jaxpr the default-device program depends on (the key of
        the executables shared by the jits of one function); None: not shared."""
        try:
            compiler_options = (None if not self.compiler_options
                                else tuple(sorted(self.compiler_options.items())))
            options = (self.name, tuple(donated), self.keep_unused, compiler_options)
            hash(options)
        except TypeError:  # an unhashable compiler option's value
            return None
        return options

    # -- inside another trace ------------------------------------------------
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
            hit = None
        # (a hit is used as it is: one look-up of the key, hashed once, per nested call)
        closed, out_tree = hit if hit is not None else self._trace(key, args, kwargs, avals)
        trace = trace_core._current_trace
        if (trace.requires_low or not isinstance(trace, DynamicJaxprTrace)) and \
                jaxpr_is_high(closed):  # lowering it, or grad/vmap of it: inline
            return tree_util.tree_unflatten(out_tree, eval_hi(closed, leaves))
        if not isinstance(trace, DynamicJaxprTrace):
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
            in_tree = key[0]  # (every key starts with the structure of the dynamic arguments)
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


def _consts_to_invars(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Closures over an enclosing trace's tracers become leading operands, as in JAX."""
    jaxpr = closed.jaxpr
    moved = [v for v, c in zip(jaxpr.constvars, closed.consts) if isinstance(c, Tracer)]
    kept = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if not isinstance(c, Tracer)]
    new = Jaxpr([v for v, _ in kept], moved + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                jaxpr.debug_info)
    return ClosedJaxpr(new, [c for _, c in kept])

"""``jit`` and ``make_jaxpr``: ``JitFunction``, its hit paths (plain Arrays and builtin
containers of Arrays, which skip pytree flattening) and AOT ``trace``/``lower``. The call's
other stages are the class's bases, one module each: argument handling (``jit_args.py``),
the slow path that traces, lowers, compiles and caches, and calls inside another trace
(``jit_slow_path.py``), and where programs run (``jit_placement.py``: committed and pinned
arrays, programs on a mesh).

``jit(f)`` keeps two caches: traced jaxprs keyed by (input tree, static arguments, avals,
trace context), shared by nested calls so that a jaxpr used twice is one object (and prints
hoisted); and compiled executables for top-level calls (``jit_caches.py``)."""
from __future__ import annotations

import functools
import inspect
import time

from traxla.base.wrapping import copy_dict, wraps
from traxla.base.arg_names import naming_once
from traxla import api_util, tree_util
from traxla.api import jit_hooks
from traxla.api.call_signatures import MISS as _MISS, HitTable, TreeSignatures
from traxla.api.layouts import Format, sharding_of_format
from traxla.api.device_arrays import _aval, device_put
from traxla.api.jit_args import JitArguments
from traxla.api.jit_placement import JitPlacement, pinned_results
from traxla.api.jit_slow_path import JitSlowPath
from traxla.api.static_hits import call_with_keywords as _kw_hit
from traxla.api.stages import Lowered, ProgramInfo, Traced, Wrapped
from traxla.ir.config import config
from traxla.ir.sharding import AbstractMesh, PartitionSpec
from traxla.ir.thread_state import unusual as _unusual
from traxla.ir.traceback_util import api_boundary, filter_exception, register_boundary
from traxla.base.tree_functions import _prefix_error
from traxla.runtime import ArrayImpl, dispatch
from traxla.runtime.array import check_not_deleted
from traxla.runtime.cache import BoundedCache
from traxla.runtime.placement import (NamedSharding, SingleDeviceSharding, default_placement,
    pinned_default as _pinned_default, device_placement)
from traxla.runtime.xla_adapter import RuntimeErrorType, tracebacks_enabled as _tracebacks_enabled
from traxla.sharding import to_named
from traxla.tracer import EvalTrace, traces as trace_core
from traxla.tracer.traces import _bottom as _trace_bottom, _state as _trace_state
from traxla.api.jit_caches import (_all_jits, _config_epoch, _forget_fast, _trace_cache,
                                   _trace_context, is_jit_state)
from traxla.api.jit_options import _device_and_backend_placement, _donation_spec
from traxla.api.jit_sharding import _mesh_of_program, _placement_of, broadcast_prefix_leaves

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


class PjitFunction(JitArguments, JitSlowPath, JitPlacement, Wrapped):
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
    def _fun(self):
        """The wrapped function, under JAX's name for it (qwix reads it under disable_jit)."""
        return self.fun

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
                        # the last hit's (aval, start, finish, handlers, result aval): the
                        # common case, one tuple read once (atomically), nothing else
                        last = fast.last1d
                        if last[0] is a.aval and not _tracebacks_enabled():
                            try:
                                buf = last[2](last[1]([a._buf]), last[3])[0]
                            except RuntimeErrorType:
                                check_not_deleted((a,))
                                raise
                            out = ArrayImpl()
                            out.aval = last[4]
                            out._buf = buf
                            out._npy = None
                            out._placement = a._placement
                            return out
                        last = fast.last1  # one (aval, entry) pair: read once, atomically
                        if last[0] is a.aval:
                            entry = last[1]
                        else:
                            entry = fast.get((a.aval,))
                            if entry is not None:
                                fast.last1 = (a.aval, entry)
                                if entry.direct is not None:
                                    fast.last1d = (a.aval, *entry.direct)
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
                        fast = self._fast
                        last = fast.last2d  # (as last1d, with two avals)
                        if (last[0] is a.aval and last[1] is b.aval
                                and not _tracebacks_enabled()):
                            try:
                                buf = last[3](last[2]([a._buf, b._buf]), last[4])[0]
                            except RuntimeErrorType:
                                check_not_deleted((a, b))
                                raise
                            out = ArrayImpl()
                            out.aval = last[5]
                            out._buf = buf
                            out._npy = None
                            out._placement = a._placement or b._placement
                            return out
                        last = fast.last2
                        if last[0] is a.aval and last[1] is b.aval:
                            entry = last[2]
                        else:
                            entry = fast.lookup2(a.aval, b.aval)
                            if entry is not None and entry.direct is not None:
                                fast.last2d = (a.aval, b.aval, *entry.direct)
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
                        last = self._fast.last_as  # its last hit f(array, static), inlined
                        if (last[1] is b and type(a) is ArrayImpl and last[0] is a.aval
                                and a._placement is None):
                            direct = last[2].direct
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
                                out._placement = None
                                return out
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
                if hits := self._tree_fast.hits:  # builtin containers: compile_hit
                    if (out := hits[0](args)) is not _MISS:  # (most have one structure)
                        return out
                    for hit in hits[1:]:
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

    # -- where the program runs: the mesh, in_shardings and out_shardings ----
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

    def clear_cache(self):
        """Drops this function's compiled executables and traced jaxprs (JAX's
        ``jitted.clear_cache()``)."""
        self._compiled.clear()
        self._fast.clear()
        self._tree_fast.clear()
        self._traced.clear()
        self._lifted.clear()

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

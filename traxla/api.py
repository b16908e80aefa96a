"""The user-facing transformations: ``jit``, ``make_jaxpr``, ``device_put``, ``typeof``.

``jit(f)`` keeps two caches: traced jaxprs keyed by (input tree, static
arguments, avals, x64 flag), shared by nested calls so that a jaxpr used twice
is one object (and prints hoisted); and compiled executables for top-level
calls. The hit path for plain Array arguments skips pytree flattening.
"""
from __future__ import annotations

import functools
import inspect
import time
import weakref

from . import api_util, tree_util
from .ir.config import config
from .ir.core import ClosedJaxpr, Jaxpr, Var
from .ir.rules.call import jit_p
from .lowering import lower_jaxpr
from .runtime import Array, to_array
from .runtime.cache import BoundedCache
from .runtime.executable import Executable
from .tracer import EvalTrace, Tracer, core as trace_core, make_debug_info, trace_to_jaxpr
from .tracer.values import concrete_aval

_config_epoch = [0]
config.on_update(lambda name, value: _config_epoch.__setitem__(0, _config_epoch[0] + 1))


def _aval(x):
    return x.aval if isinstance(x, (Tracer, Array)) else concrete_aval(x)


def _hashable_static(value):
    try:
        hash(value)
    except TypeError as e:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying to "
            f"hash an object of type {type(value)}, {value!r}. The error was:\n"
            f"{type(e).__name__}: {e}\n") from None
    return value


class _Entry:
    """What a cache hit needs: the executable and how to rebuild the output tree."""

    __slots__ = ("executable", "out_tree", "single", "run", "arity", "aval0", "fast_key")

    def __init__(self, executable, out_tree):
        self.fast_key = None  # its key in the hot-path dict, if it has one
        self.executable = executable
        self.out_tree = out_tree
        self.single = out_tree.num_leaves == 1 and tree_util.treedef_is_leaf(out_tree)
        self.run = executable.run
        self.arity = executable.in_arity
        self.aval0 = executable.out_avals[0] if executable.out_avals else None


# Traced jaxprs are cached per function (and jit options), not per ``jit`` object, as JAX
# does: ``jit(f)`` written twice traces ``f`` once, so both calls share one jaxpr (and it
# prints hoisted). Weak keys: a cached trace never keeps a function alive.
_traces_by_function: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _new_trace_cache() -> BoundedCache:
    return BoundedCache(lambda: config.read("trace_cache_size"))


def _trace_cache(fun, options) -> BoundedCache:
    try:
        per_options = _traces_by_function.setdefault(fun, {})
    except TypeError:  # neither hashable nor weakly referenceable: a cache of its own
        return _new_trace_cache()
    cache = per_options.get(options)
    if cache is None:
        cache = per_options.setdefault(options, _new_trace_cache())
    return cache


class _OnMesh:
    """A compiled-cache entry saying: this program holds a shard_map, run it on its mesh."""

    __slots__ = ("mesh",)

    def __init__(self, mesh):
        self.mesh = mesh


def _forget_fast(fast: dict):
    """Eviction callback of a jit's executable cache: the hot-path dict drops the entry too
    (a closure over the dict, not the JitFunction, so that no reference cycle keeps a
    deleted function's executables alive)."""
    def evict(key, entry):
        fast_key = getattr(entry, "fast_key", None)
        if fast_key is not None and fast.get(fast_key) is entry:
            fast.pop(fast_key, None)
    return evict


class JitFunction:
    def __init__(self, fun, static_argnums=None, static_argnames=None, donate_argnums=None):
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        # Names and positions map onto each other through the signature, as in JAX.
        self.static_argnums, self.static_argnames, _, _ = api_util.resolve_argnums(
            fun, api_util.signature_or_none(fun), static_argnums, static_argnames)
        self._plain = not self.static_argnums and not self.static_argnames
        self._traced = _trace_cache(fun, (self.static_argnums, self.static_argnames))
        self._fast: dict = {}
        self._compiled = BoundedCache(lambda: config.read("jit_cache_size"),
                                      on_evict=_forget_fast(self._fast))
        self._lifted = BoundedCache(256)
        self._epoch = _config_epoch[0]
        self._signature = None
        self.name = getattr(fun, "__name__", type(fun).__name__)

    # -- the hot path --------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._plain and not kwargs and type(trace_core._state.trace) is EvalTrace:
            if self._epoch != _config_epoch[0]:
                self._fast.clear()
                self._epoch = _config_epoch[0]
            # Only default-device Arrays take this path: a placed (sharded) Array is left
            # out of the key, so the arity check below sends the call to the slow path.
            entry = self._fast.get(tuple([a.aval for a in args
                                          if type(a) is Array and a._placement is None]))
            if entry is not None and len(args) == entry.arity:
                if entry.single:
                    return Array(entry.aval0, entry.run([a._buf for a in args])[0])
                return entry.out_tree.unflatten(entry.executable.execute(args))
        return self._call_slow(args, kwargs)

    def _call_slow(self, args, kwargs):
        dyn_args, dyn_kwargs, static_key = self._split_static(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        if type(trace_core._state.trace) is EvalTrace:
            for x in leaves:
                if isinstance(x, Tracer):
                    x._check_alive()
            try:
                arrays = [to_array(x) for x in leaves]
            except (TypeError, OverflowError) as e:
                raise self._argument_error(e, args, kwargs, leaves) from None
            if any(a._placement is not None for a in arrays):
                return self._call_sharded(args, kwargs, arrays, in_tree, static_key)
            avals = tuple(a.aval for a in arrays)
            key = (in_tree, static_key, avals, config.enable_x64)
            entry = self._compiled.get(key)
            if entry is None:
                fast = (self._plain and not kwargs and len(args) == len(arrays)
                        and all(type(a) is Array for a in args))
                entry = self._compiled.get_or_create(
                    key, lambda: self._compile(key, args, kwargs, avals, fast))
            if type(entry) is _OnMesh:  # a shard_map inside: the whole program runs on its mesh
                return self._call_sharded(args, kwargs, arrays, in_tree, static_key, entry.mesh)
            outs = entry.executable.execute(arrays)
            return tree_util.tree_unflatten(entry.out_tree, outs)
        return self._bind(args, kwargs, leaves, in_tree, static_key)

    def _compile(self, key, args, kwargs, avals, fast):
        """Traces and compiles the program of one cache key (once, however many threads
        miss it together: see ``BoundedCache.get_or_create``)."""
        closed, out_tree = self._trace(key, args, kwargs, avals)
        mesh = _mesh_of_program(closed.jaxpr)
        if mesh is not None:
            return _OnMesh(mesh)
        executable = Executable(lower_jaxpr(closed, self.name), avals, closed.out_avals)
        entry = _Entry(executable, out_tree)
        if fast:
            entry.fast_key = avals
            self._fast[avals] = entry
        return entry

    def clear_cache(self):
        """Drops this function's compiled executables and traced jaxprs (JAX's
        ``jitted.clear_cache()``)."""
        self._compiled.clear()
        self._fast.clear()
        self._traced.clear()
        self._lifted.clear()

    def _call_sharded(self, args, kwargs, arrays, in_tree, static_key, mesh=None):
        """Arguments on a mesh: one SPMD executable over its devices, keyed on placements."""
        from .runtime.executable import ShardedExecutable
        from .runtime.placement import NamedSharding, device_put_placed
        from .ir.sharding import PartitionSpec
        import numpy as np
        placed = [a._placement for a in arrays if a._placement is not None]
        mesh = placed[0].mesh if placed else mesh
        for p in placed:
            if not isinstance(p, NamedSharding):
                raise ValueError(f"jit got an argument placed by {p}, which has no mesh spec; "
                                 "device_put it with a NamedSharding first.")
            if p.mesh != mesh:
                raise ValueError(f"jit got arguments on different meshes: {mesh} and {p.mesh}")
        arrays = [a if a._placement is not None else
                  device_put_placed(np.asarray(a), a.aval, NamedSharding(mesh, PartitionSpec()))
                  for a in arrays]
        avals = tuple(a.aval for a in arrays)
        placements = tuple(a._placement for a in arrays)
        key = (in_tree, static_key, avals, config.enable_x64, placements)
        entry = self._compiled.get(key)
        if entry is None:
            def build():
                closed, out_tree = self._trace(key[:4], args, kwargs, avals)
                module = lower_jaxpr(closed, self.name, _module_shardings(closed, mesh, placements))
                return _Entry(ShardedExecutable(module, avals, closed.out_avals, mesh), out_tree)
            entry = self._compiled.get_or_create(key, build)
        outs = entry.executable.execute(arrays)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _bind(self, args, kwargs, leaves, in_tree, static_key):
        """Inside another trace: one ``jit`` equation whose param is the traced jaxpr."""
        try:
            avals = tuple(_aval(x) for x in leaves)
        except (TypeError, OverflowError) as e:
            raise self._argument_error(e, args, kwargs, leaves) from None
        key = (in_tree, static_key, avals, config.enable_x64)
        hit = self._traced.get(key)
        if hit is not None and any(isinstance(c, Tracer) and not c._trace.alive
                                   for c in hit[0].consts):
            self._traced.pop(key, None)  # it closed over tracers of a trace that has ended
        closed, out_tree = self._trace(key, args, kwargs, avals)
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
        start = time.perf_counter()
        dyn_args, dyn_kwargs, _ = self._split_static(args, kwargs)
        _, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        out_store = []

        def flat_fun(*flat):
            a, kw = tree_util.tree_unflatten(in_tree, flat)
            full_args, full_kwargs = self._merge_static(args, kwargs, a, kw)
            out = self.fun(*full_args, **full_kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_store.append(out_tree)
            return out_leaves

        debug = make_debug_info(self.fun, "jit", self._arg_names(args, kwargs))
        closed = trace_to_jaxpr(flat_fun, avals, debug)
        result = (closed, out_store[0])
        self._traced[key] = result
        self.last_trace_seconds = time.perf_counter() - start
        return result

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

    def _arg_names(self, args, kwargs):
        """Leaf names like ``x`` or ``params['w']`` for error messages."""
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
                        names += _leaf_names(f"{name}[{j}]", v)
                    position += 1
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                for k, v in value.items():
                    if k not in self.static_argnames:
                        names += _leaf_names(f"{name}['{k}']", v)
                continue
            is_static = (position in static_nums if position < n else False) or name in self.static_argnames
            if position < n:
                position += 1
            if not is_static:
                names += _leaf_names(name, value)
        return names

    # -- AOT -----------------------------------------------------------------
    def trace(self, *args, **kwargs):
        dyn_args, dyn_kwargs, static_key = self._split_static(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple(_aval(x) for x in leaves)
        key = (in_tree, static_key, avals, config.enable_x64)
        start = time.perf_counter()
        self._traced.pop(key, None)
        closed, out_tree = self._trace(key, args, kwargs, avals)
        placements = [getattr(x, "_placement", None) for x in leaves]
        traced = Traced(self, closed, out_tree, in_tree, time.perf_counter() - start)
        if any(p is not None for p in placements):
            from .runtime.placement import NamedSharding
            from .ir.sharding import PartitionSpec
            mesh = next(p for p in placements if p is not None).mesh
            traced.mesh = mesh
            traced.placements = [p if p is not None else NamedSharding(mesh, PartitionSpec())
                                 for p in placements]
        return traced

    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        traced = self.trace(*args, **kwargs)
        return tree_util.tree_unflatten(traced.out_tree, traced.jaxpr.out_avals)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self):
        return f"<traxla.jit of {self.name}>"


def _mesh_of_program(jaxpr):
    """The mesh of a shard_map anywhere in ``jaxpr`` (None when there is none)."""
    from .ir.core import subjaxprs
    from .ir.rules.collectives import shard_map_p
    from .ir.rules.collectives import reshard_p
    for eqn in jaxpr.eqns:
        if eqn.primitive is shard_map_p or eqn.primitive is reshard_p:
            from .shard_map import concrete_mesh
            mesh = eqn.params["mesh"] if eqn.primitive is shard_map_p else eqn.params["dst_spec"][0]
            return concrete_mesh(mesh)
        for sub in subjaxprs(eqn.params):
            mesh = _mesh_of_program(sub)
            if mesh is not None:
                return mesh
    return None


def _module_shardings(closed, mesh, placements):
    """Shardy annotations of ``@main``: inputs as placed, results as their types promise
    (results with no explicit sharding are left to the partitioner)."""
    from .lowering import ModuleShardings

    def spec_of(aval):
        if aval.sharding is None:
            return None
        return tuple(aval.sharding.spec) + (None,) * (len(aval.shape) - len(aval.sharding.spec))
    out_avals = closed.out_avals
    return ModuleShardings(
        list(zip(mesh.axis_names, mesh.devices.shape)),
        [p.full_spec(len(a.shape)) for p, a in zip(placements, closed.in_avals)],
        [spec_of(a) for a in out_avals],
        [None if p.memory_kind == "device" else p.memory_kind for p in placements],
        [None if a.memory_space is None else "pinned_host" for a in out_avals])


def _leaf_names(prefix, value):
    paths, _ = tree_util.tree_flatten_with_path(value)
    return [prefix + tree_util.keystr(path) for path, _ in paths]


def _consts_to_invars(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Closures over an enclosing trace's tracers become leading operands, as in JAX."""
    jaxpr = closed.jaxpr
    moved = [v for v, c in zip(jaxpr.constvars, closed.consts) if isinstance(c, Tracer)]
    kept = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if not isinstance(c, Tracer)]
    new = Jaxpr([v for v, _ in kept], moved + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                jaxpr.debug_info)
    return ClosedJaxpr(new, [c for _, c in kept])


class Traced:
    mesh = None
    placements = None

    def __init__(self, jitted, closed, out_tree, in_tree, seconds):
        self.jitted, self.jaxpr, self.out_tree, self.in_tree = jitted, closed, out_tree, in_tree
        self.trace_seconds = seconds

    def lower(self):
        start = time.perf_counter()
        shardings = None if self.mesh is None else _module_shardings(self.jaxpr, self.mesh,
                                                                      self.placements)
        module = lower_jaxpr(self.jaxpr, self.jitted.name, shardings)
        return Lowered(self, module, time.perf_counter() - start)


class Lowered:
    """``jit(f).lower(*args)``: the StableHLO module, ready to compile."""

    def __init__(self, traced, module, seconds):
        self.traced, self.module = traced, module
        self.trace_seconds = traced.trace_seconds
        self.lower_seconds = seconds

    def as_text(self, debug_info: bool = False) -> str:
        if debug_info:
            return self.module.operation.get_asm(enable_debug_info=True)
        return str(self.module)

    def compile(self):
        t = self.traced
        if t.mesh is not None:
            from .runtime.executable import ShardedExecutable
            executable = ShardedExecutable(self.module, t.jaxpr.in_avals, t.jaxpr.out_avals, t.mesh)
        else:
            executable = Executable(self.module, t.jaxpr.in_avals, t.jaxpr.out_avals)
        return Compiled(executable, t.in_tree, t.out_tree)


class Compiled:
    """A compiled executable: ``as_text()`` is XLA's optimized HLO; call it to run."""

    def __init__(self, executable, in_tree, out_tree):
        self.executable, self.in_tree, self.out_tree = executable, in_tree, out_tree
        self.compile_seconds = executable.compile_seconds

    def as_text(self) -> str:
        return self.executable.as_text()

    def cost_analysis(self) -> dict:
        return self.executable.cost_analysis()

    def memory_analysis(self):
        return self.executable.memory_analysis()

    def __call__(self, *args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != self.in_tree:
            raise TypeError(f"Compiled function called with a different argument structure: "
                            f"expected {self.in_tree}, got {in_tree}.")
        arrays = [to_array(x) for x in leaves]
        for i, (a, expected) in enumerate(zip(arrays, self.executable.in_avals)):
            if a.aval.shape != expected.shape or a.aval.dtype != expected.dtype:
                raise TypeError(f"Argument {i} of the compiled function has type "
                                f"{a.aval.str_short()} but it was compiled for "
                                f"{expected.str_short()}.")
        return tree_util.tree_unflatten(self.out_tree, self.executable.execute(arrays))


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None):
    """Stages ``fun`` out to XLA, compiling once per argument signature."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums)


def make_jaxpr(fun, static_argnums=(), return_shape=False):
    """``make_jaxpr(f)(*args)``: the closed jaxpr of ``f`` at these arguments' types."""
    jitted = JitFunction(fun, static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        traced = jitted.trace(*args, **kwargs)
        if return_shape:
            return traced.jaxpr, tree_util.tree_unflatten(traced.out_tree, traced.jaxpr.out_avals)
        return traced.jaxpr

    return make


def device_put(x, device=None):
    """Transfers ``x`` (a pytree) to the default device, or lays it out by a sharding."""
    if device is None:
        return tree_util.tree_map(to_array, x)
    from .runtime.placement import NamedSharding, device_put_placed
    from .sharding import to_named
    from .ir.avals import ShapedArray
    import numpy as np
    sharding = device if isinstance(device, NamedSharding) else to_named(device) \
        if not hasattr(device, "_device") else None
    if sharding is None:  # a Device: the default device is the only one without a mesh
        return tree_util.tree_map(to_array, x)

    def put(leaf):
        arr = to_array(leaf)
        host = np.asarray(arr)
        return device_put_placed(host, ShapedArray(arr.shape, arr.dtype, arr.aval.weak_type),
                                 sharding)
    return tree_util.tree_map(put, x)


def typeof(x):
    return _aval(x)


def block_until_ready(x):
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return x


del Var

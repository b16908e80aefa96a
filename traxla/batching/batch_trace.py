"""vmap as a trace: every value carries a batch dimension (or ``None`` when it
is the same for every example) and each primitive's batching rule rewrites it
into primitives on the batched values, bound in the enclosing trace."""
from __future__ import annotations

import weakref

import numpy as np

import inspect

from traxla.base.wrapping import wraps
from traxla import primitives as prims, tree_util
from traxla.ir.avals import ShapedArray
from traxla.ir.config import config
from traxla.ir.jaxpr import ClosedJaxpr
from traxla.ir.literals import float0_zeros
from traxla.ir.rules.reduction import P as _reductions
from traxla.ir.thread_state import AxisFrame, axis_env, batching_axis_names
from traxla.ir.traceback_util import api_boundary
from traxla.runtime.cache import on_clear
from traxla.tracer import Tracer, make_debug_info, trace_to_jaxpr
from traxla.tracer.traces import Trace, current_trace, set_current_trace, user_source_info
from traxla.tracer.interpret import eval_jaxpr, replaying
from traxla.tracer.leaks import check_no_leaks
from traxla.tracer.values import hitype_avals
from traxla.errors import UnexpectedTracerError

not_mapped = None


class _Natural:
    """``batch_jaxpr`` out-dim request: keep the batch dim the rules chose (JAX's
    ``batch_jaxpr2``, used for ``jit``)."""

    def __repr__(self):
        return "natural"


natural = _Natural()

# primitive -> rule(axis_size, vals, dims, **params) -> (outs, out_dims)
batching_rules: dict = {}
# Primitives whose rule runs even when no operand is batched, as JAX's
# ``fancy_primitive_batchers`` (a jit under vmap is batched into a jaxpr of its own).
rules_for_unbatched: set = set()


def current_axis_name():
    """The ``axis_name`` of the vmap whose batching rule is running (None: unnamed).
    The collectives' rules compare it with the names they reduce over."""
    return batching_axis_names[-1] if batching_axis_names else None


def register_batching(prim, rule):
    batching_rules[prim] = rule
    return rule


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim", "source_info")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self.source_info = user_source_info(2)  # the user's line that made it, as JAX's

    @property
    def aval(self):
        aval = prims.aval_of(self.val)
        if self.batch_dim is None:
            return aval
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def _origin_msg(self) -> str:
        where = "" if self.source_info is None else self.source_info.summary()
        return f"\nThis BatchTracer with object id {id(self)} was created on line:\n  {where}"

    def _short_repr(self):
        return f"VmapTracer(aval={self.aval}, batched={prims.aval_of(self.val)})"


class BatchTrace(Trace):
    def __init__(self, parent: Trace, axis_size: int, axis_name=None):
        self.parent = parent
        self.axis_size = axis_size
        self.axis_name = axis_name

    def to_val_dim(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer) and not x._trace.alive:
            raise x._trace.leak_error(x)
        return x, None

    def process_primitive(self, prim, args, params):
        vals, dims = zip(*[self.to_val_dim(a) for a in args]) if args else ((), ())
        if all(d is None for d in dims) and prim not in rules_for_unbatched:
            # Nothing batched: the result belongs to the enclosing trace, as in JAX, so a
            # concrete value stays concrete (Python control flow in jacfwd's primal).
            with set_current_trace(self.parent):
                return prim.bind(*vals, **params)
        rule = batching_rules.get(prim)
        if rule is None:
            raise NotImplementedError(
                f"Batching rule for '{prim.name}' not implemented: vmap cannot move a batch "
                f"dimension through this primitive (operands "
                f"{[prims.aval_of(v).str_short() for v in vals]}, batch dims {list(dims)}).")
        batching_axis_names.append(self.axis_name)
        try:
            with set_current_trace(self.parent):
                out, out_dims = rule(self.axis_size, list(vals), list(dims), **params)
        finally:
            batching_axis_names.pop()
        if prim.multiple_results:
            return [o if d is None else BatchTracer(self, o, d) for o, d in zip(out, out_dims)]
        return out if out_dims is None else BatchTracer(self, out, out_dims)

    def leak_error(self, tracer):
        return UnexpectedTracerError(
            "Encountered an unexpected tracer: a value batched by vmap "
            f"({tracer.aval.str_short(short_dtypes=False)}) escaped the vmapped function and was "
            "used after it returned. Return values from the function instead of storing them.")


def vmap_unrestricted(fun, args, in_dims, axis_size: int):
    """``fun(*args)`` (flat in, flat out) batched over the ``args`` with an int in
    ``in_dims``; the outputs stay where the rules leave them: returns (outs, out dims),
    a dim None for an output that came out unbatched (JAX's ``vmap_unrestricted``)."""
    trace = BatchTrace(current_trace(), axis_size, None)
    tracers = [a if d is None else BatchTracer(trace, a, d) for a, d in zip(args, in_dims)]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        pairs = [trace.to_val_dim(o) for o in outs]
    finally:
        trace.invalidate()
    return [v for v, _ in pairs], [d for _, d in pairs]


# -- moving batch dimensions (bound in the current trace) ------------------------------

def moveaxis(x, src: int, dst: int):
    if src == dst:
        return x
    nd = len(prims.shape_of(x))
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return prims.transpose(x, perm)


def broadcast_batch(x, size: int, dim: int):
    """Materializes an unbatched value with a batch axis of ``size`` at ``dim``."""
    shape = list(prims.shape_of(x))
    shape.insert(dim, size)
    if getattr(getattr(x, "dtype", None), "names", None) == ("float0",):
        return float0_zeros(shape)  # float0 (integer inputs' tangents) carries no data
    # NumPy integers, as JAX builds them (they print as np.int64(...) in params)
    dims = tuple(np.delete(np.arange(len(shape)), dim))
    return prims.broadcast_in_dim(x, tuple(shape), dims)


def bdim_at_front(x, d, size: int):
    if d is None:
        return broadcast_batch(x, size, 0)
    return moveaxis(x, d, 0)


def matchaxis(x, src, dst, size: int, sum_match: bool = False):
    """``x`` batched at ``src`` (or unbatched) rearranged to be batched at ``dst``
    (``sum_match``: a batched value asked to be unbatched is summed over its batch dim)."""
    if src == dst:
        return x
    if dst is None and sum_match:
        return _reductions["reduce_sum"].bind(x, axes=(src,), out_sharding=None)
    if dst is None:
        raise ValueError("vmap cannot unbatch a batched value (out_axes=None for a value that "
                         "depends on the mapped axis)")
    if src is None:
        return broadcast_batch(x, size, dst)
    return moveaxis(x, src, dst)


# -- vmap -----------------------------------------------------------------------------

def _is_axis_leaf(x) -> bool:
    return x is None or type(x) is int


def _check_axes_types(in_axes, out_axes):
    """JAX's checks when ``vmap`` is applied (before any call)."""
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                        f"to the positional arguments passed to the function, but got {in_axes}.")
    for what, axes in (("in_axes", in_axes), ("out_axes", out_axes)):
        leaves = tree_util.tree_leaves(axes, is_leaf=lambda x: x is None)
        if not all(_is_axis_leaf(leaf) for leaf in leaves):
            raise TypeError(f"vmap {what} must be an int, None, or (nested) container with those "
                            f"types as leaves, but got {axes}.")


class _Leaf:
    def __repr__(self):
        return "*"


def _flatten_axes(what, tree, axes):
    """Broadcasts ``axes`` (an int, None, or a pytree prefix of the value whose
    structure is ``tree``) to one entry per leaf."""
    if _is_axis_leaf(axes):
        return [axes] * tree.num_leaves
    full = tree_util.tree_unflatten(tree, [_Leaf() for _ in range(tree.num_leaves)])
    out = []
    _broadcast_prefix(what, axes, full, (), out)
    return out


def _broadcast_prefix(what, prefix, full, path, out):
    if _is_axis_leaf(prefix):
        out.extend([prefix] * len(tree_util.tree_leaves(full)))
        return

    def mismatch(detail):
        return ValueError(
            f"{what} specification must be a tree prefix of the corresponding value; at key path "
            f"{what}{tree_util.keystr(path)} {detail}.")

    if isinstance(full, _Leaf):
        raise mismatch(f"the prefix has a subtree of type {type(prefix)} but the value is a leaf "
                       "(an array)")
    if type(prefix) is not type(full):
        raise mismatch(f"the prefix has a subtree of type {type(prefix)} but the value has a "
                       f"subtree of type {type(full)}")
    p_children, p_keys = tree_util.flatten_one_level_with_keys(prefix)
    f_children, f_keys = tree_util.flatten_one_level_with_keys(full)
    if isinstance(prefix, dict) and set(prefix) != set(full):
        raise mismatch(f"the prefix has a dict with keys {sorted(map(str, prefix))} but the value "
                       f"has a dict with keys {sorted(map(str, full))}")
    if len(p_children) != len(f_children) or p_keys != f_keys:
        raise mismatch(f"the prefix has a {type(prefix).__name__} of length {len(p_children)} but "
                       f"the value has a {type(full).__name__} of length {len(f_children)}")
    for (key, pc), (_, fc) in zip(p_children, f_children):
        _broadcast_prefix(what, pc, fc, path + (key,), out)


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


# Types vmap maps as a whole rather than leaf by leaf (JAX's ``register_vmappable``): a
# sparse array's batch axis runs through its buffers and its static shape together.
_vmappables: dict = {}


def register_vmappable(data_type, spec_type, axis_size_type, to_elt, from_elt, make_iota):
    """``to_elt(cont, axis_size, value, axis)`` gives the per-element value, where
    ``cont(buffer, axis)`` maps a buffer along ``axis``; ``from_elt(cont, axis_size, elt,
    axis)`` stacks results, where ``cont(axis_size, buffer, axis)`` moves a buffer's mapped
    axis to ``axis``. (``spec_type``, ``axis_size_type`` and ``make_iota`` are JAX's
    signature; traxla maps integer axes only.)"""
    del spec_type, axis_size_type, make_iota
    _vmappables[data_type] = (to_elt, from_elt)


def _is_vmappable(x) -> bool:
    return type(x) in _vmappables


def _vmap_docstr(fun) -> str:
    """The docstring JAX gives ``vmap(fun)`` (``wraps``'s docstr)."""
    doc = ("Vectorized version of {fun}. Takes similar arguments as {fun} but with additional "
           "array axes over which {fun} is mapped.")
    if getattr(fun, "__doc__", None):
        doc += "\n\nOriginal documentation:\n\n" + fun.__doc__
    return doc


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None,
         sum_match=False):
    """Vectorizes ``fun`` over ``in_axes`` of its positional arguments (keyword arguments
    are mapped over axis 0); outputs are stacked at ``out_axes``. ``axis_name`` names the
    mapped axis for the collectives (``lax.psum(x, axis_name)``...) inside ``fun``."""

    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes_types(in_axes, out_axes)
    if spmd_axis_name is not None:
        # JAX lays the batch dim out over these mesh axes; traxla has no such layout.
        raise NotImplementedError("vmap(spmd_axis_name=...) is not supported by traxla: map "
                                  "without it and place the result with a sharding.")

    @wraps(fun, docstr=_vmap_docstr(fun))
    @api_boundary
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                "positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        is_leaf = _is_vmappable if _vmappables else None
        leaves, tree = tree_util.tree_flatten((args, kwargs), is_leaf)
        args_tree = tree_util.tree_structure(args, is_leaf)
        kwargs_tree = tree_util.tree_structure(kwargs, is_leaf)
        flat_axes = (_flatten_axes("vmap in_axes", args_tree, in_axes)
                     + [0] * kwargs_tree.num_leaves)
        # Ref objects (traxla.ref) are mapped through their values and written back after
        refs = {i: x for i, x in enumerate(leaves) if getattr(x, "is_array_ref", False)}
        leaves = [x._checked_value() if i in refs else x for i, x in enumerate(leaves)]
        size = _axis_size(fun, args, kwargs, leaves, flat_axes, axis_size)
        parent = current_trace()
        trace = BatchTrace(parent, size, axis_name)
        tracers = []
        for x, ax in zip(leaves, flat_axes):
            if ax is None:
                tracers.append(x)
            elif _is_vmappable(x):
                cont = lambda v, a: BatchTracer(trace, v, a % len(prims.shape_of(v)))  # noqa: E731
                tracers.append(_vmappables[type(x)][0](cont, size, x, ax % len(x.shape)))
            else:
                tracers.append(BatchTracer(trace, x, ax % len(prims.shape_of(x))))
        frame = None if axis_name is None else AxisFrame(axis_name, size)
        if frame is not None:
            axis_env.append(frame)
        try:
            with set_current_trace(trace):
                for i, ref in refs.items():
                    tracers[i] = ref.rebox(tracers[i])
                f_args, f_kwargs = tree_util.tree_unflatten(tree, tracers)
                out = fun(*f_args, **f_kwargs)
            if frame is not None:  # the name is bound while fun runs, not after
                axis_env.remove(frame)
                frame = None
            for i, ref in refs.items():
                val, dim = trace.to_val_dim(tracers[i]._value)
                ax = flat_axes[i]
                if ax is None and dim is not None:
                    raise Exception(  # noqa: TRY002  (JAX's class and words)
                        "performing a set/swap operation with vmapped value on an unbatched "
                        f"array reference of type {ref.aval}. Move the array reference to be "
                        "an argument to the vmapped function?")
                with set_current_trace(parent):
                    ref._value = val if ax is None else matchaxis(
                        val, dim, ax % len(prims.shape_of(val)) if dim is not None else ax, size)
            out_leaves, out_tree = tree_util.tree_flatten(out, is_leaf)
            flat_out_axes = _flatten_axes("vmap out_axes", out_tree, out_axes)
            paths = [p for p, _ in tree_util.tree_flatten_with_path(out, is_leaf)[0]]
            results = []
            for o, ax, path in zip(out_leaves, flat_out_axes, paths):
                if _is_vmappable(o):
                    def cont(n, v, a):
                        val, dim = trace.to_val_dim(v)
                        if a is None and dim is not None and not sum_match:
                            raise ValueError(f"at vmap out_axes{tree_util.keystr(path)}, got "
                                             f"axis spec None but output was batched on axis "
                                             f"{dim}")
                        with set_current_trace(parent):
                            return prims._lift(val if a is None else
                                               matchaxis(val, dim, a, n, sum_match))
                    if ax is None:  # each buffer must come out unbatched
                        bufs, buf_tree = tree_util.tree_flatten(o)
                        results.append(tree_util.tree_unflatten(
                            buf_tree, [cont(size, b, None) for b in bufs]))
                    else:
                        ax = _canonical_axis(ax, len(o.shape) + 1)
                        results.append(_vmappables[type(o)][1](cont, size, o, ax))
                    continue
                val, dim = trace.to_val_dim(o)
                if ax is None and dim is not None and not sum_match:
                    if axis_name is not None:
                        raise ValueError(f"vmap has mapped output (axis_name={axis_name}) but "
                                         f"out_axes is {ax}")
                    raise ValueError(f"at vmap out_axes{tree_util.keystr(path)}, got axis spec "
                                     f"None but output was batched on axis {dim}")
                if ax is not None:
                    ax = _canonical_axis(ax, len(prims.shape_of(val)) + (1 if dim is None else 0))
                with set_current_trace(parent):
                    results.append(prims._lift(matchaxis(val, dim, ax, size, sum_match)))
        finally:
            if frame is not None:
                axis_env.remove(frame)
            trace.invalidate()
        if config.current.check_tracer_leaks:
            tracers = f_args = f_kwargs = out = out_leaves = o = None  # noqa: F841 (ours)
            check_no_leaks(trace)
        return tree_util.tree_unflatten(out_tree, results)

    return vmapped


def _argument_paths(fun, args, kwargs):
    """JAX's names for the leaves of ``(args, kwargs)``: ``argument x['k']``, ``args[2]``,
    ``kwargs['y']``, each with its type."""
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None

    def arg_name(path):
        if params is None or path[0].idx >= len(params):
            return f"args{tree_util.keystr(path)}"
        return f"argument {params[path[0].idx]}{tree_util.keystr(path[1:])}"

    def typ(x):
        try:
            return prims.aval_of(x).str_short(short_dtypes=False)
        except Exception:  # noqa: BLE001 - not an array
            return "unknown"

    names = [f"{arg_name(p)} of type {typ(x)}"
             for p, x in tree_util.tree_flatten_with_path(tuple(args))[0]]
    names += [f"kwargs{tree_util.keystr(p)} of type {typ(x)}"
              for p, x in tree_util.tree_flatten_with_path(dict(kwargs))[0]]
    return names


def _axis_size(fun, args, kwargs, leaves, axes, axis_size):
    """The mapped size, with JAX's error messages."""
    if not leaves:
        if axis_size is not None:
            return int(axis_size)
        raise ValueError("vmap wrapped function must be passed at least one argument containing "
                         "an array or axis_size must be specified, got empty "
                         f"*args={tuple(args)} and **kwargs={dict(kwargs)}")
    mapped = []
    for x, ax in zip(leaves, axes):
        if ax is None:
            mapped.append(None)
            continue
        if type(x) in hitype_avals:  # (JAX's hijax types map by a dec_rank rule of their own)
            raise NotImplementedError(
                f"vmap over an axis of a hijax value of type {type(x).__name__}: traxla does "
                "not implement it (an in_axes of None for it maps nothing)")
        shape = tuple(x.shape) if _is_vmappable(x) else prims.shape_of(x)
        if not -len(shape) <= ax < len(shape):
            raise ValueError(
                f"vmap was requested to map its argument along axis {ax}, which implies that its "
                f"rank should be at least {(ax + 1) if ax >= 0 else -ax}, but is only {len(shape)} "
                f"(its shape is {shape})")
        mapped.append(int(shape[ax]))
    sizes = [s for s in mapped if s is not None]
    if axis_size is not None:
        sizes.append(int(axis_size))
    distinct = list(dict.fromkeys(sizes))
    if len(distinct) == 1:
        return distinct[0]
    if not distinct:
        raise ValueError("vmap must have at least one non-None value in in_axes or axis_size "
                         "must be specified")
    # Group the mapped axes by size, most common first (ties: first seen), as JAX does.
    counts: dict = {}
    for s in mapped:
        if s is not None:
            counts[s] = counts.get(s, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])
    names = _argument_paths(fun, args, kwargs)
    lines = []
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size}")
    for k, (s, n) in enumerate(ordered):
        i = mapped.index(s)
        if n == 1:
            lines.append(f"  * one axis had size {s}: axis {axes[i]} of {names[i]}")
        elif k == 0:
            lines.append(f"  * most axes ({n} of them) had size {s}, e.g. axis {axes[i]} of {names[i]}")
        else:
            lines.append(f"  * some axes ({n} of them) had size {s}, e.g. axis {axes[i]} of {names[i]}")
    raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines))


# -- batching a jaxpr (for jit and control flow) ------------------------------------------

# As JAX (its weakref_lru_cache on the jaxpr), a jaxpr batched the same way twice gives one
# object: a jit called in both of custom_linear_solve's solves stays one sub-jaxpr, which
# the printer hoists once. Keyed weakly by the jaxpr, then by the batching and the flags
# that change what a trace produces.
_batched_jaxprs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
on_clear(_batched_jaxprs.clear)
_CONTEXT_FLAGS = ("enable_x64", "numpy_dtype_promotion", "numpy_rank_promotion",
                  "default_matmul_precision")


def batch_jaxpr(closed: ClosedJaxpr, axis_size: int, in_dims, out_dims_wanted):
    """A closed jaxpr computing ``closed`` on inputs batched at ``in_dims`` (None:
    unbatched) with outputs at ``out_dims_wanted``: an int (batched there), None
    (unbatched when possible, else at 0) or ``natural`` (wherever the batching
    rules left it, unbatched when possible). Returns the jaxpr and its out dims."""
    axis_name = current_axis_name()  # the rule calling us batches over this vmap's name
    key = (axis_size, axis_name, tuple(in_dims), tuple(out_dims_wanted),
           tuple([config.read(name) for name in _CONTEXT_FLAGS]), replaying())
    per_jaxpr = _batched_jaxprs.get(closed)
    hit = None if per_jaxpr is None else per_jaxpr.get(key)
    if hit is None:
        hit = _batch_jaxpr(closed, axis_size, in_dims, out_dims_wanted, axis_name)
        # a jaxpr closing over tracers belongs to one trace: never share it across traces
        if not any(isinstance(c, Tracer) for c in (*closed.consts, *hit[0].consts)):
            _batched_jaxprs.setdefault(closed, {})[key] = hit
    return hit[0], list(hit[1])


def _batch_jaxpr(closed: ClosedJaxpr, axis_size: int, in_dims, out_dims_wanted, axis_name=None):
    in_avals = []
    for aval, d in zip(closed.in_avals, in_dims):
        if d is None:
            in_avals.append(aval)
        else:
            shape = list(aval.shape)
            shape.insert(d, axis_size)
            in_avals.append(ShapedArray(shape, aval.dtype, aval.weak_type))
    out_dims = []

    def fun(*args):
        trace = BatchTrace(current_trace(), axis_size, axis_name)
        tracers = [a if d is None else BatchTracer(trace, a, d) for a, d in zip(args, in_dims)]
        try:
            with set_current_trace(trace):
                outs = eval_jaxpr(closed, (), *tracers)
        finally:
            trace.invalidate()
        results = []
        for o, want in zip(outs, out_dims_wanted):
            val, dim = trace.to_val_dim(o)
            if want is None and dim is None or want is natural:
                results.append(val)
                out_dims.append(dim)
            else:
                target = 0 if want is None else want
                results.append(matchaxis(val, dim, target, axis_size))
                out_dims.append(target)
        return results

    new = trace_to_jaxpr(fun, in_avals, make_debug_info(fun, "vmap", ()))
    return new, out_dims


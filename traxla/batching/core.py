"""vmap as a trace: every value carries a batch dimension (or ``None`` when it
is the same for every example) and each primitive's batching rule rewrites it
into primitives on the batched values, bound in the enclosing trace."""
from __future__ import annotations

import numpy as np

from .. import lax, tree_util
from ..ir.avals import ShapedArray
from ..ir.core import ClosedJaxpr
from ..tracer import Tracer, make_debug_info, trace_to_jaxpr
from ..tracer.core import Trace, current_trace, set_current_trace
from ..tracer.interpret import eval_jaxpr

not_mapped = None

# primitive -> rule(axis_size, vals, dims, **params) -> (outs, out_dims)
batching_rules: dict = {}


def register_batching(prim, rule):
    batching_rules[prim] = rule
    return rule


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self):
        aval = lax.aval_of(self.val)
        if self.batch_dim is None:
            return aval
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def _origin_msg(self) -> str:
        val = self.val
        return val._origin_msg() if isinstance(val, Tracer) else ""


class BatchTrace(Trace):
    def __init__(self, parent: Trace, axis_size: int):
        self.parent = parent
        self.axis_size = axis_size

    def to_val_dim(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer) and not x._trace.alive:
            raise x._trace.leak_error(x)
        return x, None

    def process_primitive(self, prim, args, params):
        vals, dims = zip(*[self.to_val_dim(a) for a in args]) if args else ((), ())
        with set_current_trace(self.parent):
            if all(d is None for d in dims):
                out = prim.bind(*vals, **params)
                out_dims = [None] * len(out) if prim.multiple_results else None
            else:
                rule = batching_rules.get(prim)
                if rule is None:
                    raise NotImplementedError(
                        f"Batching rule for '{prim.name}' not implemented: vmap cannot move a batch "
                        f"dimension through this primitive (operands "
                        f"{[lax.aval_of(v).str_short() for v in vals]}, batch dims {list(dims)}).")
                out, out_dims = rule(self.axis_size, list(vals), list(dims), **params)
        if prim.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dims)]
        return BatchTracer(self, out, out_dims)

    def leak_error(self, tracer):
        from ..errors import UnexpectedTracerError
        return UnexpectedTracerError(
            "Encountered an unexpected tracer: a value batched by vmap "
            f"({tracer.aval.str_short(short_dtypes=False)}) escaped the vmapped function and was "
            "used after it returned. Return values from the function instead of storing them.")


# -- moving batch dimensions (bound in the current trace) ------------------------------

def moveaxis(x, src: int, dst: int):
    if src == dst:
        return x
    nd = len(lax.shape_of(x))
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def broadcast_batch(x, size: int, dim: int):
    """Materializes an unbatched value with a batch axis of ``size`` at ``dim``."""
    shape = list(lax.shape_of(x))
    shape.insert(dim, size)
    # NumPy integers, as JAX builds them (they print as np.int64(...) in params)
    dims = tuple(np.delete(np.arange(len(shape)), dim))
    return lax.broadcast_in_dim(x, tuple(shape), dims)


def bdim_at_front(x, d, size: int):
    if d is None:
        return broadcast_batch(x, size, 0)
    return moveaxis(x, d, 0)


def matchaxis(x, src, dst, size: int):
    """``x`` batched at ``src`` (or unbatched) rearranged to be batched at ``dst``."""
    if src == dst:
        return x
    if dst is None:
        raise ValueError("vmap cannot unbatch a batched value (out_axes=None for a value that "
                         "depends on the mapped axis)")
    if src is None:
        return broadcast_batch(x, size, dst)
    return moveaxis(x, src, dst)


# -- vmap -----------------------------------------------------------------------------

def _flatten_axes(what, tree, axes):
    """Broadcasts ``axes`` (an int, None, or a pytree prefix of the arguments) to one
    entry per leaf."""
    if axes is None or isinstance(axes, int):
        return [axes] * tree.num_leaves
    proxy = tree_util.tree_unflatten(tree, [object()] * tree.num_leaves)
    try:
        return _broadcast_prefix(axes, proxy)
    except ValueError as e:
        raise ValueError(f"vmap {what} specification must be a tree prefix of the corresponding "
                         f"value, got specification {axes} for value tree {tree}. ({e})") from None


def _broadcast_prefix(prefix, full):
    out = []

    def add(p, subtree):
        n = len(tree_util.tree_leaves(subtree))
        out.extend([p] * n)

    def walk(p, subtree):
        if p is None or isinstance(p, int):
            add(p, subtree)
            return
        p_children, p_tree = tree_util.flatten_one_level(p)
        s_children, s_tree = tree_util.flatten_one_level(subtree)
        if type(p) is not type(subtree) or len(list(p_children)) != len(list(s_children)):
            raise ValueError(f"{type(p).__name__} prefix does not match {type(subtree).__name__}")
        for pc, sc in zip(tree_util.flatten_one_level(p)[0], tree_util.flatten_one_level(subtree)[0]):
            walk(pc, sc)

    walk(prefix, full)
    return out


def vmap(fun, in_axes=0, out_axes=0, axis_size=None):
    """Vectorizes ``fun`` over ``in_axes`` of its arguments; outputs stacked at ``out_axes``."""
    import functools

    @functools.wraps(fun)
    def vmapped(*args):
        if isinstance(in_axes, list):
            axes_spec = tuple(in_axes)
        else:
            axes_spec = in_axes
        if isinstance(axes_spec, tuple) and len(axes_spec) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)={len(axes_spec)}, "
                f"len(args)={len(args)}")
        leaves, tree = tree_util.tree_flatten(args)
        if isinstance(axes_spec, tuple):
            flat_axes = []
            for spec, arg in zip(axes_spec, args):
                _, sub = tree_util.tree_flatten(arg)
                flat_axes += _flatten_axes("in_axes", sub, spec)
        else:
            flat_axes = _flatten_axes("in_axes", tree, axes_spec)
        names = _arg_names(fun, args)
        size = _axis_size(leaves, flat_axes, axis_size, names)
        parent = current_trace()
        trace = BatchTrace(parent, size)
        tracers = []
        for x, ax in zip(leaves, flat_axes):
            if ax is None:
                tracers.append(x)
            else:
                nd = len(lax.shape_of(x))
                tracers.append(BatchTracer(trace, x, ax % nd))
        try:
            with set_current_trace(trace):
                out = fun(*tree_util.tree_unflatten(tree, tracers))
        finally:
            trace.invalidate()
        out_leaves, out_tree = tree_util.tree_flatten(out)
        flat_out_axes = _flatten_axes("out_axes", out_tree, out_axes)
        results = []
        for o, ax in zip(out_leaves, flat_out_axes):
            val, dim = trace.to_val_dim(o) if isinstance(o, BatchTracer) else (o, None)
            if ax is not None:
                nd = len(lax.shape_of(val)) + (1 if dim is None else 0)
                ax = ax % nd
            results.append(matchaxis(val, dim, ax, size))
        return tree_util.tree_unflatten(out_tree, results)

    return vmapped


def _arg_names(fun, args):
    import inspect
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"args[{i}]"
        paths, _ = tree_util.tree_flatten_with_path(a)
        names += [base + tree_util.keystr(p) for p, _ in paths]
    return names


def _axis_size(leaves, axes, axis_size, names):
    sizes = []
    for i, (x, ax) in enumerate(zip(leaves, axes)):
        if ax is None:
            continue
        shape = lax.shape_of(x)
        if not -len(shape) <= ax < max(len(shape), 1) or not shape:
            raise ValueError(
                f"vmap was requested to map its argument along axis {ax}, which implies that its "
                f"rank should be at least {(ax + 1) if ax >= 0 else -ax}, but is only {len(shape)} "
                f"(its shape is {shape})")
        sizes.append((shape[ax % len(shape)], i, ax))
    if not sizes:
        if axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes or axis_size "
                             "must be specified")
        return int(axis_size)
    distinct = {s for s, _, _ in sizes}
    if axis_size is not None:
        distinct.add(int(axis_size))
    if len(distinct) > 1:
        lines = []
        for s, i, ax in sizes:
            name = names[i] if i < len(names) else f"args[{i}]"
            lines.append(f"  * one axis had size {s}: axis {ax} of argument {name} of type "
                         f"{lax.aval_of(leaves[i]).str_short(short_dtypes=False)}")
        raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                         + ";\n".join(lines))
    return distinct.pop()


# -- batching a jaxpr (for jit and control flow) ------------------------------------------

def batch_jaxpr(closed: ClosedJaxpr, axis_size: int, in_dims, out_dims_wanted):
    """A closed jaxpr computing ``closed`` on inputs batched at ``in_dims`` (None:
    unbatched) with outputs at ``out_dims_wanted`` (None: unbatched when possible;
    the returned out dims say which outputs are batched)."""
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
        trace = BatchTrace(current_trace(), axis_size)
        tracers = [a if d is None else BatchTracer(trace, a, d) for a, d in zip(args, in_dims)]
        try:
            with set_current_trace(trace):
                outs = eval_jaxpr(closed, (), *tracers)
        finally:
            trace.invalidate()
        results = []
        for o, want in zip(outs, out_dims_wanted):
            val, dim = trace.to_val_dim(o)
            if want is None and dim is None:
                results.append(val)
                out_dims.append(None)
            else:
                target = 0 if want is None else want
                results.append(matchaxis(val, dim, target, axis_size))
                out_dims.append(target)
        return results

    new = trace_to_jaxpr(fun, in_avals, make_debug_info(fun, "vmap", ()))
    return new, out_dims


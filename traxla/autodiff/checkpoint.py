"""``checkpoint``/``remat``, ``checkpoint_name`` and ``print_saved_residuals``: gradient
checkpointing as JAX 0.10.2 has it (the public namespace is ``traxla.ad_checkpoint``).

``checkpoint(f)`` traces ``f`` once into a ``remat2`` equation. Differentiating it saves
only what the policy allows (by default nothing but the inputs) and recomputes the rest
in the backward pass (see ``autodiff/rules/ad_checkpoint.py``)."""
from __future__ import annotations

import weakref

import inspect

from traxla.base.wrapping import wraps
from traxla.base.arg_names import bound_leaf_names
from traxla import tree_util
from traxla.autodiff.remat_policies import (Offloadable, Recompute, Saveable,  # noqa: F401
                                      checkpoint_policies, nothing_saveable)
from traxla.ir.config import config
from traxla.ir.jaxpr import Jaxpr, Literal
from traxla.ir.rules.ad_checkpoint import name_p, remat_p
from traxla.ir.rules.optimization import reduce_precision_p
from traxla.ir.traceback_util import api_boundary
from traxla.tracer import (DynamicJaxprTrace, DynamicJaxprTracer, EvalTrace, Tracer,
                           make_debug_info, traces as trace_core)
from traxla.tracer.values import concrete_aval
from traxla.autodiff.ad import _flatten_fun, linearize_flat


class _DeprecatedArg:
    def __repr__(self):
        return "DeprecatedArg()"


def _aval(x):
    return x.aval if isinstance(x, Tracer) or hasattr(x, "__traxla_array__") else concrete_aval(x)


class _WrapHashably:
    """A static argument as a cache key: by value when hashable, else by identity."""

    __slots__ = ("val", "hash", "hashable")

    def __init__(self, val):
        self.val = val
        try:
            self.hash, self.hashable = hash(val), True
        except TypeError:
            self.hash, self.hashable = id(val), False

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        if not isinstance(other, _WrapHashably):
            return False
        if self.hashable and other.hashable:
            return self.val == other.val
        return self.val is other.val


def _remat_static_argnums(static_argnums, args):
    if type(static_argnums) is int:
        static_argnums = (static_argnums,)
    elif not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must be "
                        f"an int, tuple of ints or, bool, but got value {static_argnums}")
    if not all(-len(args) <= d < len(args) for d in static_argnums):
        raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can "
                         "only take integer values greater than or equal to `-len(args)` and "
                         f"less than `len(args)`, but got {static_argnums}, while `len(args)` = "
                         f"{len(args)}")
    return frozenset(d % len(args) for d in static_argnums)


# traced bodies per function, so that one function checkpointed twice is one jaxpr object
_traces: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _trace_body(fun, static, args, kwargs, static_nums, leaves, in_tree):
    avals = tuple(_aval(x) for x in leaves)
    key = (static, in_tree, avals, config.enable_x64)
    try:
        per_fun = _traces.setdefault(fun, {})
    except TypeError:
        per_fun = {}
    hit = per_fun.get(key)
    if hit is not None and not any(isinstance(c, Tracer) for c in hit[1]):
        return hit
    out_store = []
    n = len(args)

    def flat_fun(*flat):
        dyn, kw = tree_util.tree_unflatten(in_tree, flat)
        dyn = iter(dyn)
        full = [args[i] if i in static_nums else next(dyn) for i in range(n)]
        out = fun(*full, **kw)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_store.append(out_tree)
        return out_leaves

    trace = DynamicJaxprTrace(make_debug_info(fun, "checkpoint / remat", ()))
    tracers = [trace.new_arg(a) for a in avals]
    try:
        with trace_core.set_current_trace(trace):
            outs = flat_fun(*tracers)
        closed = trace.to_closed_jaxpr(outs)
    finally:
        trace.invalidate()
    j = closed.jaxpr
    jaxpr = Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns, j.debug_info)
    result = (jaxpr, list(closed.consts), out_store[0])
    if len(per_fun) > 256:
        per_fun.clear()
    if not any(isinstance(c, Tracer) for c in result[1]):
        # (a body closing over an enclosing trace's tracers is never reused: keeping it
        # would keep those tracers alive after their trace has finished)
        per_fun[key] = result
    return result


def _broadcast_prefix(prefix, full) -> tuple:
    """Each leaf of the prefix tree repeated for every leaf of its subtree in ``full``."""
    flags, tree = tree_util.tree_flatten(prefix)
    subtrees = tree.flatten_up_to(full)
    return tuple(f for f, sub in zip(flags, subtrees) for _ in tree_util.tree_leaves(sub))


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=(),
               concrete=_DeprecatedArg()):
    """Makes ``fun`` recompute its internal values when differentiated, instead of saving
    them (``policy`` chooses which may be saved; see ``checkpoint_policies``)."""
    if not isinstance(concrete, _DeprecatedArg):
        raise NotImplementedError(
            "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and removed "
            "in JAX v0.10.0. In its place please use `static_argnums`; for details refer to "
            "https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html.")
    if isinstance(static_argnums, int):
        static_argnums = static_argnums,
    if isinstance(prevent_cse, (list, tuple)):
        prevent_cse = tuple(prevent_cse)
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError("prevent_cse must be a bool or tuple of bools, got "
                        f"type(prevent_cse)={type(prevent_cse)}")

    if config.current.remat3:
        # JAX's new implementation (``jax_remat3``): the checkpointed function is a
        # ``functools.partial`` of it (no ``wraps``: its signature is ``(*args, **kwargs)``,
        # so its arguments are named ``args[0]``... in what reports them)
        import functools
        return functools.partial(_call_remat3, _checkpoint(
            fun, prevent_cse, policy, static_argnums))
    return _checkpoint(fun, prevent_cse, policy, static_argnums)


def _call_remat3(fun_remat, *args, **kwargs):
    return fun_remat(*args, **kwargs)


def _checkpoint(fun, prevent_cse, policy, static_argnums):
    @wraps(fun)
    @api_boundary
    def fun_remat(*args, **kwargs):
        static_nums = _remat_static_argnums(static_argnums, args) if static_argnums else frozenset()
        static = tuple(_WrapHashably(args[i]) for i in sorted(static_nums))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
        jaxpr, consts, out_tree = _trace_body(fun, static, args, kwargs, static_nums, leaves,
                                              in_tree)
        if isinstance(prevent_cse, tuple):
            cse_args = (dyn_args, kwargs) if kwargs else dyn_args
            cse = (False,) * len(consts) + _broadcast_prefix(prevent_cse, cse_args)
        else:
            cse = prevent_cse
        outs = remat_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=cse, differentiated=False,
                            policy=policy)
        return tree_util.tree_unflatten(out_tree, outs)

    return fun_remat


def remat(fun, *, prevent_cse=True, policy=None, static_argnums=(), concrete=_DeprecatedArg()):
    """Alias of :func:`checkpoint`."""
    return checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
                      concrete=concrete)


def checkpoint_name(x, name):
    """Identifies a value with a name (an identity at run time) for checkpoint policies."""
    if type(trace_core.current_trace()) is EvalTrace:
        return x
    return tree_util.tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


# -- which residuals a gradient saves -------------------------------------------------------------

def saved_residuals(f, *args, **kwargs):
    """``[(aval, description)]`` of the values ``vjp(f, *args, **kwargs)`` keeps for the
    backward pass, as JAX lists them."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    arg_names = []
    try:
        sig = inspect.signature(f)
        arg_names = bound_leaf_names(sig, sig.bind(*args, **kwargs))
    except (TypeError, ValueError):
        arg_names = []
    if len(arg_names) != len(leaves):
        arg_names = [""] * len(leaves)

    def f_(*flat):
        a, kw = tree_util.tree_unflatten(in_tree, flat)
        return f(*a, **kw)

    trace = DynamicJaxprTrace(make_debug_info(f, "saved_residuals", tuple(arg_names)))
    tracers = [trace.new_arg(_aval(x)) for x in leaves]
    store = []
    try:
        with trace_core.set_current_trace(trace):
            _, lin = linearize_flat(_flatten_fun(f_, tree_util.tree_structure(tuple(leaves)),
                                                 store), tracers, "vjp")
            atoms = [trace.to_atom(c) for c in lin.jaxpr.consts]
    finally:
        trace.invalidate()
    return _describe(trace, atoms, arg_names)


def _summarize(info) -> str:
    """JAX's ``source_info_util.summarize``: file:line:column (qualified function name)."""
    return "unknown" if info is None else info.summary()


def _describe(trace, atoms, arg_names):
    res_vars = {a for a in atoms if not isinstance(a, Literal)}
    # a residual rounded by reduce_precision is reported from its producer
    subst = {e.outvars[0]: e.invars[0] for e in trace.eqns if e.primitive is reduce_precision_p}
    res_vars = {subst.get(v, v) for v in res_vars}
    results = [(a.aval, "from a literal") for a in atoms if isinstance(a, Literal)]
    results += [(v.aval, "from a constant") for v in trace.constvars if v in res_vars]
    for i, v in enumerate(trace.invars):
        if v in res_vars:
            src = (f"from the argument {arg_names[i]}" if arg_names[i]
                   else f"from the argument at flattened index {i}")
            results.append((v.aval, src))
    for eqn in trace.eqns:
        for v in eqn.outvars:
            if v in res_vars:
                src = _summarize(eqn.source_info)
                if eqn.primitive is name_p:
                    results.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
                elif eqn.primitive.name == "jit":
                    results.append((v.aval, f"output of jitted function '{eqn.params['name']}' "
                                            f"from {src}"))
                else:
                    results.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return results


def print_saved_residuals(f, *args, **kwargs):
    """Prints what ``saved_residuals`` returns, one residual a line."""
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {src}")


del DynamicJaxprTracer

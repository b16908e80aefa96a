"""``jit`` and ``eval_shape`` of a function taking high-level (hijax) values: Python
objects of a type registered with ``jax.experimental.hijax.register_hitype`` (flax's hijax
Variables), which no program can take as they are. Where every such argument is of an
immutable type (``HiType``), it is staged as a value of its type and the program lowered
afterwards (``api/hi_lowering.py``: ``_call_staged``); mutable ones, below.

As JAX's ``jit`` does (``pjit._to_lojax``): each hijax argument is passed as its low-level
values (``aval.lower_val(x)``, or ``aval.read_loval(qdd, x)`` for a mutable one, under its
current quasi-dynamic data), rebuilt inside the trace (``raise_val`` /
``new_from_loval``), and a mutable one's final low-level values are extra results, written
back into the argument after the call (``update_from_loval``). The function is traced once
per argument structure, abstract values and quasi-dynamic data. An object passed twice is
two objects inside, written back in order (the last one's state wins), as in JAX. A hijax
value returned by such a function is refused."""
from __future__ import annotations

from traxla import tree_util
from traxla.api.jit_caches import _config_epoch, _trace_context
from traxla.tracer.staging import DynamicJaxprTrace
from traxla.tracer.eval import EvalTrace
from traxla.tracer.traces import current_trace
from traxla.tracer.values import concrete_aval, hitype_avals


def own(obj):
    """Records ``obj`` (a hijax object) as made inside the current staging trace: its own
    state, not state it captured (see ``experimental/hijax.py``)."""
    trace = current_trace()
    if isinstance(trace, DynamicJaxprTrace):
        owned = trace.__dict__.setdefault("_hi_owned", {})
        owned[id(obj)] = obj
    return obj


def owns(trace, obj) -> bool:
    return trace.__dict__.get("_hi_owned", {}).get(id(obj)) is obj


def has_hi_leaves(leaves) -> bool:
    return bool(hitype_avals) and any(type(x) in hitype_avals for x in leaves)


class _LoVals:
    """One hijax argument as a pytree: its low-level values are the children; the aux data
    (its abstract value and quasi-dynamic data) is part of the traced structure."""

    __slots__ = ("vals", "info")

    def __init__(self, vals, info):
        self.vals, self.info = vals, info


class _FinalStates:
    """The mutable hijax arguments' final low-level values (children), with their final
    quasi-dynamic data (aux data: known once traced, kept with the traced structure)."""

    __slots__ = ("vals", "qdds")

    def __init__(self, vals, qdds):
        self.vals, self.qdds = vals, qdds


tree_util.register_pytree_node(_LoVals, lambda b: (b.vals, b.info),
                               lambda info, vals: _LoVals(tuple(vals), info))
tree_util.register_pytree_node(_FinalStates, lambda s: (s.vals, s.qdds),
                               lambda qdds, vals: _FinalStates(tuple(vals), qdds))


def _lower_args(tree):
    """``tree`` with each hijax leaf a ``_LoVals``; the hijax objects, in order."""
    objects = []

    def lower(x):
        to_aval = hitype_avals.get(type(x))
        if to_aval is None:
            return x
        aval = to_aval(x)
        objects.append(x)
        if aval.has_qdd:
            qdd = x.cur_qdd()
            return _LoVals(tuple(aval.read_loval(qdd, x)), (aval, qdd))
        return _LoVals(tuple(aval.lower_val(x)), (aval, None))

    return tree_util.tree_map(lower, tree), objects


def _raise_args(tree):
    """Inside the trace: each ``_LoVals`` rebuilt into a hijax object; the mutable ones
    (with their abstract values), in order."""
    mutable = []

    def raise_(b):
        if type(b) is not _LoVals:
            return b
        aval, qdd = b.info
        if not aval.has_qdd:
            return aval.raise_val(*b.vals)
        obj = own(aval.new_from_loval(qdd, *b.vals))
        mutable.append((aval, obj))
        return obj

    return tree_util.tree_map(raise_, tree, is_leaf=lambda x: type(x) is _LoVals), mutable


def _check_no_hi_results(out, fun):
    for x in tree_util.tree_leaves(out):
        if type(x) in hitype_avals:
            raise NotImplementedError(
                f"function {getattr(fun, '__qualname__', fun)} returned a hijax value of type "
                f"{type(x).__name__}: traxla's jit cannot return one (pass it in instead)")


def _lowered_fun(fun, split):
    """``fun`` over lowered arguments: it returns ``(result, _FinalStates)``. ``split``
    gives the (dynamic positional, dynamic keyword, merge) parts of a call's arguments."""

    def lowered(*args, **kwargs):
        dyn_args, dyn_kwargs, merge = split(args, kwargs)
        (dyn_args, dyn_kwargs), mutable = _raise_args((dyn_args, dyn_kwargs))
        full_args, full_kwargs = merge(dyn_args, dyn_kwargs)
        out = fun(*full_args, **full_kwargs)
        _check_no_hi_results(out, fun)
        vals, qdds = [], []
        for aval, obj in mutable:
            qdd = obj.cur_qdd()
            vals.append(tuple(aval.read_loval(qdd, obj)))
            qdds.append((aval, qdd))
        return out, _FinalStates(tuple(vals), tuple(qdds))

    lowered.__name__ = getattr(fun, "__name__", "fun")
    lowered.__qualname__ = getattr(fun, "__qualname__", lowered.__name__)
    lowered.__wrapped__ = fun
    return lowered


def _jitted_split(jitted):
    def split(args, kwargs):
        dyn_args, dyn_kwargs, _ = jitted._split_static(args, kwargs)
        return dyn_args, dyn_kwargs, (
            lambda a, kw: jitted._merge_static(args, kwargs, list(a), kw))
    return split


def _inner_jit(jitted):
    inner = jitted.__dict__.get("_hijax_inner")
    if inner is None:
        inner = type(jitted)(
            _lowered_fun(jitted.fun, _jitted_split(jitted)),
            static_argnums=jitted.static_argnums, static_argnames=jitted.static_argnames,
            donate_argnums=(), keep_unused=jitted.keep_unused, inline=jitted.inline)
        inner.name = jitted.name
        jitted.__dict__["_hijax_inner"] = inner
    return inner


def _lowered_call_args(jitted, args, kwargs):
    dyn_args, dyn_kwargs, _ = jitted._split_static(args, kwargs)
    (dyn_args, dyn_kwargs), objects = _lower_args((tuple(dyn_args), dyn_kwargs))
    full_args, full_kwargs = jitted._merge_static(args, kwargs, list(dyn_args), dyn_kwargs)
    return full_args, full_kwargs, objects


def all_immutable(leaves) -> bool:
    return not any(hitype_avals[type(x)](x).has_qdd for x in leaves if type(x) in hitype_avals)


def call_with_hi_args(jitted, args, kwargs):
    """``jitted(*args, **kwargs)`` where some argument leaves are hijax values."""
    dyn_args, dyn_kwargs, static_key = jitted._split_static(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    if all_immutable(leaves):  # staged as values of their types (api/hi_lowering.py)
        return _call_staged(jitted, args, kwargs, leaves, in_tree, static_key)
    full_args, full_kwargs, objects = _lowered_call_args(jitted, args, kwargs)
    out, final = _inner_jit(jitted)(*full_args, **full_kwargs)
    mutable = [x for x in objects if hitype_avals[type(x)](x).has_qdd]
    for obj, vals, (aval, qdd) in zip(mutable, final.vals, final.qdds):
        aval.update_from_loval(qdd, obj, *vals)
    return out


def _call_staged(jitted, args, kwargs, leaves, in_tree, static_key):
    """A call whose hijax arguments are all immutable: traced with them as values of their
    types, run as a ``HiProgram`` (``api/hi_lowering.py``)."""
    trace = current_trace()
    if isinstance(trace, DynamicJaxprTrace):  # one jit equation (or inline, lowering)
        return jitted._bind(args, kwargs, leaves, in_tree, static_key)
    if not isinstance(trace, EvalTrace):  # under grad or vmap: the function itself
        return jitted.fun(*args, **kwargs)
    avals = tuple(concrete_aval(x) for x in leaves)  # (an Array's, a hijax value's type)
    key = (in_tree, static_key, avals, _trace_context())
    epoch = _config_epoch[0]
    entry = jitted._compiled.get_or_create(
        key, lambda: jitted._compile(key, args, kwargs, avals, in_tree, None, epoch))
    return entry(leaves)  # a HiProgram: its jaxpr takes high-level values


def trace_with_hi_args(jitted, args, kwargs):
    """``jitted.trace(*args, **kwargs)`` with hijax argument leaves: the trace of the
    lowered function (its results: the function's, then the final states)."""
    full_args, full_kwargs, _ = _lowered_call_args(jitted, args, kwargs)
    return _inner_jit(jitted).trace(*full_args, **full_kwargs)

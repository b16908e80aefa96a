"""Argument bookkeeping shared by the transformations: which of a function's
arguments are static, mapped through its signature as JAX does.

``jit(f, static_argnames='x')`` makes ``x`` static whether it is passed by
keyword or by position, and ``static_argnums=0`` likewise covers the keyword
spelling: the missing half of the pair is inferred from ``inspect.signature``
(only for positional-or-keyword parameters), then both are validated against
the signature with JAX's errors.
"""
from __future__ import annotations

import functools
import inspect
import operator
import re
from typing import Iterable

from traxla import tree_util
from traxla.base.key_paths import keystr
from traxla.ir.jaxpr import DebugInfo

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_NOT_KEYWORD = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)


def signature_or_none(fun):
    """``inspect.signature(fun)``, or None for callables without one (some builtins)."""
    if type(fun) is _FunctionType:
        # A plain function without defaults, annotations or attributes (no ``__wrapped__``,
        # no ``__signature__``) has the signature its code gives: a fresh closure made by
        # the same ``def`` (a ``jit`` inside a loop or a step function) reuses it.
        code = fun.__code__
        if (fun.__defaults__ is None and fun.__kwdefaults__ is None and not fun.__dict__
                and not fun.__annotations__):
            sig = _code_signatures.get(code)
            if sig is None:
                sig = inspect.signature(fun)
                if len(_code_signatures) >= 1024:
                    _code_signatures.clear()
                _code_signatures[code] = sig
            return sig
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


_FunctionType = type(signature_or_none)
_code_signatures: dict = {}  # code object -> Signature (each entry keeps its code alive)


def ensure_index_tuple(x) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints (JAX's ``_ensure_index_tuple``)."""
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def ensure_str_tuple(x) -> tuple[str, ...]:
    if isinstance(x, str):
        return (x,)
    x = tuple(x)
    for name in x:
        if not isinstance(name, str):
            raise TypeError(f"argument is not a string: {name}")
    return x


def infer_argnums_and_argnames(sig, argnums, argnames):
    """Fills in the missing one of (argnums, argnames) from the signature."""
    if argnums is None and argnames is None:
        return (), ()
    if argnums is not None and argnames is not None:
        return ensure_index_tuple(argnums), ensure_str_tuple(argnames)
    params = list(sig.parameters.items())
    if argnums is None:
        argnames = ensure_str_tuple(argnames)
        argnums = tuple(i for i, (k, p) in enumerate(params)
                        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and k in argnames)
    else:
        argnums = ensure_index_tuple(argnums)
        argnames = tuple(k for i, (k, p) in enumerate(params)
                         if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and i in argnums)
    return argnums, argnames


def validate_argnums(sig, argnums, what: str) -> None:
    n_positional = 0
    for p in sig.parameters.values():
        if p.kind in _POSITIONAL:
            n_positional += 1
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            return  # any number of positional arguments
    if argnums and (-min(argnums) > n_positional or max(argnums) >= n_positional):
        raise ValueError(f"Jitted function has {what}={argnums}, but only accepts "
                         f"{n_positional} positional arguments.")


def validate_argnames(sig, argnames, what: str) -> None:
    valid, invalid, var_kwargs = set(), set(), False
    for name, p in sig.parameters.items():
        if p.kind in _KEYWORD:
            valid.add(name)
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            var_kwargs = True
        elif p.kind in _NOT_KEYWORD:
            invalid.add(name)
    bad = invalid & set(argnames)
    if bad:
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. These are "
                         "positional-only")
    if var_kwargs:
        return
    bad = set(argnames) - valid
    if bad:
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. Function does "
                         "not take these args.")


def resolve_argnums(fun, sig, static_argnums, static_argnames,
                    donate_argnums=None, donate_argnames=None):
    """``(static_argnums, static_argnames, donate_argnums, donate_argnames)`` completed and
    validated against ``sig`` (JAX's ``resolve_argnums``); without a signature nothing is
    inferred or checked."""
    if sig is None:
        if donate_argnames is not None:
            raise ValueError(f"Getting the signature of function {fun} failed. Pass "
                             "donate_argnums instead of donate_argnames.")
        return ((() if static_argnums is None else ensure_index_tuple(static_argnums)),
                (() if static_argnames is None else ensure_str_tuple(static_argnames)),
                (() if donate_argnums is None else ensure_index_tuple(donate_argnums)), ())
    if (static_argnums is None and static_argnames is None and donate_argnums is None
            and donate_argnames is None):  # (a plain jit: nothing to infer or validate)
        return (), (), (), ()
    static_argnums, static_argnames = infer_argnums_and_argnames(sig, static_argnums,
                                                                 static_argnames)
    donate_argnums, donate_argnames = infer_argnums_and_argnames(sig, donate_argnums,
                                                                 donate_argnames)
    validate_argnums(sig, static_argnums, "static_argnums")
    validate_argnames(sig, static_argnames, "static_argnames")
    validate_argnums(sig, donate_argnums, "donate_argnums")
    validate_argnames(sig, donate_argnames, "donate_argnames")
    both = set(static_argnames) & set(donate_argnames)
    if both:
        raise ValueError("static_argnames and donate_argnames cannot intersect. Argument names "
                         f"{both} appear in both static_argnames and donate_argnames")
    return static_argnums, static_argnames, donate_argnums, donate_argnames


def static_positions(static_argnums: Iterable[int], n_args: int) -> frozenset:
    """The positions of ``n_args`` actual positional arguments that are static: negative
    numbers count from the end, numbers past the end are ignored (as in JAX)."""
    return frozenset(i % n_args if -n_args <= i < 0 else i for i in static_argnums
                     if -n_args <= i < n_args)


# -- structural differences of two pytrees (JAX's tree_util.equality_errors) ------------------

def equality_errors(path, t1, t2):
    """(key path, what tree 1 has, what tree 2 has, why they differ), for trees known to
    differ in structure: JAX's ``tree_util.equality_errors``."""
    if (tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t1))
            and tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t2))):
        return
    if type(t1) != type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f"{type(t1).__name__} of length {len(t1)}",
               f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
        return
    c1, m1 = tree_util.flatten_one_level(t1)
    c2, m2 = tree_util.flatten_one_level(t2)
    c1, c2 = tuple(c1), tuple(c2)
    k1 = tuple(k for k, _ in tree_util.flatten_one_level_with_keys(t1)[0])
    k2 = tuple(k for k, _ in tree_util.flatten_one_level_with_keys(t2)[0])
    try:
        diff = " ".join(repr(k.key) for k in set(k1).symmetric_difference(set(k2)))
    except Exception:  # noqa: BLE001 - keys without .key
        diff = ""
    if len(c1) != len(c2):
        yield (path, f"{type(t1)} with {len(c1)} child{'ren' if len(c1) > 1 else ''}",
               f"{type(t2)} with {len(c2)} child{'ren' if len(c2) > 1 else ''}",
               "the numbers of children do not match"
               + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
        return
    if m1 != m2:
        yield (path, f"{type(t1)} with pytree metadata {m1}",
               f"{type(t2)} with pytree metadata {m2}", "the pytree node metadata does not match")
        return
    for k, a, b in zip(k1, c1, c2):
        yield from equality_errors((*path, k), a, b)


class _LeafMeta(type):
    def __repr__(cls):
        return "pytree leaf"

    __str__ = __repr__


def equality_errors_pytreedef(tree1, tree2):
    """``equality_errors`` of two treedefs (their leaves print as ``pytree leaf``)."""
    leaf = _LeafMeta("Leaf", (), {})()
    return equality_errors((), tree_util.tree_unflatten(tree1, [leaf] * tree1.num_leaves),
                           tree_util.tree_unflatten(tree2, [leaf] * tree2.num_leaves))


# -- JAX's api_util.debug_info: what error messages say about a traced function --------------

def fun_signature(fun):
    """``inspect.signature(fun)``, or None (JAX's ``fun_signature``)."""
    return signature_or_none(fun)


_FUN_NAME = re.compile(r"(?:<built-in function (\S+)>)")  # as JAX: never "<object at 0x...>"


def fun_sourceinfo(fun) -> str:
    """``"name at file:line"`` of the function behind partials and wrappers, or its name
    (JAX's ``fun_sourceinfo``)."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    try:
        return f"{fun.__name__} at {fun.__code__.co_filename}:{fun.__code__.co_firstlineno}"
    except AttributeError:
        try:
            text = str(fun)
        except Exception:  # noqa: BLE001 - any str() failure: the name is unknown
            return "<unknown>"
        m = _FUN_NAME.match(text)
        return m.group(1) if m else "<unknown>"


_STATIC = object()


def _non_static_arg_names(signature, args, kwargs, static_argnums, static_argnames):
    """The names of the non-static argument leaves: positional arguments first, then the
    keyword arguments sorted by keyword (as ``jit`` flattens them), as JAX names them."""
    n = len(args)
    statics = {i % n for i in static_argnums if -n <= i < n}
    args_ = [_STATIC if i in statics else x for i, x in enumerate(args)]
    kwargs_ = {k: _STATIC if k in set(static_argnames) else x for k, x in kwargs.items()}
    ordered = None
    if signature is not None:
        try:
            bound = signature.bind(*args_, **kwargs_)
        except (TypeError, ValueError):
            pass
        else:
            var_kw = next((name for name, p in signature.parameters.items()
                           if p.kind is inspect.Parameter.VAR_KEYWORD), None)
            positional = [(name, x) for name, x in bound.arguments.items()
                          if name not in kwargs and name != var_kw]
            keyword = [(name if name in bound.arguments else f"{var_kw}['{name}']", x)
                       for name, x in sorted(kwargs_.items())]
            ordered = positional + keyword
    if ordered is None:
        ordered = [("args", args_)] + sorted(
            (f"kwargs['{name}']", x) for name, x in kwargs_.items() if x is not _STATIC)
    names = []
    for name, x in ordered:
        paths, _ = tree_util.tree_flatten_with_path(x)
        names.extend(f"{name}{keystr(path)}" for path, leaf in paths if leaf is not _STATIC)
    return tuple(names)


def debug_info(traced_for: str, fun, args, kwargs, *, static_argnums=(), static_argnames=(),
               result_paths_thunk=None, sourceinfo=None, signature=None) -> DebugInfo:
    """JAX's ``api_util.debug_info``: the DebugInfo of tracing ``fun`` on example ``args``
    and ``kwargs`` (static ones included and named by ``static_argnums``/``_argnames``)."""
    existing = getattr(fun, "__fun_debug_info__", None)
    if existing is not None:
        return existing
    if sourceinfo is None:
        sourceinfo = fun_sourceinfo(fun)
    if signature is None:
        signature = fun_signature(fun)
    arg_names = _non_static_arg_names(signature, args, kwargs, static_argnums, static_argnames)
    return DebugInfo(traced_for, sourceinfo.split(" ")[0], sourceinfo, arg_names,
                     result_paths_thunk)


# JAX's ``jax.api_util`` names that libraries call to trace functions themselves.
from traxla.tracer.linear_util import flatten_fun, flatten_fun_nokwargs  # noqa: E402,F401
from traxla.tracer.linear_util import transformation2 as _transformation2  # noqa: E402
from traxla.tracer.values import concrete_aval
from traxla.base.sequences import safe_map  # noqa: F401  (jax.api_util.safe_map)
from traxla.ir.avals import ShapedArray
from traxla.ir.pytype_registry import user_aval_fn


def shaped_abstractify(x):
    """The ShapedArray of a value (array, scalar, tracer, ShapeDtypeStruct, a value of a
    type registered in ``core.pytype_aval_mappings``, an aval itself), as JAX's
    ``core.shaped_abstractify``."""
    fn = user_aval_fn(type(x))
    if fn is not None:
        return fn(x)
    if isinstance(x, ShapedArray):
        return x
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__"):
        return ShapedArray(tuple(x.shape), x.dtype, getattr(x, "weak_type", False))
    return concrete_aval(x)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple[int, ...]:
    """``donate_argnums`` counted among the non-static arguments only (sorted, unique):
    ``rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)``. An argument both static and
    donated is a ValueError, as JAX's."""
    static = sorted(set(static_argnums))
    donate = sorted(set(donate_argnums))
    if set(static) & set(donate):
        raise ValueError(f"`static_argnums` {static} and `donate_argnums` {donate} cannot "
                         "intersect.")
    return tuple(d - sum(1 for s in static if s < d) for d in donate)


class _PytreeLeaf:
    def __repr__(self):
        return "pytree leaf"


def flatten_axes(name, treedef, axis_tree, *, kws=False, tupled_args=False):
    """``axis_tree`` (a pytree prefix of the value whose structure is ``treedef``, with None
    leaves) broadcast to one entry per leaf of the value, as JAX's; a tree that is not a
    prefix is a ValueError naming ``name`` and each mismatch."""
    from traxla.base.tree_functions import _prefix_error
    full = tree_util.tree_unflatten(treedef, [_PytreeLeaf()] * treedef.num_leaves)
    try:
        axes = tree_util.broadcast_prefix(axis_tree, full, is_leaf=lambda x: x is None)
    except ValueError:
        if kws:  # keyword arguments included: the message is about the positional ones
            treedef = treedef.children()[0]
            axis_tree = axis_tree[0]
            full = tree_util.tree_unflatten(treedef, [_PytreeLeaf()] * treedef.num_leaves)
        hint = ""
        if tupled_args:
            hint += (f" Note that {name} that are non-trivial pytrees should always be "
                     f"wrapped in a tuple representing the argument list.")
            if len(treedef.children()) == 1:
                try:
                    flatten_axes(name, treedef, (axis_tree,))
                except ValueError:
                    pass
                else:
                    hint += (f" In particular, you're passing in a single argument which "
                             f"means that {name} might need to be wrapped in a singleton "
                             "tuple.")
        errors = list(_prefix_error((), axis_tree, full, lambda x: x is None))
        details = "\n  ".join(e(name).args[0] for e in errors)
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                         f"value; {hint}\n  Mismatch details ({len(errors)} found):\n  "
                         f"{details}") from None
    return axes


@functools.lru_cache(maxsize=4096)
def donation_vector(donate_argnums, donate_argnames, in_tree, kws: bool = True
                    ) -> tuple[bool, ...]:
    """One bool per leaf of the arguments whose structure is ``in_tree`` (``(args,
    kwargs)`` when ``kws``): donated or not, by position (``donate_argnums``) and, for the
    keyword arguments, by name (``donate_argnames``), as JAX's."""
    if kws:
        args_tree, kwargs_tree = in_tree.children()
    else:
        args_tree, kwargs_tree = in_tree, None
    out: list = []
    for i, arg in enumerate(args_tree.children()):
        out.extend((i in donate_argnums,) * arg.num_leaves)
    if kwargs_tree is not None:
        for key, val in zip(kwargs_tree.node_data()[1], kwargs_tree.children()):
            out.extend((key in donate_argnames,) * val.num_leaves)
    return tuple(out)


# -- argnums_partial: a WrappedFun of the dynamic arguments only (JAX's api_util) -----------

class _HashableWithStrictTypeEquality:
    """A static argument as a cache key: equal when of the same type and equal value."""
    __slots__ = ["val"]

    def __init__(self, val):
        self.val = val

    def __hash__(self):
        return hash(self.val)

    def __eq__(self, other):
        return type(self.val) is type(other.val) and self.val == other.val


class _Unhashable:
    __slots__ = ["val"]

    def __init__(self, val):
        self.val = val

    def __eq__(self, other):
        return self.val == other.val


def _ensure_inbounds(num_args: int, argnums) -> tuple[int, ...]:
    out = []
    for i in argnums:
        if not -num_args <= i < num_args:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                "greater than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {num_args}.")
        out.append(i % num_args)
    return tuple(out)


def _is_hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


@_transformation2
def _argnums_partial(_fun, _dyn_argnums, _fixed_args, *dyn_args, **kwargs):
    sentinel = object()
    full = [sentinel] * (len(_fixed_args) + len(dyn_args))
    for i, arg in zip(_dyn_argnums, dyn_args):
        full[i] = arg
    fixed_iter = iter(_fixed_args)
    return _fun(*[next(fixed_iter).val if x is sentinel else x for x in full], **kwargs)


def argnums_partial(f, dyn_argnums, args, require_static_args_hashable=True):
    """``(g, dyn_args)``: ``g`` the WrappedFun ``f`` taking only the arguments at
    ``dyn_argnums`` (the others fixed to ``args``' values), ``dyn_args`` those arguments."""
    dyn_argnums = _ensure_inbounds(len(args), ensure_index_tuple(dyn_argnums))
    if require_static_args_hashable:
        fixed = []
        for i, arg in enumerate(args):
            if i in dyn_argnums:
                continue
            if not _is_hashable(arg):
                raise ValueError(
                    "Non-hashable static arguments are not supported, as this can lead to "
                    f"unexpected cache-misses. Static argument (index {i}) of type "
                    f"{type(arg)} for function {f.__name__} is non-hashable.")
            fixed.append(_HashableWithStrictTypeEquality(arg))
    else:
        fixed = [_Unhashable(a) for i, a in enumerate(args) if i not in dyn_argnums]
    return (_argnums_partial(f, dyn_argnums, tuple(fixed)),
            tuple(args[i] for i in dyn_argnums))

"""Names of a function's argument leaves (``x``, ``args[1]``, ``d['a']``), as JAX prints them
in error messages and residual listings."""
from __future__ import annotations

import functools
import inspect
import operator

from traxla.base.flattening import _kinds, tree_flatten, tree_flatten_with_path
from traxla.base.key_paths import keystr


def leaf_names(prefix: str, value) -> list[str]:
    """``prefix`` followed by the key path of each leaf of ``value``."""
    if _kinds.get(type(value)) == 0:  # a leaf (an array): its own name
        return [prefix]
    # The key paths of a tree of builtin nodes (tuples, lists, dicts, namedtuples, None)
    # follow from its structure alone: worked out once per structure.
    node = tree_flatten(value)[1]._node
    try:
        suffixes = _suffixes.get(node)
    except TypeError:  # an unhashable node (a custom node's auxiliary data)
        suffixes = None
    if suffixes is None:
        paths, _ = tree_flatten_with_path(value)
        suffixes = [keystr(path) for path, _ in paths]
        if _builtin_nodes(node):
            if len(_suffixes) >= 1024:
                _suffixes.clear()
            _suffixes[node] = suffixes
    return [prefix + s for s in suffixes]


_suffixes: dict = {}  # a structure's node -> its leaves' key paths, printed


def _builtin_nodes(node) -> bool:
    if node[0] == 6:  # a registered (custom) node: its keys may depend on its value
        return False
    try:
        hash(node)
    except TypeError:
        return False
    return all(_builtin_nodes(c) for c in node[2])


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_plain_bindings: dict = {}  # (id(signature), number of arguments) -> (signature, names)


def plain_binding(sig: inspect.Signature, args, kwargs):
    """``sig.bind(*args, **kwargs).arguments.items()`` when that binding is plain -- no
    keywords, each argument to one leading positional parameter, the parameters left all
    defaulted or variadic (so not in ``arguments``) -- else None (bind it). What a traced
    function's call nearly always is, worked out once per signature and argument count
    (``Signature.bind`` costs microseconds a call)."""
    if kwargs or type(sig) is not inspect.Signature:
        return None
    n = len(args)
    key = (id(sig), n)
    hit = _plain_bindings.get(key)
    if hit is None or hit[0] is not sig:
        params = list(sig.parameters.values())
        names = None
        if n <= len(params) and all(p.kind in _POSITIONAL for p in params[:n]) and all(
                p.kind in _VARIADIC or p.default is not inspect.Parameter.empty
                for p in params[n:]):
            names = tuple(p.name for p in params[:n])
        if len(_plain_bindings) >= 1024:
            _plain_bindings.clear()
        hit = _plain_bindings[key] = (sig, names)  # (keeps sig alive: its id stays its own)
    names = hit[1]
    return None if names is None else zip(names, args)


def bound_leaf_names(sig: inspect.Signature, bound: inspect.BoundArguments) -> list[str]:
    """The leaf names of every bound argument (``*args`` entries as ``args[j]``, ``**kwargs``
    entries as ``kwargs['k']``)."""
    names = []
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            for j, v in enumerate(value):
                names += leaf_names(f"{name}[{j}]", v)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            for k, v in value.items():
                names += leaf_names(f"{name}['{k}']", v)
        else:
            names += leaf_names(name, value)
    return names


class names_once:
    """``with names_once(owner, args, kwargs):`` while the block runs, ``owner._arg_names``
    of these very argument objects answers from a memo (a jit's trace names its arguments
    once, not once for each message, hook and debug info); nothing of the arguments is kept
    after the block. (A class, not a generator context manager: it runs once per trace.)"""

    __slots__ = ("owner", "mine")

    def __init__(self, owner, args, kwargs):
        self.owner = owner
        self.mine = owner._names_memo is None  # else an enclosing block's memo serves
        if self.mine:
            owner._names_memo = (args, kwargs, owner._arg_names(args, kwargs))

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        if self.mine:
            self.owner._names_memo = None
        return False


def naming_once(method):
    """``method(self, *args, **kwargs)`` run inside ``names_once``."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if self._names_memo is not None:  # an enclosing block's memo serves
            return method(self, *args, **kwargs)
        self._names_memo = (args, kwargs, self._arg_names(args, kwargs))
        try:
            return method(self, *args, **kwargs)
        finally:
            self._names_memo = None
    return wrapper


def memo_hit(owner, args, kwargs):
    """The names ``names_once`` holds for the same argument objects, or None."""
    memo = owner._names_memo
    if memo is None:
        return None
    m_args, m_kwargs, names = memo
    if (len(m_args) == len(args) and all(map(operator.is_, m_args, args))
            and m_kwargs.keys() == kwargs.keys()
            and all(m_kwargs[k] is v for k, v in kwargs.items())):
        return names
    return None

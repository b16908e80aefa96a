"""``traxla.extend.source_info_util``: where traced equations come from
(``jax.extend.source_info_util``). ``register_exclusion(path)`` makes a library's own frames
invisible to the source lines recorded in jaxprs and error messages; the name-stack
contexts (``extend_name_stack``, ``set_name_stack``, ``transform_name_stack``,
``reset_name_stack``) name the operations traced inside, as ``named_scope`` does (the names
reach the StableHLO locations and the compiled HLO's ``op_name``)."""
from __future__ import annotations

import contextlib
import functools
from typing import NamedTuple

from traxla.ir.jaxpr import SourceInfo, name_stack as _name_stack
from traxla.tracer.traces import register_exclusion, source_info_context, user_source_info


class Scope(NamedTuple):
    name: str

    def wrap(self, stack: list):
        stack.append(self.name)


class Transform(NamedTuple):
    name: str

    def wrap(self, stack: list):
        if stack:
            stack[-1] = f"{self.name}({stack[-1]})"
        else:
            stack.append(f"{self.name}()")


class NameStack:
    """Scopes and transformations, outermost first; ``str`` gives ``jvp(outer)/inner``."""

    __slots__ = ("stack",)

    def __init__(self, stack: tuple = ()):
        self.stack = tuple(stack)

    def extend(self, name: str) -> "NameStack":
        return NameStack((*self.stack, Scope(name)))

    def transform(self, transform_name: str) -> "NameStack":
        return NameStack((*self.stack, Transform(transform_name)))

    def __getitem__(self, idx: slice) -> "NameStack":
        return NameStack(self.stack[idx])

    def __len__(self):
        return len(self.stack)

    def __add__(self, other: "NameStack") -> "NameStack":
        return NameStack(self.stack + other.stack)

    def __radd__(self, other: "NameStack") -> "NameStack":
        return NameStack(other.stack + self.stack)

    def __eq__(self, other):
        return isinstance(other, NameStack) and self.stack == other.stack

    def __hash__(self):
        return hash(self.stack)

    def __str__(self) -> str:
        scope: list = []
        for elem in self.stack[::-1]:
            elem.wrap(scope)
        return "/".join(reversed(scope))

    def __repr__(self):
        return f"NameStack(stack={self.stack!r})"


def new_name_stack(name: str = "") -> NameStack:
    return NameStack().extend(name) if name else NameStack()


def _as_scopes(stack: NameStack) -> tuple:
    """A NameStack as the scopes traxla records (plain names when it has no transforms)."""
    if all(type(e) is Scope for e in stack.stack):
        return tuple(e.name for e in stack.stack)
    text = str(stack)
    return (text,) if text else ()


def current_name_stack() -> NameStack:
    """The scopes operations are recorded under now."""
    return NameStack(tuple(Scope(s) for s in _name_stack.scopes))


class _NameStackContext:
    """Sets the thread's scopes to ``make(current)`` inside; usable as a decorator."""

    __slots__ = ("prev",)

    def _new(self) -> NameStack:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self):
        self.prev = _name_stack.scopes
        new = self._new()
        _name_stack.scopes = _as_scopes(new)
        return new

    def __exit__(self, *exc):
        _name_stack.scopes = self.prev

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with type(self)(self._arg()):
                return func(*args, **kwargs)
        return wrapper


class extend_name_stack(_NameStackContext):  # noqa: N801 - JAX's name
    """Operations inside are recorded under one more scope ``name``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def _arg(self):
        return self.name

    def _new(self):
        return current_name_stack().extend(self.name)


class set_name_stack(_NameStackContext):  # noqa: N801
    """Operations inside are recorded under ``name_stack`` (replacing the current one)."""

    __slots__ = ("name_stack",)

    def __init__(self, name_stack: NameStack):
        self.name_stack = name_stack

    def _arg(self):
        return self.name_stack

    def _new(self):
        return self.name_stack


class transform_name_stack(_NameStackContext):  # noqa: N801
    """Operations inside are recorded as under the transformation ``name``
    (``jvp(outer)/...``)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def _arg(self):
        return self.name

    def _new(self):
        return current_name_stack().transform(self.name)


@contextlib.contextmanager
def reset_name_stack():
    """Operations inside are recorded under no scope."""
    with set_name_stack(NameStack()):
        yield


def current() -> SourceInfo | None:
    """The SourceInfo of the caller's user frame (None when there is none: traxla's own
    code all the way down)."""
    return user_source_info(3)


def new_source_info() -> SourceInfo:
    """A SourceInfo pointing nowhere (no code), under no scope."""
    return SourceInfo(None, 0)


def summarize(source_info: SourceInfo | None, num_frames=1) -> str:
    """``file:line:column (function)`` of an equation's source ('' when it has none)."""
    if source_info is None or source_info.code is None:
        return ""
    return source_info.summary()


class user_context:  # noqa: N801 - JAX's name
    """Operations inside are recorded as coming from ``traceback`` (an equation's
    ``source_info``, as re-evaluating a jaxpr keeps each equation's origin; None: from
    where they are), under ``name_stack`` when given."""

    __slots__ = ("traceback", "name_stack", "prev", "inner")

    def __init__(self, traceback, *, name_stack: NameStack | None = None):
        self.traceback = traceback
        self.name_stack = name_stack

    def __enter__(self):
        self.prev = _name_stack.scopes
        if self.name_stack is not None:
            ns = self.name_stack
            _name_stack.scopes = _as_scopes(ns) if isinstance(ns, NameStack) else tuple(ns)
        tb = self.traceback
        self.inner = (source_info_context(tb) if isinstance(tb, SourceInfo)
                      and tb.code is not None else None)
        if self.inner is not None:
            self.inner.__enter__()

    def __exit__(self, *exc):
        try:
            if self.inner is not None:
                self.inner.__exit__(*exc)
        finally:
            _name_stack.scopes = self.prev


__all__ = ["NameStack", "SourceInfo", "current", "current_name_stack", "extend_name_stack",
           "new_name_stack", "new_source_info", "register_exclusion", "reset_name_stack",
           "set_name_stack", "summarize", "transform_name_stack", "user_context"]

"""Key paths: the entries that name a child of a pytree node (``[0]``, ``['w']``,
``.name``, ``[<flat index 0>]``) and ``keystr``."""
from __future__ import annotations

from typing import Any, Iterable, TypeVar

KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyLeafPair = tuple[KeyEntry, Any]
KeyLeafPairs = Iterable[KeyLeafPair]
KeyPath = tuple[KeyEntry, ...]


class _KeyEntry:
    """What the key-path entry types share: one immutable field (its name is the
    class's ``__match_args__``), equality and hash by exact type and value, pickling."""

    __slots__ = ("_value",)
    __match_args__: tuple[str]
    _str_format: str

    def _set(self, value, value_type=None, type_name=""):
        if value_type is not None and not isinstance(value, value_type):
            raise TypeError(f"{type(self).__name__} {self.__match_args__[0]} must be "
                            f"{type_name}, got {value!r}")
        object.__setattr__(self, "_value", value)

    def _get(self):
        return self._value

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __str__(self):
        return self._str_format.format(self._value)

    def __repr__(self):
        return f"{type(self).__name__}({self.__match_args__[0]}={self._value!r})"

    def __eq__(self, other):
        if type(other) is not type(self):
            return False
        return self._value == other._value

    def __hash__(self):
        return hash((type(self), self._value))

    def __reduce__(self):
        return (type(self), (self._value,))


class SequenceKey(_KeyEntry):
    """Key-path entry for an element of a tuple or list: ``[idx]``."""

    __slots__ = ()
    __match_args__ = ("idx",)
    _str_format = "[{!r}]"
    idx = property(_KeyEntry._get)

    def __init__(self, idx: int):
        self._set(idx, int, "an int")


class DictKey(_KeyEntry):
    """Key-path entry for a mapping value: ``[key]`` (key shown with repr)."""

    __slots__ = ()
    __match_args__ = ("key",)
    _str_format = "[{!r}]"
    key = property(_KeyEntry._get)

    def __init__(self, key):
        self._set(key)


class GetAttrKey(_KeyEntry):
    """Key-path entry for an attribute: ``.name``."""

    __slots__ = ()
    __match_args__ = ("name",)
    _str_format = ".{}"
    name = property(_KeyEntry._get)

    def __init__(self, name: str):
        self._set(name, str, "a str")


class FlattenedIndexKey(_KeyEntry):
    """Key-path entry for the i-th child of a node registered without keys."""

    __slots__ = ()
    __match_args__ = ("key",)
    _str_format = "[<flat index {}>]"
    key = property(_KeyEntry._get)

    def __init__(self, key: int):
        self._set(key, int, "an int")


_KEY_TYPES = (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey)


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """Pretty-print a key path, e.g. ``"['layers'][0].w"``.

    With ``simple=True`` each entry is rendered as its bare value
    (``layers/0/w`` with ``separator='/'``).
    """
    return separator.join(map(_simple_entrystr if simple else str, keys))


def _simple_entrystr(key) -> str:
    if type(key) in _KEY_TYPES:
        return str(key._value)
    return str(key)

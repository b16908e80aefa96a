"""The jaxpr data structures: Var, Literal, DropVar, JaxprEqn, Jaxpr, ClosedJaxpr."""
from __future__ import annotations

import gc
import threading
from operator import attrgetter, itemgetter

import numpy as np

from traxla.ir.avals import ShapedArray


class Var:
    """A jaxpr variable; identity is the variable, the name comes at print time."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):  # JAX's: the aval's str_short with its long dtype name, int32[]
        return f"Var(id={id(self)}):{self.aval.str_short(short_dtypes=False)}"


class DropVar(Var):
    """An output binder whose value is never read; prints as ``_``."""

    __slots__ = ()

    def __repr__(self):
        return "_"


class Literal:
    """A scalar constant inlined into an equation, printed as ``2.0:f32[]``."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        # JAX keeps a weakly typed Python int or complex as a TypedInt/TypedComplex, whose
        # str is its repr (a float's TypedFloat prints as the float)
        aval = self.aval
        if aval.weak_type and not np.shape(self.val) and aval.dtype.kind in "iuc":
            kind = "TypedComplex" if aval.dtype.kind == "c" else "TypedInt"
            value = complex(self.val) if aval.dtype.kind == "c" else int(self.val)
            return f"Literal({kind}({value}, dtype={aval.dtype.name}))"
        return f"Literal({self.val})"

    def pretty(self) -> str:
        if np.shape(self.val):
            return f"[...]:{self.aval.str_short()}"
        return f"{np.asarray(self.val).item()}:{self.aval.str_short()}"


class _NameStack(threading.local):
    """The scopes (``named_scope``, ``named_call``) active in this thread, outermost first."""

    def __init__(self):
        self.scopes: tuple = ()


name_stack = _NameStack()


_positions: dict = {}  # id(code) -> (code, the column of each of its instructions)
_column_of = itemgetter(2)


class SourceInfo:
    """Where an equation came from: a user frame's code object and instruction, and
    the named scopes it was recorded under.

    Capturing is a few attribute reads per equation; the file, line, column and
    function name are resolved only when a message (or a location) needs them.
    """

    __slots__ = ("code", "lasti", "_line", "name_stack")

    def __init__(self, code, lasti: int, line: int | None = None, name_stack: tuple = ()):
        self.code, self.lasti, self._line = code, lasti, line
        self.name_stack = name_stack

    @property
    def line(self) -> int:
        """The line of instruction ``lasti`` (what the frame's ``f_lineno`` said)."""
        line = self._line
        if line is None:
            line = self.code.co_firstlineno
            for start, end, number in self.code.co_lines():
                if start <= self.lasti < end:
                    if number is not None:
                        line = number
                    break
            self._line = line
        return line

    @property
    def file(self) -> str:
        return self.code.co_filename

    @property
    def function(self) -> str:
        return self.code.co_name

    @property
    def column(self):
        """The column of instruction ``lasti``: a code object's positions are listed once
        (walking them cost tens of microseconds a location in a long function)."""
        code = self.code
        hit = _positions.get(id(code))
        if hit is None or hit[0] is not code:
            if len(_positions) > 1024:
                _positions.clear()
            hit = _positions[id(code)] = (code, tuple(map(_column_of, code.co_positions())))
        columns, i = hit[1], self.lasti // 2
        return columns[i] if i < len(columns) else None

    def __str__(self):
        col = self.column
        where = f"{self.file}:{self.line}" + (f":{col}" if col is not None else "")
        return f"{where} ({self.function})"

    def summary(self) -> str:
        """JAX's ``source_info_util.summarize``: ``file:line:column (qualified function
        name)``, without a column 0."""
        col = self.column
        where = f"{self.file}:{self.line}" + (f":{col}" if col else "")
        return f"{where} ({getattr(self.code, 'co_qualname', self.function)})"


class JaxprEqn:
    __slots__ = ("invars", "outvars", "primitive", "params", "source_info")

    def __init__(self, invars, outvars, primitive, params, source_info=None):
        self.invars = invars
        self.outvars = outvars
        self.primitive = primitive
        self.params = params
        self.source_info = source_info

    @property
    def effects(self) -> frozenset:
        """The effects of this equation (JAX's ``eqn.effects``), from its primitive's rule."""
        return _ir_effects.eqn_effects(self)

    def replace(self, **kwargs) -> "JaxprEqn":
        fields = {k: getattr(self, k) for k in self.__slots__}
        fields.update(kwargs)
        return JaxprEqn(**fields)

    def __str__(self):
        return _ir_jaxpr_printer.pp_eqn_text(self)


class Jaxpr:
    __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info", "effects_memo",
                 "nested_memo")

    def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.debug_info = debug_info
        self.effects_memo = None  # (number of equations, effects): see ir/effects.py
        self.nested_memo = None  # (number of equations, equations with jaxprs): see below

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    @property
    def effects(self) -> frozenset:
        return _ir_effects.jaxpr_effects(self)

    def __str__(self):
        return _ir_jaxpr_printer.pp_toplevel(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with its constants bound."""

    __slots__ = ("jaxpr", "consts", "__weakref__")  # weakref: keys of transformation caches

    def __init__(self, jaxpr: Jaxpr, consts=()):
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self):
        return self.jaxpr.in_avals

    @property
    def out_avals(self):
        return self.jaxpr.out_avals

    @property
    def literals(self):
        """JAX's other name for ``consts``."""
        return self.consts

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def effects(self) -> frozenset:
        return self.jaxpr.effects

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__


class DebugInfo:
    """What error messages need about the traced function."""

    __slots__ = ("traced_for", "func_src_info", "arg_names", "func_name", "result_paths")

    def __init__(self, traced_for: str, func_name: str, func_src_info: str | None, arg_names,
                 result_paths=None):
        self.traced_for = traced_for
        self.func_name = func_name
        self.func_src_info = func_src_info
        self.arg_names = None if arg_names is None else tuple(arg_names)
        self.result_paths = result_paths  # JAX's: a tuple of paths, a thunk, or None

    def safe_arg_names(self, expected_count: int) -> tuple:
        """The argument names, or empty names when unknown (JAX's ``safe_arg_names``)."""
        if self.arg_names is None:
            return ("",) * expected_count
        if len(self.arg_names) != expected_count:
            raise AssertionError((expected_count, self))
        return self.arg_names

    def __repr__(self):
        return (f"DebugInfo(traced_for={self.traced_for!r}, func_src_info="
                f"{self.func_src_info!r}, arg_names={self.arg_names!r}, "
                f"result_paths={self.result_paths!r})")


def has_subjaxprs(params: dict) -> bool:
    """Whether ``subjaxprs(params)`` yields anything: a loop, not a generator, because
    the whole-program passes before lowering ask it of every equation."""
    for value in params.values():
        kind = type(value)
        if kind is tuple:  # axes, shapes, dimension numbers... or branches
            if not _JAXPR_TYPE_SET.isdisjoint(map(type, value)):
                return True
        elif kind in _JAXPR_TYPE_SET or (isinstance(value, tuple) and any(
                isinstance(item, _JAXPR_TYPES) for item in value)):  # a named tuple of jaxprs
            return True
    return False


def any_subjaxprs(eqns) -> bool:
    """Whether any of ``eqns`` carries a jaxpr in its params (as ``has_subjaxprs``): C-level
    passes over the param values and the items of tuple values, for the whole-program
    walks before lowering (most programs have no nested jaxpr, or a few)."""
    # what the params dicts refer to: their values (and keys); then what those refer to:
    # a tuple's items (and more: a false positive only costs the exact per-equation look)
    values = gc.get_referents(*map(_params_of, eqns))
    if not _JAXPR_TYPE_SET.isdisjoint(map(type, values)):
        return True
    return not _JAXPR_TYPE_SET.isdisjoint(map(type, gc.get_referents(*values)))


def eqns_with_subjaxprs(jaxpr) -> list:
    """The equations of ``jaxpr`` that carry jaxprs in their params, remembered on the
    jaxpr (the refs check and the effects walk before lowering both ask)."""
    eqns = jaxpr.eqns
    memo = getattr(jaxpr, "nested_memo", None)
    if memo is not None and memo[0] == len(eqns):
        return memo[1]
    out = ([e for e in eqns if e.params and has_subjaxprs(e.params)]
           if any_subjaxprs(eqns) else [])
    try:
        jaxpr.nested_memo = (len(eqns), out)
    except AttributeError:  # a jaxpr-like object without the slot
        pass
    return out


def subjaxprs(params: dict) -> list:
    """The jaxprs carried in an equation's params, in param order. (A list, not a
    generator: whole-program passes call this once per equation, and most have none.)"""
    found = []
    for value in params.values():
        if type(value) in _PLAIN_PARAM_TYPES:
            continue
        if isinstance(value, _JAXPR_TYPES):
            found.append(value.jaxpr if isinstance(value, ClosedJaxpr) else value)
        elif isinstance(value, tuple):  # tuples and named tuples of jaxprs (custom_linear_solve)
            for item in value:
                if isinstance(item, _JAXPR_TYPES):
                    found.append(item.jaxpr if isinstance(item, ClosedJaxpr) else item)
    return found


_JAXPR_TYPES = (Jaxpr, ClosedJaxpr)
_PLAIN_PARAM_TYPES = frozenset((type(None), bool, int, float, str))
_params_of = attrgetter("params")
_JAXPR_TYPE_SET = frozenset(_JAXPR_TYPES)

import traxla.ir.jaxpr_printer as _ir_jaxpr_printer  # noqa: E402  (it imports this module: bound once both are defined)
import traxla.ir.effects as _ir_effects  # noqa: E402  (it imports this module: bound once both are defined)

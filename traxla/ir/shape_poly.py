"""Symbolic dimensions for shape-polymorphic export: ``symbolic_shape("b, 4")``.

A dimension expression is a polynomial with integer coefficients over named dimension
variables (``b``, ``2*b``, ``b*c + 1``), as JAX's ``_DimExpr``. It can stand in an aval's
shape; arithmetic on it stays symbolic, and asking for a Python ``int`` raises
``InconclusiveDimensionOperation`` (JAX's error). Printed as JAX prints it, so that the
serialized shapes (``"b"``, ``"2*b"``) read back in either library.
"""
from __future__ import annotations

import ast
import operator

import numpy as np

from traxla.ir import shape_poly_decision as _dec

from traxla.errors import InconclusiveDimensionOperation  # one class, as jax.errors'




def _norm(terms: dict) -> tuple:
    return _dec.sorted_terms(terms)


class DimExpr:
    """``sum(coeff * prod(vars))``; ``terms`` maps a sorted tuple of variable names (the
    monomial; ``()`` for the constant) to its coefficient. Every expression belongs to a
    ``SymbolicScope`` (its constraints); expressions of different scopes do not mix."""

    __slots__ = ("_terms", "_hash", "_scope")

    def __init__(self, terms, scope=None):
        self._terms = _norm(dict(terms))
        self._scope = _DEFAULT_SCOPE if scope is None else scope
        self._hash = hash((self._terms, id(self._scope)))

    @staticmethod
    def var(name: str, scope=None) -> "DimExpr":
        return DimExpr({(name,): 1}, scope)

    @property
    def scope(self) -> "SymbolicScope":
        return self._scope

    # -- structure --------------------------------------------------------------------
    def _dict(self) -> dict:
        return dict(self._terms)

    @property
    def variables(self) -> set:
        """The dimension variables it depends on (inside ``floordiv``/``max``/... too)."""
        out = set()
        for m, _ in self._terms:
            for v in m:
                op = self._scope._ops.get(v)
                if op is None:
                    out.add(v)
                else:
                    for x in op[1:]:
                        if isinstance(x, DimExpr):
                            out |= x.variables
        return out

    def _as_const(self):
        if not self._terms:
            return 0
        if len(self._terms) == 1 and self._terms[0][0] == ():
            return self._terms[0][1]
        return None

    # -- arithmetic ------------------------------------------------------------------
    def _lift(self, x, when="") -> "DimExpr":
        if isinstance(x, DimExpr):
            self._scope._check_same_scope(x, when or f"for an operation with '{self}'")
            return x
        return DimExpr({(): operator.index(x)}, self._scope)

    def _wrap(self, terms: dict):
        return self._scope._make(terms)

    def __add__(self, other):
        try:
            other = self._lift(other)
        except TypeError:
            return self._as_value_op('__add__', other)
        t = self._dict()
        for m, c in other._terms:
            t[m] = t.get(m, 0) + c
        return self._wrap(t)

    __radd__ = __add__

    def _as_value_op(self, op, other):
        """``self op other`` for a non-integer ``other`` (a float, an array, a tracer): on
        the dimension's value, as JAX's ``__jax_array__`` fallback."""
        out = getattr(self.__jax_array__(), op)(other)
        if out is NotImplemented:
            raise TypeError(f"unsupported operand types for {op}: 'DimExpr' and "
                            f"'{type(other).__name__}'")
        return out

    def __jax_array__(self):
        """The dimension as a traced integer value (JAX's ``dimension_as_value``)."""
        from traxla.ir.rules.export import dim_as_value_p
        return dim_as_value_p.bind(dim=self)

    dimension_as_value = __jax_array__

    def __truediv__(self, other):
        return self._as_value_op("__truediv__", other)

    def __rtruediv__(self, other):
        return self._as_value_op("__rtruediv__", other)

    def __neg__(self):
        return self._wrap({m: -c for m, c in self._terms})

    def __sub__(self, other):
        try:
            other = self._lift(other)
        except TypeError:
            return self._as_value_op('__sub__', other)
        return self + (-other)

    def __rsub__(self, other):
        try:
            other = self._lift(other)
        except TypeError:
            return self._as_value_op('__rsub__', other)
        return other + (-self)

    def __mul__(self, other):
        try:
            other = self._lift(other)
        except TypeError:
            return self._as_value_op('__mul__', other)
        t: dict = {}
        for m1, c1 in self._terms:
            for m2, c2 in other._terms:
                m = tuple(sorted(m1 + m2))
                t[m] = t.get(m, 0) + c1 * c2
        return self._wrap(t)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        try:
            return self.divmod(other)[0]
        except TypeError:
            return self._as_value_op('__floordiv__', other)

    def __mod__(self, other):
        try:
            return self.divmod(other)[1]
        except TypeError:
            return self._as_value_op('__mod__', other)

    def __divmod__(self, other):
        try:
            return self.divmod(other)
        except TypeError:
            return self._as_value_op('__divmod__', other)

    def __rfloordiv__(self, other):
        try:
            return self._lift(other).divmod(self)[0]
        except TypeError:
            return self._as_value_op('__rfloordiv__', other)

    def __rmod__(self, other):
        try:
            return self._lift(other).divmod(self)[1]
        except TypeError:
            return self._as_value_op('__rmod__', other)

    def __rdivmod__(self, other):
        try:
            return self._lift(other).divmod(self)
        except TypeError:
            return self._as_value_op('__rdivmod__', other)

    def divmod(self, other):
        """``(quotient, remainder)``, JAX's: polynomial long division, exact but for a
        constant remainder by a constant divisor; otherwise the symbolic expressions
        ``floordiv(self, other)`` and ``mod(self, other)``."""
        other = self._lift(other)
        c = other._as_const()
        if c == 0:
            raise ZeroDivisionError(f"Symbolic dimension '{self}' divided by 0")
        dividend, quotient = self, 0
        try:
            while isinstance(dividend, DimExpr) and dividend._as_const() is None:
                mon, count = dividend._terms[0]
                if c is None:
                    dmon, dcount = other._terms[0]
                    rest = list(mon)
                    for v in dmon:
                        if v not in rest:
                            raise InconclusiveDimensionOperation("")
                        rest.remove(v)
                    qmon = tuple(rest)
                else:
                    qmon, dcount = mon, c
                qcount, rcount = divmod(count, dcount)
                if rcount:
                    raise InconclusiveDimensionOperation("")
                q = self._wrap({qmon: qcount})
                quotient = quotient + q
                dividend = dividend - q * other
            dividend = int(dividend) if not isinstance(dividend, DimExpr) else \
                dividend._as_const()
            if c is None:
                if dividend != 0:
                    raise InconclusiveDimensionOperation("")
                return quotient, 0
            q, r = divmod(dividend, c)
            return quotient + q, r
        except InconclusiveDimensionOperation:
            return (self._scope._op("floordiv", self, other._as_const_or_self()),
                    self._scope._op("mod", self, other._as_const_or_self()))

    def _as_const_or_self(self):
        c = self._as_const()
        return self if c is None else c

    # -- comparison --------------------------------------------------------------------
    def __eq__(self, other):
        if isinstance(other, DimExpr):
            return self._scope is other._scope and self._terms == other._terms
        try:
            return self._as_const() == operator.index(other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        return self._hash

    def __ge__(self, other):
        return _geq_decision(self, other, lambda: f"'{self}' >= '{other}'")

    def __le__(self, other):
        return _geq_decision(other, self, lambda: f"'{self}' <= '{other}'")

    def __gt__(self, other):
        return not _geq_decision(other, self, lambda: f"'{self}' > '{other}'")

    def __lt__(self, other):
        return not _geq_decision(self, other, lambda: f"'{self}' < '{other}'")

    def max(self, other):
        """``max(self, other)`` when the constraints decide it (JAX's ``_DimExpr.max``)."""
        return _max_min(self, other, True)

    def min(self, other):
        return _max_min(self, other, False)

    def rmax(self, other):
        """``max(other, self)`` (the operands in that order when it stays symbolic)."""
        return _max_min(self, other, True, swap=True)

    def rmin(self, other):
        return _max_min(self, other, False, swap=True)

    def __int__(self):
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used where a concrete integer is needed (e.g. "
            "converted to a Python int or a NumPy array). See "
            "https://docs.jax.dev/en/latest/export/shape_poly.html#computing-with-dimension-"
            "variables.")



    def __bool__(self):
        return True  # a dimension is never 0 (variables are >= 1)

    # -- evaluation ----------------------------------------------------------------------
    def evaluate(self, env: dict):
        """Its value with each variable taken from ``env`` (ints, or values supporting
        ``+`` and ``*`` such as emitted scalars)."""
        total = None
        ops = self._scope._ops
        for m, c in self._terms:
            term = None
            for v in m:
                val = env[v] if v not in ops else _apply_op(ops[v], env)
                term = val if term is None else term * val
            if term is None:
                term = c
            elif c != 1:
                term = term * c
            total = term if total is None else total + term
        return 0 if total is None else total

    def __str__(self):
        parts = []
        for m, c in self._terms:
            mono = "*".join(v if e == 1 else f"{v}^{e}" for v, e in _dec.monomial_factors(m))
            if not m:
                s = str(abs(c))
            elif abs(c) == 1:
                s = mono
            else:
                s = f"{abs(c)}*{mono}"
            if not parts:
                parts.append(s if c > 0 else f"- {s}" if m else str(c))
            else:
                parts.append(("+ " if c > 0 else "- ") + s)
        return " ".join(parts) if parts else "0"

    __repr__ = __str__


def _quick_geq0(terms):
    """``terms >= 0`` for every value >= 1 of the variables, decided from the signs of the
    coefficients alone: True, False, or None when that does not decide (sound under any
    constraints, which only narrow the values)."""
    coeffs = [c for m, c in terms if m]
    if any("(" in v for m, _ in terms for v in m):  # floordiv/mod/max/min may be < 1
        return None
    at_ones = sum(c for _, c in terms)  # the value with every variable at 1
    if all(c >= 0 for c in coeffs) and at_ones >= 0:  # smallest at ones
        return True
    if all(c <= 0 for c in coeffs) and at_ones < 0:  # largest at ones
        return False
    return None


def bounds(e, prec=_dec.BEST):
    """The lower and upper bounds of ``e`` (ints, or -inf/inf) under its scope's
    constraints, as tight as the procedure finds at precision ``prec``."""
    if not isinstance(e, DimExpr):
        return int(e), int(e)
    scope = e._scope
    hit = scope._bounds_cache.get(e._terms)
    if hit is not None:
        lb, ub, p = hit
        if _dec._sufficient(prec, lb, ub) or p >= prec:
            return lb, ub
    decision = scope._decision().copy()
    try:
        lb, ub = decision.bounds(e._terms, prec, add_implicit=True)
    except _dec.Unsatisfiable as err:
        raise ValueError(str(err)) from None
    scope._bounds_cache[e._terms] = (lb, ub, prec)
    return lb, ub


def _geq_decision(e1, e2, describe) -> bool:
    if isinstance(e1, DimExpr):
        scope = e1._scope
        if isinstance(e2, DimExpr):
            scope._check_same_scope(e2, f"when comparing {describe()}")
        diff = e1 - e2
    elif isinstance(e2, DimExpr):
        scope = e2._scope
        diff = e1 - e2
    else:
        return operator.index(e1) >= operator.index(e2)
    if not isinstance(diff, DimExpr):
        return diff >= 0
    if scope._explicit and scope._initial is None:
        scope._decision()  # unsatisfiable constraints are reported at the first comparison
    quick = _quick_geq0(diff._terms)
    if quick is not None:
        return quick
    lb, ub = bounds(diff, _dec.FOR_GEQ0_OR_LT0)
    if lb >= 0:
        return True
    if ub < 0:
        return False
    where = f"\nUsing symbolic scope {scope}" if scope._explicit else ""
    raise InconclusiveDimensionOperation(
        f"Symbolic dimension comparison {describe()} is inconclusive.{where}")


def _max_min(e1, e2, is_max, swap=False):
    lb, ub = bounds(e1 - e2, _dec.FOR_GEQ0_OR_LEQ0)
    if lb >= 0:
        return e1 if is_max else e2
    if ub <= 0:
        return e2 if is_max else e1
    return e1._scope._op("max" if is_max else "min", *((e2, e1) if swap else (e1, e2)))


def _apply_op(op, env):
    """The value of ``floordiv``/``mod``/``max``/``min`` of evaluated operands (ints, or
    values with a ``dim_op(name, a, b)`` static method such as emitted scalars)."""
    name, a, b = op
    a = a.evaluate(env) if isinstance(a, DimExpr) else a
    b = b.evaluate(env) if isinstance(b, DimExpr) else b
    if isinstance(a, int) and isinstance(b, int) or isinstance(a, DimExpr) \
            or isinstance(b, DimExpr):
        if name == "floordiv":
            return a // b
        if name == "mod":
            return a % b
        if isinstance(a, DimExpr):
            return a.max(b) if name == "max" else a.min(b)
        if isinstance(b, DimExpr):
            return b.max(a) if name == "max" else b.min(a)
        return max(a, b) if name == "max" else min(a, b)
    cls = type(a) if not isinstance(a, int) else type(b)
    return cls.dim_op(name, a, b)


def max_dim(d1, d2):
    """``max(d1, d2)`` for constant and symbolic dimensions (JAX's ``core.max_dim``)."""
    if isinstance(d1, DimExpr):
        return d1.max(d2)
    if isinstance(d2, DimExpr):
        return d2.rmax(d1)
    return max(d1, d2)


def min_dim(d1, d2):
    if isinstance(d1, DimExpr):
        return d1.min(d2)
    if isinstance(d2, DimExpr):
        return d2.rmin(d1)
    return min(d1, d2)


def int_dtype_for_dim(d, *, signed=True):
    """An integer dtype that holds indices along a dimension of size ``d`` (JAX's
    ``lax_utils.int_dtype_for_dim``): the default one for a symbolic size."""
    from traxla.ir import dtypes
    if isinstance(d, DimExpr):
        return dtypes.default_int() if signed else dtypes.default_uint()
    if signed:
        return np.dtype(np.int64) if d > _INT32_MAX else np.dtype(np.int32)
    return np.dtype(np.uint64) if d > _UINT32_MAX else np.dtype(np.uint32)


def int_dtype_for_shape(shape, *, signed=True):
    """Likewise for indices into any dimension of ``shape``."""
    from traxla.ir import dtypes
    big = np.dtype(np.int64) if signed else np.dtype(np.uint64)
    for d in shape:
        if isinstance(d, DimExpr):
            return dtypes.default_int() if signed else dtypes.default_uint()
        if d > (_INT32_MAX if signed else _UINT32_MAX):
            return big
    return np.dtype(np.int32) if signed else np.dtype(np.uint32)


_INT32_MAX, _UINT32_MAX = 2**31 - 1, 2**32 - 1


def is_symbolic(d) -> bool:
    return isinstance(d, DimExpr)


class SymbolicScope:
    """Where dimension variables live and the constraints on them (JAX's): every variable
    is >= 1, and ``constraints_str`` adds ``e1 >= e2``, ``e1 <= e2`` or ``e1 == e2`` (an
    equality's left side is one term, ``k*t``, which expressions are then rewritten
    from)."""

    def __init__(self, constraints_str=()):
        if isinstance(constraints_str, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints_str!r}")
        self._explicit: list = []  # (cmp, diff terms, the constraint's text)
        self._rules: dict = {}  # monomial t -> (e, k): ``k*t == e``
        self._initial = None
        self._bounds_cache: dict = {}
        self._ops: dict = {}  # "floordiv(e1, e2)" -> ("floordiv", e1, e2): such a factor
        for c in constraints_str:
            self._parse_constraint(c)
        self._bounds_cache.clear()

    @property
    def constraints(self) -> tuple:
        return tuple(text for _, _, text in self._explicit)

    def __str__(self):
        if not self._explicit:
            return f"SymbolicScope({id(self)})"
        return (f"SymbolicScope({id(self)}) with constraints:"
                + "".join(f"\n  {text}" for _, _, text in self._explicit))

    __repr__ = __str__

    def _parse_constraint(self, text):
        if not isinstance(text, str):
            raise ValueError(f"SymbolicScope constraint must be a string: got {text!r}")
        for op in ("==", ">=", "<="):
            pos = text.find(op)
            if pos >= 0:
                break
        else:
            raise ValueError("Constraint parsing error: must contain one of '==' or '>=' or "
                             "'<='")
        e1, = symbolic_shape(text[:pos], scope=self)
        e2, = symbolic_shape(text[pos + 2:], scope=self)
        if op == "<=":
            e1, e2 = e2, e1
        diff = e1 - e2
        if not isinstance(diff, DimExpr):
            if diff < 0 or (op == "==" and diff != 0):
                raise ValueError(f"Unsatisfiable explicit constraint: {text}")
            return
        if op == "==":
            if not isinstance(e1, DimExpr) or len(e1._terms) != 1:
                raise ValueError(f"Invalid equality constraint: {e1} == {e2}. The "
                                 "left-hand-side must be of the form `term * coefficient`.")
            (t, k), = e1._terms
            if t in self._rules:
                raise NotImplementedError("Found multiple equality constraints with the same "
                                          f"left-hand-side: {DimExpr({t: 1}, self)}")
            self._rules[t] = (e2, k)
        self._explicit.append((_dec.EQ if op == "==" else _dec.GEQ, diff._terms, text))
        self._initial = None

    def _decision(self):
        if self._initial is None:
            try:
                self._initial = _dec.Decision.from_constraints(self._explicit, self._op_info)
            except _dec.Unsatisfiable as err:
                raise ValueError(str(err)) from None
        return self._initial

    def _check_same_scope(self, other, when=""):
        if other._scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\nExpected scope {self}\nand found "
                f"for '{other}' scope {other._scope}\nSee https://docs.jax.dev/en/latest/"
                "export/shape_poly.html#user-specified-symbolic-constraints.")

    def _op(self, name, a, b):
        """The factor ``name(a, b)`` (``floordiv``, ``mod``, ``max``, ``min``) as an
        expression: a variable named as JAX prints the factor, defined in this scope."""
        key = f"{name}({a}, {b})"
        if key not in _dec.OP_SIZES:
            _dec.OP_SIZES[key] = 1 + sum(
                _dec.expr_size(x._terms) if isinstance(x, DimExpr) else 1 for x in (a, b))
        self._ops.setdefault(key, (name, a, b))
        return self._make({(key,): 1})

    def _op_info(self, key):
        if isinstance(key, tuple):  # ("mod", "floordiv(a, b)"): make mod(a, b)
            _, a, b = self._ops[key[1]]
            return self._op("mod", a, b)._terms[0][0][0]
        op = self._ops.get(key)
        if op is None:
            return None
        name, a, b = op
        return name, *(x._terms if isinstance(x, DimExpr) else
                       (((), x),) if x else () for x in (a, b))

    def _make(self, terms: dict):
        """An expression (or int) from ``{monomial: coefficient}``, rewritten by the
        equality constraints."""
        if self._rules:
            terms = self._normalize(dict(terms))
        e = DimExpr(terms, self)
        c = e._as_const()
        return e if c is None else c

    def _normalize(self, terms: dict) -> dict:
        for t, k in list(terms.items()):
            if not k or not t:
                continue
            cands = [(t, ())] + [((v,) * t.count(v), tuple(x for x in t if x != v))
                                 for v in sorted(set(t)) if len(set(t)) > 1]
            for lhs, rest in cands:
                after, k_after = self._rules.get(lhs, (None, 0))
                if after is not None and k % k_after == 0:
                    terms[t] -= k
                    after_terms = (after._terms if isinstance(after, DimExpr)
                                   else (((), after),))
                    for m, c in after_terms:
                        m = tuple(sorted(m + rest))
                        terms[m] = terms.get(m, 0) + c * (k // k_after)
                    return terms
        return terms


_DEFAULT_SCOPE = SymbolicScope()


def is_constant_shape(shape) -> bool:
    return not any(isinstance(d, DimExpr) for d in shape)


def all_dim_vars(avals) -> list:
    """The dimension variables of ``avals``' shapes, sorted (JAX's order for dim args)."""
    names = set()
    for a in avals:
        for d in a.shape:
            if isinstance(d, DimExpr):
                names |= d.variables
    return sorted(names)


def _parse_dim(node, src: str, scope):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return scope._make({(node.id,): 1})
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_parse_dim(node.operand, src, scope)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _parse_dim(node.left, src, scope), _parse_dim(node.right, src, scope)
        return _BINOPS[type(node.op)](a, b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _CALLS and len(node.args) == 2 and not node.keywords:
        a, b = (_parse_dim(x, src, scope) for x in node.args)
        if not isinstance(a, DimExpr) and not isinstance(b, DimExpr):
            return _CALLS[node.func.id](a, b) if node.func.id in ("floordiv", "mod") \
                else (max if node.func.id == "max" else min)(a, b)
        if not isinstance(a, DimExpr):
            a = DimExpr({(): a}, scope)
        return _CALLS[node.func.id](a, b)
    raise ValueError(f"syntax error in symbolic shape {src!r}: unsupported dimension "
                     f"expression '{ast.unparse(node)}' (use integers, variable names, "
                     "+, -, *, //, %, floordiv, mod, max and min)")


def _power(a, k):
    if isinstance(k, DimExpr) or k < 0:
        raise ValueError(f"the exponent of '^' must be a non-negative integer, got {k}")
    out = 1
    for _ in range(k):
        out = a * out
    return out


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _power}
_CALLS = {"floordiv": operator.floordiv, "mod": operator.mod,
          "max": lambda a, b: a.max(b), "min": lambda a, b: a.min(b)}


def symbolic_shape(shape_spec: str | None, *, constraints=(), scope=None) -> tuple:
    """``symbolic_shape("b, 4")`` -> ``(b, 4)``: a shape whose entries are integers or
    dimension expressions (JAX's ``jax.export.symbolic_shape``). Without ``scope`` the
    expressions belong to a new ``SymbolicScope(constraints)``; with one they belong to it
    (and ``constraints`` must be empty)."""
    if shape_spec is not None and not isinstance(shape_spec, str):
        raise ValueError("polymorphic shape spec should be None or a string. "
                         f"Found {shape_spec!r}.")
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    if shape_spec is None:
        return ()
    spec = shape_spec.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    if not spec.strip():
        return ()
    if "**" in spec:
        raise ValueError(f"syntax error in symbolic shape {shape_spec!r}: use '^' for powers")
    try:
        tree = ast.parse(f"({spec.replace('^', '**')},)", mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"syntax error in symbolic shape {shape_spec!r}: {e.msg}") from None
    out = []
    for elt in tree.elts:
        if isinstance(elt, ast.Constant) and elt.value is ...:
            raise ValueError(f"symbolic shape {shape_spec!r}: '...' is only allowed in "
                             "symbolic_args_specs")
        d = _parse_dim(elt, shape_spec, scope)
        if not isinstance(d, DimExpr) and d < 0:
            raise ValueError(f"symbolic shape {shape_spec!r}: dimension {d} is negative")
        out.append(d)
    return tuple(out)


def solve_dim_vars(poly_shapes, concrete_shapes, describe) -> dict:
    """The value of each dimension variable, from the concrete shapes of the arguments
    (each variable must occur alone as some dimension, as in ``(b, 4)``; ``2*b`` is then
    checked). ``describe(i)`` names argument ``i`` for error messages."""
    env: dict = {}
    for i, (ps, cs) in enumerate(zip(poly_shapes, concrete_shapes)):
        for d, c in zip(ps, cs):
            if isinstance(d, DimExpr) and len(d._terms) == 1 and d._terms[0][1] == 1 \
                    and len(d._terms[0][0]) == 1:
                name = d._terms[0][0][0]
                if name in env and env[name] != c:
                    raise ValueError(
                        f"Found inconsistency between dimension size args[{i}].shape = {cs} "
                        f"and the specification '{d}' (= {env[name]} from an earlier "
                        f"argument) for {describe(i)}.")
                env[name] = c
    for i, (ps, cs) in enumerate(zip(poly_shapes, concrete_shapes)):
        for d, c in zip(ps, cs):
            if isinstance(d, DimExpr):
                missing = d.variables - env.keys()
                if missing:
                    raise ValueError(f"dimension variables {sorted(missing)} of {describe(i)} "
                                     "cannot be solved from the argument shapes (each must "
                                     "occur alone as some argument dimension)")
                v = d.evaluate(env)
                if v != c or any(env[n] < 1 for n in d.variables):
                    raise ValueError(
                        f"Input shapes do not match the polymorphic shapes specification. "
                        f"Expected value >= 1 and {d} == {c} for {describe(i)} "
                        f"(shape {tuple(cs)}; dimension variables {env}).")
    return env


def evaluate_shape(shape, env: dict) -> tuple:
    return tuple(d.evaluate(env) if isinstance(d, DimExpr) else d for d in shape)

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

from traxla.errors import InconclusiveDimensionOperation  # one class, as jax.errors'




def _norm(terms: dict) -> tuple:
    return tuple(sorted(((m, c) for m, c in terms.items() if c != 0),
                        key=lambda mc: (-len(mc[0]), mc[0])))


class DimExpr:
    """``sum(coeff * prod(vars))``; ``terms`` maps a sorted tuple of variable names (the
    monomial; ``()`` for the constant) to its coefficient."""

    __slots__ = ("_terms", "_hash")

    def __init__(self, terms):
        self._terms = _norm(dict(terms))
        self._hash = hash(self._terms)

    @staticmethod
    def var(name: str) -> "DimExpr":
        return DimExpr({(name,): 1})

    # -- structure --------------------------------------------------------------------
    def _dict(self) -> dict:
        return dict(self._terms)

    @property
    def variables(self) -> set:
        return {v for m, _ in self._terms for v in m}

    def _as_const(self):
        if not self._terms:
            return 0
        if len(self._terms) == 1 and self._terms[0][0] == ():
            return self._terms[0][1]
        return None

    # -- arithmetic ------------------------------------------------------------------
    @staticmethod
    def _lift(x) -> "DimExpr":
        if isinstance(x, DimExpr):
            return x
        return DimExpr({(): operator.index(x)})

    @staticmethod
    def _wrap(terms: dict):
        e = DimExpr(terms)
        c = e._as_const()
        return e if c is None else c

    def __add__(self, other):
        try:
            other = DimExpr._lift(other)
        except TypeError:
            return NotImplemented
        t = self._dict()
        for m, c in other._terms:
            t[m] = t.get(m, 0) + c
        return DimExpr._wrap(t)

    __radd__ = __add__

    def __neg__(self):
        return DimExpr._wrap({m: -c for m, c in self._terms})

    def __sub__(self, other):
        return self + (-DimExpr._lift(other))

    def __rsub__(self, other):
        return DimExpr._lift(other) + (-self)

    def __mul__(self, other):
        try:
            other = DimExpr._lift(other)
        except TypeError:
            return NotImplemented
        t: dict = {}
        for m1, c1 in self._terms:
            for m2, c2 in other._terms:
                m = tuple(sorted(m1 + m2))
                t[m] = t.get(m, 0) + c1 * c2
        return DimExpr._wrap(t)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        q, r = self.divmod(other)
        if r != 0:
            raise InconclusiveDimensionOperation(
                f"Cannot divide '{self}' by '{other}'. See "
                "https://docs.jax.dev/en/latest/export/shape_poly.html#division-of-shape-"
                "polynomials-is-partially-supported.")
        return q

    def divmod(self, other):
        other = DimExpr._lift(other)
        c = other._as_const()
        if c is not None and c != 0 and all(coef % c == 0 for _, coef in self._terms):
            return DimExpr._wrap({m: coef // c for m, coef in self._terms}), 0
        if c is None and len(other._terms) == 1:  # divide by a monomial, exactly
            (dm, dc), = other._terms
            t = {}
            for m, coef in self._terms:
                rest = list(m)
                for v in dm:
                    if v not in rest:
                        break
                    rest.remove(v)
                else:
                    if coef % dc == 0:
                        t[tuple(rest)] = coef // dc
                        continue
                break
            else:
                return DimExpr._wrap(t), 0
        raise InconclusiveDimensionOperation(
            f"Cannot divide '{self}' by '{other}'. See "
            "https://docs.jax.dev/en/latest/export/shape_poly.html#division-of-shape-"
            "polynomials-is-partially-supported.")

    def __mod__(self, other):
        try:
            self.divmod(other)
        except InconclusiveDimensionOperation:
            raise InconclusiveDimensionOperation(
                f"Cannot compute '{self}' modulo '{other}' (not exactly divisible).") from None
        return 0

    def __rfloordiv__(self, other):
        raise InconclusiveDimensionOperation(f"Cannot divide '{other}' by '{self}'.")

    # -- comparison --------------------------------------------------------------------
    def __eq__(self, other):
        if isinstance(other, DimExpr):
            return self._terms == other._terms
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
        return _decide_nonnegative(self - other, strict=False, what=(self, ">=", other))

    def __gt__(self, other):
        return _decide_nonnegative(self - other, strict=True, what=(self, ">", other))

    def __le__(self, other):
        return _decide_nonnegative(other - self, strict=False, what=(self, "<=", other))

    def __lt__(self, other):
        return _decide_nonnegative(other - self, strict=True, what=(self, "<", other))

    def __int__(self):
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used where a concrete integer is needed (e.g. "
            "converted to a Python int or a NumPy array). See "
            "https://docs.jax.dev/en/latest/export/shape_poly.html#computing-with-dimension-"
            "variables.")

    __index__ = __int__

    def __bool__(self):
        return True  # a dimension is never 0 (variables are >= 1)

    # -- evaluation ----------------------------------------------------------------------
    def evaluate(self, env: dict):
        """Its value with each variable taken from ``env`` (ints, or values supporting
        ``+`` and ``*`` such as emitted scalars)."""
        total = None
        for m, c in self._terms:
            term = None
            for v in m:
                term = env[v] if term is None else term * env[v]
            if term is None:
                term = c
            elif c != 1:
                term = term * c
            total = term if total is None else total + term
        return 0 if total is None else total

    def __str__(self):
        parts = []
        for m, c in self._terms:
            mono = "*".join(m)
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


def _decide_nonnegative(diff, strict: bool, what) -> bool:
    """Whether ``diff > 0`` (``strict``) or ``diff >= 0`` for every value >= 1 of the
    variables, when that alone decides it (JAX reasons further, with constraints)."""
    if not isinstance(diff, DimExpr):
        return diff > 0 if strict else diff >= 0
    coeffs = [c for m, c in diff._terms if m]
    at_ones = sum(c for _, c in diff._terms)  # the value with every variable at 1
    if all(c >= 0 for c in coeffs):  # smallest at ones, unbounded above
        if at_ones > 0 or (at_ones == 0 and not strict):
            return True
    elif all(c <= 0 for c in coeffs):  # largest at ones, unbounded below
        if at_ones < 0 or (at_ones == 0 and strict):
            return False
    left, op, right = what
    raise InconclusiveDimensionOperation(
        f"Symbolic dimension comparison '{left}' {op} '{right}' is inconclusive.")


def is_symbolic(d) -> bool:
    return isinstance(d, DimExpr)


class SymbolicScope:
    """Where dimension variables live and the constraints on them (JAX's). traxla knows only
    that each variable is >= 1: explicit constraints are refused."""

    def __init__(self, constraints_str=()):
        if isinstance(constraints_str, str):
            constraints_str = (constraints_str,)
        if constraints_str:
            raise NotImplementedError("SymbolicScope: constraints are not supported by traxla; "
                                      "dimension variables are only known to be >= 1.")
        self.constraints = tuple(constraints_str)

    def __str__(self):
        return "SymbolicScope()"


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


def _parse_dim(node, src: str):
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return DimExpr.var(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_parse_dim(node.operand, src)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _parse_dim(node.left, src), _parse_dim(node.right, src)
        if not isinstance(a, DimExpr) and not isinstance(b, DimExpr) \
                and type(node.op) is ast.FloorDiv:
            return a // b
        return _BINOPS[type(node.op)](DimExpr._lift(a), b)
    raise ValueError(f"syntax error in symbolic shape {src!r}: unsupported dimension "
                     f"expression '{ast.unparse(node)}' (use integers, variable names, "
                     "+, -, * and //)")


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv}


def symbolic_shape(shape_spec: str | None, *, constraints=(), scope=None) -> tuple:
    """``symbolic_shape("b, 4")`` -> ``(b, 4)``: a shape whose entries are integers or
    dimension expressions (JAX's ``jax.export.symbolic_shape``)."""
    if constraints:
        raise NotImplementedError("symbolic_shape: constraints are not supported by traxla; "
                                  "dimension variables are only known to be >= 1.")
    if shape_spec is None:
        return ()
    spec = shape_spec.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    if not spec.strip():
        return ()
    try:
        tree = ast.parse(f"({spec},)", mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"syntax error in symbolic shape {shape_spec!r}: {e.msg}") from None
    out = []
    for elt in tree.elts:
        if isinstance(elt, ast.Constant) and elt.value is ...:
            raise ValueError(f"symbolic shape {shape_spec!r}: '...' is only allowed in "
                             "symbolic_args_specs")
        d = _parse_dim(elt, shape_spec)
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

"""Bounds of symbolic dimension expressions under a scope's constraints (the decision
procedure behind ``>=``, ``max`` and friends), by elimination of terms as JAX does it.

An expression is a sorted tuple of ``(monomial, coefficient)`` pairs, a monomial a sorted
tuple of variable names (``()`` for the constant, which sorts last); a constraint is such an
expression ``e`` with ``e >= 0`` (GEQ) or ``e == 0`` (EQ). To bound ``e = t*k + rest`` the
procedure looks for a known constraint ``c`` in which ``t`` is the leading term, forms the
linear combination that eliminates ``t`` (it holds only smaller terms) and bounds that,
recursively. Implicit constraints: every variable is >= 1; a product of variables lies
between the products of its factors' bounds.
"""
from __future__ import annotations

import itertools
import math

GEQ, EQ = ">=", "=="
# How precise a bound must be before the search may stop (JAX's BoundsPrecision).
FOR_GEQ0_OR_LEQ0, FOR_GEQ0_OR_LT0, BEST = 0, 1, 2
INF = math.inf


# The size of each ``floordiv(...)``/``mod``/``max``/``min`` factor made so far (by name,
# which determines it): 1 + the sizes of its operands, as JAX measures them.
OP_SIZES: dict = {}


def factor_key(name: str):
    """JAX's factor order: by size (a variable is 1), then by name."""
    return (OP_SIZES.get(name, 1), name)


def term_size(m) -> int:
    return sum(1 + e * factor_key(v)[0] for v, e in monomial_factors(m))


def expr_size(terms) -> int:
    return sum(1 + abs(c) * term_size(m) for m, c in terms)


def monomial_factors(m):
    """``[(name, exponent)]`` of the monomial ``m`` in JAX's factor order."""
    counts: dict = {}
    for v in m:
        counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items(), key=lambda ve: factor_key(ve[0]))


def term_key(m):
    fs = monomial_factors(m)
    return (term_size(m), [(factor_key(v), e) for v, e in fs])


def sorted_terms(coeffs: dict) -> tuple:
    """The terms in JAX's order: the largest (the leading term) first, the constant last."""
    return tuple(sorted(((m, c) for m, c in coeffs.items() if c != 0),
                        key=lambda mc: term_key(mc[0]), reverse=True))


def lincomb(e1, k1: int, e2, k2: int) -> tuple:
    """``e1*k1 + e2*k2`` for term tuples."""
    acc: dict = {}
    for m, c in e1:
        acc[m] = acc.get(m, 0) + c * k1
    for m, c in e2:
        acc[m] = acc.get(m, 0) + c * k2
    return sorted_terms(acc)


def as_constant(e):
    if not e:
        return 0
    if len(e) == 1 and e[0][0] == ():
        return e[0][1]
    return None


def _sufficient(prec, lb, ub) -> bool:
    if prec == FOR_GEQ0_OR_LEQ0:
        return lb >= 0 or ub <= 0
    if prec == FOR_GEQ0_OR_LT0:
        return lb >= 0 or ub < 0
    return False


def _sgn(x):
    return 1 if x >= 0 else -1


class Unsatisfiable(ValueError):
    pass


class Decision:
    """The state of the procedure for one scope: bounds of single terms and the other
    constraints indexed by their leading term."""

    def __init__(self, op_info=None):
        # op_info(name) -> (op, a terms, b terms) for a floordiv/mod/max/min factor, else
        # None; op_info(("mod", floordiv_name)) -> the name of the matching mod factor
        self.op_info = op_info or (lambda name: None)
        self.term_bounds: dict = {}
        self.expr_constraints: dict = {}
        self.implicit_done: set = set()

    def copy(self) -> "Decision":
        d = Decision(self.op_info)
        d.term_bounds = dict(self.term_bounds)
        d.expr_constraints = {t: set(cs) for t, cs in self.expr_constraints.items()}
        d.implicit_done = set(self.implicit_done)
        return d

    @staticmethod
    def from_constraints(constraints, op_info=None) -> "Decision":
        """``constraints``: ``(cmp, diff_terms, description)`` with ``diff cmp 0``;
        ``op_info(name)`` tells a ``floordiv``/``mod``/``max``/``min`` factor's operands."""
        d = Decision(op_info)
        for cmp, diff, descr in constraints:
            d.add_implicit_expr(diff)
            d.combine_and_add(cmp, diff, descr)
        return d

    # -- adding constraints -------------------------------------------------------------
    def combine_and_add(self, cmp, e, descr=None):
        """Adds ``e cmp 0`` (``e`` a term tuple) and its combinations with what is known."""
        const = as_constant(e)
        if const is not None:
            if const < 0 or (cmp == EQ and const != 0):
                raise Unsatisfiable(f"Unsatisfiable constraint: {descr or _show(e) + ' >= 0'}")
            return
        self._add(cmp, e, descr)
        for cmp2, e2 in self._combinations(cmp, e, descr):
            self._add(cmp2, e2, None)

    def add_geq(self, e1, e2):
        """``e1 >= e2`` where each is a term tuple or a number (infinities are ignored)."""
        if isinstance(e1, float) and math.isinf(e1) or isinstance(e2, float) and math.isinf(e2):
            return
        if isinstance(e1, float) and math.isinf(e1) or isinstance(e2, float) and math.isinf(e2):
            return
        t1 = e1 if isinstance(e1, tuple) else (((), int(e1)),) if e1 else ()
        t2 = e2 if isinstance(e2, tuple) else (((), int(e2)),) if e2 else ()
        self.combine_and_add(GEQ, lincomb(t1, 1, t2, -1))

    def _add(self, cmp, e, descr):
        nonconst = [(m, c) for m, c in e if m]
        if len(nonconst) == 1:
            (t, k), n = nonconst[0], (e[-1][1] if e[-1][0] == () else 0)
            lb, ub = self.term_bounds.get(t, (-INF, INF))
            if cmp == EQ:  # n + k*t == 0
                if n % k:
                    raise Unsatisfiable(f"Unsatisfiable constraint: {descr}")
                lb, ub = max(lb, -(n // k)), min(ub, -(n // k))
            elif k > 0:
                lb = max(lb, -(n // k))  # ceil(-n / k)
            else:
                ub = min(ub, (-n) // k)  # floor(-n / k)
            if lb > ub:
                raise Unsatisfiable(f"Unsatisfiable constraint: {descr}")
            self.term_bounds[t] = (lb, ub)
            return
        lead_t, lead_k = e[0]
        self.expr_constraints.setdefault(lead_t, set()).add((cmp, lead_k, e))

    def _with_term(self, t, t_k, only_leading=True):
        """``(cmp, c, c_s, t_s)`` for known constraints ``c cmp 0`` such that
        ``t*t_k*t_s + c*c_s`` no longer holds ``t`` (``c_s > 0``)."""
        acc = []
        t_e = ((t, 1),)
        lb, ub = self.term_bounds.get(t, (-INF, INF))
        if lb == ub:
            acc.append((EQ, lincomb(t_e, 1, (((), 1),), -int(lb)), abs(t_k), -_sgn(t_k)))
        else:
            if lb > -INF:
                acc.append((GEQ, lincomb(t_e, 1, (((), 1),), -int(lb)), abs(t_k), -_sgn(t_k)))
            if ub < INF:
                acc.append((GEQ, lincomb(t_e, -1, (((), 1),), int(ub)), abs(t_k), _sgn(t_k)))
        groups = ([self.expr_constraints.get(t, set())] if only_leading
                  else list(self.expr_constraints.values()))
        for group in groups:
            for c_cmp, _, c in group:
                tc_k = dict(c).get(t)
                if tc_k is not None:
                    acc.append((c_cmp, c, abs(t_k), -tc_k * _sgn(t_k)))
        return acc

    def _combinations(self, cmp, e, descr):
        out = set()
        for t, t_k in e:
            if not t:
                continue
            for c_cmp, c, c_s, t_s in self._with_term(t, t_k, only_leading=False):
                if t_s > 0 or cmp == EQ:
                    new_cmp = EQ if cmp == c_cmp == EQ else GEQ
                    new_e = lincomb(e, t_s, c, c_s)
                    const = as_constant(new_e)
                    if const is not None:
                        if (new_cmp == GEQ and const < 0) or (new_cmp == EQ and const != 0):
                            raise Unsatisfiable(
                                f"Unsatisfiable constraints: {descr or _show(e) + ' >= 0'}")
                    else:
                        out.add((new_cmp, new_e))
        return out

    # -- implicit constraints -------------------------------------------------------------
    def add_implicit_expr(self, e):
        for t, _ in e:
            if t:
                self.add_implicit_term(t)

    def add_implicit_term(self, t):
        if t in self.implicit_done:
            return
        self.implicit_done.add(t)
        if len(t) == 1:
            op = self.op_info(t[0])
            if op is None:  # a variable is >= 1
                self.add_geq(((t, 1),), 1)
            else:
                self._add_implicit_op(((t, 1),), *op)
            return
        factor_bounds = []
        for v, n in itertools.groupby(t):
            p = len(list(n))
            self.add_implicit_term((v,))
            lo, hi = self.bounds(((((v,), 1),)), BEST)
            factor_bounds.append((lo ** p, hi ** p))
        cands = [math.prod(b) for b in itertools.product(*factor_bounds)]
        cands = [c for c in cands if c == c]  # inf * 0
        if cands:
            self.add_geq(((t, 1),), min(cands))
            self.add_geq(max(cands), ((t, 1),))

    def _add_implicit_op(self, t_e, name, a, b):
        self.add_implicit_expr(a)
        self.add_implicit_expr(b)
        one = (((), 1),)
        if name == "mod":
            b_lo, b_hi = self.bounds(b, FOR_GEQ0_OR_LT0)
            if b_lo > 0:  # 0 <= m <= b - 1
                self.add_geq(t_e, 0)
                self.add_geq(lincomb(b, 1, one, -1), t_e)
                if b_hi < INF:
                    self.add_geq(b_hi - 1, t_e)
            elif b_hi < 0:  # b + 1 <= m <= 0
                self.add_geq(t_e, lincomb(b, 1, one, 1))
                if b_lo > -INF:
                    self.add_geq(t_e, b_lo + 1)
                self.add_geq(0, t_e)
        elif name == "floordiv":
            a_lo, a_hi = self.bounds(a, BEST)
            b_lo, b_hi = self.bounds(b, BEST)
            if b_lo <= 0 <= b_hi:
                raise ZeroDivisionError(f"Possible division by 0 in division by {_show(b)}")
            cands = [_floor_inf(x, y) for x in (a_lo, a_hi) for y in (b_lo, b_hi)]
            self.add_geq(t_e, min(cands))
            self.add_geq(max(cands), t_e)
            if b_lo >= 0:
                if a_lo >= 0:
                    self.add_geq(t_e, 0)
                mod_name = self.op_info(("mod",) + t_e[0][0])  # made when missing
                mod_e = (((mod_name,), 1),)
                self.add_implicit_term((mod_name,))
                # a == b*floordiv(a, b) + mod(a, b)
                self.combine_and_add(EQ, lincomb(a, 1, lincomb(_mul(b, t_e), 1, mod_e, 1), -1))
        else:  # max, min
            a_lo, a_hi = self.bounds(a, BEST)
            b_lo, b_hi = self.bounds(b, BEST)
            pick = max if name == "max" else min
            self.add_geq(t_e, pick(a_lo, b_lo))
            self.add_geq(pick(a_hi, b_hi), t_e)
            if name == "max":
                self.add_geq(t_e, a)
                self.add_geq(t_e, b)
            else:
                self.add_geq(a, t_e)
                self.add_geq(b, t_e)

    # -- bounds ---------------------------------------------------------------------------
    def bounds(self, e, prec, add_implicit=False):
        const = as_constant(e)
        if const is not None:
            return const, const
        if add_implicit:
            self.add_implicit_expr(e)
        lb, ub = self._bounds_from(e, 0, prec)
        return (int(lb) if lb > -INF else lb, int(ub) if ub < INF else ub)

    def _bounds_from(self, e, i, prec):
        """Bounds of ``sum(e[i:])``."""
        if i >= len(e):
            return 0, 0
        t, t_k = e[i]
        if not t:
            return t_k, t_k
        lb, ub = -INF, INF
        for c_cmp, c, c_s, t_s in self._with_term(t, t_k, only_leading=True):
            # rest = e[i:]*t_s + c*c_s holds only terms smaller than t
            rest = lincomb(e[i:], t_s, c, c_s)
            r_lb, r_ub = self._bounds_from(rest, 0, BEST)
            if r_ub < INF:  # e[i:]*t_s = rest - c*c_s <= r_ub
                if t_s > 0:
                    ub = min(ub, r_ub // t_s)
                else:
                    lb = max(lb, -((-r_ub) // t_s))
            if r_lb > -INF and c_cmp == EQ:
                if t_s > 0:
                    lb = max(lb, -((-r_lb) // t_s))
                else:
                    ub = min(ub, r_lb // t_s)
            if _sufficient(prec, lb, ub):
                return lb, ub
        op = self.op_info(t[0]) if len(t) == 1 else None
        if op is not None and op[0] in ("max", "min"):
            # k*max(a, b) + rest >= max(k*a + rest, k*b + rest) for k > 0 (and the like)
            name, a, b = op
            r1 = self._bounds_from(lincomb(e[i + 1:], 1, a, t_k), 0, BEST)
            r2 = self._bounds_from(lincomb(e[i + 1:], 1, b, t_k), 0, BEST)
            if (t_k > 0) == (name == "max"):
                lb, ub = max(lb, max(r1[0], r2[0])), min(ub, max(r1[1], r2[1]))
            else:
                lb, ub = max(lb, min(r1[0], r2[0])), min(ub, min(r1[1], r2[1]))
        return lb, ub


def _floor_inf(a, b):
    """``floor(a / b)`` aware of infinities (the limit), ``b != 0``."""
    if not math.isinf(b):
        if not math.isinf(a):
            return a // b
        return -INF if (a >= 0) != (b >= 0) else INF
    if not math.isinf(a):
        return -1 if (a >= 0) != (b >= 0) else 0
    return -INF if (a >= 0) != (b >= 0) else INF


def _mul(e1, e2):
    acc: dict = {}
    for m1, c1 in e1:
        for m2, c2 in e2:
            m = tuple(sorted(m1 + m2))
            acc[m] = acc.get(m, 0) + c1 * c2
    return sorted_terms(acc)


def _show(e) -> str:
    return " + ".join(f"{c}*{'*'.join(m)}" if m else str(c) for m, c in e) or "0"

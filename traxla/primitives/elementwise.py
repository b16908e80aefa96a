"""``traxla.lax``'s elementwise operations: thin wrappers binding one primitive each."""
from __future__ import annotations

from traxla import tree_util
from traxla.ir import dtypes
from traxla.ir.rules import special as _special
from traxla.ir.rules.elementwise import P as _E
from traxla.ir.rules.collectives import reshard_p
from traxla.ir.sharding import REDUCED_SEEN, PartitionSpec, ShardingType
from traxla.primitives.values import aval_of, dtype_of


class RoundingMethod(int):
    """``round``'s mode: AWAY_FROM_ZERO (0) or TO_NEAREST_EVEN (1); prints as the int."""

    def __new__(cls, value):
        if type(value) is cls:
            return value
        if value not in (0, 1) or isinstance(value, (bool, float)):  # as JAX's IntEnum
            raise ValueError(f"{value!r} is not a valid RoundingMethod")
        return super().__new__(cls, value)

    AWAY_FROM_ZERO: "RoundingMethod"
    TO_NEAREST_EVEN: "RoundingMethod"


RoundingMethod.AWAY_FROM_ZERO = RoundingMethod(0)
RoundingMethod.TO_NEAREST_EVEN = RoundingMethod(1)


def _unary(name, **fixed):
    prim = _E[name]

    def op(x):
        return prim.bind(x, **fixed)
    op.__name__ = name
    return op


def _with_accuracy(name):
    prim = _E[name]

    def op(x, accuracy=None):
        return prim.bind(x, accuracy=accuracy)
    op.__name__ = name
    return op


def _binary(name):
    prim = _E[name]

    def op(x, y):
        if REDUCED_SEEN[0]:
            x, y = _reduced_scalars(x, y)
        return prim.bind(x, y)
    op.__name__ = name
    return op


def _reduced_scalars(x, y):
    """JAX's ``insert_reduced_reshard``: on a mesh of Explicit axes, a scalar operand
    replicated over the axes the other operand is reduced over is resharded to reduced
    over them (a free cast), so that the two operands type-check together."""
    avals = [aval_of(x), aval_of(y)]
    reduced = frozenset()
    mesh = None
    for a in avals:
        st = getattr(a, "sharding_type", None)
        if st is not None and st.spec.reduced:
            reduced, mesh = reduced | st.spec.reduced, st.mesh
    if not reduced or not mesh.are_all_axes_explicit:
        return x, y
    out = []
    for v, a in zip((x, y), avals):
        st = getattr(a, "sharding_type", None)
        if a.ndim == 0 and (st is None or not (st.spec.reduced or st.spec.unreduced)):
            dst = ShardingType(mesh, PartitionSpec(reduced=reduced))
            v = reshard_p.bind(v, dst_sharding=dst, dst_spec=(mesh, dst.spec))
        out.append(v)
    return out


neg, sign, floor, ceil, is_finite = (_unary(n) for n in ("neg", "sign", "floor", "ceil", "is_finite"))
asin, acos, atan, sinh, cosh = (_unary(n) for n in ("asin", "acos", "atan", "sinh", "cosh"))
asinh, acosh, atanh, abs = (_unary(n) for n in ("asinh", "acosh", "atanh", "abs"))  # noqa: A001
erf, erf_inv, stop_gradient_raw = _unary("erf"), _unary("erf_inv"), _unary("stop_gradient")
bitwise_not = _unary("not")
exp, exp2, log, log1p, expm1 = (_with_accuracy(n) for n in ("exp", "exp2", "log", "log1p", "expm1"))
tanh, logistic, sin, cos, tan = (_with_accuracy(n) for n in ("tanh", "logistic", "sin", "cos", "tan"))
sqrt, rsqrt, cbrt = (_with_accuracy(n) for n in ("sqrt", "rsqrt", "cbrt"))
add, sub, mul, div, rem, pow = (_binary(n) for n in ("add", "sub", "mul", "div", "rem", "pow"))  # noqa: A001
max, min, atan2, nextafter = (_binary(n) for n in ("max", "min", "atan2", "nextafter"))  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = _binary("and"), _binary("or"), _binary("xor")
shift_left, shift_right_logical = _binary("shift_left"), _binary("shift_right_logical")
shift_right_arithmetic = _binary("shift_right_arithmetic")
eq, ne, lt, le, gt, ge = (_binary(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001
    return _E["round"].bind(x, rounding_method=RoundingMethod(int(rounding_method)))


def integer_pow(x, y: int):
    return _E["integer_pow"].bind(x, y=int(y))


def reciprocal(x):
    return integer_pow(x, -1)


def stop_gradient(x):
    """The identity that autodiff sees as a constant, over every leaf of a pytree (as
    JAX's); key arrays pass through."""
    return tree_util.tree_map(_stop_gradient_leaf, x)


def _stop_gradient_leaf(x):
    return x if dtypes.is_extended(dtype_of(x)) else stop_gradient_raw(x)


def copy_p_bind(x):
    return _E["copy"].bind(x)


def select_n(which, *cases):
    return _E["select_n"].bind(which, *cases)


def select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    return _E["clamp"].bind(min, x, max)

def lgamma(x):
    return _special.lgamma_p.bind(x)


def digamma(x):
    return _special.digamma_p.bind(x)


def erfc(x):
    return _special.erfc_p.bind(x)


def square(x):  # noqa: F811  (JAX binds its ``square`` primitive)
    return _special.square_p.bind(x)


def real(x):
    return _special.real_p.bind(x)


def imag(x):
    return _special.imag_p.bind(x)


def complex(x, y):  # noqa: A001
    return _special.complex_p.bind(x, y)


def conj(x):
    return _special.conj_p.bind(x, input_dtype=dtype_of(x))


def _isnan(x):
    return ne(x, x)


population_count, clz = _unary("population_count"), _unary("clz")

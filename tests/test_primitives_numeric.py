"""Numerical tests of every lax primitive, eager and under ``jit``, against NumPy.

Each test draws inputs with hypothesis from a small fixed set of shapes (every
distinct (primitive, shape, dtype) compiles an XLA executable, so the set stays
small) and checks both the eager result (one cached executable per primitive)
and the ``tx.jit`` result against a NumPy / SciPy reference computed in float64
or int64 and cast to the expected dtype. ``jax`` is used as an oracle only where
the semantics are XLA's own (argmax/argmin with NaNs, bitcast lane order).
"""
from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np
import pytest
import scipy.special
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import traxla as tx
from traxla import lax

BOOL, I8, I16, I32 = np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)
U8, U16, U32 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32)
F16, F32, BF16 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)
FLOATS = (F32, F16, BF16)
SHAPES = [(), (3,), (2, 3)]
# (x shape, y shape) pairs for binary ops: equal shapes, scalar broadcasting and
# size-1 broadcasting of equal-rank arrays (lax's implicit broadcasting).
PAIRS = [((), ()), ((3,), (3,)), ((2, 3), ()), ((), (2, 3)), ((1, 3), (2, 3))]

SETTINGS = settings(max_examples=6, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(SETTINGS, max_examples=4)


def _name(dt):
    return np.dtype(dt).name


def is_float(dt):
    return np.dtype(dt) in FLOATS or np.dtype(dt) == np.float64


def is_int(dt):
    return np.dtype(dt).kind in "iu"


# -- checking ------------------------------------------------------------------

_jitted: dict = {}


def jitted(fn):
    """One JitFunction per op function, so its compiled executables are reused."""
    if fn not in _jitted:
        _jitted[fn] = tx.jit(fn)
    return _jitted[fn]


# (rtol, atol) per (dtype, kind). "arith": ops that round once (add, div, sqrt...);
# "trans": transcendental functions, a few ulp in f32, ~1 ulp of the narrow type.
TOLS = {
    (F32, "arith"): (1e-6, 1e-7), (F32, "trans"): (2e-6, 1e-6),
    (F16, "arith"): (1e-3, 1e-4), (F16, "trans"): (4e-3, 1e-3),
    (BF16, "arith"): (8e-3, 1e-3), (BF16, "trans"): (2e-2, 1e-2),
}


def assert_matches(got, expected, *, kind="exact", where=""):
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != expected {expected.dtype}"
    assert got.shape == expected.shape, f"{where}: shape {got.shape} != expected {expected.shape}"
    if kind == "exact" or not is_float(expected.dtype):
        np.testing.assert_array_equal(got, expected, err_msg=where)
    else:
        rtol, atol = TOLS[(expected.dtype, kind)]
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=where)


# ``check`` records each example; the checks run when the test ends, in two XLA compiles
# instead of one (eager) or two (eager, jit) per example shape: compiling was most of this
# file's cost. Eager (one cached one-primitive executable per primitive, shapes, dtypes and
# parameters) runs on ONE example of the test, the one with the most dimensions and elements;
# jit runs ALL the test's examples (of all its functions) as one jitted program.
_pending: list = []


def check(fn, args, expected, *, kind="exact", compare=None):
    """``fn(*args)`` equals ``expected`` (dtype, shape, values), or passes ``compare(got,
    where)``: under jit for every example, eagerly for one example of the test
    (``_checks_of_the_test``)."""
    if compare is None:
        def compare(got, where, expected=expected, kind=kind):
            assert_matches(got, expected, kind=kind, where=where)
    _pending.append((fn, tuple(args), compare))


def _where(side, args):
    return (f"{side} (arguments' shapes {[np.shape(a) for a in args]}, "
            f"dtypes {[np.asarray(a).dtype.name for a in args]}, values {[np.asarray(a).tolist() for a in args]})")


def _run_pending_checks(item):
    cases = list(_pending)
    _pending.clear()
    if not cases:
        return
    size = [(sum(np.ndim(a) for a in args), sum(np.size(a) for a in args)) for _, args, _ in cases]
    fn, args, compare = cases[max(range(len(cases)), key=size.__getitem__)]
    compare(fn(*args), _where("eager", args))

    outs = _shared_jit(item, cases)
    if outs is None:
        def all_cases(*flat):
            outs, i = [], 0
            for f, a, _ in cases:
                outs.append(f(*flat[i:i + len(a)]))
                i += len(a)
            return outs
        outs = tx.jit(all_cases)(*[a for _, args, _ in cases for a in args])
    for (_, args, compare), got in zip(cases, outs):
        compare(got, _where("jit", args))


# Tests whose arguments' shapes and dtypes follow from their parameters (``FAMILIES``, at the
# end of the file) share the jit side: CHUNK consecutive tests of a family run ONE jitted
# program, compiled once per process, with room for each test's examples. A test calls it with
# its own examples in its place (the last repeated up to the family's number of examples) and
# zeros in the others', and checks its own outputs.
CHUNK = 16
_chunk_programs: dict = {}


def _chunk_of(item):
    """(program, each member's (function, argument avals), zeros per member, examples per
    member, this test's index) for the chunk of ``item``'s family holding ``item``."""
    name, file = item.originalname, item.nodeid.split("::")[0]
    members = [i for i in item.session.items
               if getattr(i, "originalname", None) == name and i.nodeid.split("::")[0] == file]
    pos = [i.nodeid for i in members].index(item.nodeid)
    chunk = members[pos - pos % CHUNK:pos - pos % CHUNK + CHUNK]
    key = tuple(i.nodeid for i in chunk)
    if key not in _chunk_programs:
        k, spec = FAMILIES[name]
        specs = [spec(**i.callspec.params) for i in chunk]

        def program(*flat):
            outs, n = [], 0
            for f, avals in specs:
                for _ in range(k):
                    outs.append(f(*flat[n:n + len(avals)]))
                    n += len(avals)
            return outs
        zeros = [[np.zeros(shape, dtype) for shape, dtype in avals] for _, avals in specs]
        _chunk_programs[key] = (tx.jit(program), specs, zeros, k)
    return (*_chunk_programs[key], pos % CHUNK)


def _shared_jit(item, cases):
    """The jit outputs of ``cases`` from the chunk program of the test's family, or None (not
    a family, or examples that do not fit its place: the test then jits its own program)."""
    if getattr(item, "originalname", None) not in FAMILIES:
        return None
    program, specs, zeros, k, m = _chunk_of(item)
    fn, avals = specs[m]
    want = [(tuple(shape), np.dtype(dtype)) for shape, dtype in avals]
    if len(cases) > k or any(f is not fn or [(np.shape(a), np.asarray(a).dtype) for a in args] != want
                             for f, args, _ in cases):
        return None
    examples = [args for _, args, _ in cases]
    examples += [examples[-1]] * (k - len(examples))
    flat = []
    for j, z in enumerate(zeros):
        for args in (examples if j == m else [z] * k):
            flat.extend(args)
    return program(*flat)[m * k:m * k + len(cases)]


@pytest.fixture(autouse=True)
def _checks_of_the_test(request):
    _pending.clear()
    yield
    _run_pending_checks(request.node)


def ref_cast(value, dtype):
    """A float64/int64/bool reference value cast to ``dtype`` (ints wrap, like XLA)."""
    value = np.asarray(value)
    if is_int(dtype) and value.dtype.kind in "iu":
        return value.astype(np.int64).astype(dtype)
    return value.astype(dtype)


def wide(x):
    """Input promoted to float64 / int64 for computing references."""
    x = np.asarray(x)
    if is_float(x.dtype):
        return x.astype(np.float64)
    if is_int(x.dtype):
        return x.astype(np.int64)
    return x


# -- strategies ------------------------------------------------------------------

def _float_elems(lo, hi, specials=(), halves=False):
    # Values are snapped away from the subnormal range (XLA's CPU backend may flush
    # denormals); the domains used here survive rounding to float16/bfloat16.
    elems = st.floats(lo, hi, allow_nan=False, allow_infinity=False).map(
        lambda v: 0.0 if abs(v) < 1e-3 and lo <= 0.0 <= hi else v)
    if halves:  # exact halves and integers: round's tie cases
        elems = st.one_of(elems, st.integers(int(math.ceil(2 * lo)), int(2 * hi)).map(lambda k: k / 2))
    if specials:
        elems = st.one_of(elems, st.sampled_from(list(specials)))
    return elems


def arrays(dtype, shape, lo=-10.0, hi=10.0, *, specials=(), halves=False, elems=None):
    """Arrays of ``shape`` and ``dtype`` with elements in [lo, hi] (clipped to the dtype's
    range), or drawn from ``elems``."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    if elems is None and dtype == BOOL:
        elems = st.booleans()
    elif elems is None and is_int(dtype):
        info = np.iinfo(dtype)
        elems = st.integers(int(max(lo, info.min)), int(min(hi, info.max)))
    elif elems is None:
        elems = _float_elems(lo, hi, specials, halves)
    src = np.float64 if is_float(dtype) else (np.int64 if is_int(dtype) else dtype)
    return st.lists(elems, min_size=n, max_size=n).map(
        lambda v: np.asarray(np.array(v, src).astype(dtype).reshape(shape)))


def shaped(dtype, lo=-10.0, hi=10.0, shapes=SHAPES, **kw):
    return st.sampled_from(shapes).flatmap(lambda s: arrays(dtype, s, lo, hi, **kw))


# -- unary elementwise ---------------------------------------------------------------

def _round_afz(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _exp2_ref(x):
    """JAX defines exp2(x) as exp(ln2 * x), the product rounded to x's dtype (so bfloat16's
    exp2(10) is 1000, not 1024): round the product as it does, then exp in float64."""
    x = np.asarray(x)
    if x.dtype == np.float64:
        return np.exp2(x)
    return np.exp((np.asarray(np.log(2), x.dtype) * x).astype(np.float64))


# name, lax function, reference on float64, domain (lo, hi), kind, dtypes. Every op runs in
# float32 and float16; bfloat16 (which XLA computes through float32 too) on a subset.
ALL_F, F32_F16 = (F32, F16, BF16), (F32, F16)
UNARY_FLOAT = [
    ("floor", lax.floor, np.floor, (-10, 10), "exact", ALL_F),
    ("ceil", lax.ceil, np.ceil, (-10, 10), "exact", F32_F16),
    ("exp", lax.exp, np.exp, (-10, 10), "trans", ALL_F),
    ("exp2", lax.exp2, _exp2_ref, (-10, 10), "trans", ALL_F),
    ("log", lax.log, np.log, (0.01, 100), "trans", ALL_F),
    ("log1p", lax.log1p, np.log1p, (-0.9, 100), "trans", F32_F16),
    ("expm1", lax.expm1, np.expm1, (-10, 10), "trans", ALL_F),
    ("tanh", lax.tanh, np.tanh, (-5, 5), "trans", ALL_F),
    ("logistic", lax.logistic, scipy.special.expit, (-20, 20), "trans", ALL_F),
    ("sin", lax.sin, np.sin, (-10, 10), "trans", ALL_F),
    ("cos", lax.cos, np.cos, (-10, 10), "trans", F32_F16),
    ("tan", lax.tan, np.tan, (-1.4, 1.4), "trans", F32_F16),
    ("asin", lax.asin, np.arcsin, (-1, 1), "trans", F32_F16),
    ("acos", lax.acos, np.arccos, (-1, 1), "trans", F32_F16),
    ("atan", lax.atan, np.arctan, (-10, 10), "trans", F32_F16),
    ("sinh", lax.sinh, np.sinh, (-5, 5), "trans", F32_F16),
    ("cosh", lax.cosh, np.cosh, (-5, 5), "trans", F32_F16),
    ("asinh", lax.asinh, np.arcsinh, (-10, 10), "trans", ALL_F),
    ("acosh", lax.acosh, np.arccosh, (1, 100), "trans", F32_F16),
    ("atanh", lax.atanh, np.arctanh, (-0.9, 0.9), "trans", F32_F16),
    ("sqrt", lax.sqrt, np.sqrt, (0, 100), "arith", ALL_F),
    ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), (0.01, 100), "trans", ALL_F),
    ("cbrt", lax.cbrt, np.cbrt, (-100, 100), "trans", F32_F16),
    ("erf", lax.erf, scipy.special.erf, (-3, 3), "trans", ALL_F),
    ("erf_inv", lax.erf_inv, scipy.special.erfinv, (-0.95, 0.95), "trans", F32_F16),
]


@pytest.mark.parametrize("name,fn,ref,domain,kind,dtype",
                         [(*r[:5], d) for r in UNARY_FLOAT for d in r[5]],
                         ids=[f"{r[0]}-{_name(d)}" for r in UNARY_FLOAT for d in r[5]])
@SETTINGS
@given(data=st.data())
def test_unary_float(name, fn, ref, domain, kind, dtype, data):
    x = data.draw(shaped(dtype, *domain))
    check(fn, (x,), (ref(x) if ref is _exp2_ref else ref(wide(x))).astype(dtype), kind=kind)


# name, lax function, reference, dtypes (the ops also defined on integers)
UNARY_NUM = [
    ("neg", lax.neg, np.negative, (F32, BF16, I32, I8, U32)),
    ("sign", lax.sign, np.sign, (F32, F16, I32, I8, U8)),
    ("abs", lax.abs, np.abs, (F32, F16, BF16, I32, I8)),
    ("not", lax.bitwise_not, np.invert, (BOOL, I32, I8, U8, U32)),
    ("stop_gradient", lax.stop_gradient, lambda x: x, (F32, I32, BOOL)),
    ("copy", lax.copy_p_bind, lambda x: x, (F32, BF16, U8, BOOL)),
]


@pytest.mark.parametrize("name,fn,ref,dtype", [(n, f, r, d) for n, f, r, ds in UNARY_NUM for d in ds],
                         ids=[f"{n}-{_name(d)}" for n, _, _, ds in UNARY_NUM for d in ds])
@SETTINGS
@given(data=st.data())
def test_unary_num(name, fn, ref, dtype, data):
    lo, hi = (-1000, 1000) if is_float(dtype) else (-2**40, 2**40)
    x = data.draw(shaped(dtype, lo, hi, specials=(0.0, -0.0)))
    if not is_float(dtype):  # ints computed in int64 and wrapped back (neg/abs of the minimum)
        expected = ref_cast(ref(wide(x)), dtype)
    else:
        expected = ref(wide(x)).astype(dtype)
    check(fn, (x,), expected)


@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
@SETTINGS
@given(data=st.data())
def test_is_finite(dtype, data):
    x = data.draw(shaped(dtype, -1e3, 1e3, specials=(np.nan, np.inf, -np.inf)))
    check(lax.is_finite, (x,), np.isfinite(wide(x)))


@functools.cache
def _round_fn(method):
    return lambda x: lax.round(x, method)


@pytest.mark.parametrize("method", [lax.RoundingMethod.AWAY_FROM_ZERO,
                                    lax.RoundingMethod.TO_NEAREST_EVEN], ids=["afz", "even"])
@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
@SETTINGS
@given(data=st.data())
def test_round(method, dtype, data):
    x = data.draw(shaped(dtype, -20, 20, halves=True))
    ref = _round_afz if method == lax.RoundingMethod.AWAY_FROM_ZERO else np.rint
    check(_round_fn(method), (x,), ref(wide(x)).astype(dtype))


@functools.cache
def _integer_pow_fn(y):
    return lambda x: lax.integer_pow(x, y)


@pytest.mark.parametrize("y", [-3, -2, -1, 0, 1, 2, 3, 6])
@pytest.mark.parametrize("dtype", [F32, F16, I32, I8], ids=_name)
@SETTINGS
@given(data=st.data())
def test_integer_pow(y, dtype, data):
    if is_int(dtype) and y < 0:  # rejected when typing, as by JAX
        x = data.draw(shaped(dtype, -9, 9))
        for f in (_integer_pow_fn(y), jitted(_integer_pow_fn(y))):
            with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
                f(x)
        return
    if is_float(dtype):
        sign = data.draw(st.sampled_from([-1.0, 1.0]))
        x = data.draw(shaped(dtype, 0.25, 3.0)) * np.asarray(sign, dtype)
        expected = np.power(wide(x), y).astype(dtype)
    else:
        x = data.draw(shaped(dtype, -9, 9))
        expected = ref_cast(wide(x) ** y, dtype)  # int8 wraps modulo 256, as XLA's
    # repeated squaring rounds after every multiply (up to 5 roundings for y=6 in float16)
    check(_integer_pow_fn(y), (x,), expected, kind="trans" if dtype == F16 else "arith")


# -- binary elementwise -------------------------------------------------------------

def _trunc_div(x, y):
    if is_float(x.dtype):
        return x / y
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) != (y < 0), -q, q)


def _shift_ref(kind):
    """Shifts on the two's-complement bit patterns, computed in int64."""
    def ref(x, y):
        bits = x.dtype.itemsize * 8
        mask = (1 << bits) - 1
        u = wide(x) & mask                                   # bits as an unsigned value
        signed = np.where(u >= 1 << (bits - 1), u - (1 << bits), u)  # bits as a signed value
        s = wide(y)
        out = {"left": u << s, "logical": u >> s, "arith": signed >> s}[kind] & mask
        return np.asarray(out).astype(np.uint64).astype(f"u{x.dtype.itemsize}").view(x.dtype)
    return ref


# name, lax function, reference on wide inputs, dtypes, kind, x domain, y domain
BINARY = [
    ("add", lax.add, np.add, (F32, F16, BF16, I32, U8), "arith", (-100, 100), (-100, 100)),
    ("sub", lax.sub, np.subtract, (F32, BF16, I32, U8), "arith", (-100, 100), (-100, 100)),
    ("mul", lax.mul, np.multiply, (F32, F16, I8, U32), "arith", (-100, 100), (-100, 100)),
    ("div", lax.div, _trunc_div, (F32, F16, I32, I8, U8), "arith", (-100, 100), (0.5, 50)),
    ("div_neg", lax.div, _trunc_div, (F32, I32, I8), "arith", (-127, 127), (-50, -1)),
    ("rem", lax.rem, np.fmod, (F32, F16, I32, I8, U8), "exact", (-100, 100), (0.5, 30)),
    ("rem_neg", lax.rem, np.fmod, (F32, I32), "exact", (-100, 100), (-30, -0.5)),
    ("pow", lax.pow, np.power, (F32, F16, BF16), "trans", (0.1, 10), (-3, 3)),
    ("max", lax.max, np.maximum, (F32, F16, I32, U8, BOOL), "exact", (-100, 100), (-100, 100)),
    ("min", lax.min, np.minimum, (F32, BF16, I8, U32, BOOL), "exact", (-100, 100), (-100, 100)),
    ("atan2", lax.atan2, np.arctan2, (F32, F16), "trans", (-10, 10), (-10, 10)),
    ("and", lax.bitwise_and, np.bitwise_and, (BOOL, I32, U8, I8), "exact", (-10**9, 10**9), (-10**9, 10**9)),
    ("or", lax.bitwise_or, np.bitwise_or, (BOOL, I32, U8, U32), "exact", (-10**9, 10**9), (-10**9, 10**9)),
    ("xor", lax.bitwise_xor, np.bitwise_xor, (BOOL, I32, I8), "exact", (-10**9, 10**9), (-10**9, 10**9)),
]


def _binary_inputs(data, dtype, xdom, ydom):
    xs, ys = data.draw(st.sampled_from(PAIRS))
    x = data.draw(arrays(dtype, xs, *xdom))
    y = data.draw(arrays(dtype, ys, *ydom))
    return x, y


@pytest.mark.parametrize("name,fn,ref,dtype,kind,xdom,ydom",
                         [(n, f, r, d, k, xd, yd) for n, f, r, ds, k, xd, yd in BINARY for d in ds],
                         ids=[f"{n}-{_name(d)}" for n, _, _, ds, *_ in BINARY for d in ds])
@SETTINGS
@given(data=st.data())
def test_binary(name, fn, ref, dtype, kind, xdom, ydom, data):
    if is_int(dtype):  # integer domains: clip to the dtype; unsigned divisors stay positive
        info = np.iinfo(dtype)
        xdom = (max(xdom[0], info.min), min(xdom[1], info.max))
        ydom = (max(math.ceil(ydom[0]), info.min), min(math.floor(ydom[1]), info.max))
        if name in ("div", "rem"):
            ydom = (max(ydom[0], 1), ydom[1])
    x, y = _binary_inputs(data, dtype, xdom, ydom)
    if dtype == BOOL:
        expected = ref(x, y)
    else:
        expected = ref_cast(ref(wide(x), wide(y)), dtype)
    check(fn, (x, y), expected, kind=kind)


@pytest.mark.parametrize("dtype", [F32, F16], ids=_name)
@SETTINGS
@given(data=st.data())
def test_pow_integer_exponent(dtype, data):
    """lax.pow with a float base and an int32 exponent (the exponent may be negative)."""
    xs, ys = data.draw(st.sampled_from(PAIRS[:4]))
    x = data.draw(arrays(dtype, xs, 0.2, 4.0))
    y = data.draw(arrays(I32, ys, -3, 4))
    check(lax.pow, (x, y), np.power(wide(x), wide(y).astype(np.float64)).astype(dtype), kind="trans")


@pytest.mark.parametrize("dtype", [F32, F16], ids=_name)
@SETTINGS
@given(data=st.data())
def test_nextafter(dtype, data):
    elems = _float_elems(-10, 10, specials=(0.0, -0.0, 1.0, np.inf, -np.inf))
    xs, ys = data.draw(st.sampled_from(PAIRS[:4]))
    x = data.draw(arrays(dtype, xs, elems=elems))
    y = data.draw(arrays(dtype, ys, elems=elems))
    check(lax.nextafter, (x, y), np.nextafter(x, y))


@pytest.mark.parametrize("dtype", [F32, F16, I32, U8, BOOL], ids=_name)
@pytest.mark.parametrize("name,fn", [("max", lax.max), ("min", lax.min)])
@FEW
@given(data=st.data())
def test_max_min_nan(name, fn, dtype, data):
    """max/min propagate NaN (like np.maximum); ints/bools cover the extreme values."""
    if is_float(dtype):
        elems = st.sampled_from([np.nan, -np.inf, np.inf, 0.0, -1.5, 2.0])
    elif dtype == BOOL:
        elems = st.booleans()
    else:
        info = np.iinfo(dtype)
        elems = st.sampled_from([int(info.min), int(info.max), 0, 1])
    x = data.draw(arrays(dtype, (6,), elems=elems))
    y = data.draw(arrays(dtype, (6,), elems=elems))
    check(fn, (x, y), (np.maximum if name == "max" else np.minimum)(x, y))


SHIFTS = [("shift_left", lax.shift_left, "left"),
          ("shift_right_logical", lax.shift_right_logical, "logical"),
          ("shift_right_arithmetic", lax.shift_right_arithmetic, "arith")]


@pytest.mark.parametrize("dtype", [I32, U32, I8, U8], ids=_name)
@pytest.mark.parametrize("name,fn,kind", SHIFTS, ids=[s[0] for s in SHIFTS])
@SETTINGS
@given(data=st.data())
def test_shift(name, fn, kind, dtype, data):
    info = np.iinfo(dtype)
    bits = dtype.itemsize * 8
    xs, ys = data.draw(st.sampled_from(PAIRS[:4]))
    x = data.draw(arrays(dtype, xs, int(info.min), int(info.max)))
    y = data.draw(arrays(dtype, ys, 0, bits - 1))
    check(fn, (x, y), _shift_ref(kind)(x, y))


COMPARES = [("eq", lax.eq, np.equal), ("ne", lax.ne, np.not_equal), ("lt", lax.lt, np.less),
            ("le", lax.le, np.less_equal), ("gt", lax.gt, np.greater), ("ge", lax.ge, np.greater_equal)]


@pytest.mark.parametrize("dtype", [F32, F16, I32, U8, BOOL], ids=_name)
@pytest.mark.parametrize("name,fn,ref", COMPARES, ids=[c[0] for c in COMPARES])
@SETTINGS
@given(data=st.data())
def test_compare(name, fn, ref, dtype, data):
    # few distinct values, so that equal operands are common; NaN and signed zeros for floats
    if is_float(dtype):
        elems = st.sampled_from([np.nan, -np.inf, -2.5, -0.0, 0.0, 1.0, 3.0])
    elif dtype == BOOL:
        elems = st.booleans()
    else:
        info = np.iinfo(dtype)
        elems = st.sampled_from([int(info.min), -1 if info.min else 1, 0, 7, int(info.max)])
    xs, ys = data.draw(st.sampled_from(PAIRS[1:]))  # (the broadcasting is test_binary's)
    x = data.draw(arrays(dtype, xs, elems=elems))
    y = data.draw(arrays(dtype, ys, elems=elems))
    check(fn, (x, y), ref(x, y))


# -- select_n, clamp ------------------------------------------------------------------

@functools.cache
def _select_fn(n):
    return lambda which, *cases: lax.select_n(which, *cases)


@pytest.mark.parametrize("dtype", [F32, I8, BOOL], ids=_name)
@pytest.mark.parametrize("which_dtype,ncases", [(BOOL, 1), (BOOL, 2), (I32, 1), (I32, 2), (I32, 3)],
                         ids=["bool1", "bool2", "i32-1", "i32-2", "i32-3"])
@SETTINGS
@given(data=st.data())
def test_select_n(which_dtype, ncases, dtype, data):
    shape = data.draw(st.sampled_from(SHAPES))
    which_shape = data.draw(st.sampled_from([(), shape]))
    elems = st.booleans() if which_dtype == BOOL else st.integers(0, ncases - 1)
    which = data.draw(arrays(which_dtype, which_shape, elems=elems))
    cases = [data.draw(arrays(dtype, shape)) for _ in range(ncases)]
    if ncases == 1:  # a single case is returned whatever `which` holds
        expected = cases[0]
    else:
        expected = np.choose(np.broadcast_to(which.astype(np.int64), shape), cases).astype(dtype)
    check(_select_fn(ncases), (which, *cases), expected)


@pytest.mark.parametrize("dtype", [F32, BF16, I32, U8], ids=_name)
@SETTINGS
@given(data=st.data())
def test_clamp(dtype, data):
    shape = data.draw(st.sampled_from(SHAPES))
    lo = data.draw(arrays(dtype, data.draw(st.sampled_from([(), shape])), -50, 50))
    hi = data.draw(arrays(dtype, data.draw(st.sampled_from([(), shape])), -50, 50))
    x = data.draw(arrays(dtype, shape, -100, 100))
    check(lax.clamp, (lo, x, hi), np.minimum(np.maximum(x, lo), hi).astype(dtype))


# -- conversions ------------------------------------------------------------------------

# (from, to, input domain): float -> int inputs stay in the target's range (out of range is
# implementation-defined in XLA); int -> narrower int wraps; float -> bool is x != 0 (NaN -> True).
CONVERSIONS = [
    (F32, I32, (-1e6, 1e6)), (F32, U8, (0, 255)), (F16, I8, (-128, 127.5)), (BF16, I32, (-1e3, 1e3)),
    (F32, BOOL, (-2, 2)), (F16, BOOL, (-2, 2)), (BOOL, F32, None), (BOOL, BF16, None),
    (I32, F32, (-2**31, 2**31 - 1)), (I32, F16, (-60000, 60000)), (U32, F32, (0, 2**32 - 1)),
    (I32, I8, (-2**31, 2**31 - 1)), (I8, U32, (-128, 127)), (U8, I32, (0, 255)),
    (I32, BOOL, (-3, 3)), (U8, BOOL, (0, 3)), (BOOL, I32, None), (BOOL, U8, None),
    (F32, F16, (-6e4, 6e4)), (F16, F32, (-6e4, 6e4)), (F32, BF16, (-1e30, 1e30)), (BF16, F16, (-100, 100)),
]


@functools.cache
def _convert_fn(new_dtype):
    return lambda x: lax.convert_element_type(x, new_dtype)


@pytest.mark.parametrize("src,dst,domain", CONVERSIONS,
                         ids=[f"{_name(s)}-{_name(d)}" for s, d, _ in CONVERSIONS])
@SETTINGS
@given(data=st.data())
def test_convert_element_type(src, dst, domain, data):
    specials = (np.nan, 0.0, -0.0) if dst == BOOL and is_float(src) else ()
    x = data.draw(shaped(src, *(domain or (0, 1)), specials=specials))
    if dst == BOOL:
        expected = wide(x) != 0
    elif is_int(dst) and is_float(src):
        expected = np.trunc(wide(x)).astype(np.int64).astype(dst)
    elif is_int(dst):
        expected = ref_cast(wide(x), dst)
    else:
        expected = np.asarray(x).astype(np.float64).astype(dst) if src != BOOL else x.astype(dst)
        if is_float(src) and is_float(dst):  # direct rounding (no double rounding via f64)
            expected = np.asarray(x).astype(np.float32).astype(dst)
    check(_convert_fn(dst), (x,), expected)


@pytest.mark.parametrize("value", [np.float32(2.5), np.array(-1.5, np.float16), 3.75],
                         ids=["np-scalar", "0d-array", "python-float"])
def test_convert_scalar_eager_is_array(value):
    """Eager conversion of a concrete scalar returns an Array (lax folds it into a constant)."""
    out = lax.convert_element_type(value, np.int32)
    assert isinstance(out, tx.Array), type(out)
    assert_matches(out, np.asarray(np.trunc(value)).astype(np.int32))


def _bitcast_ref(x, new):
    x = np.array(x, order="C")  # (ascontiguousarray would turn a 0-d array into 1-d)
    old_size, new_size = x.dtype.itemsize, np.dtype(new).itemsize
    flat = x.reshape(-1).view(new)
    if old_size == new_size:
        return flat.reshape(x.shape)
    if old_size > new_size:
        return flat.reshape(x.shape + (old_size // new_size,))
    return flat.reshape(x.shape[:-1])


# (from, to, shapes): same width keeps the shape, narrowing appends a dimension,
# widening consumes the trailing one.
BITCASTS = [
    (F32, I32, SHAPES), (I32, F32, SHAPES), (F16, I16, SHAPES), (BF16, U16, SHAPES),
    (U32, F32, SHAPES), (F32, U16, SHAPES), (I32, U8, SHAPES),
    (U16, F32, [(2,), (3, 2)]), (U8, I32, [(4,), (2, 4)]), (I8, F16, [(2,), (3, 2)]),
]


@functools.cache
def _bitcast_fn(new_dtype):
    return lambda x: lax.bitcast_convert_type(x, new_dtype)


@pytest.mark.parametrize("src,dst,shapes", BITCASTS,
                         ids=[f"{_name(s)}-{_name(d)}" for s, d, _ in BITCASTS])
@SETTINGS
@given(data=st.data())
def test_bitcast_convert_type(src, dst, shapes, data):
    if is_float(src):
        x = data.draw(shaped(src, -1e4, 1e4, shapes=shapes, specials=(np.inf, -0.0)))
    else:  # keep int bit patterns away from NaNs of the float target (NaN payloads may change)
        hi = {4: 2**30, 2: 0x7B00, 1: 0x7B}[src.itemsize]
        x = data.draw(shaped(src, 0, hi, shapes=shapes))
    expected = _bitcast_ref(x, dst)

    def compare(got, where):
        got = np.asarray(got)
        assert got.dtype == dst and got.shape == expected.shape, where
        np.testing.assert_array_equal(_bitcast_ref(got, f"u{dst.itemsize}"),
                                      _bitcast_ref(expected, f"u{dst.itemsize}"), err_msg=where)
    check(_bitcast_fn(dst), (x,), expected, compare=compare)


def test_bitcast_lane_order_matches_jax():
    """Narrowing bitcasts put the least significant bits first, as XLA (and JAX) do."""
    import jax
    x = np.array([1.0, -2.5, 3e-3], np.float32)
    expected = np.asarray(jax.lax.bitcast_convert_type(x, np.uint16))
    assert_matches(lax.bitcast_convert_type(x, np.uint16), expected)
    assert_matches(jitted(_bitcast_fn(U16))(x), expected)


# -- shape primitives ----------------------------------------------------------------

SHAPE_DTYPES = [F32, I8, BOOL]


def _draw(data, dtype, shape):
    return data.draw(arrays(dtype, shape, -100, 100))


@functools.cache
def _bind(op, *static):
    """A stable function applying ``op`` with static arguments (one jit cache per case)."""
    return lambda *args: op(*args, *static)


BROADCASTS = [((), (2, 3), ()), ((3,), (2, 3), (1,)), ((2, 1), (2, 3), (0, 1)),
              ((3,), (3, 2), (0,)), ((2, 3), (2, 4, 3), (0, 2)), ((1,), (4,), (0,))]


def _broadcast_ref(x, shape, dims):
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


@pytest.mark.parametrize("dtype", SHAPE_DTYPES, ids=_name)
@pytest.mark.parametrize("case", BROADCASTS, ids=str)
@FEW
@given(data=st.data())
def test_broadcast_in_dim(case, dtype, data):
    in_shape, shape, dims = case
    x = _draw(data, dtype, in_shape)
    check(_bind(lax.broadcast_in_dim, shape, dims), (x,), _broadcast_ref(x, shape, dims))


RESHAPES = [((2, 3), (3, 2), None), ((2, 3), (6,), None), ((), (1, 1), None), ((6,), (1, 2, 3), None),
            ((2, 3), (3, 2), (1, 0)), ((2, 3, 2), (4, 3), (2, 0, 1)), ((2, 3), (6,), (1, 0))]


@pytest.mark.parametrize("dtype", SHAPE_DTYPES, ids=_name)
@pytest.mark.parametrize("case", RESHAPES, ids=str)
@FEW
@given(data=st.data())
def test_reshape(case, dtype, data):
    in_shape, new_sizes, dims = case
    x = _draw(data, dtype, in_shape)
    expected = (x if dims is None else np.transpose(x, dims)).reshape(new_sizes)
    check(_bind(lax.reshape, new_sizes, dims), (x,), expected)


SQUEEZES = [((1, 3), (0,)), ((2, 1, 1), (1, 2)), ((1,), (0,)), ((3, 1), (-1,)), ((1, 2, 1), (0, 2))]


@pytest.mark.parametrize("dtype", SHAPE_DTYPES, ids=_name)
@pytest.mark.parametrize("case", SQUEEZES, ids=str)
@FEW
@given(data=st.data())
def test_squeeze(case, dtype, data):
    in_shape, dims = case
    x = _draw(data, dtype, in_shape)
    check(_bind(lax.squeeze, dims), (x,), np.squeeze(x, dims))


EXPANDS = [((3,), (0,)), ((2, 3), (1,)), ((), (0,)), ((2, 3), (0, 3)), ((3,), (-1,)), ((2,), (0, 1))]


@pytest.mark.parametrize("dtype", SHAPE_DTYPES, ids=_name)
@pytest.mark.parametrize("case", EXPANDS, ids=str)
@FEW
@given(data=st.data())
def test_expand_dims(case, dtype, data):
    in_shape, dims = case
    x = _draw(data, dtype, in_shape)
    check(_bind(lax.expand_dims, dims), (x,), np.expand_dims(x, dims))


TRANSPOSES = [((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (1, 0, 2)), ((3,), (0,))]


@pytest.mark.parametrize("dtype", SHAPE_DTYPES, ids=_name)
@pytest.mark.parametrize("case", TRANSPOSES, ids=str)
@FEW
@given(data=st.data())
def test_transpose(case, dtype, data):
    in_shape, perm = case
    x = _draw(data, dtype, in_shape)
    check(_bind(lax.transpose, perm), (x,), np.transpose(x, perm))


REVS = [((3,), (0,)), ((2, 3), (1,)), ((2, 3), (0, 1)), ((2, 3), ()), ((2, 3, 2), (0, 2))]


@pytest.mark.parametrize("dtype", SHAPE_DTYPES, ids=_name)
@pytest.mark.parametrize("case", REVS, ids=str)
@FEW
@given(data=st.data())
def test_rev(case, dtype, data):
    in_shape, dims = case
    x = _draw(data, dtype, in_shape)
    check(_bind(lax.rev, dims), (x,), np.flip(x, dims) if dims else x)


CONCATS = [([(2, 3), (1, 3)], 0), ([(2, 1), (2, 3), (2, 2)], 1), ([(3,), (4,)], 0),
           ([(2, 0), (2, 3)], 1)]


@functools.cache
def _concat_fn(dimension):
    return lambda *xs: lax.concatenate(xs, dimension)


@pytest.mark.parametrize("dtype", SHAPE_DTYPES, ids=_name)
@pytest.mark.parametrize("case", CONCATS, ids=str)
@FEW
@given(data=st.data())
def test_concatenate(case, dtype, data):
    shapes, dim = case
    xs = [_draw(data, dtype, s) for s in shapes]
    check(_concat_fn(dim), xs, np.concatenate(xs, dim))


def _pad_ref(x, value, config):
    for axis, (lo, hi, interior) in enumerate(config):
        n = x.shape[axis]
        if interior and n > 1:
            shape = list(x.shape)
            shape[axis] = n + (n - 1) * interior
            out = np.full(shape, value, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[axis] = slice(None, None, interior + 1)
            out[tuple(idx)] = x
            x = out
        edge = list(x.shape)
        if lo >= 0:
            edge[axis] = lo
            x = np.concatenate([np.full(edge, value, x.dtype), x], axis)
        else:
            x = np.take(x, range(-lo, x.shape[axis]), axis)
        edge = list(x.shape)
        if hi >= 0:
            edge[axis] = hi
            x = np.concatenate([x, np.full(edge, value, x.dtype)], axis)
        else:
            x = np.take(x, range(0, x.shape[axis] + hi), axis)
    return x


PADS = [((3,), ((1, 2, 0),)), ((3,), ((-1, 1, 2),)), ((4,), ((-2, -1, 1),)), ((), ()),
        ((2, 3), ((0, -1, 1), (2, -2, 0))), ((2, 3), ((1, 1, 2), (0, 0, 1))), ((3,), ((-3, 0, 0),))]


@pytest.mark.parametrize("dtype", [F32, BF16, I32, BOOL], ids=_name)
@pytest.mark.parametrize("case", PADS, ids=str)
@FEW
@given(data=st.data())
def test_pad(case, dtype, data):
    in_shape, config = case
    x = _draw(data, dtype, in_shape)
    value = _draw(data, dtype, ())
    check(_bind(lax.pad, config), (x, value), _pad_ref(x, value, config))


def test_pad_reference_matches_jax():
    """The NumPy padding reference itself agrees with jax.lax.pad on every case."""
    import jax
    for in_shape, config in PADS:
        x = np.arange(1, math.prod(in_shape) + 1, dtype=np.float32).reshape(in_shape)
        np.testing.assert_array_equal(_pad_ref(x, np.float32(-1), config),
                                      jax.lax.pad(x, np.float32(-1), config))


SLICES = [((5,), (1,), (4,), None), ((5,), (0,), (5,), (2,)), ((4, 5), (1, 0), (3, 5), (1, 2)),
          ((4, 5), (0, 1), (4, 4), (3, 2)), ((3,), (3,), (3,), None), ((6,), (1,), (6,), (4,))]


@pytest.mark.parametrize("dtype", SHAPE_DTYPES, ids=_name)
@pytest.mark.parametrize("case", SLICES, ids=str)
@FEW
@given(data=st.data())
def test_slice(case, dtype, data):
    in_shape, start, limit, strides = case
    x = _draw(data, dtype, in_shape)
    idx = tuple(slice(s, l, st_) for s, l, st_ in zip(start, limit, strides or (1,) * len(start)))
    check(_bind(lax.slice, start, limit, strides), (x,), x[idx])


def _clamped_starts(starts, shape, sizes):
    """JAX's rule: negative starts count from the end, then XLA clamps into range."""
    out = []
    for i, d, s in zip(starts, shape, sizes):
        i = int(i)
        i = i + d if i < 0 else i
        out.append(min(max(i, 0), d - s))
    return out


DYN_SLICES = [((5,), (2,)), ((4, 5), (2, 3)), ((4, 5), (4, 1)), ((3,), (0,))]


@functools.cache
def _dyn_slice_fn(sizes):
    return lambda x, *idx: lax.dynamic_slice(x, idx, sizes)


@pytest.mark.parametrize("index_dtype", [I32, I8, U8], ids=_name)
@pytest.mark.parametrize("case", DYN_SLICES, ids=str)
@SETTINGS
@given(data=st.data())
def test_dynamic_slice(case, index_dtype, data):
    in_shape, sizes = case
    x = _draw(data, F32, in_shape)
    lo = 0 if index_dtype == U8 else -9
    starts = [data.draw(arrays(index_dtype, (), lo, 9)) for _ in in_shape]
    begin = _clamped_starts(starts, in_shape, sizes)
    expected = x[tuple(slice(b, b + s) for b, s in zip(begin, sizes))]
    check(_dyn_slice_fn(sizes), (x, *starts), expected)
    # Python int starts (static under jit)
    static = _bind(lax.dynamic_slice, tuple(int(s) for s in starts), sizes)
    assert_matches(static(x), expected, where="eager, int starts")


DYN_UPDATES = [((5,), (2,)), ((4, 5), (2, 3)), ((4, 5), (4, 1)), ((3,), (3,))]


@functools.cache
def _dyn_update_fn():
    return lambda x, u, *idx: lax.dynamic_update_slice(x, u, idx)


@pytest.mark.parametrize("dtype", [F32, I32, BOOL], ids=_name)
@pytest.mark.parametrize("case", DYN_UPDATES, ids=str)
@SETTINGS
@given(data=st.data())
def test_dynamic_update_slice(case, dtype, data):
    in_shape, upd_shape = case
    x = _draw(data, dtype, in_shape)
    u = _draw(data, dtype, upd_shape)
    starts = [data.draw(arrays(I32, (), -9, 9)) for _ in in_shape]
    begin = _clamped_starts(starts, in_shape, upd_shape)
    expected = x.copy()
    expected[tuple(slice(b, b + s) for b, s in zip(begin, upd_shape))] = u
    check(_dyn_update_fn(), (x, u, *starts), expected)


IOTAS = [((5,), 0), ((2, 3), 0), ((2, 3), 1), ((3, 2, 2), 2), ((0, 3), 1)]
IOTA_DTYPES = [I32, U8, F32, BF16]


@functools.cache
def _iota_jit_results():
    """The jit side of every iota case, as ONE jitted program (one compile, not one per
    case): {(dtype, case): (broadcasted_iota, iota or None)}."""
    keys = [(d, c) for d in IOTA_DTYPES for c in IOTAS]

    def program():
        return [(lax.broadcasted_iota(d, shape, dim), lax.iota(d, shape[0]) if len(shape) == 1 else None)
                for d, (shape, dim) in keys]
    return dict(zip(keys, tx.jit(program)()))


@pytest.mark.parametrize("dtype", IOTA_DTYPES, ids=_name)
@pytest.mark.parametrize("case", IOTAS, ids=str)
def test_broadcasted_iota(dtype, case):
    """iota has no operands, so there is nothing to draw: every case runs once."""
    shape, dim = case
    expected = np.broadcast_to(
        np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))]),
        shape).astype(dtype)
    fn = _bind(lax.broadcasted_iota, dtype, shape, dim)
    assert_matches(fn(), expected, where="eager")
    jit_iota, jit_1d_iota = _iota_jit_results()[dtype, case]
    assert_matches(jit_iota, expected, where="jit")
    if len(shape) == 1:
        assert_matches(lax.iota(dtype, shape[0]), expected, where="eager iota")
        assert_matches(jit_1d_iota, expected, where="jit iota")


# -- dot_general ----------------------------------------------------------------------

# (lhs shape, rhs shape, dimension_numbers, einsum spec)
DOTS = [
    ((2, 3), (3, 4), (((1,), (0,)), ((), ())), "ij,jk->ik"),
    ((3,), (3,), (((0,), (0,)), ((), ())), "i,i->"),
    ((3,), (4,), (((), ()), ((), ())), "i,j->ij"),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,))), "bij,bjk->bik"),
    ((3, 2, 4), (2, 3, 5), (((0,), (1,)), ((1,), (0,))), "jbi,bjk->bik"),
    ((2, 3, 4), (4, 3), (((1, 2), (1, 0)), ((), ())), "bij,ji->b"),
]
# (lhs/rhs dtype, preferred_element_type, kind): the first two over every case above, the
# others over a matmul and a batched product.
DOT_TYPES = [(F32, None, "arith"), (I32, None, "exact"), (F16, None, "trans"), (BF16, F32, "arith"),
             (I8, None, "exact"), (I8, I32, "exact"), (I32, F32, "arith"), (U8, I32, "exact")]
DOT_PARAMS = [(c, *t) for i, t in enumerate(DOT_TYPES) for c in (DOTS if i < 2 else DOTS[::3])]


@pytest.mark.parametrize("case,dtype,preferred,kind", DOT_PARAMS,
                         ids=[f"{c[3]}-{_name(d)}-{p and _name(p)}" for c, d, p, _ in DOT_PARAMS])
@FEW
@given(data=st.data())
def test_dot_general(case, dtype, preferred, kind, data):
    lshape, rshape, dn, spec = case
    lo, hi = (-10, 10) if dtype != U8 else (0, 30)
    lhs = data.draw(arrays(dtype, lshape, lo, hi))
    rhs = data.draw(arrays(dtype, rshape, lo, hi))
    out_dtype = preferred or dtype
    exact = np.einsum(spec, wide(lhs), wide(rhs))
    expected = ref_cast(exact, out_dtype)
    fn = _bind(lax.dot_general, dn, None, preferred)
    if kind == "exact":
        check(fn, (lhs, rhs), expected)
        return
    # "arith": sums of products, absolute error relative to the operand scale;
    # "trans": f16 accumulation
    rtol, atol = (1e-6, 1e-3) if kind == "arith" else (1e-2, 0.5)

    def compare(got, where):
        got = np.asarray(got)
        assert got.dtype == out_dtype and got.shape == expected.shape, where
        np.testing.assert_allclose(got.astype(np.float64), exact, rtol=rtol, atol=atol,
                                   err_msg=where)
    check(fn, (lhs, rhs), expected, compare=compare)


# (lhs dtype, rhs dtype, preferred, expected result dtype): JAX's rule takes the operand of
# higher precision (XLA's HigherPrecisionType) and converts the other.
MIXED_DOTS = [(F16, F32, None, F32), (I8, F32, None, F32), (U32, I32, None, I32),
              (BF16, F16, None, BF16), (BOOL, I8, None, I8), (I8, I32, F32, F32)]


@pytest.mark.parametrize("ldt,rdt,preferred,out", MIXED_DOTS,
                         ids=[f"{_name(a)}-{_name(b)}-{p and _name(p)}" for a, b, p, _ in MIXED_DOTS])
@FEW
@given(data=st.data())
def test_dot_general_mixed_dtypes(ldt, rdt, preferred, out, data):
    small = st.integers(0, 8)  # small integers: exact in every dtype, so results are exact
    lhs = data.draw(arrays(ldt, (2, 3), elems=st.booleans() if ldt == BOOL else small))
    rhs = data.draw(arrays(rdt, (3, 4), elems=small))
    fn = _bind(lax.dot_general, DOTS[0][2], None, preferred)
    check(fn, (lhs, rhs), ref_cast(np.einsum("ij,jk->ik", wide(lhs), wide(rhs)), out))


def test_dot_general_preferred_narrower_is_rejected():
    x = np.ones((2, 3), np.int32)
    with pytest.raises(TypeError, match="must not be narrower"):
        lax.dot_general(x, x.T, DOTS[0][2], preferred_element_type=np.int8)
    with pytest.raises(TypeError, match="must not be narrower"):
        tx.jit(lambda a: lax.dot_general(a, a, (((0,), (0,)), ((), ())), None, np.uint16))(x)


# -- reductions -----------------------------------------------------------------------

REDUCE_CASES = [((2, 3), (1,)), ((2, 3), (0, 1)), ((2, 3), ()), ((), ()), ((2, 3, 2), (0, 2)),
                ((2, 0), (1,))]


def _lowest(dtype):
    return False if dtype == BOOL else (np.iinfo(dtype).min if is_int(dtype) else -np.inf)


def _highest(dtype):
    return True if dtype == BOOL else (np.iinfo(dtype).max if is_int(dtype) else np.inf)


def _reduce_ref(name, x, axes):
    axes = tuple(axes)
    dtype = x.dtype
    if name == "reduce_sum":
        return ref_cast(np.sum(wide(x), axis=axes), dtype)
    if name == "reduce_prod":
        return ref_cast(np.prod(wide(x), axis=axes), dtype)  # |x| <= 3: exact in int64
    if name == "reduce_max":
        return np.max(x, axis=axes, initial=_lowest(dtype)).astype(dtype)
    if name == "reduce_min":
        return np.min(x, axis=axes, initial=_highest(dtype)).astype(dtype)
    if name == "reduce_and":
        init = True if dtype == BOOL else np.array(-1).astype(dtype)
        return np.bitwise_and.reduce(x, axis=axes, initial=init).astype(dtype) if axes else x
    if name == "reduce_or":
        init = False if dtype == BOOL else np.array(0).astype(dtype)
        return np.bitwise_or.reduce(x, axis=axes, initial=init).astype(dtype) if axes else x
    raise AssertionError(name)


# name, lax function, dtypes with (rtol, atol) (None: exact), domain. Float sums and
# products round once per element (up to 12 here) in an order NumPy does not follow.
REDUCTIONS = [
    ("reduce_sum", lax.reduce_sum, [(F32, (1e-6, 1e-4)), (F16, (1e-2, 0.25)), (I32, None), (U8, None)],
     (-10, 10)),
    ("reduce_prod", lax.reduce_prod, [(F32, (1e-5, 0)), (BF16, (3e-2, 0)), (I32, None), (U8, None)],
     (-3, 3)),
    ("reduce_max", lax.reduce_max, [(F32, None), (BF16, None), (I8, None), (U32, None), (BOOL, None)],
     (-100, 100)),
    ("reduce_min", lax.reduce_min, [(F32, None), (F16, None), (I32, None), (U8, None), (BOOL, None)],
     (-100, 100)),
    ("reduce_and", lax.reduce_and, [(BOOL, None), (I32, None), (U8, None)], (-2**31, 2**31)),
    ("reduce_or", lax.reduce_or, [(BOOL, None), (I32, None), (U8, None)], (-2**31, 2**31)),
]


@functools.cache
def _reduce_fn(fn, axes):
    return lambda x: fn(x, axes)


@pytest.mark.parametrize("name,fn,dtype,tol,domain",
                         [(n, f, d, t, dom) for n, f, dts, dom in REDUCTIONS for d, t in dts],
                         ids=[f"{n}-{_name(d)}" for n, _, dts, _ in REDUCTIONS for d, _ in dts])
@SETTINGS
@given(data=st.data())
def test_reduction(name, fn, dtype, tol, domain, data):
    shape, axes = data.draw(st.sampled_from(REDUCE_CASES))
    specials = (np.inf, -np.inf) if name in ("reduce_max", "reduce_min") else ()
    x = data.draw(arrays(dtype, shape, *domain, specials=specials))
    expected = _reduce_ref(name, x, axes)
    f = _reduce_fn(fn, axes)
    if tol is None:
        check(f, (x,), expected)
        return

    def compare(got, where):
        got = np.asarray(got)
        assert got.dtype == dtype and got.shape == expected.shape, where
        np.testing.assert_allclose(got.astype(np.float64), np.prod(wide(x), axis=tuple(axes))
                                   if name == "reduce_prod" else np.sum(wide(x), axis=tuple(axes)),
                                   rtol=tol[0], atol=tol[1], err_msg=where)
    check(f, (x,), expected, compare=compare)


ARG_CASES = [((5,), 0), ((2, 3), 0), ((2, 3), 1), ((3, 4), 1), ((1,), 0)]


@functools.cache
def _arg_fn(fn, axis, index_dtype):
    return lambda x: fn(x, axis, index_dtype)


@pytest.mark.parametrize("dtype,index_dtype", [(F32, I32), (F16, I32), (I8, I32), (U32, I32),
                                               (BOOL, I32), (F32, U8)],
                         ids=["f32", "f16", "i8", "u32", "bool", "f32-u8index"])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@SETTINGS
@given(data=st.data())
def test_argminmax(name, dtype, index_dtype, data):
    """Ties resolve to the first index; NaN counts as the extreme (checked against jax)."""
    shape, axis = data.draw(st.sampled_from(ARG_CASES))
    if is_float(dtype):
        elems = st.sampled_from([np.nan, -np.inf, np.inf, -1.0, 0.0, 2.0, 2.0])
    elif dtype == BOOL:
        elems = st.booleans()
    else:
        info = np.iinfo(dtype)
        elems = st.sampled_from([int(info.min), int(info.max), 0, 3])
    x = data.draw(arrays(dtype, shape, elems=elems))
    if is_float(dtype) and np.isnan(x).any():
        import jax
        expected = np.asarray(getattr(jax.lax, name)(x, axis, index_dtype))
    else:
        expected = (np.argmax if name == "argmax" else np.argmin)(x, axis).astype(index_dtype)
    fn = _arg_fn(getattr(lax, name), axis, index_dtype)
    check(fn, (x,), expected)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argminmax_nan_matches_jax(name):
    """Fixed NaN layouts (one NaN, several NaNs, all NaN) against jax.lax on the same input."""
    import jax
    x = np.array([[1.0, np.nan, 3.0, np.nan], [np.nan, np.nan, np.nan, np.nan],
                  [5.0, -1.0, 5.0, np.nan], [-np.inf, 2.0, np.nan, 2.0]], np.float32)
    for axis in (0, 1):
        expected = np.asarray(getattr(jax.lax, name)(x, axis, np.int32))
        # every row and column holds a NaN: jax picks the first one
        np.testing.assert_array_equal(expected, np.argmax(np.isnan(x), axis))
        fn = _arg_fn(getattr(lax, name), axis, I32)
        check(fn, (x,), expected)


# -- families sharing their jit programs (``_shared_jit``) ------------------------------

_N_FEW, _N_SETTINGS = FEW.max_examples, SETTINGS.max_examples

# test name -> (examples per test, parameters -> (function, [(shape, dtype) per argument]))
FAMILIES = {
    "test_max_min_nan": (_N_FEW, lambda name, fn, dtype: (fn, [((6,), dtype)] * 2)),
    "test_broadcast_in_dim": (_N_FEW, lambda case, dtype: (
        _bind(lax.broadcast_in_dim, case[1], case[2]), [(case[0], dtype)])),
    "test_reshape": (_N_FEW, lambda case, dtype: (_bind(lax.reshape, case[1], case[2]), [(case[0], dtype)])),
    "test_squeeze": (_N_FEW, lambda case, dtype: (_bind(lax.squeeze, case[1]), [(case[0], dtype)])),
    "test_expand_dims": (_N_FEW, lambda case, dtype: (_bind(lax.expand_dims, case[1]), [(case[0], dtype)])),
    "test_transpose": (_N_FEW, lambda case, dtype: (_bind(lax.transpose, case[1]), [(case[0], dtype)])),
    "test_rev": (_N_FEW, lambda case, dtype: (_bind(lax.rev, case[1]), [(case[0], dtype)])),
    "test_concatenate": (_N_FEW, lambda case, dtype: (_concat_fn(case[1]), [(s, dtype) for s in case[0]])),
    "test_pad": (_N_FEW, lambda case, dtype: (_bind(lax.pad, case[1]), [(case[0], dtype), ((), dtype)])),
    "test_slice": (_N_FEW, lambda case, dtype: (_bind(lax.slice, *case[1:]), [(case[0], dtype)])),
    "test_dynamic_slice": (_N_SETTINGS, lambda case, index_dtype: (
        _dyn_slice_fn(case[1]), [(case[0], F32)] + [((), index_dtype)] * len(case[0]))),
    "test_dynamic_update_slice": (_N_SETTINGS, lambda case, dtype: (
        _dyn_update_fn(), [(case[0], dtype), (case[1], dtype)] + [((), I32)] * len(case[0]))),
    "test_dot_general": (_N_FEW, lambda case, dtype, preferred, kind: (
        _bind(lax.dot_general, case[2], None, preferred), [(case[0], dtype), (case[1], dtype)])),
    "test_dot_general_mixed_dtypes": (_N_FEW, lambda ldt, rdt, preferred, out: (
        _bind(lax.dot_general, DOTS[0][2], None, preferred), [((2, 3), ldt), ((3, 4), rdt)])),
}

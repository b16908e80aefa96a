"""``traxla.test_util``: check derivatives against central finite differences, as
``jax.test_util`` (one random direction per check, so the cost does not grow with
the number of inputs and outputs)."""
from __future__ import annotations

import functools
import operator

import ml_dtypes
import numpy as np

from traxla import tree_util
from traxla.ir import dtypes as _d
from traxla.ir.dtypes import float0
from traxla.autodiff import jvp, linearize, vjp

EPS = 1e-4

_PY_SCALAR_DTYPES = {bool: np.dtype(bool), int: np.dtype("int64"), float: np.dtype("float64"),
                     complex: np.dtype("complex128")}

# Tolerances for comparing a value or a derivative, per dtype (integers compare exactly).
_default_tolerance = {
    float0: 0, np.dtype(np.bool_): 0,
    **{np.dtype(t): 0 for t in (np.int8, np.int16, np.int32, np.int64,
                                np.uint8, np.uint16, np.uint32, np.uint64)},
    np.dtype(ml_dtypes.bfloat16): 1e-2, np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}
default_gradient_tolerance = {
    np.dtype(ml_dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}


def _dtype(x) -> np.dtype:
    if hasattr(x, "dtype"):
        return x.dtype
    dtype = _PY_SCALAR_DTYPES.get(type(x))
    return dtype if dtype is not None else np.asarray(x).dtype


def _is_python_scalar(x) -> bool:
    return not isinstance(x, np.generic) and isinstance(x, (bool, int, float, complex))


def _tolerance(dtype, tol) -> float:
    tol = {} if tol is None else tol
    if not isinstance(tol, dict):
        return tol
    tol = {np.dtype(k): v for k, v in tol.items()}
    dtype = _d.canonicalize(np.dtype(dtype))
    return tol.get(dtype, _default_tolerance[dtype])


def _assert_close_leaf(a, b, atol=None, rtol=None, err_msg=""):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{err_msg}: shapes differ, {a.shape} vs {b.shape}"
    atol_ = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol))
    rtol_ = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol))
    if a.dtype == b.dtype == float0:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    if a.dtype == ml_dtypes.bfloat16:
        a = a.astype(np.float32)
    if b.dtype == ml_dtypes.bfloat16:
        b = b.astype(np.float32)
    kw = {}
    if atol_:
        kw["atol"] = atol_ * a.size
    if rtol_:
        kw["rtol"] = rtol_ * b.size
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, err_msg=err_msg, **kw)


def check_close(xs, ys, atol=None, rtol=None, err_msg=""):
    tree_util.tree_map(functools.partial(_assert_close_leaf, atol=atol, rtol=rtol,
                                         err_msg=err_msg), xs, ys)


def _check_dtypes_match(xs, ys):
    def check(x, y):
        dx, dy = _dtype(x), _dtype(y)
        if not _d._flags.enable_x64:
            dx, dy = _d.canonicalize(np.dtype(dx)), _d.canonicalize(np.dtype(dy))
        assert dx == dy, f"dtypes differ: {dx} vs {dy}"
    tree_util.tree_map(check, xs, ys)


def _inner_prod(xs, ys):
    def contract(x, y):
        return np.real(np.dot(np.conj(x).reshape(-1), np.asarray(y).reshape(-1)))
    return tree_util.tree_reduce(np.add, tree_util.tree_map(contract, xs, ys))


def _keep_type(f):
    def wrapped(*args):
        result = np.array(f(*args), dtype=_dtype(args[0]))
        return result.item() if all(_is_python_scalar(a) for a in args) else result
    return wrapped


_add = functools.partial(tree_util.tree_map, _keep_type(operator.add))
_sub = functools.partial(tree_util.tree_map, _keep_type(operator.sub))
_conj = functools.partial(tree_util.tree_map, _keep_type(np.conj))


def _safe_sub(xs, ys):
    def sub(x, y):  # inf - inf is 0 here: a derivative of a saturated value is zero
        dtype = _dtype(x)
        with np.errstate(invalid="ignore"):
            return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))
    return tree_util.tree_map(sub, xs, ys)


def _scalar_mul(xs, a):
    def mul(x):
        dtype = _dtype(x)
        result = np.multiply(x, np.array(a, dtype=dtype), dtype=dtype)
        return result.item() if _is_python_scalar(x) else result
    return tree_util.tree_map(mul, xs)


def _rand_like(rng, x):
    shape, dtype = np.shape(x), _dtype(x)
    result = np.asarray(rng.randn(*shape), dtype=dtype)
    if np.issubdtype(dtype, np.complexfloating):
        result = result + dtype.type(1.0j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return result.item() if _is_python_scalar(x) else result


def numerical_jvp(f, primals, tangents, eps=EPS):
    """Central difference of ``f`` at ``primals`` along ``tangents``."""
    delta = _scalar_mul(tangents, eps)
    f_pos = f(*_add(primals, delta))
    f_neg = f(*_sub(primals, delta))
    return _scalar_mul(_safe_sub(f_pos, f_neg), 0.5 / eps)


def _merge_tolerance(tol, default):
    if tol is None:
        return default
    if not isinstance(tol, dict):
        return tol
    out = dict(default)
    out.update({np.dtype(k): v for k, v in tol.items()})
    return out


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Checks ``f_jvp`` (typically ``partial(traxla.jvp, f)``) against finite
    differences of ``f`` at ``args`` in one random direction; AssertionError if not."""
    atol = _merge_tolerance(atol, default_gradient_tolerance)
    rtol = _merge_tolerance(rtol, default_gradient_tolerance)
    rng = np.random.RandomState(0)
    tangent = tree_util.tree_map(functools.partial(_rand_like, rng), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out)
    v_expected = f(*args)
    _check_dtypes_match(v_out, v_expected)
    t_expected = numerical_jvp(f, args, tangent, eps=eps)
    check_close(v_out, v_expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} primal" if err_msg else "primal")
    check_close(t_out, t_expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Checks ``f_vjp`` (typically ``partial(traxla.vjp, f)``) against finite
    differences: the cotangent projection must equal the tangent projection."""
    atol = _merge_tolerance(atol, default_gradient_tolerance)
    rtol = _merge_tolerance(rtol, default_gradient_tolerance)
    rand_like = functools.partial(_rand_like, np.random.RandomState(0))
    v_out, vjp_fun = f_vjp(*args)
    check_close(v_out, f(*args), atol=atol, rtol=rtol,
                err_msg=f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_util.tree_map(rand_like, args)
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_util.tree_map(rand_like, v_out)
    cotangent_out = _conj(vjp_fun(_conj(cotangent)))
    check_close(_inner_prod(tangent, cotangent_out), _inner_prod(tangent_out, cotangent),
                atol=atol, rtol=rtol,
                err_msg=f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks forward (``'fwd'``), reverse (``'rev'``) and linearized (``'lin'``)
    derivatives of ``f`` at ``args`` up to ``order`` against finite differences."""
    args = tuple(args)
    eps = eps or EPS
    check_jvp_ = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    check_vjp_ = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def jvp_from_lin(f, primals, tangents):
        primal_out, f_lin = linearize(f, *primals)
        return primal_out, f_lin(*tangents)

    def check(f, args, order, err_msg=""):
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_jvp_(f, functools.partial(jvp, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp_(f, functools.partial(vjp, f), args, err_msg=msg)
            if order > 1:
                def f_vjp(*args):
                    out, vjp_fun = vjp(f, *args)
                    return vjp_fun(out)
                check(f_vjp, args, order - 1, msg)
        if "lin" in modes:
            msg = f"LIN of {err_msg}" if err_msg else "LIN"
            check_jvp_(f, functools.partial(jvp_from_lin, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(jvp_from_lin, f), (args, args), order - 1, msg)

    check(f, args, order)


__all__ = ["check_grads", "check_jvp", "check_vjp"]

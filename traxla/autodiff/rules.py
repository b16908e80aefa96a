"""JVP and transpose rules, by family, written to emit the same equations in the
same order as JAX's rules (so differentiated jaxprs print the same)."""
from __future__ import annotations

import functools
import itertools

import numpy as np

from .. import lax
from ..ir import dtypes
from ..ir.rules.ad import add_any_p
from ..ir.rules.elementwise import P as E
from ..ir.rules.reduction import P as R, dot_general_p
from ..ir.rules import shape as S
from .core import (Zero, add_tangents, instantiate, is_undefined, jvp_rules, transpose_rules,
                   zero_of)


# -- helpers to define rules ---------------------------------------------------------------

def _const(x, value):
    return lax._convert_element_type(value, lax.dtype_of(x), False)


def _one(x):
    return _const(x, 1)


def defjvp(prim, *rules):
    """Each rule maps one operand's tangent to its contribution: ``rule(t, *primals)``."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        contributions = [rule(t, *primals, **params) for rule, t in zip(rules, tangents)
                         if rule is not None and type(t) is not Zero]
        return out, functools.reduce(add_tangents, contributions, zero_of(out))
    jvp_rules[prim] = jvp


def defjvp2(prim, *rules):
    """Like defjvp, with the primal output available: ``rule(t, ans, *primals)``."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        contributions = [rule(t, out, *primals, **params) for rule, t in zip(rules, tangents)
                         if rule is not None and type(t) is not Zero]
        return out, functools.reduce(add_tangents, contributions, zero_of(out))
    jvp_rules[prim] = jvp


def defjvp_zero(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [zero_of(o) for o in out]
        return out, zero_of(out)
    jvp_rules[prim] = jvp


def deflinear(prim, transpose):
    """A primitive linear in all its operands: its JVP applies it to the tangents."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, ([zero_of(o) for o in out] if prim.multiple_results else zero_of(out))
        return out, prim.bind(*[instantiate(t) for t in tangents], **params)

    def transpose_rule(ct, *args, **params):
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined(a) else None for a in args]
        return transpose(ct, *args, **params)
    jvp_rules[prim] = jvp
    transpose_rules[prim] = transpose_rule


def _aval(x):
    return x.aval if is_undefined(x) else lax.aval_of(x)


def unbroadcast(aval, x):
    """Sums ``x`` down to ``aval``'s shape (the transpose of lax's implicit broadcasting)."""
    x_shape = lax.shape_of(x)
    if tuple(aval.shape) == tuple(x_shape):
        return x
    if not aval.shape:
        return lax.reduce_sum(x, list(range(len(x_shape))))
    dims = [i for i, (a, b) in enumerate(zip(x_shape, aval.shape)) if a != b]
    x = lax.reduce_sum(x, dims) if dims else x
    return lax.reshape(x, aval.shape)


def maybe_broadcast(target_shape, x):
    x_shape = lax.shape_of(x)
    if tuple(x_shape) == tuple(target_shape):
        return x
    if not x_shape:
        return lax.broadcast_in_dim(x, target_shape, ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, target_shape)) if a == b]
    return lax.broadcast_in_dim(lax.reshape(x, [x_shape[i] for i in dims]), target_shape, dims)


# -- elementwise ---------------------------------------------------------------------------------

deflinear(E["neg"], lambda t, x: [lax.neg(t)])
for _name in ("sign", "floor", "ceil", "round", "is_finite", "not", "and", "or", "xor",
              "shift_left", "shift_right_logical", "shift_right_arithmetic",
              "eq", "ne", "lt", "le", "gt", "ge", "bitcast_convert_type"):
    defjvp_zero(E[_name])
for _name in ("argmax", "argmin"):
    defjvp_zero(R[_name])

defjvp2(E["exp"], lambda g, ans, x, **kw: lax.mul(g, ans))
defjvp2(E["exp2"], lambda g, ans, x, **kw: lax.mul(lax.log(_const(x, 2)), lax.mul(g, ans)))
defjvp(E["log"], lambda g, x, **kw: lax.div(g, x))
defjvp(E["log1p"], lambda g, x, **kw: lax.div(g, lax.add(x, _one(x))))
defjvp2(E["expm1"], lambda g, ans, x, **kw: lax.mul(g, lax.add(ans, _one(ans))))
defjvp2(E["tanh"], lambda g, ans, x, **kw: lax.mul(lax.add(g, lax.mul(g, ans)), lax.sub(_one(x), ans)))
defjvp2(E["logistic"], lambda g, ans, x, **kw: lax.mul(g, lax.mul(ans, lax.sub(_one(ans), ans))))
defjvp(E["sin"], lambda g, x, **kw: lax.mul(g, lax.cos(x)))
defjvp(E["cos"], lambda g, x, **kw: lax.neg(lax.mul(g, lax.sin(x))))
defjvp2(E["tan"], lambda g, ans, x, **kw: lax.mul(g, lax.add(_const(x, 1), lax.square(ans))))
defjvp(E["asin"], lambda g, x: lax.mul(g, lax.rsqrt(lax.sub(_const(x, 1), lax.square(x)))))
defjvp(E["acos"], lambda g, x: lax.mul(g, lax.neg(lax.rsqrt(lax.sub(_const(x, 1), lax.square(x))))))
defjvp(E["atan"], lambda g, x: lax.div(g, lax.add(_const(x, 1), lax.square(x))))
defjvp(E["sinh"], lambda g, x: lax.mul(g, lax.cosh(x)))
defjvp(E["cosh"], lambda g, x: lax.mul(g, lax.sinh(x)))
defjvp(E["asinh"], lambda g, x: lax.mul(g, lax.rsqrt(lax.add(lax.square(x), _one(x)))))
defjvp(E["acosh"], lambda g, x: lax.mul(g, lax.rsqrt(lax.sub(lax.square(x), _one(x)))))
defjvp(E["atanh"], lambda g, x: lax.mul(lax.reciprocal(lax.add(_one(x), x)),
                                        lax.div(g, lax.sub(_one(x), x))))
defjvp2(E["sqrt"], lambda g, ans, x, **kw: lax.mul(g, lax.div(_const(x, 0.5), ans)))
defjvp2(E["rsqrt"], lambda g, ans, x, **kw: lax.mul(g, lax.mul(_const(x, -0.5), lax.div(ans, x))))
defjvp2(E["cbrt"], lambda g, ans, x, **kw: lax.mul(g, lax.mul(_const(x, 1 / 3), lax.integer_pow(ans, -2))))
defjvp2(E["abs"], lambda g, ans, x: lax.select(lax.ge(x, _const(x, 0)), g, lax.neg(g)))
defjvp(E["erf"], lambda g, x: lax.mul(_const(x, 2 / np.sqrt(np.pi)),
                                      lax.mul(g, lax.exp(lax.neg(lax.square(x))))))
defjvp2(E["erf_inv"], lambda g, ans, x: lax.mul(_const(x, np.sqrt(np.pi) / 2),
                                                lax.mul(g, lax.exp(lax.square(ans)))))


def _integer_pow_jvp(g, x, *, y):
    if y == 0:
        return lax.full_like(g, 0)
    if y == 1:
        return g
    if y == 2:
        return lax.mul(g, lax.mul(_const(x, y), x))
    return lax.mul(g, lax.mul(_const(x, y), lax.integer_pow(x, y - 1)))


defjvp(E["integer_pow"], _integer_pow_jvp)


def _pow_jvp_lhs(g, ans, x, y):
    if dtypes.is_int(lax.dtype_of(y)):
        y = lax.convert_element_type(y, lax.dtype_of(x))
    jac = lax.select(lax.eq(y, _const(y, 0)), lax.full_like(y, 0),
                     lax.mul(y, lax.pow(x, lax.sub(y, _one(y)))))
    return lax.mul(g, jac)


def _pow_jvp_rhs(g, ans, x, y):
    return lax.mul(g, lax.select(lax.eq(x, _const(x, 0)), lax.full_like(ans, 0),
                                 lax.mul(lax.log(x), ans)))


defjvp2(E["pow"], _pow_jvp_lhs, _pow_jvp_rhs)
defjvp(E["atan2"],
       lambda g, x, y: lax.mul(g, lax.div(y, lax.add(lax.square(x), lax.square(y)))),
       lambda g, x, y: lax.mul(g, lax.div(lax.neg(x), lax.add(lax.square(x), lax.square(y)))))
defjvp(E["rem"], lambda g, x, y: maybe_broadcast(lax.broadcast_shapes_of(x, y), g)
       if hasattr(lax, "broadcast_shapes_of") else g,
       lambda g, x, y: lax.mul(lax.neg(g), lax.mul(lax.sign(lax.div(x, y)),
                                                   lax.floor(lax.abs(lax.div(x, y))))))
defjvp(E["nextafter"], None, None)


def _balanced_eq(x, z, y):
    one, half = _const(x, 1), _const(x, 0.5)
    return lax.div(lax.select(lax.eq(x, z), one, _const(x, 0)),
                   lax.select(lax.eq(y, z), _const(x, 2), one)) if False else \
        lax.div(lax.select(lax.eq(x, z), lax.full_like(x, 1), lax.full_like(x, 0)),
                lax.select(lax.eq(y, z), lax.full_like(x, 2), lax.full_like(x, 1)))


defjvp2(E["max"],
        lambda g, ans, x, y: lax.mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: lax.mul(g, _balanced_eq(y, ans, x)))
defjvp2(E["min"],
        lambda g, ans, x, y: lax.mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: lax.mul(g, _balanced_eq(y, ans, x)))


def _add_jvp(primals, tangents):
    x, y = primals
    xdot, ydot = tangents
    out = lax.add(x, y)
    if type(xdot) is Zero and type(ydot) is Zero:
        return out, zero_of(out)
    if type(xdot) is Zero:
        return out, maybe_broadcast(lax.shape_of(out), ydot)
    if type(ydot) is Zero:
        return out, maybe_broadcast(lax.shape_of(out), xdot)
    return out, lax.add(xdot, ydot)


def _add_transpose(t, x, y):
    xa, ya = _aval(x), _aval(y)
    if type(t) is Zero:
        return [Zero(xa), Zero(ya)]
    return [unbroadcast(xa, t), unbroadcast(ya, t)]


def _sub_jvp(primals, tangents):
    x, y = primals
    xdot, ydot = tangents
    out = lax.sub(x, y)
    if type(xdot) is Zero and type(ydot) is Zero:
        return out, zero_of(out)
    if type(xdot) is Zero:
        return out, maybe_broadcast(lax.shape_of(out), lax.neg(ydot))
    if type(ydot) is Zero:
        return out, maybe_broadcast(lax.shape_of(out), xdot)
    return out, lax.sub(xdot, ydot)


def _sub_transpose(t, x, y):
    xa, ya = _aval(x), _aval(y)
    if type(t) is Zero:
        return [Zero(xa), Zero(ya)]
    return [unbroadcast(xa, t), unbroadcast(ya, lax.neg(t))]


jvp_rules[E["add"]] = _add_jvp
transpose_rules[E["add"]] = _add_transpose
jvp_rules[E["sub"]] = _sub_jvp
transpose_rules[E["sub"]] = _sub_transpose

defjvp(E["mul"], lambda xdot, x, y: lax.mul(xdot, y), lambda ydot, x, y: lax.mul(x, ydot))


def _mul_transpose(ct, x, y):
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None, Zero(y.aval) if is_undefined(y) else None]
    if is_undefined(x) and is_undefined(y):
        raise ValueError("mul is not linear in both operands: cannot transpose x * y with both "
                         "operands linear")
    if is_undefined(x):
        return [unbroadcast(x.aval, lax.mul(ct, y)), None]
    return [None, unbroadcast(y.aval, lax.mul(x, ct))]


transpose_rules[E["mul"]] = _mul_transpose

defjvp(E["div"], lambda g, x, y: lax.div(g, y),
       lambda g, x, y: lax.mul(lax.mul(lax.neg(g), x), lax.integer_pow(y, -2)))


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise ValueError("div is not linear in its divisor: cannot transpose")
    if type(ct) is Zero:
        return [Zero(x.aval), None]
    return [unbroadcast(x.aval, lax.div(ct, y)), None]


transpose_rules[E["div"]] = _div_transpose


def _add_any_transpose(ct, x, y):
    return [ct, ct]


def _add_any_jvp(primals, tangents):
    x, y = primals
    out = add_any_p.bind(x, y)
    return out, add_tangents(*tangents) if any(type(t) is not Zero for t in tangents) else zero_of(out)


jvp_rules[add_any_p] = _add_any_jvp
transpose_rules[add_any_p] = _add_any_transpose


def _convert_jvp(primals, tangents, *, new_dtype, weak_type, sharding=None):
    x, = primals
    t, = tangents
    out = E["convert_element_type"].bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
    if type(t) is Zero or not dtypes.is_inexact(new_dtype) or not dtypes.is_inexact(lax.dtype_of(x)):
        return out, zero_of(out)
    return out, E["convert_element_type"].bind(t, new_dtype=new_dtype, weak_type=weak_type,
                                               sharding=sharding)


def _convert_transpose(ct, x, *, new_dtype, weak_type, sharding=None):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [E["convert_element_type"].bind(ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type,
                                           sharding=None)]


jvp_rules[E["convert_element_type"]] = _convert_jvp
transpose_rules[E["convert_element_type"]] = _convert_transpose


def _stop_gradient_jvp(primals, tangents):
    out = E["stop_gradient"].bind(*primals)
    return out, zero_of(out)


jvp_rules[E["stop_gradient"]] = _stop_gradient_jvp
deflinear(E["copy"], lambda t, x: [E["copy"].bind(t)])


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    _, *case_t = tangents
    out = lax.select_n(which, *cases)
    if all(type(t) is Zero for t in case_t):
        return out, zero_of(out)
    return out, lax.select_n(which, *[instantiate(t) for t in case_t])


def _select_n_transpose(ct, which, *cases):
    if is_undefined(which):
        raise ValueError("select_n is not linear in its predicate")
    if type(ct) is Zero:
        return [None] + [Zero(c.aval) if is_undefined(c) else None for c in cases]
    zeros = lax.full_like(ct, 0)
    return [None] + [lax.select_n(which, *[ct if j == i else zeros for j in range(len(cases))])
                     if is_undefined(c) else None for i, c in enumerate(cases)]


jvp_rules[E["select_n"]] = _select_n_jvp
transpose_rules[E["select_n"]] = _select_n_transpose


def _clamp_jvp(primals, tangents):
    lo, x, hi = primals
    out = lax.clamp(lo, x, hi)
    tl, tx, th = tangents
    parts = []
    if type(tl) is not Zero:
        parts.append(lax.select(lax.gt(lo, x), tl, lax.full_like(tl, 0)) if lax.shape_of(lo) == lax.shape_of(out)
                     else lax.select(lax.gt(lo, x), maybe_broadcast(lax.shape_of(out), tl),
                                     lax.full_like(out, 0)))
    if type(tx) is not Zero:
        parts.append(lax.select(lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi)), tx,
                                lax.full_like(tx, 0)))
    if type(th) is not Zero:
        parts.append(lax.select(lax.lt(hi, x), maybe_broadcast(lax.shape_of(out), th),
                                lax.full_like(out, 0)))
    return out, functools.reduce(add_tangents, parts, zero_of(out))


jvp_rules[E["clamp"]] = _clamp_jvp


# -- shapes ---------------------------------------------------------------------------------------

def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
    shape = x.aval.shape
    dims = tuple(np.delete(np.arange(len(shape)), axes))
    return [lax.broadcast_in_dim(ct, shape, dims)]


deflinear(R["reduce_sum"], _reduce_sum_transpose)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding=None):
    unit = [i for i, s in enumerate(x.aval.shape) if s == 1]
    bdims = tuple(np.delete(broadcast_dimensions, unit))
    axes = tuple(np.delete(range(len(shape)), bdims))
    return [lax.expand_dims(lax.reduce_sum(ct, axes), unit) if unit else lax.reduce_sum(ct, axes)]


deflinear(S.broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _reshape_transpose(ct, x, *, new_sizes, dimensions, sharding=None):
    if dimensions is None:
        return [lax.reshape(ct, x.aval.shape)]
    return [lax.transpose(lax.reshape(ct, np.take(x.aval.shape, dimensions)), np.argsort(dimensions))]


deflinear(S.reshape_p, _reshape_transpose)
deflinear(S.squeeze_p, lambda ct, x, *, dimensions: [lax.expand_dims(ct, dimensions)])
deflinear(S.transpose_p, lambda ct, x, *, permutation: [lax.transpose(ct, np.argsort(permutation))])
deflinear(S.rev_p, lambda ct, x, *, dimensions: [lax.rev(ct, dimensions)])


def _concatenate_transpose(ct, *xs, dimension):
    out, start = [], 0
    for x in xs:
        size = _aval(x).shape[dimension]
        if is_undefined(x):
            out.append(lax.slice_in_dim(ct, start, start + size, 1, dimension))
        else:
            out.append(None)
        start += size
    return out


deflinear(S.concatenate_p, _concatenate_transpose)


def _pad_jvp(primals, tangents, *, padding_config):
    x, pv = primals
    tx, tp = tangents
    out = lax.pad(x, pv, padding_config)
    if type(tx) is Zero and type(tp) is Zero:
        return out, zero_of(out)
    return out, lax.pad(instantiate(tx), instantiate(tp), padding_config)


def _pad_transpose(ct, x, pv, *, padding_config):
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None, Zero(pv.aval) if is_undefined(pv) else None]
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    total = lambda a: lax.reduce_sum(a, list(range(len(lax.shape_of(a)))))  # noqa: E731
    unpad = lax.pad(ct, lax._convert_element_type(0, lax.dtype_of(ct), False),
                    [(-l, -h, 0) for l, h in zip(lo, hi)])
    t_x = lax.slice(unpad, [0] * len(lo), lax.shape_of(unpad), [i + 1 for i in interior])
    t_pv = lax.sub(total(ct), total(t_x)) if is_undefined(pv) else None
    return [t_x if is_undefined(x) else None, t_pv]


jvp_rules[S.pad_p] = _pad_jvp
transpose_rules[S.pad_p] = _pad_transpose


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    zero = lax._convert_element_type(0, lax.dtype_of(ct), False)
    if strides is None or all(s == 1 for s in strides):
        pads = [(s, d - l, 0) for s, l, d in zip(start_indices, limit_indices, shape)]
    else:
        real_limits = np.add(start_indices, np.where(np.array(lax.shape_of(ct)) == 0, 0,
                                                     np.add(1, np.multiply(np.subtract(lax.shape_of(ct), 1), strides))))
        pads = list(zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1)))
    return [lax.pad(ct, zero, pads)]


deflinear(S.slice_p, _slice_transpose)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *idx = primals
    tx = tangents[0]
    out = S.dynamic_slice_p.bind(x, *idx, slice_sizes=slice_sizes)
    if type(tx) is Zero:
        return out, zero_of(out)
    return out, S.dynamic_slice_p.bind(tx, *idx, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *idx, slice_sizes):
    zeros = lax.full(x.aval.shape, 0, x.aval.dtype)
    return [S.dynamic_update_slice_p.bind(zeros, ct, *idx)] + [None] * len(idx)


def _dynamic_update_slice_jvp(primals, tangents):
    x, upd, *idx = primals
    tx, tu = tangents[:2]
    out = S.dynamic_update_slice_p.bind(x, upd, *idx)
    if type(tx) is Zero and type(tu) is Zero:
        return out, zero_of(out)
    return out, S.dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *idx)


def _dynamic_update_slice_transpose(ct, x, upd, *idx):
    shape = _aval(upd).shape
    ct_upd = S.dynamic_slice_p.bind(ct, *idx, slice_sizes=tuple(shape))
    ct_x = S.dynamic_update_slice_p.bind(ct, lax.full(shape, 0, lax.dtype_of(ct)), *idx)
    return [ct_x if is_undefined(x) else None, ct_upd if is_undefined(upd) else None] + [None] * len(idx)


jvp_rules[S.dynamic_slice_p] = _dynamic_slice_jvp
transpose_rules[S.dynamic_slice_p] = _dynamic_slice_transpose
jvp_rules[S.dynamic_update_slice_p] = _dynamic_update_slice_jvp
transpose_rules[S.dynamic_update_slice_p] = _dynamic_update_slice_transpose


# -- reductions and contractions --------------------------------------------------------------------

def _reduce_chooser_jvp(g, ans, x, *, axes):
    shape = lax.shape_of(x)
    kept = tuple(np.delete(np.arange(len(shape)), axes))
    location = lax.eq(x, lax.broadcast_in_dim(ans, shape, kept))
    location = lax.convert_element_type(location, lax.dtype_of(g))
    counts = lax.reduce_sum(location, axes)
    return lax.div(lax.reduce_sum(lax.mul(g, location), axes), counts)


defjvp2(R["reduce_max"], _reduce_chooser_jvp)
defjvp2(R["reduce_min"], _reduce_chooser_jvp)


def _reduce_prod_jvp(primals, tangents, *, axes):
    x, = primals
    t, = tangents
    out = lax.reduce_prod(x, axes)
    shape = lax.shape_of(x)
    kept = tuple(np.delete(np.arange(len(shape)), axes))
    # d prod = sum_i t_i * prod_{j != i} x_j, computed without dividing by x
    others = _prod_of_others(x, axes)
    return out, lax.reduce_sum(lax.mul(t, others), axes) if kept is not None else None


def _prod_of_others(x, axes):
    """prod_{j != i} x_j along ``axes`` for every i, by exclusive products from both sides."""
    shape = lax.shape_of(x)
    perm = [i for i in range(len(shape)) if i not in axes] + list(axes)
    xt = lax.transpose(x, perm)
    kept_shape = [shape[i] for i in perm[:len(shape) - len(axes)]]
    n = int(np.prod([shape[a] for a in axes]))
    flat = lax.reshape(xt, tuple(kept_shape) + (n,))
    ones = lax.full(tuple(kept_shape) + (1,), 1, lax.dtype_of(x))
    cols = [lax.slice_in_dim(flat, i, i + 1, 1, len(kept_shape)) for i in range(n)]
    left, acc = [], ones
    for c in cols:
        left.append(acc)
        acc = lax.mul(acc, c)
    right, acc = [None] * n, ones
    for i in reversed(range(n)):
        right[i] = acc
        acc = lax.mul(acc, cols[i])
    prods = lax.concatenate([lax.mul(l, r) for l, r in zip(left, right)], len(kept_shape))
    back = lax.reshape(prods, tuple(kept_shape) + tuple(shape[a] for a in axes))
    return lax.transpose(back, np.argsort(perm))


jvp_rules[R["reduce_prod"]] = _reduce_prod_jvp


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield list(range(start, start + len(x)))
        start += len(x)


def _remaining(original, *removed):
    gone = set(itertools.chain(*removed))
    return [i for i in original if i not in gone]


def _dot_transpose_lhs(g, x_aval, y, *, dimension_numbers, precision, preferred_element_type,
                       swap_ans=False):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _remaining(range(len(x_aval.shape)), x_contract, x_batch)
    y_kept = _remaining(range(len(lax.shape_of(y))), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    x_contract_sorted_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    unsorted_axes = list(x_batch) + x_kept + x_contract_sorted_by_y
    out_axes = np.argsort(unsorted_axes)
    out = lax.dot_general(g, y, dims, precision=precision, preferred_element_type=preferred_element_type)
    x_bar = lax.transpose(out, tuple(out_axes))
    if lax.dtype_of(x_bar) != x_aval.dtype:
        x_bar = lax._convert_element_type(x_bar, x_aval.dtype, x_aval.weak_type)
    return x_bar


def _dot_general_jvp(primals, tangents, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    x, y = primals
    tx, ty = tangents
    kw = dict(dimension_numbers=dimension_numbers, precision=precision,
              preferred_element_type=preferred_element_type, out_sharding=None)
    out = dot_general_p.bind(x, y, **kw)
    parts = []
    if type(tx) is not Zero:
        parts.append(dot_general_p.bind(tx, y, **kw))
    if type(ty) is not Zero:
        parts.append(dot_general_p.bind(x, ty, **kw))
    return out, functools.reduce(add_tangents, parts, zero_of(out))


def _dot_general_transpose(ct, x, y, *, dimension_numbers, precision=None,
                           preferred_element_type=None, out_sharding=None):
    (xc, yc), (xb, yb) = dimension_numbers
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None, Zero(y.aval) if is_undefined(y) else None]
    if is_undefined(x) and is_undefined(y):
        raise ValueError("dot_general is not linear in both operands")
    if is_undefined(x):
        return [_dot_transpose_lhs(ct, x.aval, y, dimension_numbers=dimension_numbers,
                                   precision=precision, preferred_element_type=preferred_element_type), None]
    swapped = ((yc, xc), (yb, xb))
    return [None, _dot_transpose_lhs(ct, y.aval, x, dimension_numbers=swapped, precision=precision,
                                     preferred_element_type=preferred_element_type, swap_ans=True)]


jvp_rules[dot_general_p] = _dot_general_jvp
transpose_rules[dot_general_p] = _dot_general_transpose


# add_any is born here; its batching rule is the elementwise broadcasting one.
from ..batching.core import register_batching  # noqa: E402
from ..batching.rules import _broadcasting  # noqa: E402

register_batching(add_any_p, _broadcasting(add_any_p))

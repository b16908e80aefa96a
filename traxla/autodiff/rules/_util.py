"""Helpers to define JVP and transpose rules (JAX's ad.defjvp, defjvp2, deflinear2, ...)."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.jaxpr import Literal
from traxla.tracer import Tracer
from traxla.autodiff.ad import (Zero, add_tangents, instantiate, is_undefined, jvp_flat, jvp_rules,
                               transpose_rules, zero_of)


# -- helpers to define rules (JAX's ad.defjvp, defjvp2, deflinear2, ...) -----------------------

def _convert(x, new_dtype, weak_type):
    """``convert_element_type``, folding a concrete scalar into a constant as JAX's staging
    does (and handing back an array, not a literal, when evaluated eagerly)."""
    out = lax._convert_element_type(x, new_dtype, weak_type)
    lift = getattr(lax, "_lift", None)
    return lift(out) if lift is not None else out


def _const(x, value):
    """JAX's ``_const``: a scalar constant of ``x``'s dtype (a literal when staged); weakly
    typed when ``x`` is a weak scalar, so derivatives of weak inputs stay weak."""
    aval = lax.aval_of(x)
    weak = aval.weak_type and not aval.shape
    if weak:  # as JAX: the Python scalar itself (a literal printing its full value), when
        # its own dtype is x's; else a strongly typed constant
        dt = aval.dtype
        py = (bool if dt == np.bool_ else complex if dt.kind == "c" else
              float if dt.kind == "f" or dt.name == "bfloat16" else int)(value)
        if lax.dtype_of(py) != dt:
            weak = False
        return lax._convert_element_type(py, dt, weak)
    return lax._convert_element_type(value, aval.dtype, weak)


def _one(x):
    """JAX's ``_one``: ``full_like(x, 1, shape=())``; of a tracer, its literal (what the
    Array ``full_like`` makes becomes when bound, without the Array's transfer)."""
    if isinstance(x, Tracer) and not dtypes.is_extended(x.aval.dtype):
        one = lax._convert_element_type(1, x.aval.dtype, x.aval.weak_type)
        if type(one) is Literal:
            return one
    return lax.full_like(x, 1, shape=())


def _zero(x):
    return lax.full_like(x, 0, shape=())


def _ones(x):
    return lax.full_like(x, 1)


def _zeros(x):
    return lax.full_like(x, 0)


def _twos(x):
    return lax.full_like(x, 2)


def _square(x):
    # JAX binds its ``square`` primitive; traxla's lax.square is whatever lax provides
    return lax.square(x)


def _sum_tangents(contributions, out):
    """``reduce(add_tangents, contributions, zero_of(out))``, the zero made only when there
    is no contribution (once per differentiated operation, the common case has one)."""
    if not contributions:
        return zero_of(out)
    total = contributions[0]
    for t in contributions[1:]:
        total = add_tangents(total, t)
    return total


def defjvp(prim, *rules):
    """Each rule maps one operand's tangent to its contribution: ``rule(t, *primals, **params)``."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        contributions = [rule(t, *primals, **params) for rule, t in zip(rules, tangents)
                         if rule is not None and type(t) is not Zero]
        return out, _sum_tangents(contributions, out)
    jvp_rules[prim] = jvp


def defjvp2(prim, *rules):
    """Like defjvp, with the primal output available: ``rule(t, ans, *primals, **params)``."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        contributions = [rule(t, out, *primals, **params) for rule, t in zip(rules, tangents)
                         if rule is not None and type(t) is not Zero]
        return out, _sum_tangents(contributions, out)
    jvp_rules[prim] = jvp


def defjvp_zero(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [zero_of(o) for o in out]
        return out, zero_of(out)
    jvp_rules[prim] = jvp


def linear_jvp(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, ([zero_of(o) for o in out] if prim.multiple_results else zero_of(out))
        return out, prim.bind(*[instantiate(t) for t in tangents], **params)
    return jvp


def jvp_of_nonzero(f, tangents):
    """For the JVP of a call primitive: ``fun(*primals, *nonzero tangents)``, to trace into
    the called jaxpr, returning ``f``'s outputs then their nonzero tangents; and the list
    that tracing it fills with which output tangents are zero (``split_jvp_outputs``)."""
    nonzero = [type(t) is not Zero for t in tangents]
    n = len(tangents)
    out_zero = []

    def fun(*args):
        ps, ts = args[:n], iter(args[n:])
        t_full = [next(ts) if nz else zero_of(p) for p, nz in zip(ps, nonzero)]
        outs, touts = jvp_flat(f, list(ps), t_full)
        out_zero.extend(type(t) is Zero for t in touts)
        return list(outs) + [t for t in touts if type(t) is not Zero]
    return fun, out_zero


def split_jvp_outputs(outs, num_primals, out_zero):
    """The outputs of a call traced from ``jvp_of_nonzero``'s function: the primal outputs,
    and every output tangent (zero where ``out_zero`` says)."""
    primal_outs, rest = outs[:num_primals], iter(outs[num_primals:])
    return primal_outs, [zero_of(p) if z else next(rest) for p, z in zip(primal_outs, out_zero)]


def deflinear2(prim, transpose):
    """A primitive linear in all its operands; ``transpose(ct, *operands, **params)``."""
    def transpose_rule(ct, *args, **params):
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined(a) else None for a in args]
        return transpose(ct, *args, **params)
    jvp_rules[prim] = linear_jvp(prim)
    transpose_rules[prim] = transpose_rule


def def_bilinear_transpose(prim, product: str, transpose_x, transpose_y):
    """The transpose of a primitive linear in each of its two operands (not in both):
    ``transpose_x(ct, x, y, **params)`` is x's cotangent, ``transpose_y`` y's;
    ``product`` names the operation in the error for two linear operands."""
    def transpose_rule(ct, x, y, **params):
        if is_undefined(x) and is_undefined(y):
            raise ValueError(f"Transpose rule for '{prim.name}': the {product} of two linear "
                             "values is not linear, so it cannot be transposed.")
        if is_undefined(x):
            if type(ct) is Zero:
                return [Zero(x.aval), None]
            return [transpose_x(ct, x, y, **params), None]
        if type(ct) is Zero:
            return [None, Zero(y.aval)]
        return [None, transpose_y(ct, x, y, **params)]
    transpose_rules[prim] = transpose_rule


deflinear = deflinear2  # traxla's rules all take the operands (JAX's ``deflinear2`` form)


def _argsort(xs):
    """``np.argsort`` of a few distinct axis numbers, as Python ints (a permutation's
    inverse), without NumPy's per-call cost."""
    return sorted(range(len(xs)), key=xs.__getitem__)


def _aval(x):
    return x.aval if is_undefined(x) else lax.aval_of(x)


def unbroadcast(aval, x):
    """JAX's ``_unbroadcast``: sums ``x`` down to ``aval``'s shape (the transpose of lax's
    implicit broadcasting)."""
    x_shape = lax.shape_of(x)
    if tuple(aval.shape) == tuple(x_shape):
        return x
    if not aval.shape:
        return lax.reduce_sum(x, list(range(len(x_shape))))
    dims = [i for i, (a, b) in enumerate(zip(x_shape, aval.shape)) if a != b]
    x = lax.reduce_sum(x, dims) if dims else x
    return lax.reshape(x, aval.shape)


def maybe_broadcast(target_shape, x):
    """JAX's ``_maybe_broadcast``."""
    x_shape = lax.shape_of(x)
    if tuple(x_shape) == tuple(target_shape):
        return x
    if not x_shape:
        return lax.broadcast_in_dim(x, target_shape, ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, target_shape)) if a == b]
    squeeze_shape = [x_shape[i] for i in dims]
    return lax.broadcast_in_dim(lax.reshape(x, squeeze_shape), target_shape, dims)


def _broadcast_shapes(*shapes):
    """lax's implicit broadcasting of scalars and size-1 dimensions."""
    shapes = [tuple(s) for s in shapes]
    arrays = [s for s in shapes if s]
    if not arrays:
        return ()
    return tuple(max(dims) if 1 in dims or len(set(dims)) == 1 else dims[0]
                 for dims in zip(*arrays))


def _tuple_delete(t, idx):
    """JAX's ``util.tuple_delete``: plain Python values."""
    idx = set(idx)
    return tuple(x for i, x in enumerate(t) if i not in idx)


def _eq_meet(a, b):
    a_dtype, b_dtype = lax.dtype_of(a), lax.dtype_of(b)
    if a_dtype != b_dtype:
        higher = np.promote_types(a_dtype, b_dtype)
        if higher == a_dtype:
            a = lax.convert_element_type(a, b_dtype)
        else:
            b = lax.convert_element_type(b, a_dtype)
    return lax.eq(a, b)


"""Contractions: matmul (``@``), dot, vdot, inner, outer.

As in JAX, operands are not promoted to a common dtype: ``dot_general`` takes
them as they are, with the promoted dtype as ``preferred_element_type``."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.numpy._promotion import plain_aval, check_arraylike, promote_dtypes, result_type
from traxla.lax.precision import canonicalize_precision
from traxla.numpy._shape import ravel
from traxla.numpy._ufuncs import multiply
from traxla.numpy._creation import placed


def _ensure_arraylike(fun_name, *args):
    check_arraylike(fun_name, *args)
    return [lax._asarray(a) for a in args]


def _result_dtype(a, b, preferred_element_type):
    if preferred_element_type is None:
        return result_type(a, b)
    return dtypes.to_dtype(preferred_element_type), False


_CONTRACT_LAST = {  # (a rank, b rank) -> dot_general dimension numbers, for ranks 1 and 2
    (ra, rb): (((ra - 1,), (rb - 1 - (rb > 1),)), ((), ())) for ra in (1, 2) for rb in (1, 2)}


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    if preferred_element_type is None and out_sharding is None:
        # Fast path, the traced ``W @ h``: two arrays (not Python scalars) of one plain
        # strong dtype and rank 1 or 2 are one dot_general at that dtype, nothing to convert.
        a_aval, b_aval = plain_aval(a), plain_aval(b)
        if (a_aval is not None and b_aval is not None and a_aval.dtype == b_aval.dtype
                and not a_aval.weak_type and not b_aval.weak_type):
            dims = _CONTRACT_LAST.get((len(a_aval.shape), len(b_aval.shape)))
            if dims is not None:  # (lax.dot_general, its arguments already canonical)
                precision = canonicalize_precision(precision)  # None: default_matmul_precision's
                return lax.dot_general_p.bind(
                    a, b, dimension_numbers=dims, precision=precision,
                    preferred_element_type=dtypes.canonicalize(a_aval.dtype), out_sharding=None)
    a, b = _ensure_arraylike("matmul", a, b)
    for i, x in enumerate((a, b)):
        if len(lax.shape_of(x)) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             f"ndim {len(lax.shape_of(x))}")
    pet, out_weak = _result_dtype(a, b, preferred_element_type)
    a_shape, b_shape = lax.shape_of(a), lax.shape_of(b)
    a_is_mat, b_is_mat = len(a_shape) > 1, len(b_shape) > 1
    if len(a_shape) <= 2 and len(b_shape) <= 2:  # no batch dims: one dot_general (the common case)
        out = lax.dot_general(a, b, (((len(a_shape) - 1,), (len(b_shape) - 1 - b_is_mat,)),
                                     ((), ())), precision, pet, out_sharding=out_sharding)
        return lax._convert_element_type(out, pet, out_weak)
    a_batch = a_shape[:-2] if a_is_mat else ()
    b_batch = b_shape[:-2] if b_is_mat else ()
    nbatch = max(len(a_batch), len(b_batch))
    a_batch = (None,) * (nbatch - len(a_batch)) + tuple(a_batch)
    b_batch = (None,) * (nbatch - len(b_batch)) + tuple(b_batch)

    # Batch dimensions present in both operands become dot_general batch dims;
    # those present in one only become free ("other") dims of that operand;
    # size-1 dims broadcasting against the other operand are squeezed out.
    a_squeeze, b_squeeze, both_squeeze = [], [], []
    a_bdims, b_bdims = [], []
    idx_batch, idx_a_other, idx_b_other = [], [], []
    for i, (ba, bb) in enumerate(zip(a_batch, b_batch)):
        if ba is None:
            idx_b_other.append(i)
        elif bb is None:
            idx_a_other.append(i)
        elif ba == 1 and bb == 1:
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
            both_squeeze.append(i)
        elif ba == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif bb == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif ba == bb:
            a_bdims.append(len(idx_batch) + len(idx_a_other))
            b_bdims.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible types for matmul arguments: {lax.aval_of(a)} and "
                             f"{lax.aval_of(b)}")
    if a_is_mat:
        idx_a_other.append(nbatch)
    if b_is_mat:
        idx_b_other.append(nbatch + a_is_mat)
    perm = np.argsort(np.array(idx_batch + idx_a_other + idx_b_other, dtype=np.int64))
    a = lax.squeeze(a, tuple(a_squeeze))
    b = lax.squeeze(b, tuple(b_squeeze))
    an, bn = len(lax.shape_of(a)), len(lax.shape_of(b))
    out = lax.dot_general(a, b, (((an - 1,), (bn - 1 - b_is_mat,)), (tuple(a_bdims), tuple(b_bdims))),
                          precision, pet, out_sharding=out_sharding)
    result = lax.transpose(out, tuple(int(p) for p in perm))
    if both_squeeze:
        result = lax.expand_dims(result, tuple(both_squeeze))
    return placed(lax._convert_element_type(result, pet, out_weak), out_sharding)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    a, b = _ensure_arraylike("dot", a, b)
    pet, out_weak = _result_dtype(a, b, preferred_element_type)
    an, bn = len(lax.shape_of(a)), len(lax.shape_of(b))
    if an == 0 or bn == 0:
        contract = ((), ())
    elif bn == 1:
        contract = ((an - 1,), (0,))
    else:
        contract = ((an - 1,), (bn - 2,))
    result = lax.dot_general(a, b, (contract, ((), ())), precision, pet,
                             out_sharding=out_sharding)
    return lax._convert_element_type(result, pet, out_weak)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    a, b = _ensure_arraylike("vdot", a, b)
    if np.issubdtype(lax.dtype_of(a), np.complexfloating):  # vdot conjugates its first operand
        a = lax.conj(a)
    return dot(ravel(a), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    a, b = _ensure_arraylike("inner", a, b)
    an, bn = len(lax.shape_of(a)), len(lax.shape_of(b))
    if an == 0 or bn == 0:
        return multiply(a, b)
    pet, out_weak = _result_dtype(a, b, preferred_element_type)
    result = lax.dot_general(a, b, (((an - 1,), (bn - 1,)), ((), ())), precision, pet)
    return lax._convert_element_type(result, pet, out_weak)


def outer(a, b, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = _ensure_arraylike("outer", a, b)
    a, b = promote_dtypes(a, b)
    return multiply(ravel(a)[:, None], ravel(b)[None, :])

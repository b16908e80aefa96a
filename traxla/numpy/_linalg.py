"""Contractions: matmul (``@``), dot, vdot, inner, outer."""
from __future__ import annotations

from .. import lax
from ._promotion import promote_dtypes


def matmul(a, b, *, precision=None, preferred_element_type=None):
    a, b = promote_dtypes(a, b)
    pet = preferred_element_type or lax.dtype_of(a)
    an, bn = len(lax.shape_of(a)), len(lax.shape_of(b))
    if an == 0 or bn == 0:
        raise ValueError(f"matmul: Input operand {0 if an == 0 else 1} does not have enough "
                         "dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) "
                         "requires 1)")
    if an <= 2 and bn <= 2:
        return lax.dot_general(a, b, (((an - 1,), (0,)), ((), ())), precision, pet)
    # batched: broadcast the batch dims, then contract with explicit batch dimensions
    from ._promotion import broadcast_shapes
    from ._shape import broadcast_to
    a_batch = lax.shape_of(a)[:-2] if an > 2 else ()
    b_batch = lax.shape_of(b)[:-2] if bn > 2 else ()
    batch = broadcast_shapes(a_batch, b_batch)
    if an == 1:
        a = lax.broadcast(a, batch + (1,))
        an = len(batch) + 2
        squeeze_axis = -2
    elif bn == 1:
        b = lax.reshape(b, lax.shape_of(b) + (1,))
        b = broadcast_to(b, batch + lax.shape_of(b))
        bn = len(batch) + 2
        squeeze_axis = -1
    else:
        squeeze_axis = None
    if an == 2:
        a = broadcast_to(a, batch + lax.shape_of(a))
    elif lax.shape_of(a)[:-2] != batch:
        a = broadcast_to(a, batch + lax.shape_of(a)[-2:])
    if bn == 2:
        b = broadcast_to(b, batch + lax.shape_of(b))
    elif lax.shape_of(b)[:-2] != batch:
        b = broadcast_to(b, batch + lax.shape_of(b)[-2:])
    nb = len(batch)
    out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                          precision, pet)
    if squeeze_axis is not None:
        out = lax.squeeze(out, (len(lax.shape_of(out)) + squeeze_axis,))
    return out


def dot(a, b, *, precision=None, preferred_element_type=None):
    a, b = promote_dtypes(a, b)
    an, bn = len(lax.shape_of(a)), len(lax.shape_of(b))
    if an == 0 or bn == 0:
        return lax.mul(a, b)
    pet = preferred_element_type or lax.dtype_of(a)
    contract_b = 0 if bn == 1 else bn - 2
    return lax.dot_general(a, b, (((an - 1,), (contract_b,)), ((), ())), precision, pet)


def vdot(a, b):
    from ._shape import ravel
    return dot(ravel(a), ravel(b))


def inner(a, b):
    a, b = promote_dtypes(a, b)
    an, bn = len(lax.shape_of(a)), len(lax.shape_of(b))
    if an == 0 or bn == 0:
        return lax.mul(a, b)
    return lax.dot_general(a, b, (((an - 1,), (bn - 1,)), ((), ())), None, lax.dtype_of(a))


def outer(a, b):
    from ._shape import ravel
    a, b = promote_dtypes(ravel(a), ravel(b))
    return lax.mul(lax.reshape(a, (lax.shape_of(a)[0], 1)), lax.reshape(b, (1, lax.shape_of(b)[0])))

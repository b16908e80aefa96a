"""JVP and transpose rules of the shape primitives (JAX's lax.py and slicing.py)."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir.rules import shape as S
from traxla.ir.rules.reduction import P as R
from traxla.autodiff.ad import Zero, instantiate, is_undefined, jvp_rules, transpose_rules, zero_of
from traxla.autodiff.rules._util import _aval, _argsort, _const, _tuple_delete, deflinear2


# -- shapes ---------------------------------------------------------------------------------------

def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
    shape = x.aval.shape
    # NumPy integers, as JAX's rule builds them (they print as np.int64(...)); worked out
    # once per (rank, axes)
    try:
        dims = _kept_dims.get((len(shape), axes))
    except TypeError:  # unhashable axes (a list)
        dims = None
    if dims is None:
        dims = tuple(np.delete(np.arange(len(shape)), axes))
        try:
            if len(_kept_dims) >= 1024:
                _kept_dims.clear()
            _kept_dims[(len(shape), axes)] = dims
        except TypeError:
            pass
    st = x.aval.sharding_type
    if st is not None and type(ct) is not Zero:  # JAX's: placed as the operand's cotangent
        return [S.broadcast_in_dim_p.bind(ct, shape=tuple(shape), broadcast_dimensions=dims,
                                          sharding=st.to_ct())]
    return [lax.broadcast_in_dim(ct, shape, dims)]


_kept_dims: dict = {}  # (rank, reduced axes) -> the kept dimensions, as NumPy integers


deflinear2(R["reduce_sum"], _reduce_sum_transpose)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding=None):
    if not is_undefined(x):
        return [None]
    unit = [i for i, s in enumerate(x.aval.shape) if s == 1]
    bdims = _tuple_delete(broadcast_dimensions, unit)
    axes = _tuple_delete(tuple(range(len(shape))), bdims)
    return [lax.expand_dims(lax.reduce_sum(ct, axes), unit)]


deflinear2(S.broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _reshape_transpose(ct, x, *, new_sizes, dimensions, sharding=None):
    if dimensions is None:
        return [lax.reshape(ct, x.aval.shape)]
    sizes = tuple(x.aval.shape[d] for d in dimensions)
    return [lax.transpose(lax.reshape(ct, sizes), _argsort(dimensions))]


deflinear2(S.reshape_p, _reshape_transpose)
deflinear2(S.squeeze_p, lambda ct, x, *, dimensions: [lax.expand_dims(ct, dimensions)])
deflinear2(S.transpose_p, lambda ct, x, *, permutation: [lax.transpose(ct, _argsort(permutation))])
deflinear2(S.rev_p, lambda ct, x, *, dimensions: [lax.rev(ct, dimensions)])


def _concatenate_transpose(ct, *xs, dimension):
    sizes = tuple(_aval(x).shape[dimension] for x in xs)
    return S.split_p.bind(ct, sizes=sizes, axis=dimension)


def _stack_transpose(ct, *xs, axis):
    return S.unstack_p.bind(ct, axis=axis)


def _unstack_transpose(cts, x, *, axis):
    if all(type(c) is Zero for c in cts):
        return [Zero(x.aval)]
    return [S.stack_p.bind(*[instantiate(c) for c in cts], axis=axis)]


def _split_transpose(cts, x, *, sizes, axis):
    if all(type(c) is Zero for c in cts):
        return [Zero(x.aval)]
    return [lax.concatenate([instantiate(c) for c in cts], axis)]


deflinear2(S.concatenate_p, _concatenate_transpose)
deflinear2(S.stack_p, _stack_transpose)
deflinear2(S.unstack_p, _unstack_transpose)
deflinear2(S.split_p, _split_transpose)


def _pad_transpose(t, operand, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    ndim = len(lax.shape_of(t))

    def total(x):
        return lax.reduce_sum(x, list(range(ndim)))

    def t_op():
        unpad_config = tuple(zip(np.negative(lo), np.negative(hi), np.zeros_like(interior)))
        # a strongly typed zero, as JAX's np.array(0., t.dtype): the result is strong
        unpadded = S.pad_p.bind(t, np.array(0., lax.dtype_of(t)), padding_config=unpad_config)
        shape = lax.shape_of(unpadded)
        return S.slice_p.bind(unpadded, start_indices=tuple(np.zeros_like(lo)),
                              limit_indices=tuple(int(d) for d in shape),
                              strides=tuple(np.add(interior, 1)))

    t_operand = t_op() if is_undefined(operand) else None
    t_padv = lax.sub(total(t), total(t_operand)) if is_undefined(padding_value) else None
    return [t_operand, t_padv]


deflinear2(S.pad_p, _pad_transpose)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    if strides is None or np.all(np.equal(strides, 1)):
        pads = zip(start_indices, np.subtract(shape, limit_indices), (0,) * len(start_indices))
    else:
        ct_shape = lax.shape_of(ct)
        real_limits = np.add(start_indices, np.where(
            np.array(ct_shape) == 0, 0, np.add(1, np.multiply(np.subtract(ct_shape, 1), strides))))
        pads = zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1))
    return [S.pad_p.bind(ct, _const(ct, 0), padding_config=tuple(pads))]


deflinear2(S.slice_p, _slice_transpose)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *idx = primals
    tx = tangents[0]
    if type(tx) is not Zero:
        tx = S.dynamic_slice_p.bind(tx, *idx, slice_sizes=slice_sizes)
    out = S.dynamic_slice_p.bind(x, *idx, slice_sizes=slice_sizes)
    return out, (zero_of(out) if type(tx) is Zero else tx)


def _dynamic_slice_transpose(ct, x, *idx, slice_sizes):
    if type(ct) is Zero or not is_undefined(x):
        return [Zero(x.aval) if is_undefined(x) else None] + [None] * len(idx)
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
    if type(ct) is Zero:
        return ([Zero(x.aval) if is_undefined(x) else None,
                 Zero(upd.aval) if is_undefined(upd) else None] + [None] * len(idx))
    upd_shape = _aval(upd).shape
    zeros = lax.full_like(ct, 0, shape=upd_shape)
    ct_x = S.dynamic_update_slice_p.bind(ct, zeros, *idx) if is_undefined(x) else None
    ct_upd = (S.dynamic_slice_p.bind(ct, *idx, slice_sizes=tuple(upd_shape))
              if is_undefined(upd) else None)
    return [ct_x, ct_upd] + [None] * len(idx)


jvp_rules[S.dynamic_slice_p] = _dynamic_slice_jvp
transpose_rules[S.dynamic_slice_p] = _dynamic_slice_transpose
jvp_rules[S.dynamic_update_slice_p] = _dynamic_update_slice_jvp
transpose_rules[S.dynamic_update_slice_p] = _dynamic_update_slice_transpose



"""JVP and transpose rules of gather, scatter, sort and the cumulative reductions
(JAX's slicing.py and control_flow/loops.py)."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.shape_poly import int_dtype_for_shape
from traxla.autodiff.ad import Zero, instantiate, is_undefined, jvp_flat, jvp_rules, transpose_rules, zero_of
from traxla.autodiff.rules._util import _aval, _const, _ones, _zeros, defjvp, deflinear2


# -- gather, scatter, sort, cumulative reductions (JAX's slicing.py / loops.py rules) ---------------

from traxla.ir.rules import indexing as _I  # noqa: E402
from traxla.tracer import trace_to_jaxpr as _trace_to_jaxpr  # noqa: E402
from traxla.ir.avals import ShapedArray
from traxla.autodiff.custom import custom_jvp

_GDN, _SDN, _Mode = _I.GatherDimensionNumbers, _I.ScatterDimensionNumbers, _I.GatherScatterMode
_gather_p, _sort_p = _I.P["gather"], _I.P["sort"]
_scatter_p, _scatter_add_p, _scatter_mul_p = (_I.P["scatter"], _I.P["scatter-add"],
                                              _I.P["scatter-mul"])
_reduction_jaxprs: dict = {}


def _reduction_jaxpr(computation, dtype):
    """JAX's ``_reduction_jaxpr`` (cached): the scalar combiner a scatter carries."""
    dtype = np.dtype(dtype)
    key = (computation, dtype)
    if key not in _reduction_jaxprs:
        aval = ShapedArray((), dtype, False)
        closed = _trace_to_jaxpr(lambda x, y: [computation(x, y)], [aval, aval])
        _reduction_jaxprs[key] = (closed.jaxpr, tuple(closed.consts))
    return _reduction_jaxprs[key]


def _gather(operand, indices, dimension_numbers, slice_sizes, *, unique_indices=False,
            indices_are_sorted=False, mode=None, fill_value=None):
    """JAX's ``lax.gather`` wrapper: canonical mode and fill value."""
    parsed_mode = _Mode.from_any(mode)
    if parsed_mode == _Mode.FILL_OR_DROP:
        if fill_value is None:
            dt = lax.dtype_of(operand)
            if dtypes.is_inexact(dt):
                fill_value = np.nan
            elif dtypes.is_unsigned_int(dt):
                fill_value = np.iinfo(dt).max
            elif dtypes.is_int(dt):
                fill_value = np.iinfo(dt).min
            else:
                fill_value = True
    else:
        fill_value = None
    return _gather_p.bind(operand, indices, dimension_numbers=dimension_numbers,
                          slice_sizes=tuple(int(s) for s in slice_sizes),
                          unique_indices=bool(unique_indices),
                          indices_are_sorted=bool(indices_are_sorted), mode=parsed_mode,
                          fill_value=fill_value)


def _scatter_op(prim, computation):
    def op(operand, indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        if computation is None:
            jaxpr, consts = None, ()
        else:
            jaxpr, consts = _reduction_jaxpr(computation, lax.dtype_of(operand))
        return prim.bind(operand, indices, updates, update_jaxpr=jaxpr, update_consts=consts,
                         dimension_numbers=dimension_numbers,
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=_Mode.from_any(mode))
    return op


_scatter = _scatter_op(_scatter_p, None)
_scatter_add = _scatter_op(_scatter_add_p, lax.add)
_scatter_mul = _scatter_op(_scatter_mul_p, lax.mul)


def _inverse_gather(dnums, operand_ndim, updates_shape):
    """The gather dimension numbers and slice sizes undoing a scatter's placement."""
    gather_dnums = _GDN(offset_dims=dnums.update_window_dims,
                        collapsed_slice_dims=dnums.inserted_window_dims,
                        start_index_map=dnums.scatter_dims_to_operand_dims,
                        operand_batching_dims=dnums.operand_batching_dims,
                        start_indices_batching_dims=dnums.scatter_indices_batching_dims)
    slice_sizes, pos = [], 0
    for i in range(operand_ndim):
        if i in dnums.inserted_window_dims or i in dnums.operand_batching_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(updates_shape[dnums.update_window_dims[pos]])
            pos += 1
    return gather_dnums, slice_sizes


def _scatter_zero_cts(operand, updates):
    """A scatter's cotangents (operand, indices, updates) when its output's is zero."""
    return [Zero(operand.aval) if is_undefined(operand) else None, None,
            Zero(updates.aval) if is_undefined(updates) else None]


def _gather_scattered(t, indices, dimension_numbers, updates_shape, mode):
    """``t`` (shaped as the scatter's operand) read at the places the scatter wrote: the
    shape of its updates."""
    gather_dnums, slice_sizes = _inverse_gather(dimension_numbers, len(lax.shape_of(t)),
                                                updates_shape)
    return _gather(t, indices, gather_dnums, slice_sizes, mode=mode, fill_value=0)


def _gather_jvp(g, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                indices_are_sorted, mode, fill_value):
    return _gather(g, indices, dimension_numbers, slice_sizes, unique_indices=unique_indices,
                   indices_are_sorted=indices_are_sorted, mode=mode, fill_value=0)


def _gather_transpose(t, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                      indices_are_sorted, mode, fill_value):
    if type(t) is Zero:
        return [Zero(operand.aval), None]
    zeros = lax.full(operand.aval.shape, 0, lax.dtype_of(t))
    dn = dimension_numbers
    scatter_dnums = _SDN(update_window_dims=dn.offset_dims,
                         inserted_window_dims=dn.collapsed_slice_dims,
                         scatter_dims_to_operand_dims=dn.start_index_map,
                         operand_batching_dims=dn.operand_batching_dims,
                         scatter_indices_batching_dims=dn.start_indices_batching_dims)
    out = _scatter_add(zeros, indices, t, scatter_dnums, unique_indices=unique_indices,
                       indices_are_sorted=indices_are_sorted, mode=mode)
    return [out, None]


defjvp(_gather_p, _gather_jvp, None)
transpose_rules[_gather_p] = _gather_transpose


def _scatter_addsub_jvp(prim):
    def jvp(primals, tangents, **params):
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        val_out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is Zero and type(g_updates) is Zero:
            return val_out, zero_of(val_out)
        return val_out, prim.bind(instantiate(g_operand), indices, instantiate(g_updates),
                                  **params)
    return jvp


def _scatter_add_transpose(t, operand, indices, updates, *, update_jaxpr, update_consts,
                           dimension_numbers, indices_are_sorted, unique_indices, mode):
    updates_shape = _aval(updates).shape
    if type(t) is Zero:
        return _scatter_zero_cts(operand, updates)
    operand_t = t if is_undefined(operand) else None
    update_t = None
    if is_undefined(updates):
        update_t = _gather_scattered(t, indices, dimension_numbers, updates_shape, mode)
    return [operand_t, None, update_t]


jvp_rules[_scatter_add_p] = _scatter_addsub_jvp(_scatter_add_p)
transpose_rules[_scatter_add_p] = _scatter_add_transpose


def _scatter_mul_jvp_rhs(g, x, i, y, *, dimension_numbers, indices_are_sorted, unique_indices,
                         mode, **kw):
    if not unique_indices:
        raise NotImplementedError(
            "scatter_mul gradients are only implemented if `unique_indices=True`")
    return lax.mul(x, _scatter_add(_zeros(x), i, g, dimension_numbers,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode))


def _scatter_mul_transpose(t, operand, indices, updates, *, update_jaxpr, update_consts,
                           dimension_numbers, indices_are_sorted, unique_indices, mode):
    updates_shape = _aval(updates).shape
    if type(t) is Zero:
        return _scatter_zero_cts(operand, updates)
    operand_t = update_t = None
    if is_undefined(operand):
        operand_t = _scatter_mul(t, indices, updates, dimension_numbers,
                                 indices_are_sorted=indices_are_sorted,
                                 unique_indices=unique_indices, mode=mode)
    if is_undefined(updates):
        if not unique_indices:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`")
        update_t = _gather_scattered(lax.mul(t, operand), indices, dimension_numbers,
                                     updates_shape, mode)
    return [operand_t, None, update_t]


defjvp(_scatter_mul_p, lambda g, x, i, y, **kw: _scatter_mul_p.bind(g, i, y, **kw), None,
       _scatter_mul_jvp_rhs)
transpose_rules[_scatter_mul_p] = _scatter_mul_transpose


def _scatter_extremal_jvp(prim):
    def jvp(primals, tangents, *, update_jaxpr, update_consts, dimension_numbers,
            indices_are_sorted, unique_indices, mode):
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        scatter_dnums = dimension_numbers
        updates_shape = lax.shape_of(updates)
        val_out = prim.bind(operand, indices, updates, update_jaxpr=update_jaxpr,
                            update_consts=update_consts, dimension_numbers=scatter_dnums,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode)
        if type(g_operand) is Zero and type(g_updates) is Zero:
            return val_out, zero_of(val_out)
        g_operand, g_updates = instantiate(g_operand), instantiate(g_updates)
        gather_dnums, slice_sizes = _inverse_gather(scatter_dnums, len(lax.shape_of(operand)),
                                                    updates_shape)
        initial_vals = _gather(operand, indices, gather_dnums, slice_sizes)
        target_vals = _gather(val_out, indices, gather_dnums, slice_sizes)
        successful_updates = lax.eq(updates, target_vals)
        retained_values = lax.eq(initial_vals, target_vals)
        num_updates = _gather(
            _scatter_add(_zeros(operand), indices,
                         lax.select(successful_updates, _ones(updates), _zeros(updates)),
                         scatter_dnums),
            indices, gather_dnums, slice_sizes)
        num_refs = _gather(_scatter_add(_zeros(operand), indices, _ones(updates), scatter_dnums),
                           indices, gather_dnums, slice_sizes)
        one = _const(num_updates, 1.0)
        updates_normalizer = lax.select(retained_values,
                                        lax.div(one, lax.add(num_updates, one)),
                                        lax.div(one, num_updates))
        updates_coef = lax.select(successful_updates, updates_normalizer, _zeros(updates))
        operand_normalizer = lax.select(retained_values,
                                        lax.div(one, lax.add(num_updates, one)),
                                        _zeros(num_updates))
        operand_coef = lax.div(lax.add(_const(operand_normalizer, -1.0), operand_normalizer),
                               num_refs)
        target_tangents = _gather(g_operand, indices, gather_dnums, slice_sizes)
        tangent_updates = lax.add(lax.mul(target_tangents, operand_coef),
                                  lax.mul(g_updates, updates_coef))
        tangent_out = _scatter_add(g_operand, indices, tangent_updates, scatter_dnums,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode)
        return val_out, tangent_out
    return jvp


for _name in ("scatter-min", "scatter-max"):
    jvp_rules[_I.P[_name]] = _scatter_extremal_jvp(_I.P[_name])


def _scatter_jvp(primals, tangents, *, update_jaxpr, update_consts, dimension_numbers,
                 indices_are_sorted, unique_indices, mode):
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dnums = dimension_numbers
    params = dict(update_jaxpr=update_jaxpr, update_consts=update_consts,
                  dimension_numbers=dnums, indices_are_sorted=indices_are_sorted, mode=mode)
    if type(g_operand) is Zero and type(g_updates) is Zero:
        val_out = _scatter_p.bind(operand, indices, updates, unique_indices=unique_indices,
                                  **params)
        return val_out, zero_of(val_out)
    g_operand, g_updates = instantiate(g_operand), instantiate(g_updates)
    if unique_indices:
        val_out = _scatter_p.bind(operand, indices, updates, unique_indices=True, **params)
        tangent_out = _scatter_p.bind(g_operand, indices, g_updates, unique_indices=True,
                                      **params)
        return val_out, tangent_out
    # JAX's scheme: scatter ids of the updates, gather them back, mask what lost, scatter-add
    updates_shape = lax.shape_of(updates)
    ids_shape = list(updates_shape)
    for update_dim in dnums.update_window_dims:
        ids_shape[update_dim] = 1
    num_ids = int(np.prod(ids_shape, dtype=np.int64))
    id_dtype = np.dtype(np.uint64) if num_ids > np.iinfo(np.uint32).max else np.dtype(np.uint32)
    update_ids = lax.add(lax.reshape(lax.iota(id_dtype, num_ids), ids_shape),
                         lax.full_like(updates, 1, dtype=id_dtype))
    scattered_ids = _scatter(lax.full(lax.shape_of(operand), 0, id_dtype), indices, update_ids,
                             dnums, indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode)
    gather_dnums, slice_sizes = _inverse_gather(dnums, len(lax.shape_of(scattered_ids)),
                                                updates_shape)
    gathered_update_ids = _gather(scattered_ids, indices, gather_dnums, slice_sizes)
    masked_operand = lax.select(lax.eq(scattered_ids, _zeros(scattered_ids)), operand,
                                _zeros(operand))
    masked_updates = lax.select(lax.eq(update_ids, gathered_update_ids), updates, _zeros(updates))
    masked_g_operand = lax.select(lax.eq(scattered_ids, _zeros(scattered_ids)), g_operand,
                                  _zeros(g_operand))
    masked_g_updates = lax.select(lax.eq(update_ids, gathered_update_ids), g_updates,
                                  _zeros(g_updates))
    val_out = _scatter_add(masked_operand, indices, masked_updates, dnums,
                           indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                           mode=mode)
    tangent_out = _scatter_add(masked_g_operand, indices, masked_g_updates, dnums,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)
    return val_out, tangent_out


def _scatter_transpose(t, operand, indices, updates, *, update_jaxpr, update_consts,
                       dimension_numbers, indices_are_sorted, unique_indices, mode):
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    updates_shape = _aval(updates).shape
    if type(t) is Zero:
        return _scatter_zero_cts(operand, updates)
    operand_t = update_t = None
    if is_undefined(operand):
        operand_t = _scatter(t, indices, lax.full(updates_shape, 0, lax.dtype_of(t)),
                             dimension_numbers, indices_are_sorted=indices_are_sorted,
                             unique_indices=True, mode=mode)
    if is_undefined(updates):
        update_t = _gather_scattered(t, indices, dimension_numbers, updates_shape, mode)
    return [operand_t, None, update_t]


jvp_rules[_scatter_p] = _scatter_jvp
transpose_rules[_scatter_p] = _scatter_transpose


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    shape = lax.shape_of(primals[0])
    index_dtype = int_dtype_for_shape(shape, signed=False)
    sorted_primals_and_idx = _sort_p.bind(
        *primals, lax.broadcasted_iota(index_dtype, shape, dimension),
        dimension=dimension, is_stable=is_stable, num_keys=num_keys + 0)
    batch_dims = tuple(np.delete(np.arange(len(shape), dtype=np.int64), dimension))
    dnums = _GDN(offset_dims=(), collapsed_slice_dims=(dimension,), start_index_map=(dimension,),
                 operand_batching_dims=batch_dims, start_indices_batching_dims=batch_dims)
    idx = lax.expand_dims(sorted_primals_and_idx[-1], (len(shape),))
    tangents_out = [t if type(t) is Zero else
                    _gather(t, idx, dnums, (1,) * len(shape), mode=_Mode.PROMISE_IN_BOUNDS)
                    for t in tangents]
    outs = list(sorted_primals_and_idx[:-1])
    return outs, [zero_of(o) if type(t) is Zero else t for o, t in zip(outs, tangents_out)]


jvp_rules[_sort_p] = _sort_jvp

# cumulative reductions: cumsum is linear; the others differentiate JAX's parallel prefix scan


def _cumsum_transpose(t, operand, *, axis, reverse):
    return [_I.P["cumsum"].bind(t, axis=axis, reverse=not reverse)]


deflinear2(_I.P["cumsum"], _cumsum_transpose)


def _interleave(a, b, axis):
    a_shape, b_shape = lax.shape_of(a), lax.shape_of(b)
    a_pad = [(0, 0, 0)] * len(a_shape)
    b_pad = [(0, 0, 0)] * len(b_shape)
    a_pad[axis] = (0, 1 if a_shape[axis] == b_shape[axis] else 0, 1)
    b_pad[axis] = (1, 0 if a_shape[axis] == b_shape[axis] else 1, 1)
    op = lax.bitwise_or if lax.dtype_of(a) == np.bool_ else lax.add
    return op(lax.pad(a, _const(a, 0), a_pad), lax.pad(b, _const(b, 0), b_pad))


def associative_scan(fn, elems, reverse=False, axis=0):
    """JAX's ``lax.associative_scan`` on a list of arrays (``fn`` maps two lists to one)."""
    elems = list(elems)
    if reverse:
        elems = [lax.rev(e, [axis]) for e in elems]
    ndim = len(lax.shape_of(elems[0]))
    if not -ndim <= axis < ndim:  # as JAX's util.canonicalize_axis (was an IndexError)
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis = axis % ndim

    def scan(elems):
        num_elems = lax.shape_of(elems[0])[axis]
        if num_elems < 2:
            return elems
        reduced = fn([lax.slice_in_dim(e, 0, -1, stride=2, axis=axis) for e in elems],
                     [lax.slice_in_dim(e, 1, None, stride=2, axis=axis) for e in elems])
        odd = scan(reduced)
        if num_elems % 2 == 0:
            even = fn([lax.slice_in_dim(e, 0, -1, axis=axis) for e in odd],
                      [lax.slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
        else:
            even = fn(odd, [lax.slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
        even = [lax.concatenate([lax.slice_in_dim(e, 0, 1, axis=axis), r], axis)
                for e, r in zip(elems, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    scans = scan(elems)
    if reverse:
        scans = [lax.rev(s, [axis]) for s in scans]
    return scans


def _replace_inf(x):
    return lax.select(lax.eq(x, _const(x, float("inf"))), _zeros(x), x)


_logaddexp_fn = []


def _logaddexp_custom(x1, x2):
    """JAX's ``lax.other.logaddexp`` (a custom_jvp function) on real floats."""
    if not _logaddexp_fn:
        _logaddexp_fn.append(_make_logaddexp())
    return _logaddexp_fn[0](x1, x2)


def _logaddexp_impl(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2),
                      lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


def _logaddexp_jvp(primals, tangents):
    x1, x2 = primals
    t1, t2 = tangents
    primal_out = _logaddexp_custom(x1, x2)
    tangent_out = lax.add(
        lax.mul(t1, lax.exp(lax.sub(_replace_inf(x1), _replace_inf(primal_out)))),
        lax.mul(t2, lax.exp(lax.sub(_replace_inf(x2), _replace_inf(primal_out)))))
    return primal_out, tangent_out


def _make_logaddexp():
    def logaddexp(x1, x2, /):  # the name the custom_jvp_call prints, as JAX's
        return _logaddexp_impl(x1, x2)

    f = custom_jvp(logaddexp)
    f.defjvp(_logaddexp_jvp)
    return f


_COMBINERS = {"cumprod": lax.mul, "cummax": lax.max, "cummin": lax.min,
              "cumlogsumexp": lambda a, b: _logaddexp_custom(a, b)}


def _cumulative_jvp(name):
    combine = _COMBINERS[name]

    def jvp(primals, tangents, *, axis, reverse):
        def scan(x):
            return associative_scan(lambda a, b: [combine(a[0], b[0])], [x], reverse=reverse,
                                    axis=axis)
        outs, touts = jvp_flat(scan, list(primals), [instantiate(t) for t in tangents])
        return outs[0], touts[0]
    return jvp


for _name in ("cumprod", "cummax", "cummin", "cumlogsumexp"):
    jvp_rules[_I.P[_name]] = _cumulative_jvp(_name)



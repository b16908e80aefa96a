"""JVP and transpose rules of reductions and dot_general (JAX's lax.py)."""
from __future__ import annotations

import itertools
import numpy as np

from traxla import lax
from traxla.ir.rules.ad import add_any_p
from traxla.ir.rules.reduction import P as R, dot_general_p
from traxla.ir.sharding_rules import infer_avals
from traxla.autodiff.ad import Zero, add_tangents, instantiate, jvp_flat, jvp_rules, zero_of
from traxla.autodiff.rules._util import _argsort, _eq_meet, def_bilinear_transpose, defjvp2


# -- reductions ---------------------------------------------------------------------------------------

def _reduce_chooser_jvp(g, ans, x, *, axes, **_):
    shape = [1 if i in axes else d for i, d in enumerate(lax.shape_of(x))]
    location = lax.convert_element_type(_eq_meet(x, lax.reshape(ans, shape)), lax.dtype_of(g))
    counts = lax.reduce_sum(location, axes)
    return lax.div(lax.reduce_sum(lax.mul(g, location), axes), counts)


defjvp2(R["reduce_max"], _reduce_chooser_jvp)
defjvp2(R["reduce_min"], _reduce_chooser_jvp)


def _reduce_jvp(reducer, init_values, primals, tangents, axes):
    """JAX's ``_reduce_jvp``: the reduction as a tree of pairwise ``reducer`` calls over
    the reduced axes (moved to the front and flattened), differentiated with ``jvp``."""
    input_shape = np.array(lax.shape_of(primals[0]), dtype=int)
    n = int(np.prod(input_shape[list(axes)]))
    non_axes = np.delete(np.arange(len(input_shape)), axes)
    permutation = tuple(int(a) for a in tuple(axes) + tuple(non_axes))
    new_shape = (n,) + tuple(int(d) for d in input_shape[non_axes])
    primals = tuple(lax.reshape(x, new_shape, permutation) for x in primals)
    tangents = tuple(lax.reshape(t, new_shape, permutation) for t in tangents)

    def reduce_tree(*xs, axis=0):
        while lax.shape_of(xs[0])[axis] > 1:
            n = lax.shape_of(xs[0])[axis]
            n1 = (n + 1) // 2
            n2 = n - n1
            xs1 = [lax.slice_in_dim(x, 0, n1) for x in xs]
            xs2 = [lax.slice_in_dim(x, n1, None) for x in xs]
            if n2 != n1:
                paddings = [(0, 0, 0)] * len(lax.shape_of(xs[0]))
                paddings[axis] = (0, 1, 0)
                xs2 = [lax.pad(x2, i, paddings) for x2, i in zip(xs2, init_values)]
            xs = reducer(*(xs1 + xs2))
        if lax.shape_of(xs[0])[axis] == 0:
            return [lax.full(tuple(int(d) for d in input_shape[non_axes]), i) for i in init_values]
        return tuple(lax.squeeze(x, (axis,)) for x in xs)

    return jvp_flat(lambda *xs: list(reduce_tree(*xs)), list(primals), list(tangents))


def _reduce_prod_jvp(primals, tangents, *, axes, **params):
    x, = primals
    # JAX's rule reshapes without the primitive's typing rule, tracing a reshape to another
    # size on repeated axes (its lowering then fails): the typing rule's error first
    infer_avals(R["reduce_prod"], [lax.aval_of(x)], dict(params, axes=axes))
    init = np.array(1, lax.dtype_of(x))
    outs, touts = _reduce_jvp(lambda a, b: [lax.mul(a, b)], [init], primals,
                              [instantiate(t) for t in tangents], tuple(axes))
    return outs[0], touts[0]


jvp_rules[R["reduce_prod"]] = _reduce_prod_jvp


# -- contractions -------------------------------------------------------------------------------------

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
    # (argsorts of a few distinct axis numbers: Python's sort, without NumPy's per-call cost)
    x_contract_sorted_by_y = [x_contract[i] for i in _argsort(y_contract)]
    unsorted_axes = list(x_batch) + x_kept + x_contract_sorted_by_y
    out_axes = _argsort(unsorted_axes)
    # the cotangent lands where x lives: its sharding, in dot_general's output order
    out_sharding = None
    if x_aval.sharding_type is not None:
        ct = x_aval.sharding_type.to_ct()  # (unreduced where x is reduced: JAX's)
        spec = tuple(ct.spec) + (None,) * (len(x_aval.shape) - len(ct.spec))
        out_sharding = ct.with_spec(ct.spec.update(partitions=[spec[o] for o in unsorted_axes]))
    out = lax.dot_general(g, y, dims, precision=precision,
                          preferred_element_type=preferred_element_type, out_sharding=out_sharding)
    x_bar = lax.transpose(out, tuple(out_axes))
    if lax.dtype_of(x_bar) != x_aval.dtype:
        x_bar = lax._convert_element_type(x_bar, x_aval.dtype, x_aval.weak_type)
    return x_bar


def _dot_general_jvp(primals, tangents, **params):
    x, y = primals
    tx, ty = tangents
    out = dot_general_p.bind(x, y, **params)
    parts = []
    if type(tx) is not Zero:
        parts.append(dot_general_p.bind(tx, y, **params))
    if type(ty) is not Zero:
        parts.append(dot_general_p.bind(x, ty, **params))
    if not parts:
        return out, zero_of(out)
    return out, parts[0] if len(parts) == 1 else add_tangents(parts[0], parts[1])


def _dot_general_transpose_x(ct, x, y, *, dimension_numbers, precision=None,
                             preferred_element_type=None, out_sharding=None):
    return _dot_transpose_lhs(ct, x.aval, y, dimension_numbers=dimension_numbers,
                              precision=precision, preferred_element_type=preferred_element_type)


def _dot_general_transpose_y(ct, x, y, *, dimension_numbers, precision=None,
                             preferred_element_type=None, out_sharding=None):
    (xc, yc), (xb, yb) = dimension_numbers
    swapped = ((yc, xc), (yb, xb))
    return _dot_transpose_lhs(ct, y.aval, x, dimension_numbers=swapped, precision=precision,
                              preferred_element_type=preferred_element_type, swap_ans=True)


jvp_rules[dot_general_p] = _dot_general_jvp
def_bilinear_transpose(dot_general_p, "product", _dot_general_transpose_x,
                       _dot_general_transpose_y)


# add_any is born here; its batching rule is the elementwise broadcasting one.
from traxla.batching.batch_trace import register_batching  # noqa: E402
from traxla.batching.rules.elementwise import _broadcasting  # noqa: E402

register_batching(add_any_p, _broadcasting(add_any_p))



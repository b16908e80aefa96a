"""JVP and transpose of ``ragged_dot_general`` (JAX's rules): bilinear in lhs and rhs, no
tangent for ``group_sizes``; transposed (in the non-contracting mode only, as JAX) by a
ragged dot of the cotangent with the other operand."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.autodiff.ad import Zero, is_undefined, jvp_rules, transpose_rules
from traxla.ir.rules.ragged_dot import (RaggedDotDimensionNumbers, RaggedDotMode,
                                        ragged_dot_general_p, ragged_dot_mode_and_dim, remaining)
from traxla.lax.ragged_dot import ragged_dot_general


def _jvp(primals, tangents, *, ragged_dot_dimension_numbers, precision, preferred_element_type,
         group_offset, out_sharding):
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    x, y, gs = primals
    dx, dy, _ = tangents
    params = dict(ragged_dot_dimension_numbers=ragged_dot_dimension_numbers,
                  precision=precision, preferred_element_type=preferred_element_type)
    primal_out = ragged_dot_general(x, y, gs, **params)
    dx_out = (ragged_dot_general(dx, y, gs, **params) if type(dx) is not Zero
              else lax.full_like(primal_out, 0))
    dy_out = (ragged_dot_general(x, dy, gs, **params) if type(dy) is not Zero
              else lax.full_like(primal_out, 0))
    return primal_out, lax.add(dx_out, dy_out)


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield range(start, start + len(x))
        start += len(x)


def _transpose(ct, x, y, group_sizes, *, ragged_dot_dimension_numbers, precision,
               preferred_element_type, group_offset, out_sharding=None):
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    dn = ragged_dot_dimension_numbers
    (x_contract, y_contract), (x_batch, y_batch) = dn.dot_dimension_numbers
    x_ndim = x.aval.ndim if is_undefined(x) else np.ndim(x)
    y_ndim = y.aval.ndim if is_undefined(y) else np.ndim(y)
    x_kept = remaining(range(x_ndim), x_contract, x_batch)
    y_group = dn.rhs_group_dimensions
    y_kept = remaining(range(y_ndim), y_contract, y_batch, y_group)
    mode, lhs_ragged_dim = ragged_dot_mode_and_dim(x_ndim, dn)
    if mode is not RaggedDotMode.RAGGED_NONCONTRACTING:
        which = "grad_y_dims" if is_undefined(y) and not is_undefined(x) else "grad_x_dims"
        raise NotImplementedError(f"Unimplemented {which} for ragged dot general in mode "
                                  f"{mode.name}.")

    def grad_x_dims():
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
        dims = RaggedDotDimensionNumbers(
            dot_dimension_numbers=((ans_y, y_kept), (ans_batch, y_batch)),
            lhs_ragged_dimensions=[len(x_batch) + x_kept.index(lhs_ragged_dim)],
            rhs_group_dimensions=y_group)
        x_contract_sorted_by_y = list(np.take(x_contract, np.argsort(y_contract)))
        return dims, list(x_batch) + x_kept + x_contract_sorted_by_y

    def grad_y_dims():
        ans_batch, ans_x, _ = _ranges_like(x_batch, x_kept, y_kept)
        dims = RaggedDotDimensionNumbers(
            dot_dimension_numbers=((x_kept, ans_x), (x_batch, ans_batch)),
            lhs_ragged_dimensions=[lhs_ragged_dim], rhs_group_dimensions=[])
        y_contract_sorted_by_x = list(np.take(y_contract, np.argsort(x_contract)))
        return dims, list(y_group) + list(y_batch) + y_contract_sorted_by_x + y_kept

    def grad(lhs, rhs, dims_fn, aval):
        dims, unsorted_axes = dims_fn()
        out = ragged_dot_general(lhs, rhs, group_sizes, dims, precision=precision,
                                 preferred_element_type=preferred_element_type,
                                 group_offset=group_offset, out_sharding=aval.sharding_type)
        result = lax.transpose(out, tuple(np.argsort(unsorted_axes)))
        if result.dtype != aval.dtype:
            result = lax._convert_element_type(result, aval.dtype, aval.weak_type)
        return result

    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None,
                Zero(y.aval) if is_undefined(y) else None, None]
    x_bar = None if is_undefined(y) else grad(ct, y, grad_x_dims, x.aval)
    y_bar = None if is_undefined(x) else grad(x, ct, grad_y_dims, y.aval)
    return [x_bar, y_bar, None]


jvp_rules[ragged_dot_general_p] = _jvp
transpose_rules[ragged_dot_general_p] = _transpose

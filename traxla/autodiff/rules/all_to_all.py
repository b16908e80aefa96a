"""``all_to_all`` is linear; its transpose swaps the split and concat axes.
``ragged_all_to_all`` is linear in its operand and output (the offsets and sizes are
integers): JAX's JVP and transpose rules."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir.rules.all_to_all import all_to_all_p, ragged_all_to_all_p
from traxla.autodiff.ad import (Zero, instantiate, is_undefined, jvp_rules, transpose_rules,
                                zero_of, zeros_like_aval)
from traxla.autodiff.rules._util import deflinear2


def _transpose(ct, x, *, split_axis, concat_axis, **params):
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)]


deflinear2(all_to_all_p, _transpose)


def _ragged_jvp(primals, tangents, **params):
    operand, output, *offsets_and_sizes = primals
    operand_dot, output_dot, *_ = tangents
    result = ragged_all_to_all_p.bind(operand, output, *offsets_and_sizes, **params)
    if type(operand_dot) is Zero and type(output_dot) is Zero:
        return result, zero_of(result)
    return result, ragged_all_to_all_p.bind(instantiate(operand_dot), instantiate(output_dot),
                                            *offsets_and_sizes, **params)


def _ragged_transpose(t, operand, output, input_offsets, send_sizes, output_offsets,
                      recv_sizes, *, axis_name, axis_index_groups):
    if type(t) is Zero:
        return [Zero(operand.aval) if is_undefined(operand) else None,
                Zero(output.aval) if is_undefined(output) else None] + [None] * 4
    # the received slices go back to their senders; the rest of the output is ``output``'s
    output_offsets_ = lax.all_to_all(output_offsets, axis_name, 0, 0, tiled=True)
    input_offsets_ = lax.all_to_all(input_offsets, axis_name, 0, 0, tiled=True)
    operand_t = ragged_all_to_all_p.bind(
        t, zeros_like_aval(operand.aval), output_offsets_, recv_sizes, input_offsets_,
        send_sizes, axis_name=axis_name, axis_index_groups=axis_index_groups)
    n = lax.shape_of(t)[0]
    marks = lax.full((n,), 0, np.int32).at[output_offsets_].set(1) \
        .at[output_offsets_ + recv_sizes].add(-1)
    mask = lax.cumsum(marks)
    mask = lax.expand_dims(mask, tuple(range(1, len(lax.shape_of(t)))))
    mask = lax.broadcast_in_dim(mask, lax.shape_of(t), tuple(range(len(lax.shape_of(t)))))
    output_t = lax.select_n(mask, t, lax.full_like(t, 0))  # (mask: 0 or 1, as JAX's)
    return [operand_t, output_t] + [None] * 4


jvp_rules[ragged_all_to_all_p] = _ragged_jvp
transpose_rules[ragged_all_to_all_p] = _ragged_transpose

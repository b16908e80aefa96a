"""``all_to_all``: inside ``shard_map``, each device splits ``split_axis`` into one chunk
per device of the named axes and concatenates the chunks it receives along
``concat_axis`` (``lax.all_to_all``, ``lax.pswapaxes``). The axis size is a hidden
param (JAX reads it from its axis environment).

``ragged_all_to_all``: each device sends slices of its ``operand`` (given by offsets and
sizes along the leading axis) to the devices of the named axes, which write them into
their ``output`` at the offsets the sender names; the result has ``output``'s type."""
from __future__ import annotations

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_printing, def_typing
from traxla.ir.vma import vma_rules

all_to_all_p = Primitive("all_to_all")
ragged_all_to_all_p = Primitive("ragged_all_to_all")


def _all_to_all_rule(x, *, axis_name, split_axis, concat_axis, axis_index_groups, tiled,
                     axis_size):
    shape = list(x.shape)
    for what, axis in (("split_axis", split_axis), ("concat_axis", concat_axis)):
        if not 0 <= axis < len(shape):
            raise ValueError(f"all_to_all: {what}={axis} is out of bounds for an operand of "
                             f"shape {tuple(shape)}")
    if shape[split_axis] % axis_size:
        raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has to be "
                         f"divisible by the size of the named axis {axis_name} ({axis_size})")
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return ShapedArray(tuple(shape), x.dtype, False, x.sharding_type, x.memory_space)


def_typing(all_to_all_p, _all_to_all_rule)
def_printing(all_to_all_p, hide=("axis_size",))


def _ragged_all_to_all_rule(operand, output, input_offsets, send_sizes, output_offsets,
                            recv_sizes, *, axis_name, axis_index_groups):
    named = (("input_offsets", input_offsets), ("send_sizes", send_sizes),
             ("output_offsets", output_offsets), ("recv_sizes", recv_sizes))
    for what, aval in named:
        if not np.issubdtype(aval.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {what} must be integer type.")
    for what, aval in named:
        if len(aval.shape) != 1 or aval.shape[0] < 1:
            raise ValueError(f"ragged_all_to_all {what} must be rank 1 with positive "
                             f"dimension size, but got shape {aval.shape}")
    return ShapedArray(output.shape, output.dtype, False, output.sharding_type,
                       output.memory_space)


def_typing(ragged_all_to_all_p, _ragged_all_to_all_rule)
vma_rules[ragged_all_to_all_p] = lambda in_avals, **params: in_avals[1].vma  # output's

"""``all_to_all``: inside ``shard_map``, each device splits ``split_axis`` into one chunk
per device of the named axes and concatenates the chunks it receives along
``concat_axis`` (``lax.all_to_all``, ``lax.pswapaxes``). The axis size is a hidden
param (JAX reads it from its axis environment)."""
from __future__ import annotations

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_printing, def_typing

all_to_all_p = Primitive("all_to_all")


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

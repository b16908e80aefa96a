"""``jax.experimental.mosaic.gpu.inference_utils``: not supported by traxla, which does not
have Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""

from collections.abc import Sequence
from functools import partial
from typing import Union

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('MlirOperation attr_element compute_swizzle has_any_layout_set has_in_layouts_set '
      'has_out_layouts_set has_out_transforms_set in_layout_for_operand in_layouts '
      'in_tmem_layout_for_operand in_tmem_layouts in_transforms in_transforms_for_operand '
      'is_transformable_smem_memref out_layouts out_tmem_layouts out_transforms '
      'should_have_in_layout should_have_in_tmem_layout should_have_in_transforms '
      'should_have_layout should_have_out_layout should_have_out_tmem_layout '
      'should_have_out_transforms should_have_tmem_layout should_have_transforms'),
    modules='ir mgpu utils')

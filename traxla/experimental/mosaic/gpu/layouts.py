"""``jax.experimental.mosaic.gpu.layouts``: not supported by traxla, which does not have
Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with JAX's
kinds; using one raises NotImplementedError naming the capability."""

from typing import assert_never
import traxla.experimental.mosaic.gpu.fragmented_array as fa
import traxla.experimental.mosaic.gpu.launch_context as launch_context

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('from_layout_attr from_transform_attr splat_is_compatible_with_tiled to_layout_attr '
      'to_transform_attr'),
    modules='ir mgpu')

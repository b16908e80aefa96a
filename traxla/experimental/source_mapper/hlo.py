"""``jax.experimental.source_mapper.hlo``: not supported by traxla, which does not have source
maps of compiled programs (jax.experimental.source_mapper). The module imports and its names
exist with JAX's kinds; using one raises NotImplementedError naming the capability."""

from typing import Any
import enum
import re
import traxla as jax
import traxla.experimental.source_mapper.common as common

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'source maps of compiled programs (jax.experimental.source_mapper)'
_fill(globals(), _CAPABILITY,
    functions=('optimized_generate_dump original_hlo_generate_dump parse_hlo_dump '
      'stable_hlo_generate_dump trace_and_lower'),
    classes='HloPass',
    constants='METADATA_REGEX',
    modules='mlir sourcemap')

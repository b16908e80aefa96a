"""``jax.experimental.source_mapper.mlir``: not supported by traxla, which does not have
source maps of compiled programs (jax.experimental.source_mapper). The module imports and its
names exist with JAX's kinds; using one raises NotImplementedError naming the capability."""

from typing import cast
import collections
import re

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'source maps of compiled programs (jax.experimental.source_mapper)'
_fill(globals(), _CAPABILITY,
    functions='create_mlir_sourcemap parse_mlir_locations',
    classes='Location Redirect',
    constants='CALLSITE_REGEX LOC_REGEX SCOPED_REGEX SRC_REGEX',
    modules='sourcemap')

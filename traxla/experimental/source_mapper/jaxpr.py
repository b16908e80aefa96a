"""``jax.experimental.source_mapper.jaxpr``: not supported by traxla, which does not have
source maps of compiled programs (jax.experimental.source_mapper). The module imports and its
names exist with JAX's kinds; using one raises NotImplementedError naming the capability."""

from typing import Any
import re
import traxla as jax
import traxla._src.config as config
import traxla._src.core as core
import traxla.experimental.source_mapper.common as common

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'source maps of compiled programs (jax.experimental.source_mapper)'
_fill(globals(), _CAPABILITY,
    functions='canonicalize_filename compile_jaxpr make_jaxpr_dump',
    modules='source_info_util sourcemap')

"""``jax.experimental.source_mapper.generate_map``: not supported by traxla, which does not
have source maps of compiled programs (jax.experimental.source_mapper). The module imports and
its names exist with JAX's kinds; using one raises NotImplementedError naming the
capability."""

from collections.abc import Sequence
from typing import Protocol
import os
import tempfile

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'source maps of compiled programs (jax.experimental.source_mapper)'
_fill(globals(), _CAPABILITY,
    functions='generate_sourcemaps',
    classes='SourceMapGeneratorFn',
    modules='common')

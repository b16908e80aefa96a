"""``jax.experimental.source_mapper.common``: not supported by traxla, which does not have
source maps of compiled programs (jax.experimental.source_mapper). The module imports and its
names exist with JAX's kinds; using one raises NotImplementedError naming the capability."""

from collections.abc import Sequence
from typing import Any
from typing import Protocol
import contextlib
import dataclasses
import re
import traxla as jax

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'source maps of compiled programs (jax.experimental.source_mapper)'
_fill(globals(), _CAPABILITY,
    functions='all_passes compile_with_env filter_passes flag_env register_pass',
    classes='CompileFn GenerateDumpFn Pass SourceMapDump',
    modules='flags sourcemap')

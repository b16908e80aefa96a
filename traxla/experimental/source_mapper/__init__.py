"""``jax.experimental.source_mapper``: not supported by traxla, which does not have source
maps of compiled programs (jax.experimental.source_mapper). The module imports and its names
exist with JAX's kinds; using one raises NotImplementedError naming the capability."""

import traxla as jax

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'source maps of compiled programs (jax.experimental.source_mapper)'
_fill(globals(), _CAPABILITY,
    functions=('all_passes canonicalize_filename compile_with_env create_mlir_sourcemap '
      'filter_passes generate_sourcemaps register_pass'),
    classes='MappingsGenerator Pass SourceMap SourceMapDump')

from traxla.experimental.source_mapper import common, generate_map, hlo, jaxpr, mlir  # noqa: E402,F401

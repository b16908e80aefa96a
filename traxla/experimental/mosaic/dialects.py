"""``jax.experimental.mosaic.dialects``: not supported by traxla, which does not have Mosaic
TPU kernels outside Pallas (jax.experimental.mosaic). The module imports and its names exist
with JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'Mosaic TPU kernels outside Pallas (jax.experimental.mosaic)'
_fill(globals(), _CAPABILITY,
    modules='tpu')

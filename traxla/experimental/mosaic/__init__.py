"""``jax.experimental.mosaic``: not supported by traxla, which does not have Mosaic TPU
kernels outside Pallas (jax.experimental.mosaic). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'Mosaic TPU kernels outside Pallas (jax.experimental.mosaic)'
_fill(globals(), _CAPABILITY,
    functions='as_tpu_kernel lower_module_to_custom_call lowered_as_tpu_kernel',
    classes='Tiling TpuMemorySpace TpuSideEffectType')

from traxla.experimental.mosaic import dialects, gpu  # noqa: E402,F401

"""``jax.experimental.profiler``: not supported by traxla, which does not have XLA profiled-
instruction protos (jax.experimental.profiler). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'XLA profiled-instruction protos (jax.experimental.profiler)'
_fill(globals(), _CAPABILITY,
    functions='get_profiled_instructions_proto')

"""``jax.experimental.xla_metadata``: not supported by traxla, which does not have XLA op
metadata (jax.experimental.xla_metadata). The module imports and its names exist with JAX's
kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'XLA op metadata (jax.experimental.xla_metadata)'
_fill(globals(), _CAPABILITY,
    functions='set_xla_metadata')

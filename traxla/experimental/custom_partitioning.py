"""``jax.experimental.custom_partitioning``: not supported by traxla, which does not have
custom_partitioning (user partitioning rules for the SPMD partitioner). The module imports and
its names exist with JAX's kinds; using one raises NotImplementedError naming the
capability."""


from traxla.base.unsupported import fill as _fill

BATCHING = '…'

_CAPABILITY = 'custom_partitioning (user partitioning rules for the SPMD partitioner)'
_fill(globals(), _CAPABILITY,
    classes='ArrayMapping CompoundFactor SdyShardingRule custom_partitioning',
    constants='custom_partitioning_p')

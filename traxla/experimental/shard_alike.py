"""``jax.experimental.shard_alike``: not supported by traxla, which does not have shard_alike
(a sharding-propagation hint). The module imports and its names exist with JAX's kinds; using
one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'shard_alike (a sharding-propagation hint)'
_fill(globals(), _CAPABILITY,
    functions='shard_alike')

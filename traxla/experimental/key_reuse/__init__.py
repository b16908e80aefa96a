"""``jax.experimental.key_reuse``: not supported by traxla, which does not have key-reuse
checking of PRNG keys (jax.experimental.key_reuse). The module imports and its names exist
with JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'key-reuse checking of PRNG keys (jax.experimental.key_reuse)'

"""``jax.experimental.array_serialization.pytree_serialization``: not supported by traxla,
which does not have tensorstore array serialization (needs tensorstore). The module imports
and its names exist with JAX's kinds; using one raises NotImplementedError naming the
capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'tensorstore array serialization (needs tensorstore)'
_fill(globals(), _CAPABILITY,
    functions='save load_pytreedef load nonblocking_save nonblocking_load')

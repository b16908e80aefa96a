"""``jax.interpreters.xla``: not supported by traxla, which does not have JAX's legacy XLA
interpreter (jax.interpreters.xla). The module imports and its names exist with JAX's kinds;
using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = "JAX's legacy XLA interpreter (jax.interpreters.xla)"
_fill(globals(), _CAPABILITY,
    functions='apply_primitive',
    classes='Backend',
    constants='canonicalize_dtype_handlers')

"""``jax.tools``: not supported by traxla, which does not have JAX's command-line tools
(jax.tools). The module imports and its names exist with JAX's kinds; using one raises
NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = "JAX's command-line tools (jax.tools)"


from traxla.tools import jax_to_ir, pgo_nsys_converter  # noqa: E402,F401

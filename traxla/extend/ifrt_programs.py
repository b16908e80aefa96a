"""``jax.extend.ifrt_programs``: jaxlib's IFRT program builders (``make_plugin_program``,
``make_plugin_compile_options``, ...), as JAX's."""
from traxla.runtime.xla_adapter import clients as _xla

ifrt_programs = _xla.ifrt_programs()

del _xla

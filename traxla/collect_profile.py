"""``jax.collect_profile``: not supported by traxla, which does not have collect_profile
(needs xprof). The module imports and its names exist with JAX's kinds; using one raises
NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'collect_profile (needs xprof)'
DEFAULT_NUM_TRACING_ATTEMPTS = 3
_fill(globals(), _CAPABILITY, functions='collect_profile main')

"""``jax.experimental.random``: not supported by traxla, which does not have stateful PRNGs
(jax.experimental.random). The module imports and its names exist with JAX's kinds; using one
raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'stateful PRNGs (jax.experimental.random)'
_fill(globals(), _CAPABILITY,
    functions='stateful_rng',
    classes='StatefulPRNG')

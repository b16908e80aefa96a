"""``jax.experimental.compute_on``: not supported by traxla, which does not have compute_on
(placing computations on the host). The module imports and its names exist with JAX's kinds;
using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'compute_on (placing computations on the host)'
_fill(globals(), _CAPABILITY,
    functions='compute_on compute_on2')

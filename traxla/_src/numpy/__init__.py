"""``jax._src.numpy``: what libraries import from JAX's private NumPy modules, as traxla's
(``lax_numpy``: every ``jax.numpy`` name; ``util``: argument promotion and checks;
``reductions``: the reductions)."""
from traxla._src.numpy import lax_numpy, reductions, util  # noqa: F401

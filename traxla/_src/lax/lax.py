"""``jax._src.lax.lax``: JAX's module of the elementwise, shape and reduction operations;
here every name of ``jax.lax``."""
from traxla.lax import *  # noqa: F401,F403

"""``jax._src.interpreters.ad``: ``jax.interpreters.ad``'s names plus the exception JAX
raises on differentiating a custom_vjp function with respect to a closed-over value."""
from traxla.interpreters.ad import *  # noqa: F401,F403
from traxla.autodiff.custom_args import CustomVJPException  # noqa: F401

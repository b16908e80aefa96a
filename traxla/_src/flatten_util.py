"""``jax._src.flatten_util``: ``ravel_pytree`` (blackjax imports it from here), traxla's own
``traxla.flatten_util``."""
from traxla.flatten_util import ravel_pytree  # noqa: F401

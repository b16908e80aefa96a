"""``traxla.scipy``: ``special`` and ``stats.norm``, as ``jax.scipy`` defines them."""
from . import special, stats  # noqa: F401

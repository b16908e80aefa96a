"""``traxla.scipy``: ``special`` and ``stats.norm``, as ``jax.scipy`` defines them."""
from . import special, stats  # noqa: F401
from . import linalg  # noqa: F401,E402  (scipy.linalg on lax.linalg)

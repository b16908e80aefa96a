"""``traxla.scipy``: ``special`` and ``stats.norm``, as ``jax.scipy`` defines them."""
from . import special, stats  # noqa: F401
from . import integrate, ndimage, optimize  # noqa: F401,E402  (issue #16b)

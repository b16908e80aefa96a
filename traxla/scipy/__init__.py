"""``traxla.scipy``: ``special`` and ``stats.norm``, as ``jax.scipy`` defines them."""
from . import special, stats  # noqa: F401
from . import fft, signal  # noqa: F401,E402  (scipy.fft: dct family; scipy.signal)

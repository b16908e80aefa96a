"""``traxla.scipy.stats``: the normal distribution (``norm``)."""
from . import norm  # noqa: F401

"""``traxla.experimental``: ``io_callback`` and ``checkify``."""
from ..callback import io_callback  # noqa: F401
from . import checkify  # noqa: F401

__all__ = ["io_callback", "checkify"]

"""``traxla.experimental``: ``io_callback`` and ``checkify``."""
from traxla.api.callback import io_callback  # noqa: F401
from traxla.experimental import checkify  # noqa: F401

__all__ = ["io_callback", "checkify"]

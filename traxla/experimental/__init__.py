"""``traxla.experimental``: ``io_callback`` (and ``checkify``, when present)."""
from ..callback import io_callback  # noqa: F401

__all__ = ["io_callback"]

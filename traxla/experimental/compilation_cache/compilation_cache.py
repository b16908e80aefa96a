"""``jax.experimental.compilation_cache.compilation_cache``: ``set_cache_dir`` and
``reset_cache`` over traxla's persistent cache (``traxla/runtime/compilation_cache.py``)."""
from traxla.runtime.compilation_cache import reset_stats, set_cache_dir  # noqa: F401
from traxla.runtime.compilation_cache import cache_dir


def reset_cache() -> None:
    """Forgets the configured directory and the counters (the files stay on disk)."""
    set_cache_dir(None)
    reset_stats()


def is_initialized() -> bool:
    return cache_dir() is not None

"""``jax.experimental.compilation_cache``: the persistent compilation cache's entry points."""
from traxla.experimental.compilation_cache import compilation_cache  # noqa: F401

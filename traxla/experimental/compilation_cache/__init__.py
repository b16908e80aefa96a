"""``jax.experimental.compilation_cache``: the persistent compilation cache's entry points."""
from . import compilation_cache  # noqa: F401

"""``jax.experimental.array_serialization``: see ``serialization``."""

"""``jax._src.interpreters``: JAX's private interpreter modules that libraries import."""

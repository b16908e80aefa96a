"""``jax._src.lax``: the package of JAX's lax modules; ``lax`` (``from jax._src.lax import
lax``) holds the operations of ``jax.lax``."""

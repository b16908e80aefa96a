"""``jax._src.image``: the module of JAX's image resizing (``scale``)."""

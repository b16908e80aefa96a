"""``jax._src.state``: array references (``types.AbstractRef``)."""

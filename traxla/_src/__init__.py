"""``traxla._src``: what ``jax._src.X`` resolves to under the drop-in (``traxla.as_jax``).

JAX's private modules are not an API, yet libraries import a few of them (flax reads the
pytree registry, chex the initialized backends, ...). Each module here re-exports traxla's
own equivalent of the names those libraries use, with JAX's meaning; a private path with no
module here raises ModuleNotFoundError naming it, and a missing name AttributeError."""

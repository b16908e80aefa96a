"""augmax quick start: a Chain of augmentations applied to a small image batch under jit/vmap."""
import jax
import jax.numpy as jnp
import augmax
from _out import emit

img = jnp.linspace(0, 1, 2 * 8 * 8 * 3).reshape(2, 8, 8, 3)
t = augmax.Chain(augmax.HorizontalFlip(), augmax.Rotate((-15, 15)),
                 augmax.ColorspaceTransform() if hasattr(augmax, "ColorspaceTransform")
                 else augmax.HorizontalFlip(p=0.0))
keys = jax.random.split(jax.random.PRNGKey(0), 2)
out = jax.jit(jax.vmap(t))(keys, img)
emit({"sum": out.sum((1, 2, 3)), "px": out[:, 0, 0]}, tol=1e-4)

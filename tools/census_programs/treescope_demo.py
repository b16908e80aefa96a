"""treescope quick start: text renderings of jax arrays and pytrees (array summaries:
shape, dtype, statistics)."""
import jax
import jax.numpy as jnp
import treescope
from _out import emit

tree = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.zeros(3, jnp.int32),
        "key": jax.random.key(0), "nested": [jnp.float32(1.5), (jnp.ones(2, bool),)]}
text = treescope.render_to_text(tree)
emit({"text": text.replace("traxla", "jax"),
      "array": treescope.render_to_text(jnp.linspace(0.0, 1.0, 5)).replace("traxla", "jax")})

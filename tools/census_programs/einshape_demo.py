"""einshape quick start: reshape/transpose with the JAX einshape."""
import jax.numpy as jnp
from einshape import jax_einshape as einshape
from _out import emit

x = jnp.arange(24.0).reshape(2, 3, 4)
emit({"a": einshape("abc->acb", x), "b": einshape("abc->a(bc)", x),
      "c": einshape("a(bc)->abc", x.reshape(2, 12), b=3)})

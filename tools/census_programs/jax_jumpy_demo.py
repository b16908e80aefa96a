"""jax-jumpy quick start: one function body run on NumPy or JAX arrays by the arguments' kind
(which_np), pure index updates, control flow and random numbers through jumpy."""
import jax
import jax.numpy as jnp
import numpy as onp
import jumpy as jp
import jumpy.numpy as jpn
from _out import emit


def step(x):
    y = jp.index_update(x, 1, x[0] * 2.0)
    y = jp.lax.cond(y.sum() > 3.0, lambda v: v * 0.5, lambda v: v + 1.0, y)
    return jp.lax.fori_loop(0, 3, lambda i, v: v + i, y)


xj = jnp.array([1.0, 2.0, 3.0])
xn = onp.array([1.0, 2.0, 3.0])
key = jp.random.PRNGKey(jnp.array(0))
k1, k2 = jp.random.split(key)
emit({"which": [jp.core.which_np(xj) is jnp, jp.core.which_np(xn) is onp],
      "jax": step(xj), "numpy": step(xn), "jit": jax.jit(step)(xj),
      "uniform": jp.random.uniform(k1, (3,)), "randint": jp.random.randint(k2, (2,), 0, 10),
      "arange": jpn.arange(0, 4) if hasattr(jpn, "arange") else None})

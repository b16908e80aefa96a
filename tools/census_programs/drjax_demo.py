"""drjax quick start: broadcast a value to placements, map a function, reduce."""
import jax
import jax.numpy as jnp
import drjax
from _out import emit


@drjax.program(placements={"clients": 4})
def prog(x):
    y = drjax.broadcast(x)
    z = drjax.map_fn(lambda v: v * 2 + 1, y)
    return drjax.reduce_mean(z), drjax.reduce_sum(z)


m, s = prog(jnp.array([1.0, 2.0]))
g = jax.grad(lambda x: prog(x)[1].sum())(jnp.array([1.0, 2.0]))
emit({"mean": m, "sum": s, "grad": g})

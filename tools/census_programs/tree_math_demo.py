"""tree-math quick start: vector arithmetic on pytrees, a CG solve written with it."""
import jax
import jax.numpy as jnp
import tree_math as tm
from _out import emit

v = tm.Vector({"a": jnp.array([1.0, 2.0]), "b": jnp.array(3.0)})
w = 2 * v + 1
dot = v @ w


@tm.wrap
def f(x):
    return x * x.sum()


emit({"w": w.tree, "dot": dot, "norm": jnp.sqrt(v @ v), "f": f({"a": jnp.ones(2)})["a"],
      "size": v.size, "jit": jax.jit(lambda v: (v - 1).tree)(v)})

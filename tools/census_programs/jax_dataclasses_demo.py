"""jax-dataclasses quick start: a pytree dataclass with static fields through jit, copy_and_mutate."""
import jax
import jax.numpy as jnp
import jax_dataclasses as jdc
from _out import emit


@jdc.pytree_dataclass
class State:
    x: jax.Array
    n: jdc.Static[int]


@jax.jit
def step(s):
    return State(s.x * s.n, s.n)


s = step(State(jnp.arange(3.0), 3))
with jdc.copy_and_mutate(s) as s2:
    s2.x = s2.x + 1
emit({"x": s.x, "n": s.n, "x2": s2.x, "leaves": len(jax.tree_util.tree_leaves(s))})

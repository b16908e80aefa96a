"""brax quick start: a generalized-pipeline pendulum stepped under jit; brax.math helpers."""
import jax
import jax.numpy as jnp
from brax import math
from brax.envs import get_environment
from _out import emit

env = get_environment("inverted_pendulum", backend="generalized")
state = jax.jit(env.reset)(jax.random.PRNGKey(0))
step = jax.jit(env.step)
rs = []
for i in range(5):
    state = step(state, jnp.array([0.1 * (-1) ** i]))
    rs.append(state.reward)
q = math.quat_rot_axis(jnp.array([0.0, 0.0, 1.0]), 0.5)
emit({"obs": state.obs, "rewards": rs, "quat": q,
      "rot": math.rotate(jnp.array([1.0, 0.0, 0.0]), q)}, tol=1e-3)

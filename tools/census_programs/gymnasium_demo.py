"""gymnasium (jax extra) quick start: the functional JAX CartPole, reset and stepped under jit."""
import jax
import jax.numpy as jnp
from gymnasium.envs.phys2d.cartpole import CartPoleFunctional
from _out import emit

env = CartPoleFunctional()
key = jax.random.PRNGKey(0)
state = env.initial(key)
trans = jax.jit(env.transition)
obs = []
for i in range(10):
    key, k = jax.random.split(key)
    state = trans(state, jnp.int32(i % 2), k)
    obs.append(env.observation(state, k))
emit({"obs": obs[::3], "reward": env.reward(state, 1, state, key),
      "done": bool(env.terminal(state, key))}, tol=1e-5)

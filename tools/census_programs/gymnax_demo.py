"""gymnax quick start: make CartPole, reset, step with random actions under jit."""
import jax
import gymnax
from _out import emit

env, params = gymnax.make("CartPole-v1")
key = jax.random.PRNGKey(0)
obs, state = env.reset(key, params)
step = jax.jit(env.step)
rewards, obss = [], []
for i in range(10):
    key, k1, k2 = jax.random.split(key, 3)
    a = env.action_space(params).sample(k1)
    out = step(k2, state, a, params)
    obs, state, r = out[0], out[1], out[2]
    rewards.append(r)
    obss.append(obs)
emit({"obs": obss[::3], "rewards": rewards, "n_actions": env.num_actions}, tol=1e-5)

"""blackjax quick start: NUTS with window adaptation on a 2-d Gaussian, then a few samples."""
import blackjax
import jax
import jax.numpy as jnp
from _out import emit


def logdensity(x):
    return -0.5 * jnp.sum((x - jnp.array([1.0, -1.0])) ** 2 / jnp.array([1.0, 4.0]))


warmup = blackjax.window_adaptation(blackjax.nuts, logdensity)
(state, params), _ = warmup.run(jax.random.PRNGKey(0), jnp.zeros(2), num_steps=100)
kernel = blackjax.nuts(logdensity, **params).step


def step(state, key):
    state, info = kernel(key, state)
    return state, state.position


_, xs = jax.lax.scan(step, state, jax.random.split(jax.random.PRNGKey(1), 100))
rw = blackjax.rmh(logdensity, blackjax.mcmc.random_walk.normal(jnp.ones(2) * 0.5))
st = rw.init(jnp.zeros(2))
for k in jax.random.split(jax.random.PRNGKey(2), 5):
    st, _ = rw.step(k, st)
emit({"mean": xs.mean(0), "first": xs[:3], "step_size": params["step_size"],
      "rw": st.position}, tol=1e-3)

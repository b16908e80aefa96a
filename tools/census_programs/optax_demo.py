"""optax quick start: fit a linear model with Adam, and a chained schedule."""
import jax
import jax.numpy as jnp
import optax
from _out import emit

key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (32, 3))
w_true = jnp.array([1.0, -2.0, 0.5])
y = x @ w_true + 0.3

params = {"w": jnp.zeros(3), "b": jnp.zeros(())}
opt = optax.chain(optax.clip_by_global_norm(1.0),
                  optax.adam(optax.exponential_decay(0.1, 10, 0.9)))
state = opt.init(params)


def loss(p):
    return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)


@jax.jit
def step(p, s):
    l, g = jax.value_and_grad(loss)(p)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, l


losses = []
for _ in range(50):
    params, state, l = step(params, state)
    losses.append(l)
emit({"losses": losses[::10], "w": params["w"], "b": params["b"],
      "ce": optax.softmax_cross_entropy_with_integer_labels(jnp.eye(3) * 2.0,
                                                             jnp.array([0, 1, 2])),
      "huber": optax.huber_loss(jnp.array([0.5, 2.0]))})

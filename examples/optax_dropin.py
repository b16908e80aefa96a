"""A few lines of optax training, unchanged JAX code. Run on traxla with

    python -m traxla.as_jax examples/optax_dropin.py

(optax must be installed next to traxla; `jax` resolves to traxla, the real jax is never
imported). Fits a linear model y = x @ w + b by Adam."""
import jax
import jax.numpy as jnp
import optax

key_x, key_w = jax.random.split(jax.random.key(0))
x = jax.random.normal(key_x, (128, 3))
true_w = jnp.array([1.5, -2.0, 0.5])
y = x @ true_w + 0.3

params = {"w": jnp.zeros(3), "b": jnp.zeros(())}
optimizer = optax.adam(learning_rate=0.1)
opt_state = optimizer.init(params)


@jax.jit
def step(params, opt_state):
    def loss_fn(p):
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


for i in range(200):
    params, opt_state, loss = step(params, opt_state)
    if i % 50 == 0 or i == 199:
        print(f"step {i:3d}  loss {float(loss):.6f}")
print("jax is", jax.__name__, "| w", jnp.round(params["w"], 3), "b", jnp.round(params["b"], 3))

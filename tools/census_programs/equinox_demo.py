"""equinox quick start: an eqx.nn.MLP trained with filter_jit/filter_value_and_grad + optax."""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from _out import emit

key = jax.random.PRNGKey(0)
mkey, dkey = jax.random.split(key)
model = eqx.nn.MLP(in_size=2, out_size=1, width_size=8, depth=2, key=mkey)
x = jax.random.normal(dkey, (32, 2))
y = jnp.sin(x[:, :1]) + x[:, 1:] ** 2
optim = optax.adam(1e-2)
opt_state = optim.init(eqx.filter(model, eqx.is_array))


@eqx.filter_value_and_grad
def loss(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)


@eqx.filter_jit
def step(model, opt_state, x, y):
    l, g = loss(model, x, y)
    updates, opt_state = optim.update(g, opt_state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), opt_state, l


losses = []
for _ in range(20):
    model, opt_state, l = step(model, opt_state, x, y)
    losses.append(l)
lin = eqx.nn.Linear(3, 2, key=key)
conv = eqx.nn.Conv2d(1, 2, 3, key=key)
emit({"losses": losses[::4], "pred": jax.vmap(model)(x[:3]),
      "lin": lin(jnp.ones(3)), "conv": conv(jnp.ones((1, 5, 5))).sum(),
      "tree": eqx.tree_equal(model, model) is True})

"""flax quick start: an nnx MLP trained a few steps with optax, and a linen Dense/Conv model."""
import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax import nnx
from _out import emit


class MLP(nnx.Module):
    def __init__(self, din, dmid, dout, *, rngs):
        self.l1 = nnx.Linear(din, dmid, rngs=rngs)
        self.bn = nnx.BatchNorm(dmid, rngs=rngs)
        self.l2 = nnx.Linear(dmid, dout, rngs=rngs)

    def __call__(self, x):
        return self.l2(nnx.relu(self.bn(self.l1(x))))


model = MLP(4, 16, 2, rngs=nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.sgd(0.05), wrt=nnx.Param)
x = jax.random.normal(jax.random.PRNGKey(1), (16, 4))
y = jnp.stack([x.sum(1), x[:, 0] - x[:, 1]], 1)


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


losses = [train_step(model, optimizer, x, y) for _ in range(5)]
model.eval()
pred = model(x[:2])


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(4, (3, 3))(x)
        x = nn.avg_pool(nn.relu(x), (2, 2), (2, 2))
        return nn.Dense(3)(x.reshape(x.shape[0], -1))


cnn = CNN()
img = jnp.ones((2, 8, 8, 1))
variables = cnn.init(jax.random.PRNGKey(0), img)
out = cnn.apply(variables, img)
emit({"losses": losses, "pred": pred, "cnn": out,
      "nparams": sum(p.size for p in jax.tree_util.tree_leaves(variables))})

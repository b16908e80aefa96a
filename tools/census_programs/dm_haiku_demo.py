"""dm-haiku quick start: transform an MLP, init, apply, a gradient step; a stateful BatchNorm."""
import haiku as hk
import jax
import jax.numpy as jnp
from _out import emit


def forward(x):
    return hk.nets.MLP([8, 4, 1])(x)


net = hk.without_apply_rng(hk.transform(forward))
x = jax.random.normal(jax.random.PRNGKey(1), (10, 3))
params = net.init(jax.random.PRNGKey(42), x)


def loss(p):
    return jnp.mean(net.apply(p, x) ** 2)


g = jax.grad(loss)(params)
params2 = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g)


def bn(x, is_training):
    return hk.BatchNorm(True, True, 0.9)(x, is_training)


bnt = hk.transform_with_state(bn)
bp, bs = bnt.init(jax.random.PRNGKey(0), x, True)
y, bs = bnt.apply(bp, bs, None, x, True)
emit({"loss0": loss(params), "loss1": loss(params2), "out": net.apply(params2, x[:2]),
      "shapes": {k: {kk: list(v.shape) for kk, v in d.items()} for k, d in params.items()},
      "bn": y[:2], "mean": bs["batch_norm/~/mean_ema"]["average"]})

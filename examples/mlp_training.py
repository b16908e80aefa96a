"""A 2-layer MLP regressing a noisy nonlinear function of synthetic data, trained
with 200 steps of full-batch SGD through a jitted update that uses ``grad``.

The training code takes the framework as arguments, so the very same function runs
on traxla and on JAX::

    import traxla, traxla.numpy as jnp
    losses, params = train(traxla, jnp)

    import jax, jax.numpy as jnp
    losses, params = train(jax, jnp)

Run ``python examples/mlp_training.py`` to train with traxla (and, when JAX is
installed, to compare the two loss curves).
"""
from __future__ import annotations

import numpy as np


def make_data(n=256, d_in=8, seed=0):
    """Inputs ``x`` and targets ``y = sin(x @ w) + cos(x @ v) / 2 + noise``."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d_in)).astype(np.float32)
    w = rng.standard_normal((d_in, 1)) / np.sqrt(d_in)
    v = rng.standard_normal((d_in, 1)) / np.sqrt(d_in)
    y = np.sin(x @ w) + 0.5 * np.cos(x @ v) + 0.05 * rng.standard_normal((n, 1))
    return x, y.astype(np.float32)


def init_params(d_in=8, hidden=32, d_out=1, seed=1):
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.standard_normal((d_in, hidden)) / np.sqrt(d_in)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((hidden, d_out)) / np.sqrt(hidden)).astype(np.float32),
        "b2": np.zeros(d_out, np.float32),
    }


def train(jax, jnp, steps=200, lr=0.1, data=None, params=None):
    """Trains the MLP with ``jax`` (traxla or JAX) and ``jnp`` (its numpy); returns the
    loss before each step (a NumPy array of length ``steps``) and the final parameters."""
    x, y = make_data() if data is None else data
    params = init_params() if params is None else params

    def predict(params, x):
        hidden = jnp.tanh(x @ params["w1"] + params["b1"])
        return hidden @ params["w2"] + params["b2"]

    def loss(params, x, y):
        return jnp.mean((predict(params, x) - y) ** 2)

    def update(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        new = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return new, loss(params, x, y)

    update = jax.jit(update)
    losses = []
    for _ in range(steps):
        params, value = update(params, x, y)
        losses.append(float(value))
    return np.asarray(losses), params


def main():
    import traxla
    import traxla.numpy as tnp
    losses, _ = train(traxla, tnp)
    print(f"traxla: loss {losses[0]:.5f} -> {losses[-1]:.5f} in {len(losses)} steps")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return
    want, _ = train(jax, jnp)
    rel = np.max(np.abs(losses - want) / np.abs(want))
    print(f"jax:    loss {want[0]:.5f} -> {want[-1]:.5f}; max relative difference {rel:.2e}")


if __name__ == "__main__":
    main()

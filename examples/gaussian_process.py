"""Gaussian-process regression: an RBF kernel's hyperparameters (log length-scale, log signal
variance, log noise variance) fitted by gradient descent on the negative log marginal
likelihood, computed with a Cholesky factorization and triangular solves; then the posterior
mean and variance at test points.

The code takes the framework as arguments, so the very same function runs on traxla and on
JAX::

    import traxla, traxla.numpy as jnp, traxla.scipy.linalg as sla
    result = fit(traxla, jnp, sla)

    import jax, jax.numpy as jnp, jax.scipy.linalg as sla
    result = fit(jax, jnp, sla)

Run ``python examples/gaussian_process.py`` to fit with traxla (and, when JAX is installed,
to compare the two runs).
"""
from __future__ import annotations

import numpy as np


def make_data(n=40, n_test=25, seed=0):
    """Noisy samples of ``sin(3x) + x/2`` on [-2, 2], and test inputs on [-2.5, 2.5]."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2.0, 2.0, n))
    y = np.sin(3 * x) + 0.5 * x + 0.1 * rng.standard_normal(n)
    x_test = np.linspace(-2.5, 2.5, n_test)
    return x.astype(np.float32), y.astype(np.float32), x_test.astype(np.float32)


def fit(jax, jnp, sla, steps=150, lr=0.02, data=None):
    """Fits the hyperparameters with ``steps`` of gradient descent; returns a dict of NumPy
    arrays: the loss before each step, the final hyperparameters, and the posterior mean and
    standard deviation at the test inputs."""
    x, y, x_test = make_data() if data is None else data
    params = {"log_length": np.float32(0.0), "log_signal": np.float32(0.0),
              "log_noise": np.float32(-1.0)}

    def kernel(params, a, b):
        sq = (a[:, None] - b[None, :]) ** 2
        return jnp.exp(params["log_signal"]) * jnp.exp(-0.5 * sq / jnp.exp(2 * params["log_length"]))

    def factor(params):
        k = kernel(params, x, x) + (jnp.exp(params["log_noise"]) + 1e-5) * jnp.eye(x.shape[0])
        return jnp.linalg.cholesky(k)

    def neg_log_marginal_likelihood(params):
        chol = factor(params)
        alpha = sla.solve_triangular(chol, y, lower=True)          # L^-1 y
        return (0.5 * jnp.sum(alpha ** 2) + jnp.sum(jnp.log(jnp.diagonal(chol)))
                + 0.5 * x.shape[0] * np.log(2 * np.pi))

    def update(params):
        loss, grads = jax.value_and_grad(neg_log_marginal_likelihood)(params)
        return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss

    @jax.jit
    def predict(params):
        chol = factor(params)
        k_star = kernel(params, x_test, x)
        alpha = sla.cho_solve((chol, True), y)                      # K^-1 y
        mean = k_star @ alpha
        v = sla.solve_triangular(chol, k_star.T, lower=True)
        var = jnp.exp(params["log_signal"]) - jnp.sum(v ** 2, axis=0)
        return mean, jnp.sqrt(jnp.maximum(var, 0.0))

    update = jax.jit(update)
    losses = []
    for _ in range(steps):
        params, loss = update(params)
        losses.append(float(loss))
    mean, std = predict(params)
    return {"losses": np.asarray(losses), "mean": np.asarray(mean), "std": np.asarray(std),
            **{k: float(v) for k, v in params.items()}}


def main():
    import traxla
    import traxla.numpy as tnp
    import traxla.scipy.linalg as tsla
    got = fit(traxla, tnp, tsla)
    print(f"traxla: -log p(y) {got['losses'][0]:.4f} -> {got['losses'][-1]:.4f}; "
          f"length {np.exp(got['log_length']):.3f}, signal {np.exp(got['log_signal']):.3f}, "
          f"noise {np.exp(got['log_noise']):.4f}")
    try:
        import jax
        import jax.numpy as jnp
        import jax.scipy.linalg as jsla
    except ImportError:
        return
    want = fit(jax, jnp, jsla)
    rel = np.max(np.abs(got["losses"] - want["losses"]) / np.abs(want["losses"]))
    print(f"jax:    -log p(y) {want['losses'][0]:.4f} -> {want['losses'][-1]:.4f}; "
          f"max relative difference of the loss curves {rel:.2e}, of the posterior means "
          f"{np.max(np.abs(got['mean'] - want['mean'])):.2e}")


if __name__ == "__main__":
    main()

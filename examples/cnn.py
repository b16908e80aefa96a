"""A small convolutional network for MNIST-shaped images, written for JAX and ported to
traxla by changing the imports only.

conv 3x3 (8 channels) -> relu -> 2x2 max-pool -> conv 3x3 (16 channels) -> relu ->
2x2 average-pool -> dense (10 classes), trained by a few ``jit``-compiled SGD steps on
synthetic 28x28 "images" (noisy copies of ten random stroke prototypes), so the example
needs no download.

    python examples/cnn.py

To run it under JAX, replace the four ``traxla`` imports below by their ``jax``
counterparts (``tests/test_examples_cnn.py`` does exactly that and checks that both give
the same losses).
"""
from __future__ import annotations

import time

import numpy as np
import numpy.random as npr

import traxla as jax  # noqa: F401
import traxla.numpy as jnp
from traxla import grad, jit, lax
from traxla.scipy.special import logsumexp

DIMENSION_NUMBERS = ("NHWC", "HWIO", "NHWC")


def init_params(rng=None, channels=(8, 16), num_classes=10):
    rng = npr.RandomState(0) if rng is None else rng
    c1, c2 = channels

    def he(*shape):
        fan_in = int(np.prod(shape[:-1]))
        return (rng.randn(*shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return {"conv1": (he(3, 3, 1, c1), np.zeros(c1, np.float32)),
            "conv2": (he(3, 3, c1, c2), np.zeros(c2, np.float32)),
            "dense": (he(7 * 7 * c2, num_classes), np.zeros(num_classes, np.float32))}


def conv(x, w, b):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=DIMENSION_NUMBERS) + b


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def avg_pool(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0


def predict(params, images):
    x = jnp.maximum(conv(images, *params["conv1"]), 0.0)
    x = max_pool(x)
    x = jnp.maximum(conv(x, *params["conv2"]), 0.0)
    x = avg_pool(x)
    x = x.reshape((x.shape[0], -1))
    w, b = params["dense"]
    logits = jnp.dot(x, w) + b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    images, targets = batch
    return -jnp.mean(jnp.sum(predict(params, images) * targets, axis=1))


def accuracy(params, batch):
    images, targets = batch
    return jnp.mean(jnp.argmax(predict(params, images), axis=1) == jnp.argmax(targets, axis=1))


def make_update(step_size):
    @jit
    def update(params, batch):
        grads = grad(loss)(params, batch)
        return jax.tree_util.tree_map(lambda p, g: p - step_size * g, params, grads)
    return update


def synthetic_mnist(num=256, num_classes=10, seed=0):
    """(num, 28, 28, 1) images in [0, 1] and one-hot labels naming the prototype."""
    rng = npr.RandomState(seed)
    prototypes = (rng.rand(num_classes, 28, 28, 1) > 0.8).astype(np.float32)
    labels = rng.randint(num_classes, size=num)
    noise = rng.rand(num, 28, 28, 1).astype(np.float32)
    images = np.clip(0.5 * prototypes[labels] + 0.6 * noise, 0.0, 1.0).astype(np.float32)
    return images, np.eye(num_classes, dtype=np.float32)[labels]


def main(num_steps=20, batch_size=32, step_size=0.05, num=256, verbose=True):
    """Trains for ``num_steps`` SGD steps; returns the parameters and the losses (before
    each step, on that step's batch)."""
    images, labels = synthetic_mnist(num)
    params = init_params()
    update = make_update(step_size)
    jit_loss = jit(loss)
    losses = []
    start = time.perf_counter()
    for step in range(num_steps):
        i = (step * batch_size) % num
        batch = (images[i:i + batch_size], labels[i:i + batch_size])
        losses.append(float(jit_loss(params, batch)))
        params = update(params, batch)
    if verbose:
        elapsed = time.perf_counter() - start
        print(f"{num_steps} steps in {elapsed:0.2f} s; loss {losses[0]:.4f} -> {losses[-1]:.4f}; "
              f"accuracy {float(accuracy(params, (images, labels))):.3f}")
    return params, losses


if __name__ == "__main__":
    main()

"""An MNIST classifier with SPMD data parallelism, in the style of JAX's
``spmd_mnist_classifier_fromscratch.py`` updated to JAX 0.10's sharding API (no pmap):
the batch is split over a one-axis device mesh, the parameters are replicated, and a
single ``jit``-compiled ``update`` (with the old parameters donated) is partitioned by
XLA's SPMD partitioner.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python examples/spmd_mnist.py

(traxla also reads ``traxla.config.update('num_cpu_devices', 8)``.) The data are
synthetic MNIST-shaped images (see ``examples/mnist_classifier.py``), so no download is
needed. To run it under JAX, replace the ``traxla`` imports by their ``jax`` counterparts.
"""
from __future__ import annotations

import time

import numpy as np
import numpy.random as npr

import traxla as jax
import traxla.numpy as jnp
from traxla import grad, jit
from traxla.scipy.special import logsumexp
from traxla.sharding import AxisType, NamedSharding, PartitionSpec as P


def init_random_params(scale, layer_sizes, rng=None):
    rng = npr.RandomState(0) if rng is None else rng
    return [(np.float32(scale) * rng.randn(m, n).astype(np.float32),
             np.float32(scale) * rng.randn(n).astype(np.float32))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        activations = jnp.tanh(jnp.dot(activations, w) + b)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    return jnp.mean(jnp.argmax(predict(params, inputs), axis=1) == jnp.argmax(targets, axis=1))


def synthetic_mnist(num_train=1024, num_classes=10, seed=0):
    """784-pixel images (a noisy copy of one of ten random "stroke" prototypes) and
    one-hot labels naming the prototype."""
    rng = npr.RandomState(seed)
    prototypes = (rng.rand(num_classes, 784) > 0.8).astype(np.float32)
    labels = rng.randint(num_classes, size=num_train)
    images = np.clip(prototypes[labels] + 0.3 * rng.randn(num_train, 784), 0, 1)
    return images.astype(np.float32), np.eye(num_classes, dtype=np.float32)[labels]


def make_update(step_size):
    # The parameters are donated: XLA writes the new parameters into their buffers.
    @jit(donate_argnums=0)
    def update(params, batch):
        grads = grad(loss)(params, batch)
        new_params = [(w - step_size * dw, b - step_size * db)
                      for (w, b), (dw, db) in zip(params, grads)]
        return new_params, loss(params, batch)
    return update


def train(num_steps=8, batch_size=128, layer_sizes=(784, 256, 64, 10), step_size=0.1,
          sharded=True, log=print):
    """Trains for ``num_steps`` and returns the per-step losses and final accuracy;
    ``sharded=False`` is the same program on one device."""
    images, labels = synthetic_mnist()
    num_devices = jax.device_count()
    if batch_size % num_devices:
        raise ValueError(f"batch size must be divisible by device count, got {batch_size} and "
                         f"{num_devices}.")
    update = make_update(step_size)
    params = init_random_params(0.1, layer_sizes)
    mesh = jax.make_mesh((num_devices,), ("batch",), axis_types=(AxisType.Explicit,))
    losses = []
    with jax.set_mesh(mesh) if sharded else _no_mesh():
        if sharded:  # parameters replicated on every device
            params = jax.device_put(params, NamedSharding(mesh, P()))
        else:
            params = jax.device_put(params)
        rng = npr.RandomState(0)
        start = time.perf_counter()
        for step in range(num_steps):
            idx = rng.permutation(images.shape[0])[:batch_size]
            batch = (images[idx], labels[idx])
            if sharded:  # each device gets batch_size / num_devices examples
                batch = jax.reshard(batch, P("batch"))
            params, batch_loss = update(params, batch)
            losses.append(float(batch_loss))
        elapsed = time.perf_counter() - start
        acc = float(accuracy(params, (images, labels)))
    log(f"{'sharded over ' + str(num_devices) + ' devices' if sharded else 'one device'}: "
        f"{num_steps} steps in {elapsed:.2f} s, losses {[round(x, 4) for x in losses]}, "
        f"train accuracy {acc:.3f}")
    return losses, acc, params


class _no_mesh:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    sharded_losses, _, _ = train(sharded=True)
    single_losses, _, _ = train(sharded=False)
    print("max |sharded - unsharded| loss difference:",
          max(abs(a - b) for a, b in zip(sharded_losses, single_losses)))

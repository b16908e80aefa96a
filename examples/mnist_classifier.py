"""A basic MNIST-style classifier, written for JAX (after JAX's
``examples/mnist_classifier.py``) and ported to traxla by changing the imports only.

A tanh MLP trained by minibatch SGD with ``jit``-compiled ``update`` over a
list-of-(w, b)-tuples parameter pytree; the data are synthetic 28x28 "images" whose
labels name the noisy "stroke" prototype each image copies, so the example needs no
download.

    python examples/mnist_classifier.py

To run it under JAX, replace the four ``traxla`` imports below by their ``jax``
counterparts (``tests/test_examples_mnist.py`` does exactly that and checks that both
give the same numbers).
"""
from __future__ import annotations

import time

import numpy as np
import numpy.random as npr

import traxla as jax  # noqa: F401
import traxla.numpy as jnp
from traxla import grad, jit
from traxla.scipy.special import logsumexp


def init_random_params(scale, layer_sizes, rng=None):
    rng = npr.RandomState(0) if rng is None else rng
    return [(scale * rng.randn(m, n), scale * rng.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        outputs = jnp.dot(activations, w) + b
        activations = jnp.tanh(outputs)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


def synthetic_mnist(num_train=2048, num_test=512, num_classes=10, seed=0):
    """MNIST-shaped data: 784-pixel images in [0, 1] (a noisy copy of one of ten random
    "stroke" prototypes) and one-hot labels naming the prototype."""
    rng = npr.RandomState(seed)
    prototypes = (rng.rand(num_classes, 784) > 0.8).astype(np.float32)

    def make(n):
        labels = rng.randint(num_classes, size=n)
        noise = rng.rand(n, 784).astype(np.float32)
        images = np.clip(0.5 * prototypes[labels] + 0.6 * noise, 0.0, 1.0)
        return images.astype(np.float32), np.eye(num_classes, dtype=np.float32)[labels]

    train_images, train_labels = make(num_train)
    test_images, test_labels = make(num_test)
    return train_images, train_labels, test_images, test_labels


def main(layer_sizes=(784, 1024, 1024, 10), param_scale=0.1, step_size=0.001, num_epochs=10,
         batch_size=128, num_train=2048, num_test=512, verbose=True):
    """Trains the classifier; returns the parameters and the per-epoch
    (train accuracy, test accuracy, train loss) history."""
    train_images, train_labels, test_images, test_labels = synthetic_mnist(num_train, num_test)
    num_complete_batches, leftover = divmod(train_images.shape[0], batch_size)
    num_batches = num_complete_batches + bool(leftover)

    def data_stream():
        rng = npr.RandomState(0)
        while True:
            perm = rng.permutation(train_images.shape[0])
            for i in range(num_batches):
                batch_idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[batch_idx], train_labels[batch_idx]

    batches = data_stream()

    @jit
    def update(params, batch):
        grads = grad(loss)(params, batch)
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    params = init_random_params(param_scale, list(layer_sizes))
    history = []
    for epoch in range(num_epochs):
        start_time = time.time()
        for _ in range(num_batches):
            params = update(params, next(batches))
        epoch_time = time.time() - start_time
        train_acc = accuracy(params, (train_images, train_labels))
        test_acc = accuracy(params, (test_images, test_labels))
        train_loss = loss(params, (train_images, train_labels))
        history.append((float(train_acc), float(test_acc), float(train_loss)))
        if verbose:
            print(f"Epoch {epoch} in {epoch_time:0.2f} sec")
            print(f"Training set accuracy {train_acc}")
            print(f"Test set accuracy {test_acc}")
    return params, history


if __name__ == "__main__":
    main(num_epochs=3)

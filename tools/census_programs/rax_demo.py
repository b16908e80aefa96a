"""rax quick start: ranking losses and metrics on a small batch of scores."""
import jax
import jax.numpy as jnp
import rax
from _out import emit

scores = jnp.array([[2.0, 1.0, 3.0, 0.5], [0.1, 0.2, 0.3, 0.4]])
labels = jnp.array([[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
emit({"softmax": rax.softmax_loss(scores, labels),
      "pairwise": rax.pairwise_hinge_loss(scores, labels),
      "ndcg": rax.ndcg_metric(scores, labels),
      "mrr": rax.mrr_metric(scores, labels),
      "grad": jax.grad(rax.softmax_loss)(scores, labels)}, tol=1e-5)

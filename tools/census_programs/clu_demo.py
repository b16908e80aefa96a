"""clu quick start: metrics collections (Average, Accuracy) merged across steps."""
import flax
import jax.numpy as jnp
from clu import metrics
from _out import emit


@flax.struct.dataclass
class Metrics(metrics.Collection):
    loss: metrics.Average.from_output("loss")
    accuracy: metrics.Accuracy


m = None
for i in range(3):
    logits = jnp.array([[2.0, 0.0], [0.0, 1.0], [1.0, 3.0]]) * (i + 1)
    labels = jnp.array([0, 1, 0])
    upd = Metrics.single_from_model_output(loss=jnp.float32(i + 0.5), logits=logits,
                                           labels=labels)
    m = upd if m is None else m.merge(upd)
emit(m.compute())

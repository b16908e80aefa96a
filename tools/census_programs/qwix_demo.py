"""qwix quick start: post-training int8 quantization of a flax linen MLP, compared with float."""
import jax
import jax.numpy as jnp
import qwix
from flax import linen as nn
from _out import emit


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(4)(nn.relu(nn.Dense(16)(x)))


model = MLP()
x = jax.random.normal(jax.random.PRNGKey(0), (3, 8))
params = model.init(jax.random.PRNGKey(1), x)
rules = [qwix.QuantizationRule(module_path=".*", weight_qtype=jnp.int8)]
qmodel = qwix.quantize_model(model, qwix.PtqProvider(rules))
qparams = qwix.quantize_params(params["params"], qmodel.init(jax.random.PRNGKey(1), x)["params"])
out = model.apply(params, x)
qout = qmodel.apply({"params": qparams}, x)
emit({"float": out, "int8": qout, "err": jnp.abs(out - qout).max()}, tol=1e-4)

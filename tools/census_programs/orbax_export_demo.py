"""orbax-export quick start: a JAX function and its parameters wrapped as a JaxModule,
served through an ExportManager's serving config (its README). orbax.export imports
tensorflow, which it does not declare: without it the program fails under JAX as well."""
import numpy as np
import jax.numpy as jnp
from orbax.export import ExportManager, JaxModule, ServingConfig
from _out import emit

params = {"w": jnp.arange(6.0).reshape(3, 2), "b": jnp.ones(2)}


def apply_fn(p, x):
    return jnp.tanh(x @ p["w"] + p["b"])


module = JaxModule(params, apply_fn)
manager = ExportManager(module, [ServingConfig("serving_default")])
x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
emit({"out": module.jax_methods[module.DEFAULT_METHOD_KEY](params, x)})

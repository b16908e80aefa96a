"""``jax._src.api``: where JAX defines its transformations (the primitives notebook calls
``api.jit``, ``api.grad``, ``api.jvp``, ``api.vmap`` from here); the public ones."""
from traxla import (ShapeDtypeStruct, block_until_ready, checkpoint, device_get,  # noqa: F401
                    device_put, disable_jit, eval_shape, grad, hessian, jacfwd, jacrev, jit,
                    jvp, linearize, make_jaxpr, named_call, pmap, pure_callback, remat,
                    value_and_grad, vjp, vmap)

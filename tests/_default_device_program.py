"""Run as ``python _default_device_program.py jax|traxla``: JAX's ``default_device`` and
``jit(device=, backend=)`` on two CPU devices; prints one line per observation."""
import sys

import numpy as np

if sys.argv[1] == "jax":
    import jax
    import jax.numpy as jnp
else:
    import traxla as jax
    import traxla.numpy as jnp
jax.config.update("jax_num_cpu_devices", 2)
d0, d1 = jax.devices()


def where(x):
    return sorted(d.id for d in x.devices())


with jax.default_device(d1):
    a = jnp.ones(3)
    b = a + 1
    print("created", where(a), a.committed, where(jnp.arange(4)), where(jnp.zeros(2)))
    print("eager", where(b), b.committed, b.tolist())
    c = jax.jit(lambda x: x * 2)(np.float32(3.0))
    print("jit", where(c), c.committed, float(c), where(jax.jit(lambda: jnp.eye(2))()))
    k = jax.random.normal(jax.random.key(0), (2,))
    print("random", where(k), k.dtype)
    s = jnp.asarray(np.uint32(7))
    print("scalar", where(s), s.shape, int(s))
    committed = jax.device_put(1.0, d1)
    print("with committed", where(committed + jnp.ones(2)), committed.committed)
print("after", where(jnp.ones(2)), where(b + jnp.ones(3)), (b + jnp.ones(3)).committed)
h = jax.jit(lambda x: x + 1, device=d1)(np.float32(1))
print("jit device", where(h), h.committed, float(h))
print("jit backend", where(jax.jit(lambda x: x + 1, backend="cpu")(np.float32(1))))
print("aot", float(jax.jit(lambda x: x + 1, device=d1).lower(1.0).compile()(1.0)))
print("scalar put", where(jax.device_put(np.float32(2), d1)), float(jax.device_put(np.float32(2), d1)))
jax.config.update("jax_default_device", d1)
print("global", where(jnp.ones(2) * 3), where(jax.jit(lambda x: x - 1)(jnp.ones(2))))
jax.config.update("jax_default_device", None)
print("global off", where(jnp.ones(2) * 3))
for bad in (lambda: jax.jit(lambda x: x, device=d1, backend="cpu"),
            lambda: jax.config.update("jax_default_device", "foo")):
    try:
        bad()
    except Exception as e:
        print("error", type(e).__name__, e)

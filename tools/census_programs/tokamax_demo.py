"""tokamax quick start: dot_product_attention, layer_norm, gated_linear_unit, ragged_dot with the
XLA implementations (the CPU's)."""
import jax
import jax.numpy as jnp
import tokamax
from _out import emit

k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
q = jax.random.normal(k1, (1, 4, 2, 8))
k = jax.random.normal(k2, (1, 4, 2, 8))
v = jax.random.normal(k3, (1, 4, 2, 8))
att = tokamax.dot_product_attention(q, k, v, is_causal=True, implementation="xla")
x = jax.random.normal(k1, (3, 8))
ln = tokamax.layer_norm(x, jnp.ones(8), jnp.zeros(8), implementation="xla")
w = jax.random.normal(k2, (8, 2, 4))
glu = tokamax.gated_linear_unit(x, w, activation=jax.nn.swish, implementation="xla")
rd = tokamax.ragged_dot(x, jax.random.normal(k3, (2, 8, 5)), jnp.array([1, 2], jnp.int32),
                        implementation="xla")
emit({"att": att[0, :, 0, :3], "ln": ln[0], "glu": glu[0], "rd": rd[:, :2]}, tol=1e-4)

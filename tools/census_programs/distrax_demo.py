"""distrax quick start: distributions, a bijector chain, a transformed distribution."""
import warnings

import jax
import jax.numpy as jnp

# distrax imports tfp, which registers its variable proxy in
# ``jax.interpreters.xla.pytype_aval_mappings``, a name JAX 0.10.2 no longer has (the import
# fails under JAX so: the census lists that cause); the program puts JAX's registry there.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    jax.interpreters.xla.pytype_aval_mappings = jax.core.pytype_aval_mappings
import distrax  # noqa: E402
from _out import emit  # noqa: E402

key = jax.random.PRNGKey(0)
n = distrax.Normal(loc=jnp.zeros(3), scale=jnp.ones(3) * 2)
s = n.sample(seed=key)
lp = n.log_prob(jnp.array([0.0, 1.0, -1.0]))
cat = distrax.Categorical(logits=jnp.array([0.1, 0.5, 1.0]))
bij = distrax.Chain([distrax.ScalarAffine(shift=1.0, scale=2.0), distrax.Tanh()])
td = distrax.Transformed(distrax.Normal(0.0, 1.0), bij)
x, lpx = td.sample_and_log_prob(seed=key, sample_shape=(4,))
mvn = distrax.MultivariateNormalDiag(jnp.zeros(2), jnp.array([1.0, 0.5]))
emit({"s": s, "lp": lp, "cat_ent": cat.entropy(), "cat_s": cat.sample(seed=key, sample_shape=5),
      "x": x, "lpx": lpx, "kl": mvn.kl_divergence(distrax.MultivariateNormalDiag(
          jnp.ones(2), jnp.ones(2)))})

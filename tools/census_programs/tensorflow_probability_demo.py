"""tensorflow-probability (JAX substrate) quick start: distributions, a bijector, HMC steps."""
import warnings

import jax
import jax.numpy as jnp

# tfp (backend/jax/ops.py) registers its variable proxy in
# ``jax.interpreters.xla.pytype_aval_mappings``, a name JAX 0.10.2 no longer has (its import
# fails under JAX so: the census lists that cause); the program puts JAX's registry there,
# as a user of tfp with JAX 0.10.2 must, to run at all.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    jax.interpreters.xla.pytype_aval_mappings = jax.core.pytype_aval_mappings
from tensorflow_probability.substrates import jax as tfp
from _out import emit

tfd, tfb = tfp.distributions, tfp.bijectors
n = tfd.Normal(loc=0.0, scale=2.0)
mvn = tfd.MultivariateNormalDiag(loc=jnp.zeros(2), scale_diag=jnp.array([1.0, 2.0]))
ln = tfd.TransformedDistribution(tfd.Normal(0.0, 1.0), tfb.Exp())
kernel = tfp.mcmc.HamiltonianMonteCarlo(mvn.log_prob, step_size=0.3, num_leapfrog_steps=3)
samples = tfp.mcmc.sample_chain(20, jnp.zeros(2), kernel=kernel, trace_fn=None,
                                seed=jax.random.PRNGKey(0))
emit({"lp": n.log_prob(jnp.array([0.0, 1.0])), "cdf": n.cdf(1.0),
      "mvn_s": mvn.sample(3, seed=jax.random.PRNGKey(1)), "ln": ln.log_prob(2.0),
      "hmc": samples.mean(0)}, tol=1e-3)

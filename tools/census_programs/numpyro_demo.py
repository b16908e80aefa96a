"""numpyro quick start: NUTS on a small linear regression (a short chain: a long one amplifies
float rounding differences chaotically), Predictive, SVI with an AutoNormal."""
import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS, SVI, Predictive, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal
from _out import emit

x = jnp.linspace(-1, 1, 20)
y = 2.0 * x + 0.5 + 0.1 * jax.random.normal(jax.random.PRNGKey(3), (20,))


def model(x, y=None):
    a = numpyro.sample("a", dist.Normal(0, 5))
    b = numpyro.sample("b", dist.Normal(0, 5))
    s = numpyro.sample("s", dist.HalfNormal(1))
    numpyro.sample("obs", dist.Normal(a * x + b, s), obs=y)


mcmc = MCMC(NUTS(model), num_warmup=10, num_samples=10, progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), x, y)
s = mcmc.get_samples()
pred = Predictive(model, s)(jax.random.PRNGKey(1), x)["obs"]
svi = SVI(model, AutoNormal(model), numpyro.optim.Adam(0.05), Trace_ELBO())
res = svi.run(jax.random.PRNGKey(2), 200, x, y, progress_bar=False)
emit({"a": s["a"].mean(), "b": s["b"].mean(), "a_first": s["a"][:5],
      "pred": pred.mean(0)[:4], "svi_loss": res.losses[-1],
      "lp": dist.Normal(0.0, 1.0).log_prob(jnp.array([0.0, 1.0]))}, tol=1e-3)

"""jaxopt quick start: LBFGS on a ridge regression, projected gradient, a root (Bisection)."""
import jax
import jax.numpy as jnp
import jaxopt
from _out import emit

X = jax.random.normal(jax.random.PRNGKey(0), (30, 4))
w_true = jnp.array([1.0, -1.0, 2.0, 0.0])
y = X @ w_true


def ridge(w, lam):
    return jnp.mean((X @ w - y) ** 2) + lam * jnp.sum(w ** 2)


sol = jaxopt.LBFGS(fun=ridge, maxiter=50).run(jnp.zeros(4), lam=0.01)
pg = jaxopt.ProjectedGradient(fun=ridge, projection=jaxopt.projection.projection_non_negative,
                              maxiter=50).run(jnp.zeros(4), lam=0.01)
root = jaxopt.Bisection(optimality_fun=lambda x: x ** 3 - 2.0, lower=0.0, upper=2.0).run()
gd = jaxopt.GradientDescent(fun=ridge, maxiter=20).run(jnp.zeros(4), lam=0.01)
emit({"lbfgs": sol.params, "pg": pg.params, "root": root.params, "gd": gd.params,
      "iters": int(sol.state.iter_num)}, tol=1e-3)

"""optimistix quick start: a root (Newton), a minimum (BFGS), a least squares (LM)."""
import jax.numpy as jnp
import optimistix as optx
from _out import emit

root = optx.root_find(lambda y, args: jnp.tanh(y + 1) - y, optx.Newton(1e-6, 1e-6),
                      jnp.array([0.5, 1.0]))
mini = optx.minimise(lambda y, args: jnp.sum((y - args) ** 2) + jnp.sum(y ** 4),
                     optx.BFGS(1e-6, 1e-6), jnp.zeros(2), args=jnp.array([1.0, -2.0]))
ls = optx.least_squares(lambda y, args: y ** 2 - args, optx.LevenbergMarquardt(1e-6, 1e-6),
                        jnp.ones(2), args=jnp.array([2.0, 3.0]))
emit({"root": root.value, "min": mini.value, "ls": ls.value}, tol=1e-4)

"""interpax quick start: 1-d cubic and 2-d interpolation, and its gradient."""
import jax
import jax.numpy as jnp
import interpax
from _out import emit

x = jnp.linspace(0, 2 * jnp.pi, 20)
y = jnp.sin(x)
xq = jnp.array([0.3, 1.7, 4.0])
c = interpax.interp1d(xq, x, y, method="cubic")
grid = jnp.linspace(0, 1, 6)
z = jnp.outer(grid, grid)
z2 = interpax.interp2d(jnp.array([0.25, 0.5]), jnp.array([0.75, 0.1]), grid, grid, z,
                       method="linear")
g = jax.grad(lambda q: interpax.interp1d(q, x, y, method="cubic"))(1.0)
emit({"cubic": c, "2d": z2, "grad": g, "obj": interpax.Interpolator1D(x, y)(xq)}, tol=1e-4)

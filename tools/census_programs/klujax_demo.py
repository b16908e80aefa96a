"""klujax quick start: a sparse (COO) solve and a sparse matmul."""
import jax.numpy as jnp
import klujax
from _out import emit

Ai = jnp.array([0, 1, 2, 0, 2])
Aj = jnp.array([0, 1, 2, 2, 0])
Ax = jnp.array([4.0, 3.0, 5.0, 1.0, 1.0])
b = jnp.array([1.0, 2.0, 3.0])
x = klujax.solve(Ai, Aj, Ax, b)
y = klujax.dot(Ai, Aj, Ax, b)
emit({"x": x, "y": y}, tol=1e-5)

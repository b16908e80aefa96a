"""jaxlie quick start: SO3/SE3 exp, log, compose, inverse, apply."""
import jax.numpy as jnp
import jaxlie
from _out import emit

R = jaxlie.SO3.exp(jnp.array([0.1, 0.2, 0.3]))
T = jaxlie.SE3.from_rotation_and_translation(R, jnp.array([1.0, 2.0, 3.0]))
p = T @ jnp.array([0.5, 0.0, -1.0])
emit({"log": R.log(), "wxyz": R.wxyz, "p": p, "inv": (T.inverse() @ T).parameters(),
      "mat": T.as_matrix(), "so2": jaxlie.SO2.from_radians(0.5).as_matrix()}, tol=1e-5)

"""e3nn-jax quick start: irreps, spherical harmonics, a tensor product, a Linear layer."""
import e3nn_jax as e3nn
import jax
import jax.numpy as jnp
from _out import emit

vec = e3nn.IrrepsArray("1o", jnp.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8]]))
sh = e3nn.spherical_harmonics("0e + 1o + 2e", vec, normalize=True)
tp = e3nn.tensor_product(vec, vec)
lin = e3nn.flax.Linear("2x0e + 1o") if hasattr(e3nn, "flax") else None
out = {"sh": sh.array, "tp": tp.array, "irreps": str(tp.irreps), "norm": e3nn.norm(vec).array}
if lin is not None:
    params = lin.init(jax.random.PRNGKey(0), sh)
    out["lin"] = lin.apply(params, sh).array
emit(out, tol=1e-5)

"""jmp quick start: a mixed-precision policy cast and a dynamic loss scale step."""
import jax
import jax.numpy as jnp
import jmp
from _out import emit

policy = jmp.get_policy("params=float32,compute=bfloat16,output=float32")
p = {"w": jnp.ones((2, 2))}
cp = policy.cast_to_compute(p)
ls = jmp.DynamicLossScale(jnp.float32(2 ** 15))
g = {"w": jnp.array([[1.0, jnp.inf], [0.0, 1.0]])}
finite = jmp.all_finite(g)
ls2 = ls.adjust(finite)
emit({"compute": str(cp["w"].dtype), "out": str(policy.cast_to_output(cp)["w"].dtype),
      "finite": bool(finite), "scale": ls2.loss_scale,
      "scaled": ls.scale(jnp.float32(1.0)), "unscaled": ls.unscale(jnp.float32(65536.0))})

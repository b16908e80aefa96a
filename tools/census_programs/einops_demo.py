"""einops (jax arrays) quick start: rearrange, reduce, repeat, einsum, pack/unpack, inside
and outside jit."""
import jax
import jax.numpy as jnp
from einops import einsum, pack, rearrange, reduce, repeat, unpack
from _out import emit

x = jnp.arange(24.0).reshape(2, 3, 4)
packed, ps = pack([x, jnp.ones((2, 5))], "b *")


@jax.jit
def attn(q, k):
    return jax.nn.softmax(einsum(q, k, "b i d, b j d -> b i j") / 2.0, axis=-1)


emit({"t": rearrange(x, "b h w -> b (w h)"), "r": reduce(x, "b h w -> h", "mean"),
      "rep": repeat(x[0, 0], "w -> 2 w"), "packed": packed.shape, "ps": ps,
      "unpacked": unpack(packed, ps, "b *")[1], "attn": attn(x, x * 0.1),
      "jit": jax.jit(lambda a: rearrange(a, "b (h2 h) w -> b h (h2 w)", h2=1))(x)})

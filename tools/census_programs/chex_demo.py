"""chex quick start: dataclasses as pytrees, shape/type assertions, variants, fake devices."""
import chex
import jax
import jax.numpy as jnp
from _out import emit


@chex.dataclass
class Params:
    w: chex.Array
    b: chex.Array


p = Params(w=jnp.ones((3, 2)), b=jnp.zeros(2))
chex.assert_shape(p.w, (3, 2))
chex.assert_rank([p.w, p.b], [2, 1])
chex.assert_type(p.w, float)
chex.assert_tree_all_finite(p)
doubled = jax.tree_util.tree_map(lambda v: 2 * v + 1, p)
chex.assert_trees_all_close(doubled.b, jnp.ones(2))
caught = []
try:
    chex.assert_shape(p.b, (3,))
except AssertionError as e:
    caught.append("shape")


@chex.variants(with_jit=True, without_jit=True)
def _dummy():
    pass


def f(x):
    chex.assert_max_traces(n=1)
    return jnp.sin(x) * 2


jf = jax.jit(f)
r1 = jf(jnp.arange(3.0))
r2 = jf(jnp.arange(3.0) + 1)
counts = []
with chex.fake_jit():
    counts.append(float(jax.jit(lambda v: v + 1)(1.0)))
emit({"w": doubled.w, "b": doubled.b, "caught": caught, "r1": r1, "r2": r2,
      "counts": counts, "keys": sorted(p.keys())})

"""jaxtyping quick start: shape-annotated checks (``isinstance`` against ``Float[Array,
"o i"]``, dimensions bound consistently inside a ``jaxtyped`` call) on jax arrays, under
jit too, and a shape mismatch caught."""
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, Key, PRNGKeyArray, PyTree, jaxtyped
from _out import emit


@jaxtyped(typechecker=None)
def affine(w, x, b):
    assert isinstance(w, Float[Array, "o i"]) and isinstance(x, Float[Array, "i"])
    assert isinstance(b, Float[Array, "o"])
    out = w @ x + b
    assert isinstance(out, Float[Array, "o"])
    return out


w, x, b = jnp.ones((2, 3)), jnp.arange(3.0), jnp.array([1.0, -1.0])
try:
    affine(w, jnp.arange(4.0), b)
    caught = "none"
except AssertionError:
    caught = "AssertionError"
key = jax.random.key(0)
emit({"eager": affine(w, x, b), "jit": jax.jit(affine)(w, x, b), "caught": caught,
      "isinstance": [isinstance(x, Float[Array, "3"]), isinstance(x, Float[Array, "4"]),
                     isinstance(jnp.arange(3), Float[Array, "3"]),
                     isinstance(jnp.arange(3), Int[Array, "_"]),
                     isinstance(x > 1, Bool[Array, "3"]), isinstance(key, PRNGKeyArray),
                     isinstance(key, Key[Array, ""]),
                     isinstance({"a": x}, PyTree[Float[Array, "3"]]),
                     isinstance(jax.random.PRNGKey(0), PRNGKeyArray)]})

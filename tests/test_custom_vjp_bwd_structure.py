"""The structure a ``custom_vjp`` bwd rule may return, as JAX's ``_flatten_bwd``: a prefix
of the arguments tuple, where None stands for zeros of its whole subtree, a leaf is
repeated over the leaves of its subtree, and a value where the argument is None is
dropped (flax.nnx's bwd returns one there). JAX is the oracle."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import traxla as tx
import traxla.numpy as jnp

CASES = {
    # name: (second primal argument, bwd's cotangent for it (built with the module's jnp))
    "leaf_for_none": (None, lambda np_: np_.zeros(())),
    "none_inside": ({"a": None, "b": 3.0}, lambda np_: {"a": None, "b": np_.ones(())}),
    "leaf_for_leaf_and_none": ({"a": None, "b": 3.0}, lambda np_: {"a": np_.ones(()), "b": 1.0}),
    "none_for_subtree": ({"a": 1.0, "b": 3.0}, lambda np_: None),
    "leaf_for_subtree": ({"a": 1.0, "b": 3.0}, lambda np_: np_.full((), 2.0)),
}


def _run(mod, np_, case):
    y, ct = CASES[case]

    @mod.custom_vjp
    def f(x, y):
        return x * 2 + sum(v for v in mod.tree.leaves(y))

    f.defvjp(lambda x, y: (f(x, y), None), lambda res, g: (g * 2, ct(np_)))
    return mod.grad(f, argnums=(0, 1))(1.0, y)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bwd_output_structure_matches_jax(case):
    got = _run(tx, jnp, case)
    want = _run(jax, jjnp, case)
    assert tx.tree.structure(got) == tx.tree.structure(want)
    for a, b in zip(tx.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_array_equal(a, b)


def test_bwd_output_not_a_prefix_is_jax_error():
    def run(mod):
        @mod.custom_vjp
        def f(x, y):
            return x

        f.defvjp(lambda x, y: (x, None), lambda res, g: (g, (1.0, 2.0)))
        with pytest.raises(TypeError) as e:
            mod.grad(f)(1.0, {"a": 1.0})
        return str(e.value)
    assert run(tx) == run(jax)


def test_differentiating_a_closed_over_value_raises_custom_vjp_exception():
    """As JAX (jaxopt's and diffrax's tests catch it as
    ``jax._src.interpreters.ad.CustomVJPException``, reached from ``import jax`` alone)."""
    import traxla._src

    def loss(mod, q):
        @mod.custom_vjp
        def f(x):
            return x * q  # q: closed over, and differentiated
        f.defvjp(lambda x: (f(x), None), lambda r, g: (g,))
        return f(np.float32(2.0))

    errors = []
    for mod, exc in ((jax, jax._src.interpreters.ad.CustomVJPException),
                     (tx, traxla._src.interpreters.ad.CustomVJPException)):
        with pytest.raises(exc) as info:
            mod.grad(mod.jit(lambda q: loss(mod, q)))(3.0)  # staged with q as a constant
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert tx.grad(lambda x: loss(tx, 3.0) * x)(1.0) == 6.0  # a constant closure is fine

"""``jit(out_shardings=...)`` is a pytree prefix of the results, as JAX's: one sharding
for all, None for an unspecified subtree, a dict/tuple per level; a structure that is no
prefix raises JAX's ``Mismatch details`` error. JAX is the oracle."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import traxla as tx
import traxla.numpy as jnp


def _f(x):
    return {"a": x, "b": (x * 2, x + 1)}


def _prefixes(mod):
    mesh = mod.make_mesh((1,), ("x",))
    s = mod.sharding.NamedSharding(mesh, mod.sharding.PartitionSpec())
    return {"one": s, "dict": {"a": s, "b": None}, "none_first": {"a": None, "b": s},
            "nested": {"a": s, "b": (s, None)}, "tuple": ({"a": s},), "list": [s],
            "short_dict": {"a": s}}


@pytest.mark.parametrize("name", ["one", "dict", "none_first", "nested"])
def test_prefix_is_accepted(name):
    out = tx.jit(_f, out_shardings=_prefixes(tx)[name])(jnp.arange(4.0))
    ref = jax.jit(_f, out_shardings=_prefixes(jax)[name])(jjnp.arange(4.0))
    assert tx.tree.structure(out) == tx.tree.structure(ref)
    for a, b in zip(tx.tree.leaves(out), jax.tree.leaves(ref)):
        np.testing.assert_array_equal(a, b)
        assert isinstance(a.sharding, tx.sharding.Sharding)


@pytest.mark.parametrize("name", ["tuple", "list", "short_dict"])
def test_non_prefix_raises_jax_error(name):
    with pytest.raises(ValueError) as e:
        tx.jit(_f, out_shardings=_prefixes(tx)[name])(jnp.arange(4.0))
    with pytest.raises(ValueError) as je:
        jax.jit(_f, out_shardings=_prefixes(jax)[name])(jjnp.arange(4.0))
    assert str(e.value) == str(je.value)

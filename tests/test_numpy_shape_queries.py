"""``jnp.shape``/``ndim``/``size`` as JAX's: the attribute of anything that has one (a
ShapeDtypeStruct: flax's summary tables), NumPy's answer with JAX's DeprecationWarning
for other non-arrays (lists), ``size`` over several axes. JAX is the oracle."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jjnp
import pytest

import traxla as tx
import traxla.numpy as jnp


def _calls(mod, np_):
    s = mod.ShapeDtypeStruct((1024, 2), np_.float32)
    return [lambda: np_.shape(s), lambda: np_.ndim(s), lambda: np_.size(s),
            lambda: np_.size(s, 1), lambda: np_.size(np_.ones((2, 3)), (0, 1)),
            lambda: np_.shape([1, 2]), lambda: np_.ndim(3.0), lambda: np_.size([[1, 2]]),
            lambda: np_.shape(np_.ones(3)), lambda: str(np_.result_type(s))]


@pytest.mark.parametrize("i", range(10))
def test_shape_queries_match_jax(i):
    def run(f):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = f()
        # the class path in the message differs (traxla's struct): compare the opening
        return out, [str(x.message).split(" got ")[0] for x in w
                     if issubclass(x.category, DeprecationWarning)]
    assert run(_calls(tx, jnp)[i]) == run(_calls(jax, jjnp)[i])

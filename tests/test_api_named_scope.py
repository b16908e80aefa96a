"""``named_scope``/``named_call``: the names reach the StableHLO locations and the
compiled HLO's op_name metadata exactly as JAX's name stack spells them."""
from __future__ import annotations

import re

import jax
import jax.numpy as jjnp
import pytest

import traxla as tx
import traxla.numpy as jnp


def _program(api, np_):
    def f(x):
        with api.named_scope("layer1"):
            y = np_.sin(x) * 2
            with api.named_scope("inner"):
                y = y + 1
        return api.named_call(lambda a: a * 3, name="triple")(y)
    return f


def _op_names(text):
    return sorted(set(re.findall(r'loc\("(jit\([^"]*)"', text)))


def test_named_scope_names_match_jax_locations():
    ours = tx.jit(_program(tx, jnp)).lower(1.0).as_text(debug_info=True)
    theirs = jax.jit(_program(jax, jjnp)).lower(1.0).as_text(debug_info=True)
    wanted = {"jit(f)/layer1/sin", "jit(f)/layer1/mul", "jit(f)/layer1/inner/add",
              "jit(f)/triple/mul"}
    assert wanted <= set(_op_names(ours))
    assert set(_op_names(ours)) - {"jit(f)"} == set(_op_names(theirs)) - {"jit(f)"}
    assert "named_scope" not in tx.jit(_program(tx, jnp)).lower(1.0).as_text()


def test_names_reach_compiled_hlo_metadata_and_jaxpr_is_unchanged():
    hlo = tx.jit(_program(tx, jnp)).lower(1.0).compile().as_text()
    assert 'op_name="jit(f)/layer1/sin"' in hlo
    assert (str(tx.make_jaxpr(_program(tx, jnp))(1.0))
            == str(jax.make_jaxpr(_program(jax, jjnp))(1.0)))


def test_named_scope_errors_and_named_call_default_name():
    with pytest.raises(TypeError, match="named_scope name argument must be a string."):
        with tx.named_scope(3):
            pass

    def square(x):
        return x * x
    text = tx.jit(lambda x: tx.named_call(square)(x)).lower(2.0).as_text(debug_info=True)
    assert "jit(<lambda>)/square/mul" in text
    assert float(tx.named_call(square, name="sq")(3.0)) == 9.0

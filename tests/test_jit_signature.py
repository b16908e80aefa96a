"""A jitted function's repr and type name are JAX's; ``inspect.signature`` of it is the
wrapped function's, also with ``follow_wrapped=False`` (chex's fake pmap reads it so), as
JAX's. JAX is the oracle."""
from __future__ import annotations

import inspect

import jax
import pytest

import traxla as tx


def foo(x, y=2, *, z=None):
    return x


@pytest.mark.parametrize("follow", [True, False])
@pytest.mark.parametrize("fun", [foo, print])
def test_signature_of_jitted_function_matches_jax(fun, follow):
    assert (str(inspect.signature(tx.jit(fun), follow_wrapped=follow))
            == str(inspect.signature(jax.jit(fun), follow_wrapped=follow)))


def test_signature_with_static_args():
    f = tx.jit(foo, static_argnames="y")
    assert str(inspect.signature(f, follow_wrapped=False)) == "(x, y=2, *, z=None)"
    assert f(1, y=3) == 1


def test_repr_and_type_name_match_jax():
    # chex.asserts_internal.is_traceable looks for 'PjitFunction' in str(type(f))
    assert repr(tx.jit(foo)) == repr(jax.jit(foo))
    assert type(tx.jit(foo)).__name__ == type(jax.jit(foo)).__name__ == "PjitFunction"
    assert tx.JitFunction is type(tx.jit(foo))

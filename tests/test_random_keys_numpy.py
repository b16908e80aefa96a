"""traxla.numpy's unary and binary functions given typed PRNG keys, against JAX.

The table is every unary/binary function of ``jax.numpy`` defined in JAX's
``numpy/ufuncs.py`` (and every ``jnp.ufunc``), enumerated from JAX itself, plus
traxla's own elementwise table. Each runs on keys under traxla and under JAX:
where JAX refuses, traxla raises the same error class with the same message (at
the numpy boundary: no LoweringError); where JAX accepts (equal, isnan, imag,
...), traxla returns the same dtype and values.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp
from traxla import random
from traxla.numpy._ufuncs import ufuncs as traxla_elementwise

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402


def _positional_arity(fn):
    params = inspect.signature(inspect.unwrap(fn)).parameters.values()
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
               for p in params)


def _jax_ufuncs():
    """{name: number of array operands} of jnp's unary and binary elementwise functions."""
    out = {}
    for name in dir(jnp):
        fn = getattr(jnp, name, None)
        if name.startswith("_") or not callable(fn):
            continue
        if isinstance(fn, jnp.ufunc):
            out[name] = fn.nin
            continue
        try:
            source = inspect.getsourcefile(inspect.unwrap(fn))
        except TypeError:
            continue
        if source and source.endswith("numpy/ufuncs.py"):
            out[name] = _positional_arity(fn)
    return {n: a for n, a in out.items() if a in (1, 2)}


UFUNCS = _jax_ufuncs()
for _name, _fn in traxla_elementwise.items():
    UFUNCS.setdefault(_name, _positional_arity(getattr(jnp, _name)))


def test_table_is_complete():
    assert len(UFUNCS) > 90, sorted(UFUNCS)
    assert {n for n in UFUNCS if not hasattr(tnp, n)} == set()


def _outcome(fn, args):
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001 - the class and message are the comparison
        return type(e).__name__, str(e)
    leaves = out if isinstance(out, tuple) else (out,)
    return "ok", [(str(x.dtype), _values(x)) for x in leaves]


def _values(x):
    if "key<" in str(x.dtype):
        x = (random if hasattr(x, "__traxla_array__") else jax.random).key_data(x)
    return np.asarray(x).tolist()


def _cases(arity, key, other_key):
    """The operand lists: all keys; for binary functions a key with a float and an int."""
    cases = [(key,) * arity]
    if arity == 2:
        cases += [(key, 1.0), (2, key), (key, other_key)]
    return cases


@pytest.mark.parametrize("name", sorted(UFUNCS))
def test_keys_as_jax(name):
    arity = UFUNCS[name]
    jax_keys = jax.random.split(jax.random.key(0), 3)
    keys = random.split(random.key(0), 3)
    expected = [_outcome(getattr(jnp, name), c)
                for c in _cases(arity, jax_keys, jax_keys[1])]
    actual = [_outcome(getattr(tnp, name), c) for c in _cases(arity, keys, keys[1])]
    assert actual == expected
    # traced: the same refusal (or values) under jit
    jitted = [_outcome(traxla.jit(getattr(tnp, name)), c) for c in _cases(arity, keys, keys[1])[:1]]
    assert jitted == expected[:1]


def test_sin_of_key_message():
    # the whole message (str(e): pytest's match= also reads the traceback note of the error)
    with pytest.raises(TypeError) as info:
        tnp.sin(random.key(0))
    assert str(info.value) == "Cannot interpret 'key<fry>' as a data type"


def test_key_equality_values_and_jaxpr():
    keys, jax_keys = random.split(random.key(1), 4), jax.random.split(jax.random.key(1), 4)
    for f in (tnp.equal, tnp.not_equal, lambda a, b: a == b, lambda a, b: a != b):
        got = f(keys, keys[::-1])
        assert got.dtype == np.bool_
    np.testing.assert_array_equal(tnp.equal(keys, keys[2]), jnp.equal(jax_keys, jax_keys[2]))
    np.testing.assert_array_equal(traxla.jit(tnp.not_equal)(keys, keys[2:3]),
                                  [True, True, False, True])
    np.testing.assert_array_equal(
        traxla.vmap(tnp.equal, in_axes=(0, None))(keys, keys[3]), [False, False, False, True])
    assert (str(traxla.make_jaxpr(tnp.equal)(keys, keys[0]))
            == str(jax.make_jaxpr(jnp.equal)(jax_keys, jax_keys[0])))
    assert (str(traxla.make_jaxpr(tnp.imag)(keys))
            == str(jax.make_jaxpr(jnp.imag)(jax_keys)))


def test_keys_refused_by_conversion_and_promotion():
    key = random.key(0)
    # whole messages (str(e): pytest's match= also reads the traceback note of the error)
    with pytest.raises(ValueError) as info:
        tlax.convert_element_type(key, np.float32)
    assert str(info.value) == "Cannot convert_element_type from key<fry> to float32"
    with pytest.raises(ValueError) as info:
        tnp.result_type(key, 1.0)
    assert str(info.value) == "dtype=key<fry> is not a valid dtype for JAX type promotion."
    with pytest.raises(TypeError) as info:
        key + 1
    assert str(info.value) == "add does not accept dtypes key<fry>, int32."


@pytest.mark.parametrize("jitted", [False, True])
def test_astype_of_keys_to_their_own_dtype(jitted):
    # optax's gradient accumulation keeps key states with jnp.astype(where(...), st.dtype)
    def f(mod, np_, a, b):
        fn = lambda a, b: np_.astype(np_.where(False, a, b), a.dtype)  # noqa: E731
        return (mod.jit(fn) if jitted else fn)(a, b)
    got = f(traxla, tnp, random.key(0), random.key(1))
    want = f(jax, jnp, jax.random.key(0), jax.random.key(1))
    assert str(got.dtype) == str(want.dtype) == "key<fry>"
    np.testing.assert_array_equal(random.key_data(got), jax.random.key_data(want))
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to float32"):
        tnp.astype(random.key(0), tnp.float32)

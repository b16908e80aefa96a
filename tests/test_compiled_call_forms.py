"""``jit(f).lower(...).compile()(...)`` and ``jit(f).trace(...).lower().compile()(...)``
take the argument forms JAX's ``Compiled`` takes: the dynamic arguments only, positional
and keyword exactly as at ``lower`` (static arguments are omitted, whatever their
position), donated buffers consumed; anything else fails with JAX's error and message.
Each case runs under traxla and under JAX (the oracle) and must give the same outcome."""
from __future__ import annotations

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp

jax = pytest.importorskip("jax")

X = np.arange(3, dtype=np.float32)


def scale(x, y=2.0):
    return x * y


def mul(x, n):
    return x * n


def kwonly(a, b, *, c):
    return a + b * c


def named(n, x, d):
    return x * n + d["a"]


# name -> (jit options, lower args, lower kwargs, call args, call kwargs)
CASES = {
    "positional": ({}, scale, (X,), {}, (X,), {}),
    "keyword for a positional": ({}, scale, (X,), {}, (), {"x": X}),
    "extra positional": ({}, scale, (X,), {}, (X, 3.0), {}),
    "two positional": ({}, scale, (X, 3.0), {}, (X, 3.0), {}),
    "positional given as keyword": ({}, scale, (X, 3.0), {}, (X,), {"y": 3.0}),
    "keyword": ({}, scale, (X,), {"y": 3.0}, (X,), {"y": 3.0}),
    "keyword given as positional": ({}, scale, (X,), {"y": 3.0}, (X, 3.0), {}),
    "static omitted": ({"static_argnums": 1}, mul, (X, 3), {}, (X,), {}),
    "static passed again": ({"static_argnums": 1}, mul, (X, 3), {}, (X, 3), {}),
    "static first omitted": ({"static_argnums": 0}, mul, (3, X), {}, (X,), {}),
    "static first passed again": ({"static_argnums": 0}, mul, (3, X), {}, (3, X), {}),
    "static name omitted": ({"static_argnames": "n"}, mul, (X,), {"n": 3}, (X,), {}),
    "static name passed again": ({"static_argnames": "n"}, mul, (X,), {"n": 3}, (X,),
                                 {"n": 3}),
    "static num given by keyword, omitted": ({"static_argnums": 1}, mul, (X,), {"n": 3}, (X,),
                                             {}),
    "keyword-only": ({}, kwonly, (X, X), {"c": 2.0}, (X, X), {"c": 2.0}),
    "keyword-only missing": ({}, kwonly, (X, X), {"c": 2.0}, (X, X), {}),
    "wrong dtype": ({}, scale, (X,), {}, (X.astype(np.int32),), {}),
    "wrong shape": ({}, scale, (X,), {}, (X[:2],), {}),
    "Python scalar": ({}, scale, (1.0,), {}, (2.0,), {}),
    "NumPy scalar for a weak float": ({}, scale, (1.0,), {}, (np.float32(2.0),), {}),
    "int for a float": ({}, scale, (1.0,), {}, (2,), {}),
    "nested": ({}, lambda d: d["a"] * 2, ({"a": X},), {}, ({"a": X},), {}),
    "nested keys differ": ({}, lambda d: d["a"] * 2, ({"a": X},), {}, ({"b": X},), {}),
    "list for a tuple": ({}, lambda t: t[0], ((X,),), {}, ([X],), {}),
    "leaf names with statics": ({"static_argnums": 0}, named, (3, X, {"a": X}), {},
                                (X.astype(np.int32), {"a": X[:2]}), {}),
    "leaf names by keyword": ({"static_argnums": 0}, named, (3, X), {"d": {"a": X}}, (X,),
                              {"d": {"a": X.astype(np.int32)}}),
}


def _outcome(lib, stage, case):
    options, fun, lower_args, lower_kwargs, args, kwargs = case
    jitted = lib.jit(fun, **options)
    try:
        if stage == "lower":
            compiled = jitted.lower(*lower_args, **lower_kwargs).compile()
        else:
            compiled = jitted.trace(*lower_args, **lower_kwargs).lower().compile()
        return "ok", np.asarray(compiled(*args, **kwargs)).tolist()
    except Exception as e:  # noqa: BLE001 - the class and message are the comparison
        return type(e).__name__, str(e)


@pytest.mark.parametrize("stage", ["lower", "trace"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_call_forms_as_jax(name, stage):
    assert _outcome(traxla, stage, CASES[name]) == _outcome(jax, stage, CASES[name])


def test_documented_static_argument_cells():
    """JAX's AOT documentation: a compiled function no longer takes its static arguments."""
    def f(x, y):
        return 2 * x + y
    compiled = traxla.jit(f, static_argnums=0).lower(7, 8).compile()
    assert int(compiled(8)) == 22
    compiled = traxla.jit(f, static_argnums=0).trace(7, 8).lower().compile()
    assert int(compiled(8)) == 22
    with pytest.raises(TypeError, match="There are 1 mismatches"):
        compiled(7, 8)


def test_donated_argument_is_consumed():
    compiled = traxla.jit(lambda a, b: a + b, donate_argnums=0).lower(X, X).compile()
    a = tnp.asarray(X)
    np.testing.assert_array_equal(compiled(a, X), 2 * X)
    assert a.is_deleted()


@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_transforming_a_compiled_call_is_refused(transform):
    compiled = traxla.jit(scale).lower(X).compile()
    j_compiled = jax.jit(scale).lower(X).compile()
    lib_t, lib_j = getattr(traxla, transform), getattr(jax, transform)
    xs = np.ones((2, 3), np.float32) if transform == "vmap" else X
    msg = ("Cannot apply JAX transformations to a function lowered and compiled for a "
           "particular signature. Detected argument of Tracer type")
    with pytest.raises(TypeError, match=msg):
        lib_j(lambda x: j_compiled(x))(xs)
    with pytest.raises(TypeError, match=msg):
        lib_t(lambda x: compiled(x))(xs)

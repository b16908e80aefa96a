"""The examples of the specification article, reproduced with
``import traxla as jax`` and ``import traxla.numpy as jnp``."""
from functools import partial

import numpy as np
import pytest

import traxla as jax
import traxla.numpy as jnp
import traxla.tree_util as jtu
from traxla import jit, make_jaxpr

RELU_JAXPR = """\
{ lambda ; a:f32[]. let
    b:f32[] = mul a 2.0:f32[]
    c:f32[] = add b 1.0:f32[]
    d:f32[] = max c 0.0:f32[]
  in (d,) }"""

LAYER_JAXPR = """\
{ lambda ; a:f32[4,8] b:f32[8,16] c:f32[16]. let
    d:f32[4,16] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
    e:f32[1,16] = broadcast_in_dim[broadcast_dimensions=(1,)] c
    f:f32[4,16] = add d e
    g:f32[4,16] = max f 0.0:f32[]
  in (g,) }"""

STATIC_JAXPR = """\
{ lambda ; a:f32[]. let
    b:f32[3] = jit[
      name=g
      jaxpr={ lambda ; a:f32[]. let b:f32[3] = broadcast_in_dim a in (b,) }
    ] a
  in (b,) }"""


def test_relu_jaxpr():
    def f(x):
        return jnp.maximum(x * 2.0 + 1.0, 0.0)   # relu(2x + 1)
    assert str(make_jaxpr(f)(jnp.float32(3.0))) == RELU_JAXPR


def layer(x, W, b):
    return jnp.maximum(x @ W + b, 0.0)


def test_layer_jaxpr():
    x = jnp.ones((4, 8)); W = jnp.ones((8, 16)); b = jnp.zeros((16,))
    assert str(make_jaxpr(layer)(x, W, b)) == LAYER_JAXPR


def test_layer_runs_under_jit():
    rng = np.random.default_rng(0)
    x, W, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8, 16), (16,)))
    out = jit(layer)(x, W, b)
    np.testing.assert_allclose(np.asarray(out), np.maximum(x @ W + b, 0.0), rtol=1e-5, atol=1e-6)


def test_probe_prints_tracer_and_aval(capsys):
    def probe(x):
        print(type(x).__name__, "|", x.aval)
        return x + 1
    make_jaxpr(probe)(jnp.ones((2, 3)))
    out = capsys.readouterr().out.strip()
    assert out == "DynamicJaxprTracer | float32[2,3]"
    assert out.split(" | ")[0].endswith("Tracer")


def bad(x):
    if x > 0:          # needs a real bool; x is a tracer
        return x
    return -x


def test_if_on_tracer_raises_bool_conversion_error():
    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        jit(bad)(jnp.float32(1.0))
    lineno = bad.__code__.co_firstlineno
    assert str(info.value) == (
        "Attempted boolean conversion of traced array with shape bool[].\n"
        f"The error occurred while tracing the function bad at {__file__}:{lineno} for jit. "
        "This concrete value was not available in Python because it depends on the value of "
        "the argument x.\n"
        "See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError")
    assert isinstance(info.value, jax.errors.ConcretizationTypeError)
    assert isinstance(info.value, TypeError)


def test_retrace_counts_follow_the_aval():
    count = {"n": 0}

    @jit
    def f(x):
        count["n"] += 1          # side effect: runs only while tracing
        return x * 2 + 1

    seen = []
    f(jnp.ones((4,), jnp.float32)); seen.append(count["n"])  # trace + compile
    f(jnp.ones((4,), jnp.float32)); seen.append(count["n"])  # cache hit
    f(jnp.ones((8,), jnp.float32)); seen.append(count["n"])  # new shape: retrace
    f(jnp.ones((8,), jnp.int32)); seen.append(count["n"])    # new dtype: retrace
    assert seen == [1, 1, 2, 3]
    np.testing.assert_array_equal(np.asarray(f(jnp.ones((8,), jnp.int32))), np.full(8, 3))


def test_static_argnums_broadcast():
    @partial(jit, static_argnums=0)
    def g(n, x):
        return jnp.broadcast_to(x, (n,))   # n must be concrete to be a shape

    assert str(make_jaxpr(g, static_argnums=0)(3, jnp.float32(7.0))) == STATIC_JAXPR
    np.testing.assert_array_equal(np.asarray(g(3, jnp.float32(7.0))), np.full(3, 7.0, np.float32))
    assert g(4, jnp.float32(7.0)).shape == (4,)


def test_pytree_flatten():
    params = {"w": jnp.ones((2, 2)), "layers": [jnp.zeros((3,)), jnp.ones((3,))]}
    leaves, treedef = jtu.tree_flatten(params)
    assert len(leaves) == 3
    assert str(treedef) == "PyTreeDef({'layers': [*, *], 'w': *})"
    rebuilt = jtu.tree_unflatten(treedef, leaves)
    assert rebuilt.keys() == params.keys() and len(rebuilt["layers"]) == 2


def test_jit_accepts_and_returns_pytrees():
    params = {"w": jnp.ones((2, 2)), "layers": [jnp.zeros((3,)), jnp.ones((3,))]}
    out = jit(lambda p: {"sum": p["w"].sum(), "scaled": [l * 2 for l in p["layers"]]})(params)
    assert float(out["sum"]) == 4.0
    np.testing.assert_array_equal(np.asarray(out["scaled"][1]), np.full(3, 2.0))

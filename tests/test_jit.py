"""jit: caching, static arguments, pytrees, nested jit, AOT lowering and compiling."""
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import jit, make_jaxpr
from traxla.runtime import dispatch

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402


def _programs(np_):
    f32 = np.float32
    return [
        (lambda x: x + 1.0, (np.ones(4, f32),)),
        (lambda x, y: (x * y, x - y), (np.ones(4, f32), np.ones(4, f32))),
        (lambda x: np_.sum(np_.sin(x) ** 2), (np.ones((2, 3), f32),)),
        (lambda x, W: np_.tanh(x @ W), (np.ones((2, 3), f32), np.ones((3, 4), f32))),
        (lambda x: x[1:, ::2].T, (np.ones((4, 3), f32),)),
        (lambda x: np_.maximum(x * 2.0 + 1.0, 0.0), (f32(3.0),)),
    ]


@pytest.mark.parametrize("index", range(len(_programs(np))))
def test_stablehlo_text_equals_jax(index):
    (ft, args), (fj, _) = _programs(tnp)[index], _programs(jnp)[index]
    assert traxla.jit(ft).lower(*args).as_text() == jax.jit(fj).lower(*args).as_text()


def test_compile_gives_optimized_hlo_and_costs():
    compiled = jit(lambda x, w: tnp.tanh(x @ w)).lower(np.ones((2, 3), np.float32),
                                                         np.ones((3, 4), np.float32)).compile()
    assert compiled.as_text().startswith("HloModule")
    cost = compiled.cost_analysis()
    assert cost["flops"] > 0
    out = compiled(np.ones((2, 3), np.float32), np.full((3, 4), 0.1, np.float32))
    np.testing.assert_allclose(np.asarray(out), np.tanh(np.full((2, 4), 0.3)), rtol=1e-6)
    with pytest.raises(TypeError, match="compiled with float32\\[2,3\\] and called with int32"):
        compiled(np.ones((2, 3), np.int32), np.ones((3, 4), np.float32))


def test_numpy_and_array_arguments_share_one_trace():
    traces = []

    @jit
    def f(x):
        traces.append(1)
        return x * 2

    f(np.ones(3, np.float32))
    f(tnp.ones(3))
    f(np.ones(3, np.float32))
    assert len(traces) == 1


def test_python_scalars_are_weakly_typed_arguments():
    f = jit(lambda x, y: x + y)
    out = f(1.0, 2)
    assert out.dtype == np.float32 and out.aval.weak_type
    assert float(out) == 3.0
    assert str(make_jaxpr(lambda x, y: x + y)(1.0, 2)) == str(jax.make_jaxpr(lambda x, y: x + y)(1.0, 2))


def test_static_argnames_and_kwargs():
    calls = []

    def f(x, *, n, scale=1.0):
        calls.append(n)
        return tnp.broadcast_to(x, (n,)) * scale

    g = jit(f, static_argnames="n")
    np.testing.assert_array_equal(np.asarray(g(2.0, n=3)), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(g(2.0, n=3, scale=2.0)), [4.0, 4.0, 4.0])
    assert g(2.0, n=4).shape == (4,)
    assert calls == [3, 3, 4]  # scale is traced: a new kwarg structure retraces, a new n retraces


def test_static_argnums_negative_and_values_in_key():
    f = jit(lambda x, n: x * n, static_argnums=-1)
    assert float(f(2.0, 3)) == 6.0
    assert float(f(2.0, 4)) == 8.0


def test_nested_jit_shares_and_hoists_its_jaxpr():
    inner = jit(lambda y: y * 2)
    traxla_text = str(make_jaxpr(lambda x: inner(inner(x)))(np.ones(3, np.float32)))
    inner_j = jax.jit(lambda y: y * 2)
    jax_text = str(jax.make_jaxpr(lambda x: inner_j(inner_j(x)))(np.ones(3, np.float32)))
    assert traxla_text == jax_text
    assert traxla_text.startswith("let lambda = ")


def test_nested_jit_closing_over_outer_tracer():
    def t(np_, jit_):
        return lambda x: jit_(lambda y: y + x)(x * 2)
    args = (np.ones(3, np.float32),)
    assert str(make_jaxpr(t(tnp, jit))(*args)) == str(jax.make_jaxpr(t(jnp, jax.jit))(*args))
    np.testing.assert_array_equal(np.asarray(jit(t(tnp, jit))(*args)), [3.0, 3.0, 3.0])


def test_closure_over_concrete_array_is_a_constvar():
    c_t, c_j = tnp.arange(3.0), jnp.arange(3.0)
    args = (np.ones(3, np.float32),)
    assert (str(make_jaxpr(lambda x: jit(lambda y: y + c_t)(x))(*args))
            == str(jax.make_jaxpr(lambda x: jax.jit(lambda y: y + c_j)(x))(*args)))
    np.testing.assert_array_equal(np.asarray(jit(lambda x: x + c_t)(*args)), [1.0, 2.0, 3.0])


def test_outputs_may_be_literals_inputs_and_nested():
    f = jit(lambda x: {"a": (x, 1.0), "b": [x * 2, None]})
    out = f(np.ones(2, np.float32))
    assert float(out["a"][1]) == 1.0 and out["b"][1] is None
    np.testing.assert_array_equal(np.asarray(out["b"][0]), [2.0, 2.0])


def test_eager_ops_compile_once_per_signature():
    x = tnp.ones(5)
    (x + 1.0).block_until_ready()
    before = dispatch.eager_cache_size()
    for _ in range(3):
        (x + 2.0).block_until_ready()
    assert dispatch.eager_cache_size() == before


def test_enable_x64_switch():
    assert tnp.ones(3).dtype == np.float32
    with traxla.config.flag("enable_x64", True):
        assert tnp.ones(3).dtype == np.float64
        out = jit(lambda x: x * 2)(np.arange(3))
        assert out.dtype == np.int64
        assert "i64" in str(make_jaxpr(lambda x: x + 1)(np.arange(3)))
    assert jit(lambda x: x * 2)(np.arange(3)).dtype == np.int32


def test_array_repr_and_numpy_interop():
    a = tnp.arange(3.0)
    assert repr(a) == "Array([0., 1., 2.], dtype=float32)"
    assert repr(tnp.float32(2.0) * 1) == "Array(2., dtype=float32)"
    assert repr(traxla.device_put(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert np.asarray(a).tolist() == [0.0, 1.0, 2.0]
    assert float(a[1]) == 1.0 and len(a) == 3 and a.shape == (3,)
    b = tnp.ones(4, tnp.bfloat16) * 3
    assert np.asarray(b).dtype == tnp.bfloat16.dtype and float(np.asarray(b)[0]) == 3.0


def test_typeof_prints_the_long_form():
    assert str(traxla.typeof(tnp.zeros((8, 16)))) == "float32[8,16]"


def test_jit_of_a_method_and_eval_shape():
    class Model:
        scale = 3.0

        @jit
        def __call__(self, x):
            return x * self.scale

    # Model instances are not pytrees: passing one as a traced argument is refused clearly
    with pytest.raises(TypeError, match="Error interpreting argument to .* as an abstract array"):
        Model()(np.ones(2, np.float32))
    shape = jit(lambda x: x @ x.T).eval_shape(np.ones((3, 2), np.float32))
    assert shape.shape == (3, 3)


@pytest.mark.parametrize("make", [
    lambda np_, jit_: lambda x: (np_.sin(x), x)[1],
    lambda np_, jit_: lambda x: jit_(lambda y: (np_.sin(y), y)[1])(x),
    lambda np_, jit_: lambda x: jit_(lambda y: (np_.sin(y), y))(x)[1],
])
def test_unused_top_level_binders_print_as_underscore(make):
    assert (str(make_jaxpr(make(tnp, jit))(1.0))
            == str(jax.make_jaxpr(make(jnp, jax.jit))(1.0)))


def test_python_float_bound_to_jit_prints_unrounded_and_computes_in_f32():
    """A Python float passed to a nested jit stays a literal with its own value (JAX prints
    ``1.6732632423543772:f32[]``), and is cast to float32 when lowered."""
    scale = 1.6732632423543772
    inner = traxla.jit(lambda x, s: x * s)
    outer = lambda x: inner(x, scale)  # noqa: E731
    x = np.arange(3, dtype=np.float32)
    assert f"{scale}:f32[]" in str(traxla.make_jaxpr(outer)(x))
    out = traxla.jit(outer)(x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), x * np.float32(scale))


def test_two_jits_of_one_function_share_the_trace():
    """As in JAX, the trace cache is keyed by the function: ``jit(f)`` written twice traces
    ``f`` once, and the nested jaxpr is shared (printed hoisted)."""
    calls = []

    def f(x):
        calls.append(1)
        return x * 2.0

    x = np.ones(3, np.float32)
    text = str(make_jaxpr(lambda x: jit(f)(x) + jit(f)(x))(x))
    assert len(calls) == 1
    assert text.startswith("let f = ")


def test_trace_names_arguments_once_and_keeps_no_reference_to_them():
    import inspect
    import weakref

    binds = []

    class CountingSignature:  # the argument names come from binding the signature
        def __init__(self, sig):
            self.sig, self.parameters = sig, sig.parameters

        def bind(self, *a, **k):
            binds.append(1)
            return self.sig.bind(*a, **k)

    def f(x, p):
        return x + p["b"]

    jitted = jit(f)
    jitted._signature = CountingSignature(inspect.signature(f))
    x = np.ones(3, np.float32)
    traced = jitted.trace(x, {"b": np.float32(1)})
    assert traced.jaxpr.jaxpr.debug_info.arg_names == ("x", "p['b']")
    assert len(binds) == 1 and jitted._names_memo is None  # computed once, then reused
    ref = weakref.ref(x)
    del x
    assert ref() is None

"""``ShapeDtypeStruct``, ``eval_shape``, ``traxla.stages`` and the jit options
(decorator factory, donation, keep_unused, inline, shardings, compiler_options),
compared with JAX."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import traxla as tx
import traxla.numpy as jnp
from traxla.api.shape_dtype_struct import ShapeDtypeStruct


def _two(x, y):
    return {"a": x * 2, "b": y.sum()}


X23 = np.ones((2, 3), np.float32)
Y4 = np.ones(4, np.float32)


# -- ShapeDtypeStruct and eval_shape -----------------------------------------------------

def test_shape_dtype_struct_matches_jax():
    for args, kw in [(((2, 3), np.float32), {}), (((2,), "float32"), {"weak_type": True}),
                     (((), "int32"), {})]:
        ours, theirs = tx.ShapeDtypeStruct(*args, **kw), jax.ShapeDtypeStruct(*args, **kw)
        assert repr(ours) == repr(theirs)
        assert (ours.shape, ours.dtype, ours.ndim, ours.size, ours.weak_type) == (
            theirs.shape, theirs.dtype, theirs.ndim, theirs.size, theirs.weak_type)
    s = tx.ShapeDtypeStruct((2, 3), "float32")
    assert s == tx.ShapeDtypeStruct((2, 3), np.float32) and hash(s) == hash(
        tx.ShapeDtypeStruct((2, 3), np.float32))
    assert s.update(shape=(4,)) == tx.ShapeDtypeStruct((4,), np.float32)
    assert len(s) == 2 and s.sharding is None
    with pytest.raises(RuntimeError, match="Cannot reassign attributes"):
        s.shape = (1,)
    with pytest.raises(ValueError, match="dtype must be specified"):
        tx.ShapeDtypeStruct((2,), None)
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(tx.ShapeDtypeStruct((), np.float32))
    assert repr(tx.ShapeDtypeStruct.like(jnp.ones((2, 2)))) == repr(
        jax.ShapeDtypeStruct.like(jjnp.ones((2, 2))))
    assert repr(tx.ShapeDtypeStruct.like(1.0)) == repr(jax.ShapeDtypeStruct.like(1.0))
    assert repr(tx.ShapeDtypeStruct.like(np.ones(3, np.int8))) == repr(
        jax.ShapeDtypeStruct.like(np.ones(3, np.int8)))


def test_eval_shape_matches_jax_and_never_compiles():
    args = (tx.ShapeDtypeStruct((2, 3), np.float32), tx.ShapeDtypeStruct((3, 4), np.float32))
    jargs = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args)
    f = lambda np_: (lambda x, y: (x @ y, x.sum(), {"w": y.T * 2}))  # noqa: E731
    assert repr(tx.eval_shape(f(jnp), *args)) == repr(jax.eval_shape(f(jjnp), *jargs))
    assert repr(tx.eval_shape(lambda x: x * 2, 1.0)) == repr(jax.eval_shape(lambda x: x * 2, 1.0))
    assert repr(tx.eval_shape(lambda x, k=1: x * k, np.ones(5), k=2)) == repr(
        jax.eval_shape(lambda x, k=1: x * k, np.ones(5), k=2))
    # duck-typed structs: anything with .shape and .dtype
    class Struct:
        shape, dtype = (3,), np.dtype("int32")
    assert tx.eval_shape(lambda x: x + 1, Struct()).shape == (3,)


def test_a_struct_the_function_returns_is_a_constant_without_a_value():
    # equinox's filter_closure_convert: ``eval_shape(lambda: structs)``; JAX maps a struct
    # to its aval (a constant of the jaxpr), and only running it fails
    s, js = tx.ShapeDtypeStruct((3,), np.float32), jax.ShapeDtypeStruct((3,), np.float32)
    assert repr(tx.eval_shape(lambda x: (s, x), 1.0)) == repr(
        jax.eval_shape(lambda x: (js, x), 1.0))
    assert str(tx.make_jaxpr(lambda: s)()) == str(jax.make_jaxpr(lambda: js)())
    with pytest.raises(TypeError, match="A ShapeDtypeStruct does not have a value"):
        tx.jit(lambda: s)()


# -- the stages ---------------------------------------------------------------------------

def test_stages_names_and_types():
    assert sorted(tx.stages.__all__) == sorted(n for n in dir(jax.stages) if not n.startswith("_"))
    f = tx.jit(_two)
    assert isinstance(f, tx.stages.Wrapped)
    t = f.trace(X23, Y4)
    assert isinstance(t, tx.stages.Traced)
    assert isinstance(t.lower(), tx.stages.Lowered)
    assert isinstance(t.lower().compile(), tx.stages.Compiled)


def test_traced_and_lowered_attributes_match_jax():
    tf, jf = tx.jit(_two, donate_argnums=0), jax.jit(_two, donate_argnums=0)
    t, jt = tf.trace(X23, Y4), jf.trace(X23, Y4)
    assert str(t.jaxpr) == str(jt.jaxpr)
    for attr in ("in_avals", "out_avals", "in_tree", "out_tree", "args_info", "out_info",
                 "fun_name", "donate_argnums"):
        assert repr(getattr(t, attr)) == repr(getattr(jt, attr)), attr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, jlo = t.lower(), jt.lower()
    for attr in ("in_avals", "in_tree", "out_tree", "args_info", "out_info", "donate_argnums"):
        assert repr(getattr(lo, attr)) == repr(getattr(jlo, attr)), attr
    assert lo.as_text() == jlo.as_text()
    assert lo.compiler_ir() is lo.module and lo.compiler_ir("stablehlo") is lo.module
    assert lo.as_text("hlo").startswith("HloModule jit__two")
    assert "ENTRY" in lo.as_text("hlo")
    assert type(lo.compiler_ir("hlo")).__name__ == "XlaComputation"
    with pytest.raises(ValueError, match="unknown dialect: mhlo"):
        lo.as_text("mhlo")
    cost = lo.cost_analysis()
    assert cost["flops"] == jlo.cost_analysis()["flops"]
    # the unoptimized module's estimate, as JAX's (its bytes differ from the compiled one's)
    assert cost["bytes accessed"] == jlo.cost_analysis()["bytes accessed"]


def test_compiled_attributes_and_call():
    f, jf = tx.jit(_two), jax.jit(_two)
    c, jc = f.lower(X23, Y4).compile(), jf.lower(X23, Y4).compile()
    assert c.as_text().startswith("HloModule jit__two")
    assert c.cost_analysis()["flops"] == jc.cost_analysis()["flops"]
    mem = c.memory_analysis()
    assert mem.argument_size_in_bytes == jc.memory_analysis().argument_size_in_bytes
    assert type(c.runtime_executable()).__name__ == "LoadedExecutable"
    assert repr(c.input_shardings) == repr(jc.input_shardings)
    assert repr(c.output_shardings) == repr(jc.output_shardings)
    out_info = c.out_info
    assert out_info["a"].shape == (2, 3) and out_info["a"].sharding == c.output_shardings["a"]
    out = c(X23, Y4)
    assert float(out["b"]) == 4.0 and np.asarray(out["a"]).tolist() == [[2.0] * 3] * 2
    with pytest.raises(TypeError, match="Argument 'y' compiled with float32\\[4\\] and called "
                                        "with float32\\[5\\]"):
        c(X23, np.ones(5, np.float32))
    with pytest.raises(TypeError, match="input pytree does not match"):
        c(X23, Y4, Y4)
    assert repr(c.input_formats) == repr(jc.input_formats)  # XLA's default layouts
    assert repr(c.output_formats) == repr(jc.output_formats)


def test_lowered_compile_with_compiler_options():
    lo = tx.jit(lambda x: x * 3).lower(np.ones(2, np.float32))
    c = lo.compile({"xla_cpu_enable_fast_math": True})
    assert np.asarray(c(np.ones(2, np.float32))).tolist() == [3.0, 3.0]
    with pytest.raises(tx.errors.JaxRuntimeError, match="No such compile option"):
        lo.compile({"bogus_opt": True})


# -- jit options ------------------------------------------------------------------------

def test_decorator_factory_forms():
    @tx.jit(static_argnums=0)
    def power(n, x):
        return x ** n
    assert float(power(3, 2.0)) == 8.0

    @tx.jit(static_argnames="n")
    def power2(x, n=2):
        return x ** n
    assert float(power2(3.0, n=3)) == 27.0
    with pytest.raises(TypeError, match="Expected a callable value"):
        tx.jit(3)


def _update(params, grads):
    return params - 0.1 * grads


def test_donation_aliases_and_deletes_as_jax():
    tf, jf = tx.jit(_update, donate_argnums=0), jax.jit(_update, donate_argnums=0)
    p, g = jnp.ones(4), jnp.ones(4)
    lo, jlo = tf.lower(p, g), jf.lower(jjnp.ones(4), jjnp.ones(4))
    assert lo.as_text() == jlo.as_text()
    assert "tf.aliasing_output = 0" in lo.as_text()
    hlo = lo.compile().as_text()
    assert "input_output_alias={ {}: (0, {}, may-alias) }" in hlo
    out = tf(p, g)
    assert p.is_deleted() and not g.is_deleted()
    assert np.allclose(np.asarray(out), 0.9)
    with pytest.raises(RuntimeError, match="Array has been deleted with shape=float32\\[4\\]."):
        p + 1
    with pytest.raises(RuntimeError, match="Array has been deleted with shape=float32\\[4\\]."):
        tf(p, g)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(p)
    # the fast path (plain Array arguments, cached executable) donates too
    q = jnp.ones(4)
    tf(q, g)
    assert q.is_deleted()


def test_donate_argnames_and_unusable_donations_warn_as_jax():
    def f(x, y, z):
        return x * 2, y.sum()
    args = (X23, Y4, np.ones(5, np.float32))
    with pytest.warns(UserWarning, match="Some donated buffers were not usable: float32\\[4\\]"):
        text = tx.jit(f, donate_argnames=("x", "y", "z")).lower(*args).as_text()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert text == jax.jit(f, donate_argnames=("x", "y", "z")).lower(*args).as_text()
    assert tx.jit(f, donate_argnames="y").donate_argnums == (1,)
    assert tx.jit(f, donate_argnums=2).donate_argnames == ("z",)
    with pytest.raises(ValueError, match="static_argnums and donate_argnums cannot intersect"):
        tx.jit(f, static_argnums=0, donate_argnums=0)
    with pytest.raises(ValueError, match="invalid argnames"):
        tx.jit(f, donate_argnames="w")


def test_keep_unused():
    def f(x, unused):
        return x + 1
    args = (np.ones(2, np.float32), np.ones(3, np.float32))
    for keep in (False, True):
        assert (tx.jit(f, keep_unused=keep).lower(*args).as_text()
                == jax.jit(f, keep_unused=keep).lower(*args).as_text())
    assert np.asarray(tx.jit(f)(*args)).tolist() == [2.0, 2.0]
    assert np.asarray(tx.jit(f, keep_unused=True)(*args)).tolist() == [2.0, 2.0]


def test_inline_matches_jax_jaxpr():
    def outer(np_, api, inline):
        g = api.jit(lambda x: x * 2, inline=inline)
        return lambda x: g(x) + 1
    for inline in (False, True):
        assert (str(tx.make_jaxpr(outer(jnp, tx, inline))(1.0))
                == str(jax.make_jaxpr(outer(jjnp, jax, inline))(1.0)))


def test_compiler_options_top_level_only():
    f = tx.jit(lambda x: x * 3, compiler_options={"xla_cpu_enable_fast_math": True})
    assert float(f(1.0)) == 3.0
    with pytest.raises(ValueError, match="can only be passed to top-level `jax.jit`"):
        tx.jit(lambda x: f(x))(1.0)


def test_device_and_backend_options():
    assert float(tx.jit(lambda x: x + 1, device=tx.devices()[0])(1.0)) == 2.0
    assert float(tx.jit(lambda x: x + 1, backend="cpu")(1.0)) == 2.0


def test_trace_and_eval_shape_accept_structs():
    s = tx.ShapeDtypeStruct((3, 2), np.float32)
    t = tx.jit(lambda x: x @ x.T).trace(s)
    assert t.out_info.shape == (3, 3)
    assert np.asarray(t.lower().compile()(np.ones((3, 2), np.float32))).sum() == 18.0


def test_a_struct_returned_from_a_traced_function_is_a_valueless_constant():
    # lineax's structure_equal: eval_shape(lambda: struct) gives the struct back (JAX maps a
    # ShapeDtypeStruct to its aval); a compiled program needing its value raises JAX's error
    for api, np_ in ((tx, jnp), (jax, jjnp)):
        s = api.ShapeDtypeStruct((2,), np_.float32)
        assert api.eval_shape(lambda: s) == s
        out = api.eval_shape(lambda x: (x, s), 1.0)
        assert out[1] == s and out[0].weak_type
        assert str(api.make_jaxpr(lambda: s)()) == "{ lambda a:f32[2]; . let  in (a,) }"
        with pytest.raises(TypeError, match="A ShapeDtypeStruct does not have a value and "
                           "cannot be used as a constant in a JAX function."):
            api.jit(lambda: s)()


def test_hlo_text_names_parameters_and_instructions_as_jax():
    # ffi.md prints lower(x).as_text(dialect="hlo"): JAX's parameters are named after the
    # arguments (x.1, params__w__.1) and the instructions after their primitives (sin.1);
    # the compiled HLO's parameters too
    def g(np_):
        return lambda x, params: np_.sin(x) * params["w"] + params["b"]
    args = (np.ones(3, np.float32), {"w": np.float32(2.0), "b": np.zeros(3, np.float32)})
    lo, jlo = tx.jit(g(jnp)).lower(*args), jax.jit(g(jjnp)).lower(*args)
    assert lo.as_text("hlo") == jlo.as_text("hlo")
    assert "x.1 = f32[3]{0} parameter(0)" in lo.as_text("hlo")
    compiled = lo.compile().as_text()
    assert "%params__w__.1 = f32[] parameter(" in compiled and "%x.1 = " in compiled

"""The rule helpers of ``jax.interpreters.ad``/``batching``/``mlir`` that primitives written
for JAX use (``defbilinear``, ``deflinear2``, ``defjvp2``, ``defbroadcasting``,
``defvectorized``, ``get_primitive_transpose``, the MLIR type helpers): the values are
JAX's (checked against JAX 0.10.2 by hand: the same program prints the same under both)."""
import numpy as np
import pytest

import traxla as jax
import traxla.numpy as jnp
from traxla.extend.core import Primitive
from traxla.interpreters import ad, batching, mlir


def _prim(name, impl, aval=lambda x, *rest: x):
    p = Primitive(name)
    p.def_impl(impl)
    p.def_abstract_eval(aval)
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=False))
    return p


def test_bilinear_and_broadcasting():
    mul_p = _prim("surface_mul", lambda x, y: x * y, lambda x, y: jax.core.ShapedArray(
        np.broadcast_shapes(x.shape, y.shape), x.dtype))
    ad.defbilinear(mul_p, lambda ct, x, y: ct * y, lambda ct, x, y: x * ct)
    batching.defbroadcasting(mul_p)
    f = lambda x, y: mul_p.bind(x, y)  # noqa: E731
    assert (float(jax.grad(f)(3.0, 4.0)), float(jax.grad(f, 1)(3.0, 4.0))) == (4.0, 3.0)
    assert float(jax.jvp(f, (3.0, 4.0), (1.0, 0.0))[1]) == 4.0
    assert jax.vmap(f, (0, None))(jnp.arange(3.0), 2.0).tolist() == [0.0, 2.0, 4.0]
    assert jax.vmap(f, (0, 1))(jnp.ones((3, 2)), jnp.ones((2, 3))).shape == (3, 2)


def test_linear_vectorized_jvp2_and_transpose_lookup():
    neg_p = _prim("surface_neg", lambda x: -x)
    ad.deflinear2(neg_p, lambda ct, x: [-ct])
    batching.defvectorized(neg_p)
    assert float(jax.grad(lambda x: neg_p.bind(x))(2.0)) == -1.0
    assert jax.vmap(neg_p.bind)(jnp.arange(3.0)).tolist() == [0.0, -1.0, -2.0]
    sin_p = _prim("surface_sin", jnp.sin)
    ad.defjvp2(sin_p, lambda g, ans, x: g * jnp.cos(x))
    assert float(jax.grad(sin_p.bind)(0.5)) == pytest.approx(np.cos(0.5))
    assert ad.get_primitive_transpose(neg_p) is not None
    with pytest.raises(NotImplementedError, match="Transpose rule .* for 'surface_sin'"):
        ad.get_primitive_transpose(sin_p)
    assert float(ad.add_jaxvals(1.0, 2.0)) == 3.0
    assert batching.broadcast(jnp.ones(2), 3, 0, None).shape == (3, 2)


def test_mlir_type_helpers():
    from traxla.lowering.mlir import context, ir
    with context(), ir.Location.unknown():
        assert str(mlir.aval_to_ir_type(jax.core.ShapedArray((2, 3), np.float32))) == \
            "tensor<2x3xf32>"
        assert str(mlir.dtype_to_ir_type(np.int8)) == "i8"
        assert str(mlir.i64_attr(3)) == "3 : i64"
        assert str(mlir.dense_int_array([1, 2])) == "array<i64: 1, 2>"
        assert str(mlir.token_type()) == "!stablehlo.token"
    module = jax.jit(lambda x: x + 1).lower(1.0).compiler_ir()
    assert "stablehlo.add" in mlir.module_to_string(module)
    assert mlir.module_to_bytecode(module)[:4] == b"ML\xefR"
    with pytest.raises(NotImplementedError, match="JAX's MLIR lowering machinery"):
        mlir.lower_jaxpr_to_module()


def test_rebase_donate_argnums():
    from traxla.api_util import rebase_donate_argnums
    assert rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)
    assert rebase_donate_argnums((5, 1), (2, 3)) == (1, 3)
    with pytest.raises(ValueError, match=r"`static_argnums` \[0, 2\] and `donate_argnums` "
                                         r"\[1, 2\] cannot intersect"):
        rebase_donate_argnums((1, 2), (0, 2))


@pytest.mark.parametrize("axes,value", [({"a": 0, "b": None}, {"a": 1, "b": (2, 3)}),
                                        ([0, 1], (1, 2)), ({"a": 0}, {"b": 1}),
                                        ((0, 1, 2), (1, 2))])
def test_flatten_axes_as_jax(axes, value):
    import jax
    from traxla.api_util import flatten_axes

    def run(fn, tu):
        try:
            return fn("in_axes", tu.tree_structure(value), axes, tupled_args=True)
        except ValueError as e:
            return str(e)
    assert run(flatten_axes, __import__("traxla").tree_util) == run(
        jax.api_util.flatten_axes, jax.tree_util)


def test_dce_jaxpr_consts():
    from traxla.interpreters import partial_eval as pe
    c, d = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
    j = jax.make_jaxpr(lambda x, y: (x * c, y + d, jnp.sin(x)))(1.0, 2.0).jaxpr
    new, used_consts, used_inputs = pe.dce_jaxpr_consts(j, [True, False, False])
    assert (used_consts, used_inputs) == ([True, False], [True, False])  # as JAX's
    assert (len(new.constvars), len(new.invars)) == (1, 1)
    new, used_consts, used_inputs = pe.dce_jaxpr_consts(j, [False, False, True], True)
    assert (used_consts, used_inputs, len(new.eqns)) == ([True, True], [True, True], 1)


def test_defreducer():
    sum_p = Primitive("surface_sum")
    impl = lambda x, *, axes: jnp.sum(x, axes)  # noqa: E731
    sum_p.def_impl(impl)
    sum_p.def_abstract_eval(lambda x, *, axes: jax.core.ShapedArray(
        tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype))
    mlir.register_lowering(sum_p, mlir.lower_fun(impl, multiple_results=False))
    batching.defreducer(sum_p)
    x = jnp.arange(24.0).reshape(2, 3, 4)
    out = jax.vmap(lambda v: sum_p.bind(v, axes=(1,)), in_axes=2)(x)
    assert out.shape == (4, 2) and out.ravel().tolist()[:4] == [12.0, 48.0, 15.0, 51.0]
    text = str(jax.make_jaxpr(jax.vmap(lambda v: sum_p.bind(v, axes=(0,)), in_axes=1))(x))
    assert "b:f32[3,4] = surface_sum[axes=(np.int64(0),)] a" in text  # as JAX's


def test_donation_vector():
    from traxla.api_util import donation_vector
    args, kwargs = ((1.0, (2.0, 3.0)), [4.0]), {"b": 5.0, "a": (6.0, 7.0)}
    tree = jax.tree_util.tree_structure((args, kwargs))
    assert donation_vector((1,), ("a",), tree) == (False,) * 3 + (True,) * 3 + (False,)  # JAX's
    assert donation_vector((0,), (), jax.tree_util.tree_structure(args), kws=False) == (
        True, True, True, False)


def _tangent_kinds(jx, core_mod, ad_mod):
    """What a JVP rule of user code sees as its tangents (and the tangents its binds give)
    under ``jvp`` and ``grad``: the page jax-primitives.md prints them by class name."""
    seen = []
    kind = lambda t: ("partial_eval.JaxprTracer" in str(type(t)), type(t).__name__  # noqa: E731
                      if type(t) is ad_mod.Zero else None, str(getattr(t, "aval", "")))
    p = core_mod.Primitive("kinds_ma")
    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    p.def_abstract_eval(lambda x, y, z: jx.core.ShapedArray(x.shape, x.dtype))

    def jvp(primals, tangents):
        x, y, z = primals
        seen.append(tuple(kind(t) for t in tangents))
        zero = lambda t: jx.lax.full_like(x, 0) if type(t) is ad_mod.Zero else t  # noqa: E731
        inner = p.bind(x, zero(tangents[1]), zero(tangents[2]))
        seen.append(kind(inner))
        out_t = p.bind(zero(tangents[0]), y, inner)
        seen.append(kind(out_t))
        return p.bind(x, y, z), out_t

    def transpose(ct, x, y, z):
        if not ad_mod.is_undefined_primal(x):
            return None, p.bind(x, ct, jx.lax.full_like(x, 0)), ct
        return p.bind(ct, y, jx.lax.full_like(y, 0)), None, ct
    ad_mod.primitive_jvps[p] = jvp
    ad_mod.primitive_transposes[p] = transpose
    f = lambda a, b: p.bind(a, a, b)  # noqa: E731
    g = float(jx.grad(f)(2.0, 10.0))
    t = float(jx.jvp(f, (2.0, 10.0), (1.0, 1.0))[1])
    return g, t, seen


def test_user_jvp_rule_sees_tangents_as_jax_does():
    """Under grad a JVP rule of user code gets (and its binds give) tangents of a class named
    ``partial_eval.JaxprTracer``, as JAX's fallback linearization runs it; under jvp not."""
    import jax as real_jax
    from jax.extend import core as jcore
    from jax.interpreters import ad as jad
    from traxla.extend import core as tcore
    want = _tangent_kinds(real_jax, jcore, jad)
    got = _tangent_kinds(jax, tcore, ad)
    assert want[0] == 4.0 and want[1] == 5.0
    assert got == want

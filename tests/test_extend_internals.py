"""The ``jax.extend.core`` / ``jax.interpreters`` / ``jax._src`` internals that libraries
building their own primitives use (equinox.internal): each compared with JAX's."""
from __future__ import annotations

import atexit

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import lax as tlax
from traxla.extend import core as tcore
from traxla.interpreters import ad as tad, batching as tbatching, mlir as tmlir

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax as jlax  # noqa: E402
from jax.extend import core as jcore  # noqa: E402
from jax.interpreters import ad as jad, batching as jbatching, mlir as jmlir  # noqa: E402


def test_every_primitive_is_an_extend_primitive():
    assert isinstance(tlax.add_p, tcore.Primitive) == isinstance(jlax.add_p, jcore.Primitive)
    assert isinstance(tcore.Primitive("mine"), tcore.Primitive)
    assert not isinstance(object(), tcore.Primitive)
    assert issubclass(type(tlax.add_p), tcore.Primitive)

    class Sub(tcore.Primitive):
        pass
    assert isinstance(Sub("sub"), tcore.Primitive) and not isinstance(tlax.add_p, Sub)


def _eqn_fields(make_jaxpr, np_, lax_):
    jaxpr = make_jaxpr(lambda x: lax_.stop_gradient(np_.sin(x) * 2))(np.float32(1))
    return [(str(e.primitive), e.effects, e.primitive.get_bind_params(e.params) == e.params)
            for e in jaxpr.jaxpr.eqns]


def test_eqn_effects_and_get_bind_params():
    assert (_eqn_fields(traxla.make_jaxpr, tnp, tlax)
            == _eqn_fields(jax.make_jaxpr, jnp, jlax))


def _custom_jvp_round_trip(api, np_, custom_jvp_call_p):
    # equinox's finalise_jaxpr re-runs a jaxpr as prim.bind(*args, **get_bind_params(params))
    c = np_.arange(3.0)  # closed over: a const operand of the equation

    @api.custom_jvp
    def f(x, i):
        return np_.sin(x) * i + c[2]

    @f.defjvp
    def f_jvp(p, t):
        return f(*p), np_.cos(p[0]) * t[0] * p[1] * 2.0  # (not f's derivative: told apart)

    closed = api.make_jaxpr(lambda x: f(x, 3))(1.0)
    eqn, = [e for e in closed.jaxpr.eqns if e.primitive is custom_jvp_call_p]
    params = custom_jvp_call_p.get_bind_params(eqn.params)
    fun, jvp = params["subfuns"]
    consts = [closed.consts[closed.jaxpr.constvars.index(v)] for v in eqn.invars[:-2]]
    float0 = np.zeros((), api.dtypes.float0)

    def replay(x):
        return custom_jvp_call_p.bind(*consts, x, 3, **params)[0]
    # (all in one program: one compilation)
    return (sorted(params), len(consts), *api.jit(lambda x: (
        fun.call_wrapped(*consts, x, 3)[0],
        jvp.call_wrapped(*consts, x, 3, *map(np.zeros_like, consts), 1.0, float0),
        replay(x), api.jvp(replay, (x,), (1.0,)), api.grad(replay)(x)))(1.0))


def test_custom_jvp_call_get_bind_params_gives_subfuns_that_bind_takes():
    from jax.custom_derivatives import custom_jvp_call_p as jprim
    from traxla.custom_derivatives import custom_jvp_call_p as tprim
    got = _custom_jvp_round_trip(traxla, tnp, tprim)
    want = _custom_jvp_round_trip(jax, jnp, jprim)
    assert got[:2] == want[:2] == (["subfuns", "symbolic_zeros"], 1)
    leaves = [np.float32(v) for v in traxla.tree_util.tree_leaves(got[2:])]
    np.testing.assert_allclose(leaves, [np.float32(v) for v in jax.tree.leaves(want[2:])])
    assert np.isclose(got[-1], 2 * 3 * np.cos(1))  # the rule's, not the function's


def test_make_jaxpr_return_shape_gives_shape_dtype_structs():
    def f(x):
        return x * 2, 3.0, x > 0
    _, t = traxla.make_jaxpr(f, return_shape=True)(np.ones(2, np.float32))
    _, j = jax.make_jaxpr(f, return_shape=True)(np.ones(2, np.float32))
    assert [type(s).__name__ for s in t] == [type(s).__name__ for s in j] == ["ShapeDtypeStruct"] * 3
    assert [(s.shape, s.dtype, s.weak_type) for s in t] == [(s.shape, s.dtype, s.weak_type) for s in j]


def test_mapped_and_unmapped_aval():
    for core, SA in ((tcore, traxla.core.ShapedArray), (jcore, jax.core.ShapedArray)):
        a = SA((3, 4), np.float32)
        assert core.mapped_aval(4, 1, a).shape == (3,)
        assert core.mapped_aval(4, None, a) == a
        assert core.unmapped_aval(5, 0, a).shape == (5, 3, 4)
        assert core.unmapped_aval(5, None, a) == a
        with pytest.raises(TypeError, match="no mapping handler"):
            core.mapped_aval(4, 0, object())


def test_tangent_avals():
    for SA in (traxla.core.ShapedArray, jax.core.ShapedArray):
        i = SA((2,), np.int32)
        f = SA((2,), np.float32, weak_type=True)
        assert str(i.to_tangent_aval().dtype) == "[('float0', 'V')]"
        assert i.at_least_vspace() == i.to_tangent_aval() == i.to_ct_aval()
        assert f.to_tangent_aval() == f


def _bind_with_param_named_prim(core, ad):
    p = core.Primitive("takes_prim")
    p.def_impl(lambda x, *, prim: x)
    p.def_abstract_eval(lambda x, *, prim: x)
    return p.bind(np.float32(2), prim="a")


def test_bind_takes_a_param_named_prim():
    assert _bind_with_param_named_prim(tcore, tad) == _bind_with_param_named_prim(jcore, jad)


def _axis_batched(api, core, batching, mlir, np_):
    """A primitive with a rule in ``axis_primitive_batchers`` (size, name, trace type, args
    and dims as tuples), run even when nothing is batched."""
    p = core.Primitive("axis_batched_" + api.__name__)
    p.def_impl(lambda x: x * 2)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x * 2, multiple_results=False))
    seen = []

    def rule(size, name, trace_type, args, dims):
        seen.append((size, name, trace_type, type(args).__name__, type(dims).__name__, dims))
        (x,), (d,) = args, dims
        return p.bind(x), d

    batching.axis_primitive_batchers[p] = rule
    y = np_.arange(3.0)
    out = api.vmap(lambda x, c: p.bind(x) + p.bind(c), axis_name="i")(y, np_.ones(3))
    unb = api.vmap(lambda x: p.bind(np_.float32(1)) + x, axis_name="j")(y)
    return np.asarray(out).tolist(), np.asarray(unb).tolist(), seen


def test_axis_primitive_batchers():
    assert (_axis_batched(traxla, tcore, tbatching, tmlir, tnp)
            == _axis_batched(jax, jcore, jbatching, jmlir, jnp))


def _tracers_of_jvp(api, core, ad, np_):
    kinds = []

    def f(x, y):
        trace = core.find_top_trace((x, y))
        outs = (x * 2, np_.asarray(y) + 1, np_.int32(3) * 2, np_.asarray(x).astype(np_.int32))
        kinds.extend((isinstance(o, ad.JVPTracer) and o._trace.main is trace.main)
                     for o in outs)
        return outs[0]
    api.jvp(f, (1.0, 2.0), (1.0, 0.0))
    api.jvp(api.jit(f), (1.0, 2.0), (1.0, 0.0))
    return kinds


def test_jvp_tracers_and_trace_main():
    """Outputs with a symbolic-zero tangent are not tracers of the JVP (maybe_jvp_tracer);
    ``Trace.main`` tells the transformation a tracer belongs to."""
    assert _tracers_of_jvp(traxla, tcore, tad, tnp) == _tracers_of_jvp(jax, jcore, jad, jnp)


def test_src_dispatch_wait_for_tokens():
    from traxla._src import dispatch
    import jax._src.dispatch as jdispatch
    assert callable(dispatch.wait_for_tokens) and callable(jdispatch.wait_for_tokens)
    dispatch.wait_for_tokens()  # nothing pending
    atexit.unregister(dispatch.wait_for_tokens)  # what libraries do with it
    atexit.register(dispatch.wait_for_tokens)


def _python_callback_primitive(api, core, mlir, np_):
    """A primitive lowered to a call back to Python (``mlir.emit_python_callback``), with the
    keepalive handed to the module, as equinox's noinline does."""
    p = core.Primitive("host_twice_" + api.__name__)
    p.multiple_results = True
    p.def_abstract_eval(lambda x, y: [x, y])
    calls, tokens = [], []

    def host(x, y):
        calls.append((x.dtype.name, x.shape))
        return [np.asarray(x) * 2, np.asarray(y) + 1]

    def lowering(ctx, x, y):
        results, token, keepalive = mlir.emit_python_callback(
            ctx, host, None, [x, y], list(ctx.avals_in), list(ctx.avals_out),
            has_side_effect=False, sharding=None)
        ctx.module_context.add_keepalive(keepalive)
        tokens.append(token)
        return results

    mlir.register_lowering(p, lowering)
    out = api.jit(lambda a, b: p.bind(a, b))(np.arange(3, dtype=np.float32), np.int32(4))
    return [np.asarray(o).tolist() for o in out], [str(o.dtype) for o in out], calls, tokens


def test_emit_python_callback():
    assert (_python_callback_primitive(traxla, tcore, tmlir, tnp)
            == _python_callback_primitive(jax, jcore, jmlir, jnp))


class _OddName:
    """A callable whose ``__name__`` is not a string (an equinox Module field can be)."""
    __name__ = object()

    def __call__(self, x):
        return x * 3.0


@pytest.mark.parametrize("transform", ["vmap", "grad", "jacfwd", "jacrev", "checkpoint"])
def test_transforming_a_callable_whose_name_is_not_a_string(transform):
    def run(api):
        f = getattr(api, transform)(_OddName())
        out = f(np.float32(2.0) if transform != "vmap" else np.ones(2, np.float32))
        return np.asarray(out).tolist()
    assert run(traxla) == run(jax)


def _custom_vjp_residual_types(api):
    seen = []

    @api.custom_vjp
    def f(x):
        return x * 2

    def fwd(x):
        return x * 2, (True, 3, 2.5, x)

    def bwd(res, g):
        seen.append((res[0] is True, type(res[1]) is not bool and res[1] == 3,
                     isinstance(res[1], int), isinstance(res[2], float)))
        return (g * 2,)
    f.defvjp(fwd, bwd)
    g1 = api.grad(f)(1.0)
    g2 = api.jit(api.grad(f))(1.0)
    return seen, float(g1), float(g2)


def test_custom_vjp_python_scalar_residuals_reach_bwd_as_themselves():
    """A bool residual (equinox's ``perturbed`` flags) is the same object in bwd; an int or
    float one a Python int/float (JAX's TypedInt/TypedFloat are their subclasses)."""
    assert _custom_vjp_residual_types(traxla) == _custom_vjp_residual_types(jax)


def _linearize_through_jit_and_vmap(api, np_):
    def f(x):
        return np_.sin(x) * 2.0
    x, t = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    _, fj = api.linearize(f, x)
    _, fj_jit = api.jit(lambda x: api.linearize(f, x))(x)
    _, fj_vmap = api.vmap(lambda x: api.linearize(f, x))(x)
    with pytest.raises(TypeError) as info:
        fj((t,))
    return (type(fj).__name__, type(fj_jit).__name__, type(fj_vmap).__name__,
            np.asarray(fj(t)).round(5).tolist(), np.asarray(fj_jit(t)).round(5).tolist(),
            str(info.value))


def test_linearize_gives_a_partial_that_jit_and_vmap_can_return():
    assert (_linearize_through_jit_and_vmap(traxla, tnp)
            == _linearize_through_jit_and_vmap(jax, jnp))


def _rules_see_values_of_literals(api, core, ad, batching):
    """Replaying a jaxpr (``jaxpr_as_fun``) under jvp/vmap: a rule of user code gets a
    constant operand's value, not the jaxpr's Literal."""
    p = core.Primitive("scale_" + api.__name__)
    p.def_impl(lambda x, s: x * s)
    p.def_abstract_eval(lambda x, s: x)
    seen = []

    def jvp(primals, tangents):
        seen.append(("jvp", type(primals[1]).__name__ != "Literal", float(primals[1])))
        return p.bind(*primals), p.bind(tangents[0], primals[1])

    def batch(args, dims):
        seen.append(("vmap", type(args[1]).__name__ != "Literal", float(args[1])))
        return p.bind(*args), dims[0]
    ad.primitive_jvps[p] = jvp
    batching.primitive_batchers[p] = batch
    closed = api.make_jaxpr(lambda x: p.bind(x, 2.0))(np.float32(1))
    fun = core.jaxpr_as_fun(closed)
    api.jvp(fun, (np.float32(1),), (np.float32(1),))
    api.vmap(fun)(np.ones(2, np.float32))
    return seen


def test_user_rules_get_values_of_literals():
    assert (_rules_see_values_of_literals(traxla, tcore, tad, tbatching)
            == _rules_see_values_of_literals(jax, jcore, jad, jbatching))

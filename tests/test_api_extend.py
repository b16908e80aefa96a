"""``traxla.extend`` and ``traxla.interpreters``: JAX's "Writing custom Jaxpr
interpreters" and "How primitives work" tutorials run with the imports changed, and
give JAX's results."""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jjnp
from jax import lax as jlax
from jax.extend import core as jcore

import traxla as tx
import traxla.numpy as jnp
from traxla import lax
from traxla.extend import core
from traxla.interpreters import ad, batching, mlir
from traxla.interpreters.mlir import hlo


# -- custom interpreters -----------------------------------------------------------------

def _interpreters(api, np_, lax_, core_):
    def f(x):
        return np_.exp(np_.tanh(x))

    def eval_jaxpr(jaxpr, consts, *args):
        env = {}

        def read(var):
            return var.val if type(var) is core_.Literal else env[var]

        def write(var, val):
            env[var] = val
        list(map(write, jaxpr.invars, args))
        list(map(write, jaxpr.constvars, consts))
        for eqn in jaxpr.eqns:
            outvals = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            if not eqn.primitive.multiple_results:
                outvals = [outvals]
            list(map(write, eqn.outvars, outvals))
        return list(map(read, jaxpr.outvars))

    inverse_registry = {lax_.exp_p: np_.log, lax_.tanh_p: np_.arctanh}

    def inverse_jaxpr(jaxpr, consts, *args):
        env = {}

        def read(var):
            return var.val if type(var) is core_.Literal else env[var]

        def write(var, val):
            env[var] = val
        list(map(write, jaxpr.outvars, args))
        list(map(write, jaxpr.constvars, consts))
        for eqn in jaxpr.eqns[::-1]:
            if eqn.primitive not in inverse_registry:
                raise NotImplementedError(f"{eqn.primitive} does not have registered inverse.")
            outval = inverse_registry[eqn.primitive](*map(read, eqn.outvars))
            list(map(write, eqn.invars, [outval]))
        return list(map(read, jaxpr.invars))

    def inverse(fun):
        def wrapped(*args):
            closed = api.make_jaxpr(fun)(*args)
            return inverse_jaxpr(closed.jaxpr, closed.literals, *args)[0]
        return wrapped

    closed = api.make_jaxpr(f)(np.ones(5, np.float32))
    return {
        "eval": np.asarray(eval_jaxpr(closed.jaxpr, closed.literals, np.ones(5, np.float32))[0]),
        "roundtrip": float(inverse(f)(f(1.0))),
        "inverse_jaxpr": str(api.make_jaxpr(inverse(f))(f(1.0))),
        "composed": np.asarray(api.jit(api.vmap(api.grad(inverse(f))))(
            (np.arange(5, dtype=np.float32) + 1.0) / 5.0)),
    }


def test_custom_interpreter_tutorial_matches_jax():
    ours = _interpreters(tx, jnp, lax, core)
    theirs = _interpreters(jax, jjnp, jlax, jcore)
    np.testing.assert_allclose(ours["eval"], theirs["eval"], rtol=1e-6)
    assert abs(ours["roundtrip"] - 1.0) < 1e-5
    assert ours["inverse_jaxpr"] == theirs["inverse_jaxpr"]
    np.testing.assert_allclose(ours["composed"], theirs["composed"], rtol=1e-5)


# -- a primitive defined from user code ----------------------------------------------------

multiply_add_p = core.Primitive("multiply_add")


def multiply_add_prim(x, y, z):
    return multiply_add_p.bind(x, y, z)


def square_add_prim(a, b):
    return multiply_add_prim(a, a, b)


multiply_add_p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
multiply_add_p.def_abstract_eval(lambda xs, ys, zs: core.ShapedArray(xs.shape, xs.dtype))
mlir.register_lowering(multiply_add_p,
                       lambda ctx, xc, yc, zc: [hlo.AddOp(hlo.MulOp(xc, yc), zc).result],
                       platform="cpu")


def _jvp(arg_values, arg_tangents):
    x, y, z = arg_values
    xt, yt, zt = arg_tangents

    def make_zero(tan):
        return lax.zeros_like_array(x) if type(tan) is ad.Zero else tan
    return (multiply_add_prim(x, y, z),
            multiply_add_prim(make_zero(xt), y, multiply_add_prim(x, make_zero(yt), make_zero(zt))))


def _transpose(ct, x, y, z):
    if not ad.is_undefined_primal(x):
        ct_y = (ad.Zero(y.aval) if type(ct) is ad.Zero
                else multiply_add_prim(x, ct, lax.zeros_like_array(x)))
        return None, ct_y, ct
    ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else multiply_add_prim(ct, y,
                                                                         lax.zeros_like_array(y))
    return ct_x, None, ct


def _batch(vector_arg_values, batch_axes):
    assert batch_axes[0] == batch_axes[1] == batch_axes[2]
    return multiply_add_prim(*vector_arg_values), batch_axes[0]


ad.primitive_jvps[multiply_add_p] = _jvp
ad.primitive_transposes[multiply_add_p] = _transpose
batching.primitive_batchers[multiply_add_p] = _batch


def test_user_primitive_through_every_transformation():
    assert float(square_add_prim(2.0, 10.0)) == 14.0  # def_impl
    assert str(tx.make_jaxpr(square_add_prim)(2.0, 10.0)) == (
        "{ lambda ; a:f32[] b:f32[]. let c:f32[] = multiply_add a a b in (c,) }")
    assert float(tx.jit(square_add_prim)(2.0, 10.0)) == 14.0  # the registered lowering
    primal, tangent = tx.jvp(square_add_prim, (2.0, 10.0), (1.0, 1.0))
    assert (float(primal), float(tangent)) == (14.0, 5.0)
    assert float(tx.grad(square_add_prim)(2.0, 10.0)) == 4.0  # the transpose rule
    assert float(tx.jit(tx.grad(square_add_prim))(2.0, 10.0)) == 4.0
    xs, ys = np.array([2.0, 3.0], np.float32), np.array([10.0, 20.0], np.float32)
    assert np.asarray(tx.vmap(square_add_prim)(xs, ys)).tolist() == [14.0, 29.0]
    assert np.asarray(tx.jit(tx.vmap(square_add_prim))(xs, ys)).tolist() == [14.0, 29.0]
    assert core.USER_PRIMITIVES["multiply_add"] is multiply_add_p
    assert batching.primitive_batchers[multiply_add_p] is _batch


def test_lower_fun_and_missing_rules():
    cube_p = core.Primitive("cube_user")
    cube_p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
    with pytest.raises(NotImplementedError, match="No lowering rule for primitive 'cube_user'"):
        tx.jit(lambda x: cube_p.bind(x))(2.0)
    mlir.register_lowering(cube_p, mlir.lower_fun(lambda x: x * x * x, multiple_results=False))
    assert float(tx.jit(lambda x: cube_p.bind(x))(2.0)) == 8.0
    with pytest.raises(NotImplementedError, match="Batching rule for 'cube_user'"):
        tx.vmap(lambda x: cube_p.bind(x))(np.ones(3, np.float32))
    bad_p = core.Primitive("bad_user")
    bad_p.def_abstract_eval(lambda x: 3)
    with pytest.raises(TypeError, match="must return a ShapedArray"):
        tx.make_jaxpr(lambda x: bad_p.bind(x))(1.0)


def _rule_arguments(core_, ad_, mlir_, api):
    """What JAX hands a user primitive's rules (the primitives page prints them): tuples of
    primals and tangents, a literal operand as its value, Zero and UndefinedPrimal with the
    aval's str (``~float32[]`` when weakly typed); errors of missing rules."""
    seen = []
    p = core_.Primitive("scaled_add_seen")
    out = [mlir_.register_lowering(p, lambda ctx, x, y: [x], platform="cpu")]
    for thunk in (lambda: p.bind(1.0, 2.0), lambda: api.jit(lambda x: p.bind(x, x))(1.0)):
        try:
            thunk()
        except NotImplementedError as e:
            out.append(str(e))
    p.def_impl(lambda x, y: x * 2.0 + y)
    p.def_abstract_eval(lambda x, y: api.core.ShapedArray(x.shape, x.dtype))

    def jvp(primals, tangents):
        seen.append((type(primals).__name__, type(tangents).__name__, repr(tangents[1])))
        x, y = primals
        xt, yt = tangents
        yt = 0.0 if type(yt) is ad_.Zero else yt
        return p.bind(x, y), p.bind(xt, yt)

    def transpose(ct, x, y):
        seen.append((repr(x), str(y)))  # JAX: TypedFloat(0.0, ...), whose str is 0.0
        return p.bind(ct, 0.0), None
    ad_.primitive_jvps[p] = jvp
    ad_.primitive_transposes[p] = transpose
    out.append(float(api.grad(lambda x: p.bind(x, 3.0))(1.0)))
    out.append(repr(ad_.UndefinedPrimal(api.core.ShapedArray((), np.float32, weak_type=True))))
    return out, seen


def test_user_rules_get_what_jax_hands_them():
    ours = _rule_arguments(core, ad, mlir, tx)
    theirs = _rule_arguments(jcore, jax.interpreters.ad, jax.interpreters.mlir, jax)
    assert ours == theirs
    assert ours[0][:3] == [None, "Evaluation rule for 'scaled_add_seen' not implemented",
                           "Abstract evaluation for 'scaled_add_seen' not implemented"]


def test_weakly_typed_aval_str():
    assert str(tx.core.ShapedArray((), np.float32, weak_type=True)) == "~float32[]"
    assert str(tx.core.ShapedArray((2,), np.int32)) == "int32[2]"
    assert str(ad.Zero(tx.core.ShapedArray((), np.float32, weak_type=True))) == "Zero(~float32[])"


def _var_and_literal_reprs(api, np_):
    """The custom-interpreter notebook prints ``eqn.invars``: Var reprs with long dtype
    names, weakly typed int/complex literals as JAX's TypedInt/TypedComplex."""
    import re
    out = []
    for f, a in [(lambda x: x + 1, 5), (lambda x: x * 2.5, 1.0), (lambda x: x + 1j, 1.0),
                 (lambda x: x + np.int32(3), 5), (lambda x: x * 2, np_.int8(1))]:
        j = api.make_jaxpr(f)(a).jaxpr
        out.append(re.sub(r"id=\d+", "id=N", repr(([e.invars for e in j.eqns], j.invars))))
    return out


def test_var_and_literal_reprs_match_jax():
    assert _var_and_literal_reprs(tx, jnp) == _var_and_literal_reprs(jax, jjnp)


def _batching_view(api, batching_):
    """The primitives page's helper spots vmap tracers by 'batching.BatchTracer' in the
    class path, and prints the batching rule's arguments (tuples, as JAX passes them)."""
    seen = []
    p = (jcore if api is jax else core).Primitive("twice_batched_view")
    p.def_impl(lambda x: x * 2)
    p.def_abstract_eval(lambda x: x)

    def rule(args, dims):
        seen.append((type(args).__name__, type(dims).__name__, dims))
        return p.bind(*args), dims[0]
    batching_.primitive_batchers[p] = rule

    def f(x):
        seen.append("batching.BatchTracer" in str(type(x)))
        return p.bind(x)
    api.vmap(f)(np.arange(2.0, dtype=np.float32))
    return seen


def test_batching_rules_and_tracers_look_as_in_jax():
    assert _batching_view(tx, batching) == _batching_view(jax, jax.interpreters.batching)


def test_eval_jaxpr_returns_literal_outputs_as_values():
    """A jaxpr whose output is a literal gives its value (as JAX's eval_jaxpr), not the IR
    atom: closure_convert's function returns it, and ravel_pytree/odeint consume it."""
    def f(x):
        return x, 0.0, jnp.float32(1)
    closed = tx.make_jaxpr(f)(1.)
    ours = tx.core.eval_jaxpr(closed.jaxpr, closed.consts, 2.)
    jclosed = jax.make_jaxpr(lambda x: (x, 0.0, jjnp.float32(1)))(1.)
    theirs = jax.core.eval_jaxpr(jclosed.jaxpr, jclosed.consts, 2.)
    assert [float(o) for o in ours] == [float(t) for t in theirs] == [2., 0., 1.]
    assert [np.result_type(o) for o in ours[1:]] == [np.float64, np.float32]
    converted, consts = tx.closure_convert(f, 1.)
    out = converted(3.)
    assert [float(o) for o in out] == [3., 0., 1.] and consts == []
    assert all(hasattr(o, "dtype") or isinstance(o, float) for o in out)

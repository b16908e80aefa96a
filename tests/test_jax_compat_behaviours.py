"""Behaviours that libraries (optax, chex, flax) rely on, each pinned against JAX 0.10.2
(issue #28: running their suites with traxla standing in for jax exposed these)."""
import copy
import pickle

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import lax as tlax
from traxla.tracer import Tracer

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _same(ours, theirs, rtol=1e-6):
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert getattr(ours, "weak_type", None) == getattr(theirs, "weak_type", None)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=1e-6)


def _rec(theirs):
    """A JAX result with its weak type, for ``jax_side`` (a stored array has no weak_type)."""
    return theirs, getattr(theirs, "weak_type", None)


def _same_as(ours, rec, rtol=1e-6):
    """``_same`` against a stored ``_rec``."""
    theirs, weak = rec
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert getattr(ours, "weak_type", None) == weak
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=1e-6)


# -- 1. isinstance(x, jax.Array) --------------------------------------------------------

def _seen_under(api, np_, transform):
    """isinstance of the traced argument, as each transform sees it."""
    seen = []

    def f(x):
        seen.append((isinstance(x, api.Array), isinstance(x, np_.ndarray)))
        return x.sum()
    {"jit": api.jit(f), "grad": api.grad(f), "vmap": api.vmap(f),
     "jvp": lambda x: api.jvp(f, (x,), (x,)),
     "make_jaxpr": api.make_jaxpr(f)}[transform](np_.ones(3))
    return seen


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap", "jvp", "make_jaxpr"])
def test_tracers_are_arrays_under_every_transform(transform, jax_side):
    assert _seen_under(traxla, tnp, transform) == [
        tuple(pair) for pair in jax_side(lambda: _seen_under(jax, jnp, transform))]
    assert _seen_under(traxla, tnp, transform)[0] == (True, True)


@pytest.mark.parametrize("value", [np.ones(3), np.float32(1), 1.0, 3, True, [1.0], None, "a"])
def test_host_values_are_not_arrays(value):
    assert isinstance(value, traxla.Array) is isinstance(value, jax.Array) is False


def test_device_arrays_and_keys_are_arrays_and_tracer_is_no_subclass():
    for x in (tnp.ones(3), traxla.random.key(0), traxla.device_put(np.int8(1))):
        assert isinstance(x, traxla.Array) and isinstance(x, tnp.ndarray)
    assert issubclass(type(tnp.ones(3)), traxla.Array)
    assert not issubclass(Tracer, traxla.Array)  # an instance check only, as JAX's
    assert type(tnp.ones(3)).__name__ == type(jnp.ones(3)).__name__ == "ArrayImpl"
    assert tnp.ndarray is traxla.Array


def test_tree_filtered_by_isinstance_array_gets_the_right_gradient(jax_side):
    """The silent failure of the issue: a loss that keeps the leaves that are Arrays
    (as optax/equinox filter parameters) saw none under grad and returned zeros."""
    def loss(api, np_, params, config):
        leaves = api.tree_util.tree_leaves((params, config))
        arrays = [v for v in leaves if isinstance(v, api.Array)]  # config's ints drop out
        return sum(np_.sum(a ** 2) for a in arrays) + 0.0 * params["w"].sum()
    config = {"layers": 2, "name": 3}
    ours = traxla.grad(lambda p: loss(traxla, tnp, p, config))({"w": tnp.arange(3.0)})
    theirs = jax_side(lambda: _rec(jax.grad(lambda p: loss(jax, jnp, p, config))(
        {"w": jnp.arange(3.0)})["w"]))
    _same_as(ours["w"], theirs)
    assert np.asarray(ours["w"]).tolist() == [0.0, 2.0, 4.0]


# -- 2. typed PRNG keys -----------------------------------------------------------------

_SUBDTYPE_ARGS = ["key", tnp.float32, tnp.bfloat16, "int4", "uint4", np.float32, float, int, bool,
                  complex, "float8_e4m3fn", np.dtype("int8"), None, "uint8", "array",
                  "prng_key", "extended", np.generic, np.complex64]
_SUBDTYPE_KINDS = ["integer", "unsignedinteger", "signedinteger", "floating", "inexact", "number",
                   "generic", "complexfloating", np.uint32, "extended", "prng_key", "key",
                   "float32", float, int, "bfloat16", np.bool_]


def _resolve(api, np_, spec):
    if isinstance(spec, str):
        if spec == "key":
            return api.random.key(0).dtype
        if spec == "array":
            return np_.ones(2)
        if spec in ("prng_key", "extended"):
            return getattr(api.dtypes, spec)
        if hasattr(np_, spec) and spec not in ("float32",):
            return getattr(np_, spec)
    if spec is tnp.float32:
        return np_.float32
    if spec is tnp.bfloat16:
        return np_.bfloat16
    return spec


def _subdtype_table(api, np_):
    table = []
    for a in _SUBDTYPE_ARGS:
        for b in _SUBDTYPE_KINDS:
            for fn in (np_.issubdtype, api.dtypes.issubdtype):
                table.append(fn(_resolve(api, np_, a), _resolve(api, np_, b)))
    return table


def test_issubdtype_of_keys_and_custom_dtypes_matches_jax(jax_side):
    assert _subdtype_table(traxla, tnp) == jax_side(lambda: _subdtype_table(jax, jnp))
    key = traxla.random.key(0)
    assert tnp.issubdtype(key.dtype, traxla.dtypes.prng_key)  # flax.nnx.Rngs asks this
    assert not tnp.issubdtype(key.dtype, tnp.integer)


def test_key_equality_and_order(jax_side):
    def checks(api):
        ks = api.random.split(api.random.key(0), 3)
        assert np.asarray(ks == ks[1]).tolist() == [False, True, False]
        assert np.asarray(api.jit(lambda a, b: a != b)(ks, ks[0])).tolist() == [False, True, True]
    checks(traxla)
    jax_side(lambda: checks(jax))  # JAX's side passed the same checks (stored)
    with pytest.raises(TypeError, match="lt does not accept dtype key<fry>"):
        traxla.random.key(0) < traxla.random.key(1)


_KEY_UPDATES = {
    "int": lambda np_, ks, k, K2: ks.at[1].set(k),
    "slice": lambda np_, ks, k, K2: ks.at[1:3].set(k),
    "fancy": lambda np_, ks, k, K2: ks.at[np_.array([0, 2])].set(ks[2:]),
    "2d": lambda np_, ks, k, K2: K2.at[1, 0].set(k),
    "2d row": lambda np_, ks, k, K2: K2.at[0].set(K2[1]),
    "drop": lambda np_, ks, k, K2: ks.at[9].set(k, mode="drop"),
    "clip": lambda np_, ks, k, K2: ks.at[9].set(k, mode="clip"),
}


def _key_update(api, np_, case, wrap):
    ks = api.random.split(api.random.key(0), 4)
    K2 = api.random.split(api.random.key(1), 6).reshape(2, 3)
    fn = lambda ks, k, K2: _KEY_UPDATES[case](np_, ks, k, K2)  # noqa: E731
    return np.asarray(api.random.key_data(wrap(api, fn)(ks, api.random.key(7), K2)))


@pytest.mark.parametrize("case", sorted(_KEY_UPDATES))
@pytest.mark.parametrize("wrap", [lambda api, f: f, lambda api, f: api.jit(f)], ids=["eager", "jit"])
def test_scatter_into_key_arrays_matches_jax(case, wrap, jax_side):
    # the scatter's update region was emitted on the key's data (tensor<2xui32>), which
    # MLIR verification refused
    theirs = jax_side(lambda: _key_update(jax, jnp, case, wrap))
    ours = _key_update(traxla, tnp, case, wrap)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


# -- 4. Array's Python protocols --------------------------------------------------------

@pytest.mark.parametrize("value, ndigits", [(2.567, None), (2.567, 2), (2.5, None), (-3.5, None),
                                           (7, None), ([1.25, 2.5], 1), (1.2345 + 2.5678j, 2)])
def test_round_of_an_array_matches_jax(value, ndigits, jax_side):
    ours = round(tnp.array(value), ndigits) if ndigits is not None else round(tnp.array(value))
    theirs = jax_side(lambda: _rec(round(jnp.array(value), ndigits) if ndigits is not None
                                   else round(jnp.array(value))))
    _same_as(ours, theirs)
    assert type(ours).__name__ == "ArrayImpl"


@pytest.mark.parametrize("decimals", [0, 1, 2])
def test_jnp_round_keeps_weak_type_and_rounds_complex(decimals, jax_side):
    for x in (2.567, np.array([1.25, 2.5], np.float16), np.array([1.2345 + 2.5678j], np.complex64)):
        _same_as(tnp.round(tnp.array(x), decimals),
                 jax_side(lambda: _rec(jnp.round(jnp.array(x), decimals))))


@pytest.mark.parametrize("make", [lambda np_: np_.arange(3.0), lambda np_: np_.array(2.0),
                                  lambda np_: np_.ones((2, 2), np_.bfloat16),
                                  lambda np_: np_.array([1, 2], np_.int8)])
def test_pickle_copy_and_deepcopy_give_equal_arrays(make):
    x = make(tnp)
    for y in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x), copy.deepcopy([x])[0]):
        assert type(y) is type(x) and y is not x
        _same(y, make(jnp))


def test_pickle_and_deepcopy_of_keys_keep_the_key_data():
    k = traxla.random.split(traxla.random.key(3), 2)
    for y in (pickle.loads(pickle.dumps(k)), copy.deepcopy(k)):
        assert y.dtype == k.dtype and y.shape == k.shape
        np.testing.assert_array_equal(traxla.random.key_data(y), traxla.random.key_data(k))


def test_unsafe_buffer_pointer_is_the_buffer_address():
    x = tnp.arange(4.0)
    ptr = x.unsafe_buffer_pointer()
    assert isinstance(ptr, int) and ptr != 0
    assert ptr == x.unsafe_buffer_pointer()
    assert ptr != tnp.arange(4.0).unsafe_buffer_pointer()
    with pytest.raises(TypeError, match="unhashable type"):
        hash(x)


# -- 6. complex numbers ------------------------------------------------------------------

_A = np.array([1 + 2j, 3 - 1j, 0.5j], np.complex64)
_B = np.array([2 - 1j, 1j, 4.0], np.complex64)
_COMPLEX_PRODUCTS = {
    "vdot": lambda np_, a, b: np_.vdot(a, b),
    "vdot 2d": lambda np_, a, b: np_.vdot(np_.outer(a, b), np_.outer(b, a)),
    "vecdot": lambda np_, a, b: np_.vecdot(a, b),
    "linalg.vecdot": lambda np_, a, b: np_.linalg.vecdot(a, b),
    "dot": lambda np_, a, b: np_.dot(a, b),
    "inner": lambda np_, a, b: np_.inner(a, b),
}


@pytest.mark.parametrize("name", sorted(_COMPLEX_PRODUCTS))
def test_complex_products_conjugate_as_jax(name, jax_side):
    # vdot/vecdot did not conjugate their first operand: silently wrong complex values
    _same_as(_COMPLEX_PRODUCTS[name](tnp, _A, _B),
             jax_side(lambda: _rec(_COMPLEX_PRODUCTS[name](jnp, _A, _B))), rtol=1e-5)


# -- 3. config contexts, *_like of ShapeDtypeStruct, result_type, stop_gradient ----------

@pytest.mark.parametrize("name", ["log_compiles", "debug_nans", "debug_infs", "enable_x64",
                                  "checking_leaks"])
def test_bool_flag_contexts_default_to_true(name):
    for api in (traxla, jax):
        with getattr(api, name)():
            flag = "check_tracer_leaks" if name == "checking_leaks" else name
            assert getattr(api.config, f"jax_{flag}") is True
        assert getattr(api.config, f"jax_{flag}") is False


def test_valued_flag_contexts_still_require_a_value():
    for api in (traxla, jax):
        with pytest.raises(TypeError, match="Context manager for numpy_rank_promotion config "
                                            "option requires an argument"):
            api.numpy_rank_promotion()


_LIKE = {
    "zeros_like": lambda np_, s: np_.zeros_like(s),
    "ones_like": lambda np_, s: np_.ones_like(s),
    "full_like": lambda np_, s: np_.full_like(s, 2),
    "full_like array fill": lambda np_, s: np_.full_like(s, np_.arange(s.shape[-1])),
    "empty_like shape": lambda np_, s: np_.empty_like(s).shape,
    "zeros_like dtype shape": lambda np_, s: np_.zeros_like(s, dtype="int32", shape=(4,)),
}


@pytest.mark.parametrize("name", sorted(_LIKE))
@pytest.mark.parametrize("shape, dtype", [((2, 3), "float32"), ((2,), "int8"), ((1,), "bfloat16")])
def test_like_functions_accept_shape_dtype_structs(name, shape, dtype, jax_side):
    ours = _LIKE[name](tnp, traxla.ShapeDtypeStruct(shape, dtype))
    theirs = jax_side(lambda: (lambda r: r if isinstance(r, tuple) else _rec(r))(
        _LIKE[name](jnp, jax.ShapeDtypeStruct(shape, dtype))))
    if isinstance(ours, tuple):
        assert ours == theirs
    else:
        _same_as(ours, theirs)


def test_like_functions_under_jit_stage_no_extra_equations():
    struct = (traxla.ShapeDtypeStruct((2,), "float32"), jax.ShapeDtypeStruct((2,), "float32"))
    assert (str(traxla.make_jaxpr(lambda: tnp.zeros_like(struct[0]))())
            == str(jax.make_jaxpr(lambda: jnp.zeros_like(struct[1]))()))


_RESULT_TYPE_ARGS = [(np.dtype("float32"),), (np.float32,), ("int8", "uint8"), (1.0,),
                     (1, np.int8), (float, int), (None,), (np.float16, 1j), (True, 1),
                     ("bfloat16", np.float16), ("int4",)]


@pytest.mark.parametrize("args", _RESULT_TYPE_ARGS, ids=str)
def test_result_type_of_dtypes_and_scalar_types(args):
    assert tnp.result_type(*args) == jnp.result_type(*args)
    assert (traxla.dtypes.result_type(*args, return_weak_type_flag=True)
            == jax.dtypes.result_type(*args, return_weak_type_flag=True))


def test_stop_gradient_maps_over_a_pytree(jax_side):
    def f(api, np_, x):
        tree = api.lax.stop_gradient({"a": x, "b": (x * 2, None), "k": api.random.key(0)})
        assert tree["b"][1] is None and tree["k"].dtype == api.random.key(0).dtype
        return tree["a"] * x + tree["b"][0]
    assert float(traxla.grad(lambda x: f(traxla, tnp, x))(3.0)) == 3.0
    assert jax_side(lambda: float(jax.grad(lambda x: f(jax, jnp, x))(3.0))) == 3.0
    assert (str(traxla.make_jaxpr(lambda x: tlax.stop_gradient((x, [x * 2])))(1.0))
            == jax_side(lambda: str(jax.make_jaxpr(lambda x: jax.lax.stop_gradient((x, [x * 2])))(
                1.0))))


# -- 5. einsum's _dot_general; no Literal reaches user code ------------------------------

def test_einsum_uses_the_dot_general_it_is_given(jax_side):
    calls = []

    def counting(api):
        def dot_general(lhs, rhs, dims, precision=None, preferred_element_type=None):
            calls.append(dims)
            return api.lax.dot_general(lhs, rhs, dims, precision,
                                       preferred_element_type=preferred_element_type)
        return dot_general
    a, b, c = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.ones((4,), np.float32)
    ours = tnp.einsum("ij,jk,k->i", a, b, c, _dot_general=counting(traxla))
    n_ours, calls[:] = len(calls), []
    theirs, n_theirs = jax_side(lambda: (
        _rec(jnp.einsum("ij,jk,k->i", a, b, c, _dot_general=counting(jax))), len(calls)))
    _same_as(ours, theirs)
    assert n_ours == n_theirs == 2


_CONSTANT_MAKERS = {
    "jnp.asarray dtype": lambda x: tnp.asarray(tnp.asarray(0.9), dtype=tnp.float32),
    "jnp.array dtype": lambda x: tnp.array(tnp.asarray(0.9), dtype=tnp.float32),
    "jnp.float32": lambda x: tnp.float32(tnp.asarray(2)),
    "lax.asarray": lambda x: tlax.asarray(2.0),
    "lax.convert_element_type": lambda x: tlax.convert_element_type(tnp.asarray(2), "float32"),
    "astype": lambda x: tnp.asarray(0.5).astype("float32"),
}


@pytest.mark.parametrize("name", sorted(_CONSTANT_MAKERS))
def test_constants_folded_under_jit_are_arrays_for_the_caller(name):
    # a folded constant came back as traxla's IR Literal, which the next operation refused
    seen = []

    def f(x):
        c = _CONSTANT_MAKERS[name](x)
        seen.append(isinstance(c, traxla.Array))
        return c * x + x * c
    out = traxla.jit(f)(2.0)
    assert seen == [True]
    expected = {"jnp.float32": 8.0, "lax.asarray": 8.0, "lax.convert_element_type": 8.0,
                "astype": 2.0}.get(name, 3.6)
    np.testing.assert_allclose(float(out), expected, rtol=1e-6)


# -- 6. gradients of complex functions ----------------------------------------------------

_Z = np.array([1 + 2j, 3 - 1j, 0j, -0.5j], np.complex64)
_W = np.array([2 - 1j, 1j, 4.0, 1 + 1j], np.complex64)
_COMPLEX_LOSSES = {
    "abs": lambda np_, z: np_.abs(z).sum(),
    "abs squared": lambda np_, z: (np_.abs(z) ** 2).sum(),
    "sign": lambda np_, z: np_.real(np_.sign(z) * np_.conj(z)).sum(),
    "angle": lambda np_, z: np_.angle(z + 0.1).sum(),
    "real": lambda np_, z: np_.real(z * _W).sum(),
    "imag": lambda np_, z: np_.imag(z * _W).sum(),
    "vdot": lambda np_, z: np_.real(np_.vdot(z, _W * z)),
    "norm": lambda np_, z: np_.linalg.norm(z + 1),
    # optax's complex L-BFGS: real inner products of conjugated vectors
    "lbfgs ratio": lambda np_, z: np_.real(np_.vdot(z, z)) / (1 + np_.abs(np_.vdot(_W, z))),
}


@pytest.mark.parametrize("name", sorted(_COMPLEX_LOSSES))
def test_complex_gradients_match_jax(name, jax_side):
    loss = _COMPLEX_LOSSES[name]
    grad, tangent = jax_side(lambda: (_rec(jax.grad(lambda z: loss(jnp, z))(_Z)),
                                      _rec(jax.jvp(lambda z: loss(jnp, z), (_Z,), (_W,))[1])))
    _same_as(traxla.grad(lambda z: loss(tnp, z))(_Z), grad, rtol=1e-5)
    _same_as(traxla.jvp(lambda z: loss(tnp, z), (_Z,), (_W,))[1], tangent, rtol=1e-5)


def test_abs_of_complex_jvp_jaxpr_matches_jax():
    assert (str(traxla.make_jaxpr(traxla.grad(lambda z: tnp.abs(z).sum()))(_Z))
            == str(jax.make_jaxpr(jax.grad(lambda z: jnp.abs(z).sum()))(_Z)))


# -- 7. leak checking, find_top_trace, api_util.debug_info ---------------------------------

_LEAKERS = {
    "jit": lambda api, np_, keep: api.jit(lambda x: keep.append(x) or x)(1.0),
    "make_jaxpr": lambda api, np_, keep: api.make_jaxpr(lambda x: keep.append(x) or x)(1.0),
    "vmap": lambda api, np_, keep: api.vmap(lambda x: keep.append(x) or x)(np_.ones(2)),
    "scan": lambda api, np_, keep: api.lax.scan(lambda c, x: (keep.append(x) or c, x), 0.0,
                                                np_.ones(2)),
}
_LEAK_KIND = {"jit": "DynamicJaxprTrace", "make_jaxpr": "DynamicJaxprTrace",
              "scan": "DynamicJaxprTrace", "vmap": "BatchTrace"}
_leaked: list = []  # a module global, so that the message can name it


@pytest.mark.parametrize("name", sorted(_LEAKERS))
def test_checking_leaks_raises_on_a_leaked_tracer(name):
    _leaked.clear()
    try:
        for api, np_ in ((traxla, tnp), (jax, jnp)):
            with pytest.raises(Exception, match=f"Leaked trace {_LEAK_KIND[name]}. Leaked "
                                                r"tracer\(s\):") as info:
                with api.checking_leaks():
                    _LEAKERS[name](api, np_, _leaked)
            assert f"is referred to by {__name__}._leaked" in str(info.value)
            _leaked.clear()
        _LEAKERS[name](traxla, tnp, _leaked)  # the flag off: no check
    finally:
        _leaked.clear()


def test_checking_leaks_is_quiet_without_a_leak():
    with traxla.checking_leaks():
        traxla.jit(lambda x: x * 2)(3.0)
        traxla.vmap(lambda x: tnp.sin(x))(tnp.ones(3))
        traxla.jit(traxla.grad(lambda x: tnp.sin(x) * 2))(3.0)
        cv = traxla.custom_vjp(lambda x: tnp.sin(x))
        cv.defvjp(lambda x: (cv(x), x), lambda r, ct: (tnp.cos(r) * ct,))
        traxla.jit(traxla.vmap(cv))(tnp.ones(2))
        # the linearization of a jit call matched residuals to the finished trace's tracers
        traxla.grad(traxla.jit(lambda x: tnp.sin(x) * x))(1.0)
        traxla.grad(traxla.checkpoint(lambda x: tnp.sin(x) * x))(1.0)


def test_find_top_trace_is_the_current_trace():
    from traxla.extend import core as tcore
    seen = []
    traxla.jit(lambda x: seen.append(tcore.find_top_trace((x,))) or x)(1.0)
    assert type(seen[0]).__name__ == "DynamicJaxprTrace"
    assert type(tcore.find_top_trace(())).__name__ == "EvalTrace"


def _f(x, y, *args, z=1, **kw):
    pass


def _g(a, /, b, *, c):
    pass


_DEBUG_INFO_CASES = [
    (_f, (1, {"a": 1.0}, 3), {"z": 2, "w": (1, 2)}, (0,), ()),
    (_f, (1, 2), {}, (), ()),
    (_g, (1, [2, 3]), {"c": {"q": 1, "p": 2}}, (), ("c",)),
    (_g, (1,), {}, (), ()),
    (lambda *a, **k: 0, (1, (2, 3)), {"b": 1, "a": 2}, (-1,), ()),
    (np.sin, (1.0,), {}, (), ()),
]


@pytest.mark.parametrize("case", range(len(_DEBUG_INFO_CASES)))
def test_api_util_debug_info_matches_jax(case):
    from jax._src import api_util as jax_api_util
    from traxla import api_util
    fun, args, kwargs, argnums, argnames = _DEBUG_INFO_CASES[case]
    ours = api_util.debug_info("jit", fun, args, kwargs, static_argnums=argnums,
                               static_argnames=argnames)
    theirs = jax_api_util.debug_info("jit", fun, args, kwargs, static_argnums=argnums,
                                     static_argnames=argnames)
    assert (ours.traced_for, ours.func_src_info, ours.func_name, ours.arg_names) == (
        theirs.traced_for, theirs.func_src_info, theirs.func_name, theirs.arg_names)
    assert ours.safe_arg_names(len(ours.arg_names)) == theirs.safe_arg_names(len(ours.arg_names))


def test_array_var_method_under_every_transformation():
    # the staging tracer's own slot was named "var" and shadowed the method
    import traxla
    import traxla.numpy as tnp
    x = np.arange(4.0, dtype=np.float32)
    assert float(traxla.jit(lambda v: v.var())(x)) == pytest.approx(np.var(x))
    assert float(traxla.jit(lambda v: v.var(axis=0, ddof=1))(x)) == pytest.approx(np.var(x, ddof=1))
    np.testing.assert_allclose(traxla.grad(lambda v: v.var())(x), 2 * (x - x.mean()) / 4,
                               rtol=1e-6)
    np.testing.assert_allclose(traxla.vmap(lambda v: v.var())(tnp.ones((2, 3))), [0.0, 0.0])


# -- 8. every jax.Array method on every tracer kind ---------------------------------------

_ARRAY_METHOD_CASES = {
    "copy": lambda x: x.copy(), "__copy__": lambda x: copy.copy(x),
    "deepcopy": lambda x: copy.deepcopy(x), "argpartition": lambda x: x.argpartition(2),
    "byteswap": lambda x: x.byteswap(), "searchsorted": lambda x: x.searchsorted(2.5),
    "choose": lambda x: (x.astype(int) % 2).choose([x, -x], mode="clip"),
    "compress": lambda x: x.compress(x > 2, size=3), "nonzero": lambda x: x.nonzero(size=2),
    "divmod": lambda x: divmod(x, 4.0), "rdivmod": lambda x: divmod(4.0, x + 1),
    "contains": lambda x: x.__contains__(3.0), "reversed": lambda x: list(reversed(x[:2])),
    "itemsize": lambda x: x * x.itemsize, "nbytes": lambda x: x * x.nbytes,
}


@pytest.mark.parametrize("transform", ["eager", "jit", "vmap", "grad"])
@pytest.mark.parametrize("name", list(_ARRAY_METHOD_CASES))
def test_array_methods_on_every_tracer_match_jax(name, transform, jax_side):
    f = _ARRAY_METHOD_CASES[name]

    def run(api, np_):
        x = np_.arange(6.0)
        if transform == "eager":
            return f(x)
        if transform == "jit":
            return api.jit(f)(x)
        if transform == "vmap":
            return api.vmap(lambda v: f(np_.stack([v, v + 1, v + 2])))(x)
        first = lambda out: out[0] if isinstance(out, (tuple, list)) else out  # noqa: E731
        return api.grad(lambda v: np_.sum(np_.asarray(first(f(v))).astype(float)))(x)

    if transform == "vmap" and name in ("compress", "nonzero", "reversed"):
        pytest.skip("data-dependent shape / Python list under vmap")
    ours, theirs = run(traxla, tnp), jax_side(lambda: run(jax, jnp))
    ours, theirs = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
        assert np.asarray(o).dtype == np.asarray(t).dtype
    if transform == "jit":
        assert str(traxla.make_jaxpr(f)(tnp.arange(6.0))) == jax_side(
            lambda: str(jax.make_jaxpr(f)(jnp.arange(6.0))))


def _errors_of(api, np_):
    out = []

    def probe(x):
        for thunk in (lambda: x.__setitem__(0, 1), lambda: x.tobytes(), lambda: x.tolist(),
                      lambda: x.item(), lambda: x.__dlpack__(), lambda: x.flat,
                      lambda: x.committed, lambda: x.sharding, lambda: x.block_until_ready(),
                      lambda: x.no_such_attribute, lambda: pickle.dumps(x),
                      lambda: x.reshape(2, 2).__contains__(1.0), lambda: "a" in x):
            try:
                thunk()
                out.append(None)
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e).replace(__file__, "F")))
        return x

    api.jit(probe)(np_.arange(4.0))
    return out


def test_tracer_refusals_match_jax():
    assert _errors_of(traxla, tnp) == _errors_of(jax, jnp)


def test_array_namespace_is_the_numpy_module():
    x = tnp.ones(2)
    assert x.__array_namespace__() is tnp and tnp.__array_api_version__ == jnp.__array_api_version__
    assert traxla.jit(lambda v: v * (v.__array_namespace__() is tnp))(x).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match=r"api_version='2023.12' is not available; available "
                                         r"versions are: \['2024.12'\]"):
        x.__array_namespace__(api_version="2023.12")


def test_concrete_array_protocols_match_jax(jax_side):
    fs = (lambda x: x.tobytes(), lambda x: x.reshape(2, 2).tobytes("F"), lambda x: 2.0 in x,
          lambda x: x.itemsize, lambda x: divmod(x, 3)[1].tolist())
    theirs = jax_side(lambda: [(lambda v: v.hex() if isinstance(v, bytes) else v)(f(jnp.arange(4.0)))
                               for f in fs])
    for f, want in zip(fs, theirs, strict=True):
        got = f(tnp.arange(4.0))
        assert (got.hex() if isinstance(got, bytes) else got) == want
    with pytest.raises(TypeError, match="JAX arrays are immutable and do not support in-place"):
        tnp.arange(4.0)[0] = 1


# -- 9. ordering of complex numbers: lexicographic (real, imag), as JAX's ----------------

_Z = np.array([1 + 2j, 1 - 1j, -1 + 0j, 0j, 1j], np.complex64)
_W = np.array([1 + 1j, 1 - 1j, -1 + 1j, 0j, -1j], np.complex64)


@pytest.mark.parametrize("name", ["greater", "greater_equal", "less", "less_equal", "maximum",
                                  "minimum", "fmax", "fmin"])
def test_complex_orderings_match_jax(name, jax_side):
    ours, theirs = getattr(tnp, name), getattr(jnp, name)
    eager, jitted, jaxpr, with_zero = jax_side(lambda: (
        _rec(theirs(_Z, _W)), _rec(jax.jit(theirs)(_Z, _W)), str(jax.make_jaxpr(theirs)(_Z, _W)),
        _rec(jax.jit(lambda z: theirs(z, 0))(_Z))))
    _same_as(ours(_Z, _W), eager)
    _same_as(traxla.jit(ours)(_Z, _W), jitted)
    assert str(traxla.make_jaxpr(ours)(_Z, _W)) == jaxpr
    _same_as(traxla.jit(lambda z: ours(z, 0))(_Z), with_zero)


def test_complex_operators_and_lax_max_match_jax(jax_side):
    for ours, theirs in ((lambda z: z > 0, lambda z: z > 0), (lambda z: z <= 1j, lambda z: z <= 1j),
                         (lambda z: tlax.max(z, z[::-1]), lambda z: jax.lax.max(z, z[::-1])),
                         (lambda z: tlax.min(z, 0j), lambda z: jax.lax.min(z, 0j))):
        eager, jitted = jax_side(lambda: (_rec(theirs(jnp.asarray(_Z))),
                                          _rec(jax.jit(theirs)(_Z))))
        _same_as(ours(tnp.asarray(_Z)), eager)
        _same_as(traxla.jit(ours)(_Z), jitted)
    with pytest.raises(ValueError, match="Please convert to a real value or array"):
        tnp.clip(tnp.asarray(_Z), 0, 1)


def test_argmax_of_complex_is_typed_but_not_lowered_as_jax():
    # JAX types argmax/argmin of any dtype; lowering compares with lax.gt/lt, which refuse complex
    for ours, theirs in ((tnp.argmax, jnp.argmax), (tnp.argmin, jnp.argmin)):
        assert str(traxla.make_jaxpr(ours)(_Z)) == str(jax.make_jaxpr(theirs)(_Z))
        with pytest.raises(TypeError) as mine:
            traxla.jit(ours)(_Z)
        with pytest.raises(TypeError) as want:
            jax.jit(theirs)(_Z)
        assert str(mine.value).split("\n")[0] == str(want.value).split("\n")[0]
def test_divmod_both_ways_eagerly_and_traced():
    # as JAX's Array: __divmod__ and __rdivmod__ give (floor_divide, remainder)
    a = tnp.array([7, -7])
    q, r = divmod(a, 3)
    assert q.tolist() == [2, -3] and r.tolist() == [1, 2]
    q, r = divmod(7, tnp.array(3))
    assert (int(q), int(r)) == (2, 1) and q.weak_type
    q, r = traxla.jit(lambda x: divmod(7.5, x))(tnp.array(2.0))
    assert (float(q), float(r)) == (3.0, 1.5)


def test_isclose_of_keys_is_equality():
    a, b = traxla.random.key(0), traxla.random.key(1)
    assert not bool(tnp.allclose(a, b)) and bool(tnp.isclose(a, a))
    assert bool(tnp.allclose(traxla.random.split(a), traxla.random.split(a)))


def test_debug_key_reuse_flag_only_off():
    with traxla.debug_key_reuse(False):
        assert traxla.config.jax_debug_key_reuse is False
    with pytest.raises(NotImplementedError, match="key reuse"):
        traxla.config.update("jax_debug_key_reuse", True)
    assert traxla.config.jax_debug_key_reuse is False


def test_array_copy_is_a_new_array_over_a_new_buffer():
    # as JAX's: jnp.array/jnp.copy copy (the copy can be donated apart from the original);
    # asarray and copy=False do not
    a = tnp.ones(3)
    b = tnp.copy(a)
    assert b is not a and b._buf is not a._buf and tnp.array(a) is not a
    assert tnp.asarray(a) is a and tnp.array(a, copy=False) is a
    out = traxla.jit(lambda s: [x + 1 for x in s], donate_argnums=0)([a, b])
    assert [o.tolist() for o in out] == [[2.0] * 3] * 2
    k = traxla.random.key(0)
    assert tnp.copy(k) is not k and tnp.copy(k).dtype == k.dtype
    assert traxla.jit(tnp.copy)(k).dtype == k.dtype


def test_a_traced_ref_is_an_array_instance():
    # as JAX's C++ check: every tracer is a jax.Array, a traced ref's too (flax tells refs
    # by isinstance(x, jax.Array | Ref) and the type of typeof(x))
    seen = []

    @traxla.jit
    def f(r):
        seen.append(isinstance(r, traxla.Array))
        seen.append(isinstance(traxla.new_ref(tnp.zeros(())), traxla.Array))
        return 1
    f(traxla.new_ref(tnp.ones(())))
    assert seen == [True, True]
    assert not isinstance(traxla.new_ref(tnp.ones(())), traxla.Array)

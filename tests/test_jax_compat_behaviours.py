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
def test_tracers_are_arrays_under_every_transform(transform):
    assert _seen_under(traxla, tnp, transform) == _seen_under(jax, jnp, transform)
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


def test_tree_filtered_by_isinstance_array_gets_the_right_gradient():
    """The silent failure of the issue: a loss that keeps the leaves that are Arrays
    (as optax/equinox filter parameters) saw none under grad and returned zeros."""
    def loss(api, np_, params, config):
        leaves = api.tree_util.tree_leaves((params, config))
        arrays = [v for v in leaves if isinstance(v, api.Array)]  # config's ints drop out
        return sum(np_.sum(a ** 2) for a in arrays) + 0.0 * params["w"].sum()
    config = {"layers": 2, "name": 3}
    ours = traxla.grad(lambda p: loss(traxla, tnp, p, config))({"w": tnp.arange(3.0)})
    theirs = jax.grad(lambda p: loss(jax, jnp, p, config))({"w": jnp.arange(3.0)})
    _same(ours["w"], theirs["w"])
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


def test_issubdtype_of_keys_and_custom_dtypes_matches_jax():
    assert _subdtype_table(traxla, tnp) == _subdtype_table(jax, jnp)
    key = traxla.random.key(0)
    assert tnp.issubdtype(key.dtype, traxla.dtypes.prng_key)  # flax.nnx.Rngs asks this
    assert not tnp.issubdtype(key.dtype, tnp.integer)


def test_key_equality_and_order():
    for api in (traxla, jax):
        ks = api.random.split(api.random.key(0), 3)
        assert np.asarray(ks == ks[1]).tolist() == [False, True, False]
        assert np.asarray(api.jit(lambda a, b: a != b)(ks, ks[0])).tolist() == [False, True, True]
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
def test_scatter_into_key_arrays_matches_jax(case, wrap):
    # the scatter's update region was emitted on the key's data (tensor<2xui32>), which
    # MLIR verification refused
    np.testing.assert_array_equal(_key_update(traxla, tnp, case, wrap),
                                  _key_update(jax, jnp, case, wrap))


# -- 4. Array's Python protocols --------------------------------------------------------

@pytest.mark.parametrize("value, ndigits", [(2.567, None), (2.567, 2), (2.5, None), (-3.5, None),
                                           (7, None), ([1.25, 2.5], 1), (1.2345 + 2.5678j, 2)])
def test_round_of_an_array_matches_jax(value, ndigits):
    ours = round(tnp.array(value), ndigits) if ndigits is not None else round(tnp.array(value))
    theirs = round(jnp.array(value), ndigits) if ndigits is not None else round(jnp.array(value))
    _same(ours, theirs)
    assert type(ours).__name__ == "ArrayImpl"


@pytest.mark.parametrize("decimals", [0, 1, 2])
def test_jnp_round_keeps_weak_type_and_rounds_complex(decimals):
    for x in (2.567, np.array([1.25, 2.5], np.float16), np.array([1.2345 + 2.5678j], np.complex64)):
        _same(tnp.round(tnp.array(x), decimals), jnp.round(jnp.array(x), decimals))


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
def test_complex_products_conjugate_as_jax(name):
    # vdot/vecdot did not conjugate their first operand: silently wrong complex values
    _same(_COMPLEX_PRODUCTS[name](tnp, _A, _B), _COMPLEX_PRODUCTS[name](jnp, _A, _B), rtol=1e-5)

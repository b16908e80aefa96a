"""The top level beyond the transformations (issue 12a): ``traxla.tree``, the
``tree_util`` additions, ``traxla.dtypes``, strict promotion, ``typing``,
``test_util``, ``errors``, device/process queries and the flag context managers.
JAX is the oracle wherever it gives an answer to compare."""
from __future__ import annotations

import dataclasses
import functools
import operator

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import traxla as tx
import traxla.numpy as jnp
from traxla import dtypes as tdt
from traxla import errors as terr


# -- traxla.tree ------------------------------------------------------------------------

TREES = [{"a": 1, "b": (2, 3)}, [1, (2, 3), [4, 5, 6]], (1, {"x": [2.0, 3.0]}, None)]


def test_tree_has_jax_tree_names():
    assert sorted(tx.tree.__all__) == sorted(n for n in dir(jax.tree) if not n.startswith("_"))


@pytest.mark.parametrize("tree", TREES)
def test_tree_functions_match_jax(tree):
    assert tx.tree.leaves(tree) == jax.tree.leaves(tree)
    assert tx.tree.map(lambda x: x * 2, tree) == jax.tree.map(lambda x: x * 2, tree)
    assert tx.tree.reduce(operator.add, tree) == jax.tree.reduce(operator.add, tree)
    assert (tx.tree.reduce_associative(operator.add, tree)
            == jax.tree.reduce_associative(operator.add, tree))
    assert tx.tree.all(tree) == jax.tree.all(tree)
    leaves, treedef = tx.tree.flatten(tree)
    assert tx.tree.unflatten(treedef, leaves) == tree
    assert str(tx.tree.structure(tree)) == str(jax.tree.structure(tree))
    paths = [(tx.tree_util.keystr(p), v) for p, v in tx.tree.leaves_with_path(tree)]
    assert paths == [(jax.tree_util.keystr(p), v) for p, v in jax.tree.leaves_with_path(tree)]
    mapped = tx.tree.map_with_path(lambda p, v: tx.tree_util.keystr(p), tree)
    assert mapped == jax.tree.map_with_path(lambda p, v: jax.tree_util.keystr(p), tree)


def test_tree_broadcast_and_reduce_associative():
    prefix, full = (1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))
    assert tx.tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)
    assert tx.tree_util.tree_broadcast(prefix, full) == (1, {"a": 2, "b": 2}, (3, 3))
    with pytest.raises(ValueError, match="pytree structure error"):
        tx.tree.broadcast((1, 2), [0, 0])
    order = []

    def op(a, b):
        order.append((a, b))
        return a + b
    assert tx.tree.reduce_associative(op, [1, 2, 3, 4]) == 10
    assert order == [(1, 2), (3, 4), (3, 7)]  # balanced, as JAX's parallel reduction
    with pytest.raises(TypeError, match="Must specify identity"):
        tx.tree.reduce_associative(operator.add, [])
    assert tx.tree.reduce_associative(operator.add, [], identity=0) == 0


def test_tree_transpose_and_static():
    outer, inner = tx.tree.structure([0, 0]), tx.tree.structure((0, 0))
    assert tx.tree.transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])

    @tx.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        name: str = tx.tree.static(default="add")
    leaves, treedef = tx.tree.flatten(Op(x=1.0))
    assert leaves == [1.0] and tx.tree.unflatten(treedef, [2.0]) == Op(2.0, "add")


def test_partial_is_a_pytree_through_jit():
    add_one = tx.tree_util.Partial(jnp.add, 1)
    call = tx.jit(lambda f, *args: f(*args))
    assert int(call(add_one, 2)) == 3
    assert int(call(tx.tree_util.Partial(jnp.add), 1, 2)) == 3
    leaves, _ = tx.tree.flatten(tx.tree_util.Partial(jnp.add, 1, 2))
    assert leaves == jax.tree.leaves(jax.tree_util.Partial(jjnp.add, 1, 2))
    inner = functools.partial(operator.mul, 3)
    p = tx.tree_util.Partial(inner, 2)  # a functools.partial stays the static function
    assert p() == 6 and tx.tree.leaves(p) == [2]
    assert tx.tree_util.KeyPath is not None and tx.tree_util.KeyEntry is not None


# -- traxla.dtypes ----------------------------------------------------------------------

def test_dtypes_has_jax_dtypes_names():
    assert sorted(tdt.__all__) == sorted(n for n in dir(jax.dtypes) if not n.startswith("_"))


DTYPE_ARGS = [(1, 2.0), (np.float16, 1.0), ("float64",), (None,), (int,), (np.int8, np.uint8),
              (np.int8, 3), (True, 1), (np.float32, 1j), ("bfloat16", np.float16)]


@pytest.mark.parametrize("args", DTYPE_ARGS)
def test_result_type_matches_jax(args):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = jax.dtypes.result_type(*args, return_weak_type_flag=True)
    assert tdt.result_type(*args, return_weak_type_flag=True) == expected
    assert tdt.result_type(*args) == expected[0]


def test_result_type_of_arrays_and_errors():
    assert tdt.result_type(jnp.ones(2, "int8"), 3) == jax.dtypes.result_type(
        jjnp.ones(2, "int8"), 3)
    with pytest.raises(ValueError, match="at least one array or dtype is required"):
        tdt.result_type()


def test_issubdtype_canonicalize_scalar_type_itemsize():
    key = tx.random.key(0)
    assert tdt.issubdtype(key.dtype, tdt.prng_key) and tdt.issubdtype(key.dtype, tdt.extended)
    for a, b in [("float32", tdt.extended), (tdt.bfloat16, np.floating),
                 (tdt.bfloat16, np.integer), ("int8", np.signedinteger), ("uint8", np.signedinteger),
                 (np.float32, np.inexact), ("complex64", np.floating)]:
        assert tdt.issubdtype(a, b) == jax.dtypes.issubdtype(a, b), (a, b)
    with pytest.raises(ValueError, match="extended dtype"):
        tdt.canonicalize_dtype(key.dtype)
    assert tdt.canonicalize_dtype(key.dtype, allow_extended_dtype=True) == key.dtype
    for d in ["int64", "float64", "complex128", "uint64", "bfloat16", "bool"]:
        assert tdt.canonicalize_dtype(d) == jax.dtypes.canonicalize_dtype(d)
        assert tdt.itemsize_bits(d) == jax.dtypes.itemsize_bits(d)
    for x in [jnp.ones(2), np.int8(1), True, 1j, jnp.ones(2, "uint8")]:
        y = jjnp.ones(2) if isinstance(x, tx.Array) and x.dtype == np.float32 else x
        assert tdt.scalar_type_of(x) == jax.dtypes.scalar_type_of(np.asarray(y))
    assert tdt.float0 == jax.dtypes.float0 and tx.float0 == jax.float0
    assert tdt.finfo(tdt.bfloat16).eps == jax.dtypes.finfo(jax.dtypes.bfloat16).eps
    assert tdt.iinfo("int8").max == 127


# -- strict promotion -------------------------------------------------------------------

STRICT_CASES = [
    (lambda m: m.ones(2, "float32") + 1, True),
    (lambda m: m.ones(2, "float32") + 1.5, True),
    (lambda m: m.ones(2, "int32") + 1, True),
    (lambda m: m.ones(2, "float32") + m.ones(2, "int32"), False),
    (lambda m: m.ones(2, "int32") + 1.0, False),
    (lambda m: m.ones(2, "float16") * m.ones(2, "float32"), False),
    (lambda m: m.ones(2, "int8") + m.ones(2, "int8"), True),
]


@pytest.mark.parametrize("case", range(len(STRICT_CASES)))
def test_strict_promotion_matches_jax(case):
    fn, ok = STRICT_CASES[case]
    with jax.numpy_dtype_promotion("strict"):
        if ok:
            expected = fn(jjnp)
        else:
            with pytest.raises(jax.dtypes.TypePromotionError):
                fn(jjnp)
    with tx.numpy_dtype_promotion("strict"):
        if ok:
            got = fn(jnp)
            assert got.dtype == expected.dtype and got.weak_type == expected.weak_type
        else:
            with pytest.raises(tdt.TypePromotionError,
                               match="no available implicit dtype promotion path when "
                                     "jax_numpy_dtype_promotion=strict"):
                fn(jnp)
    assert tx.numpy_dtype_promotion.value == "standard"
    assert fn(jnp).dtype == fn(jjnp).dtype  # standard again after the block


def test_promotion_config_and_errors():
    assert issubclass(tdt.TypePromotionError, ValueError)
    assert terr.TypePromotionError is tdt.TypePromotionError
    with pytest.raises(ValueError, match="new enum value must be in"):
        with tx.numpy_dtype_promotion("loose"):
            pass
    with pytest.raises(TypeError, match="requires an argument"):
        tx.numpy_dtype_promotion()
    tx.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        with pytest.raises(tdt.TypePromotionError):
            jnp.ones(2, "float32") + jnp.ones(2, "int32")
    finally:
        tx.config.update("jax_numpy_dtype_promotion", "standard")


# -- typing, errors -----------------------------------------------------------------------

def test_typing_names():
    from traxla.typing import ArrayLike, DTypeLike
    assert sorted(tx.typing.__all__) == sorted(n for n in dir(jax.typing) if not n.startswith("_"))
    for x in [jnp.ones(2), np.ones(2), np.float32(1), 1, 2.0, True, 1j]:
        assert isinstance(x, ArrayLike)
    for x in [[1, 2], "abc", None]:
        assert not isinstance(x, ArrayLike)
    seen = []

    @tx.jit
    def f(x):
        seen.append(isinstance(x, ArrayLike))
        return x
    f(1.0)
    assert seen == [True]
    assert DTypeLike is not None


def test_errors_has_jax_errors_names():
    names = [n for n in dir(jax.errors) if not n.startswith("_")]
    for n in names:
        assert hasattr(terr, n), n
        assert issubclass(getattr(terr, n), BaseException)
    for n in names:
        jax_bases = {b.__name__ for b in getattr(jax.errors, n).__mro__}
        ours = {b.__name__ for b in getattr(terr, n).__mro__}
        for builtin in ("TypeError", "IndexError", "ValueError", "RuntimeError"):
            assert (builtin in jax_bases) == (builtin in ours), (n, builtin)


def test_nonconcrete_boolean_index_error_is_the_errors_class():
    with pytest.raises(terr.NonConcreteBooleanIndexError,
                       match="Array boolean indices must be concrete; got bool"):
        tx.jit(lambda x: x[x > 0])(jnp.ones(3))


def test_jax_runtime_error_is_what_xla_raises():
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'bogus_opt'"):
        jax.jit(lambda a: a + 1, compiler_options={"bogus_opt": 1})(1.0)
    with pytest.raises(terr.JaxRuntimeError, match="No such compile option: 'bogus_opt'"):
        tx.jit(lambda a: a + 1, compiler_options={"bogus_opt": 1})(1.0)
    assert issubclass(terr.JaxRuntimeError, RuntimeError)


# -- devices, processes, device_get, live_arrays --------------------------------------

def test_device_and_process_queries():
    assert tx.device_count() == len(tx.devices()) == tx.local_device_count() >= 1
    assert tx.device_count("cpu") == len(tx.devices("cpu"))
    assert tx.process_index() == 0 and tx.process_count() == 1
    assert tx.process_indices() == [0]


def test_device_get_and_live_arrays():
    tree = {"a": jnp.arange(3), "b": (2.0, np.ones(2))}
    out = tx.device_get(tree)
    assert type(out["a"]) is np.ndarray and out["a"].tolist() == [0, 1, 2]
    assert out["b"][0] == 2.0 and type(out["b"][1]) is np.ndarray
    with pytest.raises(terr.TracerArrayConversionError):
        tx.jit(lambda x: tx.device_get(x))(1.0)
    marker = jnp.full((7, 3), 5.0)
    assert any(a is marker for a in tx.live_arrays())
    marker.delete()
    assert not any(a is marker for a in tx.live_arrays())


# -- flag context managers -----------------------------------------------------------------

def test_enable_x64_context():
    assert jnp.ones(2, "float64").dtype == np.float32
    with tx.enable_x64():
        assert jnp.ones(2, "float64").dtype == np.float64
        assert tx.enable_x64.value is True
        with tx.enable_x64(False):
            assert jnp.ones(2, "int64").dtype == np.int32
    assert tx.enable_x64.value is False
    with pytest.raises(TypeError, match="bool\\(\\) not supported"):
        bool(tx.enable_x64)


def test_default_matmul_precision_and_device():
    with tx.default_matmul_precision("float32"):
        assert tx.default_matmul_precision.value == "float32"
        assert float(jnp.dot(jnp.ones(3), jnp.ones(3))) == 3.0
    assert tx.default_matmul_precision.value is None
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        with tx.default_matmul_precision("fp7"):
            pass
    with tx.default_device(tx.devices()[0]):
        assert float(jnp.ones(()) + 1) == 2.0
    with tx.default_device("cpu"):
        pass


def test_ensure_compile_time_eval_matches_jax():
    def make(np_, api):
        def f(x):
            with api.ensure_compile_time_eval():
                y = np_.sin(1.0) + np_.arange(3)
                concrete = type(y).__name__
                z = x + 1
            return y + z, concrete
        return f
    seen = []

    def run(api, np_):
        f = make(np_, api)

        def g(x):
            out, concrete = f(x)
            seen.append(concrete)
            return out
        return str(api.make_jaxpr(g)(1.0))
    assert run(tx, jnp) == run(jax, jjnp)
    assert seen == ["ArrayImpl", "ArrayImpl"]  # a concrete device array, named as JAX names it
    with tx.ensure_compile_time_eval():  # outside any trace: plain eager evaluation
        assert float(jnp.ones(()) * 2) == 2.0


# -- test_util -------------------------------------------------------------------------------

def test_check_grads_passes_on_correct_derivatives():
    assert sorted(tx.test_util.__all__) == ["check_grads", "check_jvp", "check_vjp"]
    tx.test_util.check_grads(lambda x: jnp.sin(x) * x, (np.float32(1.3),), order=2)
    tx.test_util.check_grads(lambda x, y: jnp.sum(jnp.tanh(x) * y),
                             (np.ones(3, np.float32), np.full(3, 0.5, np.float32)), order=1,
                             modes=["rev", "lin"])


def test_check_grads_catches_a_wrong_derivative():
    @tx.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), 2.0 * jnp.cos(x) * t  # wrong by a factor of 2
    with pytest.raises(AssertionError, match="tangent"):
        tx.test_util.check_jvp(f, functools.partial(tx.jvp, f), (np.float32(0.3),))
    with pytest.raises(AssertionError, match="cotangent projection"):
        tx.test_util.check_vjp(f, functools.partial(tx.vjp, f), (np.float32(0.3),))


# -- host_* aliases, environment info, arrays from blocks, enable_checks -----------------

def test_host_aliases_version_and_environment_info():
    assert (tx.host_id(), tx.host_count(), tx.host_ids()) == (0, 1, [0])
    assert tx.version.__version__ == tx.__version__
    info = tx.print_environment_info(return_string=True)
    assert "jaxlib:" in info and "numpy:" in info and "device info: cpu-" in info


def test_make_array_from_blocks_on_one_device():
    s = tx.sharding.make_single_device_sharding(tx.devices()[0])
    assert isinstance(s, tx.sharding.Sharding)
    assert isinstance(jnp.ones(2).sharding, tx.sharding.Sharding)
    host = np.arange(12.0).reshape(4, 3)
    a = tx.make_array_from_callback((4, 3), s, lambda idx: host[idx])
    assert np.asarray(a).tolist() == host.tolist() and a.dtype == np.float32
    b = tx.make_array_from_single_device_arrays((2,), s, [np.ones(2)])
    assert np.asarray(b).tolist() == [1.0, 1.0]
    c = tx.make_array_from_process_local_data(s, np.arange(3))
    assert np.asarray(c).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="global_shape"):
        tx.make_array_from_process_local_data(s, np.arange(3), (4,))
    x = jnp.ones(3)
    assert tx.copy_to_host_async(x) is x


def test_enable_checks_type_checks_traced_programs(monkeypatch):
    from traxla.ir import checker
    seen = []
    original = checker.check_jaxpr
    monkeypatch.setattr(checker, "check_jaxpr", lambda j: seen.append(j) or original(j))
    with tx.enable_checks():
        assert float(tx.jit(lambda x: jnp.cos(x) * 3)(0.0)) == 3.0
    assert len(seen) == 1
    assert float(tx.jit(lambda x: jnp.cos(x) * 4)(0.0)) == 4.0
    assert len(seen) == 1 and tx.enable_checks.value is False


_jitted_add = tx.jit(lambda a, b: a + b)


def test_jit_retraces_when_the_promotion_mode_changes():
    f32, i32 = jnp.ones(2, "float32"), jnp.ones(2, "int32")
    assert _jitted_add(f32, i32).dtype == np.float32  # standard: cached trace and executable
    with tx.numpy_dtype_promotion("strict"):
        with pytest.raises(tdt.TypePromotionError):
            _jitted_add(f32, i32)
    assert _jitted_add(f32, i32).dtype == np.float32


def test_config_state_truth_value_is_refused_as_jax():
    jax = pytest.importorskip("jax")
    with pytest.raises(TypeError) as mine:
        bool(tx.enable_x64)
    with pytest.raises(TypeError) as theirs:
        bool(jax.enable_x64)
    assert str(mine.value) == str(theirs.value)

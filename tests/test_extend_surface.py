"""``traxla.extend`` against JAX 0.10.2's ``jax.extend``: every public name of every module
with the same kind, ``core.primitives`` as traxla's own primitive objects (bind eagerly and
under jit, grad, vmap; ``call_p``, ``closed_call_p``, ``jit_p`` staged as JAX prints them),
``linear_util``'s transformations and cache, and the backend, random, sharding, mlir,
lowering, xla and source_info_util modules, each compared with JAX's."""
from __future__ import annotations

import importlib
import inspect
import types
import warnings

import numpy as np
import pytest

import traxla
import traxla.extend  # noqa: F401
import traxla.numpy as tnp
from traxla.ir.primitive import ALL_PRIMITIVES
from traxla.extend import core as tcore
from traxla.extend import linear_util as tlu

jax = pytest.importorskip("jax")
import jax.extend  # noqa: E402,F401
import jax.numpy as jnp  # noqa: E402
from jax.extend import core as jcore  # noqa: E402
from jax.extend import linear_util as jlu  # noqa: E402
from jax._src import api_util as japi_util  # noqa: E402

_MODULES = ["extend", "extend.backend", "extend.core", "extend.core.primitives",
            "extend.ifrt_programs", "extend.linear_util", "extend.lowering", "extend.mlir",
            "extend.mlir.ir", "extend.mlir.passmanager", "extend.random", "extend.sharding",
            "extend.source_info_util", "extend.xla"] + [
    "extend.mlir.dialects." + d for d in ("arith builtin chlo func math memref mpmd scf sdy "
                                          "sparse_tensor stablehlo vector").split()]
# Where traxla's kind differs from JAX's on purpose: JAX's ``Effects`` is ``set[Effect]``
# (a generic alias), traxla's the frozenset class; JAX's trace contexts are classes,
# traxla's functions returning context managers (used identically: ``with f(trace):``).
_SAME_USE = {("extend.core", "Effects"), ("extend.core", "set_current_trace"),
             ("extend.core", "take_current_trace")}
_OUT_OF_SCOPE = {"pallas"}  # jax.extend.pallas: traxla has no Pallas


def _kind(v):
    if isinstance(v, types.ModuleType):
        return "module"
    if inspect.isclass(v):
        return "class"
    if isinstance(v, (jcore.Primitive, tcore.Primitive)):
        return "primitive"
    if callable(v):
        return "callable"
    return type(v).__name__


def test_every_public_name_exists_with_jax_kind():
    missing, kinds = [], []
    for name in _MODULES:
        jm = importlib.import_module("jax." + name)
        tm = importlib.import_module("traxla." + name)
        for attr in sorted(dir(jm)):
            if attr.startswith("_") or attr in _OUT_OF_SCOPE:
                continue
            if not hasattr(tm, attr):
                missing.append(f"{name}.{attr}")
            elif (name, attr) not in _SAME_USE and _kind(getattr(jm, attr)) != _kind(
                    getattr(tm, attr)):
                kinds.append(f"{name}.{attr}: {_kind(getattr(jm, attr))} vs "
                             f"{_kind(getattr(tm, attr))}")
    assert missing == [] and kinds == []


# -- core.primitives ---------------------------------------------------------------------------

def test_core_primitives_are_traxlas_own_with_jax_names():
    from jax.extend.core import primitives as jp
    from traxla.extend.core import primitives as tp
    names = sorted(n for n in dir(jp) if n.endswith("_p"))
    assert sorted(n for n in dir(tp) if n.endswith("_p")) == names
    for n in names:
        prim = getattr(tp, n)
        assert ALL_PRIMITIVES[prim.name] is prim, n
        assert prim.name == getattr(jp, n).name, n
        assert prim.multiple_results == getattr(jp, n).multiple_results, n
    # the objects traxla's own namespaces bind
    assert tp.add_p is traxla.lax.add_p and tp.jit_p is traxla.lax.jit_p
    assert tp.cumsum_p is traxla.lax.cumsum_p and tp.sort_p is traxla.lax.sort_p
    assert tcore.primitives is tp  # the module, as JAX's


def _bind_program(core_mod, np_):
    P = core_mod.primitives

    def f(x, y):
        a = P.sin_p.bind(x, accuracy=None)
        b = P.integer_pow_p.bind(a, y=2)
        c = P.add_p.bind(b, y)
        return P.reduce_sum_p.bind(c, axes=(0,), out_sharding=None)
    return f


def test_primitive_binds_eagerly_and_under_transformations_as_jax():
    x, y = np.linspace(0, 1, 3, dtype=np.float32), np.float32(1.5) * np.ones(3, np.float32)
    tf, jf = _bind_program(tcore, tnp), _bind_program(jcore, jnp)
    assert str(traxla.make_jaxpr(tf)(x, y)) == str(jax.make_jaxpr(jf)(x, y))
    np.testing.assert_allclose(tf(x, y), jf(x, y), rtol=1e-6)
    np.testing.assert_allclose(traxla.jit(traxla.grad(tf))(x, y), jax.grad(jf)(x, y),
                               rtol=1e-6)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(traxla.vmap(tf, (0, None))(xs, y),
                               jax.vmap(jf, (0, None))(xs, y), rtol=1e-6)


def _bind_cases():
    f32, i32, b = (np.ones((2, 3), np.float32), np.ones((2, 3), np.int32),
                   np.ones((2, 3), bool))
    c64 = np.ones((2, 3), np.complex64)
    cases = {n: ((f32,), {}) for n in (
        "abs acos acosh asin asinh atan atanh cbrt ceil cos cosh exp exp2 expm1 floor "
        "is_finite lgamma digamma log log1p logistic neg rsqrt sign sin sinh sqrt square tan "
        "tanh erf erfc erf_inv bessel_i0e bessel_i1e copy stop_gradient").split()}
    cases.update({n: ((c64,), {}) for n in ("real", "imag")})
    cases.update({n: ((f32, f32), {}) for n in (
        "add sub div max min pow rem atan2 nextafter igamma igammac igamma_grad_a polygamma "
        "zeta eq ne lt le gt ge complex").split()})
    cases.update({n: ((i32, i32), {}) for n in (
        "and or xor shift_left shift_right_arithmetic shift_right_logical").split()})
    cases.update({n: ((i32,), {}) for n in ("not", "population_count", "clz")})
    cases.update({n: ((f32,), {"axes": (1,), "out_sharding": None})
                  for n in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod")})
    cases.update({n: ((b,), {"axes": (0,)}) for n in ("reduce_and", "reduce_or")})
    cases.update({n: ((f32,), {"axes": (1,), "index_dtype": np.dtype(np.int32)})
                  for n in ("argmax", "argmin")})
    cases.update({n: ((f32,), {"axis": 1, "reverse": r}) for n, r in (
        ("cumsum", False), ("cumprod", False), ("cummax", True), ("cumlogsumexp", False))})
    cases.update({
        "integer_pow": ((f32,), {"y": 3}), "round": ((f32,), {"rounding_method": 0}),
        "convert_element_type": ((f32,), {"new_dtype": np.dtype(np.int32), "weak_type": False,
                                          "sharding": None}),
        "transpose": ((f32,), {"permutation": (1, 0)}),
        "reshape": ((f32,), {"new_sizes": (3, 2), "dimensions": None, "sharding": None}),
        "rev": ((f32,), {"dimensions": (0,)}),
        "squeeze": ((np.ones((1, 3), np.float32),), {"dimensions": (0,)}),
        "broadcast_in_dim": ((f32,), {"shape": (4, 2, 3), "broadcast_dimensions": (1, 2),
                                      "sharding": None}),
        "concatenate": ((f32, f32), {"dimension": 0}),
        "pad": ((f32, np.float32(0)), {"padding_config": ((1, 0, 0), (0, 1, 1))}),
        "select_n": ((b, f32, f32), {}),
        "clamp": ((np.float32(0), f32, np.float32(1)), {}),
        "slice": ((f32,), {"start_indices": (0, 1), "limit_indices": (2, 3), "strides": None}),
        "dynamic_slice": ((f32, np.int32(0), np.int32(1)), {"slice_sizes": (1, 2)}),
        "dynamic_update_slice": ((f32, np.ones((1, 2), np.float32), np.int32(0), np.int32(1)),
                                 {}),
        "iota": ((), {"dtype": np.dtype(np.int32), "shape": (4,), "dimension": 0,
                      "sharding": None}),
        "sort": ((f32,), {"dimension": 1, "is_stable": True, "num_keys": 1}),
        "top_k": ((f32,), {"k": 2, "axis": 1}),
        "cholesky": ((np.eye(3, dtype=np.float32),), {}),
        "dot_general": ((f32, np.ones((3, 2), np.float32)), {
            "dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
            "preferred_element_type": None, "out_sharding": None}),
        "conj": ((f32,), {"input_dtype": np.dtype(np.float32)}),
        "bitcast_convert_type": ((f32,), {"new_dtype": np.dtype(np.int32)}),
        "reduce_precision": ((f32,), {"exponent_bits": 5, "mantissa_bits": 10}),
        "threefry2x32": ((np.uint32(1), np.uint32(2), np.ones(4, np.uint32),
                          np.ones(4, np.uint32)), {}),
    })
    return cases


_WITH_ACCURACY = set("cbrt cos exp exp2 expm1 log log1p logistic rsqrt sin sqrt tan tanh".split())


def test_primitives_bound_by_hand_stage_as_jax():
    """A hundred of JAX's primitives bound with JAX's params: the same jaxpr text."""
    from jax.extend.core import primitives as jp
    from traxla.extend.core import primitives as tp
    diffs = []
    for name, (args, params) in _bind_cases().items():
        if name in _WITH_ACCURACY:
            params = dict(params, accuracy=None)
        jtext = str(jax.make_jaxpr(lambda *a: getattr(jp, name + "_p").bind(*a, **params))(*args))
        ttext = str(traxla.make_jaxpr(lambda *a: getattr(tp, name + "_p").bind(*a, **params))(
            *args))
        if jtext != ttext:
            diffs.append(f"{name}:\n{jtext}\n{ttext}")
    assert diffs == []


# -- call_p, closed_call_p, jit_p --------------------------------------------------------------

def _call_programs(core_mod, lu, api_util, np_):
    P = core_mod.primitives
    c = np.arange(3, dtype=np.float32)

    def body(x):
        return [np_.sin(x) * 2.0]
    dbg = api_util.debug_info("test", body, (1.0,), {})

    def g(x):
        return P.call_p.bind(x, subfuns=(lu.wrap_init(body, debug_info=dbg),))[0]

    return g, c, P


def _closed(make_jaxpr, np_, c):
    return make_jaxpr(lambda x: np_.sin(x) * 2.0 + c)(np.float32(1.5))


def _closed_call_fn(P, call_jaxpr):
    def h(x):
        return P.closed_call_p.bind(x, **P.closed_call_p.get_bind_params(
            {"call_jaxpr": call_jaxpr}))[0]
    return h


def test_call_and_closed_call_stage_and_transform_as_jax():
    x = np.float32(1.5)
    tg, c, tP = _call_programs(tcore, tlu, traxla.api_util, tnp)
    jg, _, jP = _call_programs(jcore, jlu, japi_util, jnp)
    assert str(traxla.make_jaxpr(tg)(x)) == str(jax.make_jaxpr(jg)(x))
    for t_val, j_val in [(tg(x), jg(x)), (traxla.jit(traxla.grad(tg))(x), jax.jit(jax.grad(jg))(x)),
                         (traxla.vmap(tg)(c), jax.jit(jax.vmap(jg))(c))]:
        np.testing.assert_allclose(t_val, j_val, rtol=1e-6)

    tcj, jcj = _closed(traxla.make_jaxpr, tnp, c), _closed(jax.make_jaxpr, jnp, c)

    th, jh = _closed_call_fn(tP, tcj), _closed_call_fn(jP, jcj)
    assert str(traxla.make_jaxpr(th)(x)) == str(jax.make_jaxpr(jh)(x))
    assert traxla.jit(th).lower(x).as_text() == jax.jit(jh).lower(x).as_text()
    for t_val, j_val in [(th(x), jh(x)),
                         (traxla.jit(traxla.jacfwd(th))(x), jax.jit(jax.jacfwd(jh))(x)),
                         (traxla.jit(traxla.jacrev(th))(x), jax.jit(jax.jacrev(jh))(x)),
                         (traxla.jit(traxla.vmap(th))(c), jax.jit(jax.vmap(jh))(c))]:
        np.testing.assert_allclose(t_val, j_val, rtol=1e-6)
    # an equation's params back as a function: the equation re-runs
    eqn = traxla.make_jaxpr(th)(x).eqns[0]
    outs = eqn.primitive.bind(c, x, **eqn.primitive.get_bind_params(eqn.params))
    np.testing.assert_allclose(outs[0], jh(x), rtol=1e-6)
    with pytest.raises(TypeError, match="subfuns"):
        tP.call_p.bind(x, subfuns=(lambda x: x,))


def test_jit_p_bind_takes_jax_equation_params():
    x = np.float32(0.5)
    jeqn = jax.make_jaxpr(jax.jit(jnp.sin))(x).eqns[0]
    tjaxpr = traxla.make_jaxpr(tnp.sin)(x)
    params = {k: v for k, v in jeqn.params.items() if k != "jaxpr"}
    params.update(in_shardings=(None,), out_shardings=(None,), ctx_mesh=None)
    P = tcore.primitives

    def f(x):
        return P.jit_p.bind(x, jaxpr=tjaxpr, **params)[0]
    assert str(traxla.make_jaxpr(f)(x)) == str(jax.make_jaxpr(
        lambda x: jcore.primitives.jit_p.bind(x, **jeqn.params)[0])(x))
    np.testing.assert_allclose(traxla.grad(f)(x), np.cos(x), rtol=1e-6)
    inline = dict(params, inline=True)
    assert str(traxla.make_jaxpr(lambda x: P.jit_p.bind(x, jaxpr=tjaxpr, **inline))(x)) == \
        str(jax.make_jaxpr(lambda x: jcore.primitives.jit_p.bind(
            x, **dict(jeqn.params, inline=True)))(x))
    with pytest.raises(NotImplementedError, match="donated_invars"):
        P.jit_p.bind(x, jaxpr=tjaxpr, **dict(params, donated_invars=(True,)))


# -- core extras -------------------------------------------------------------------------------

def test_core_extras_as_jax():
    assert tcore.TraceTag() == tcore.TraceTag() and hash(tcore.TraceTag()) == hash(
        tcore.TraceTag())
    aval = tcore.ShapedArray((2,), np.float32)
    assert isinstance(tcore.gensym()(aval), tcore.Var)
    w = traxla.tracer.linear_util.wrap_init(lambda a, b: [a + b])
    assert tcore.call_impl(w, 1, 2, name="x") == [3]
    from jax._src import core as jsrc_core
    from traxla._src import core as tsrc_core
    for src_core, P in [(tsrc_core, tcore.primitives), (jsrc_core, jcore.primitives)]:
        assert isinstance(P.call_p, src_core.CallPrimitive) and src_core.call_p is P.call_p
        assert isinstance(P.closed_call_p, src_core.ClosedCallPrimitive)
        assert not isinstance(P.call_p, src_core.ClosedCallPrimitive)
    assert str(traxla.lax.create_token().aval) == "AbstractToken()"
    assert isinstance(traxla.lax.create_token(), tcore.Token)
    assert isinstance(traxla.lax.create_token().aval, tcore.AbstractToken)
    seen = {}

    def f(x):
        seen["vmap"] = tcore.unsafe_am_i_under_a_vmap_DO_NOT_USE()
        seen["jit"] = tcore.unsafe_am_i_under_a_jit_DO_NOT_USE()
        seen["axes"] = tcore.unsafe_get_axis_names_DO_NOT_USE()
        seen["env"] = tcore.nonempty_axis_env_DO_NOT_USE()
        return x
    traxla.jit(traxla.vmap(f, axis_name="i"))(np.zeros(2, np.float32))
    assert seen == {"vmap": True, "jit": True, "axes": ["i"], "env": True}
    f(1.0)
    assert seen == {"vmap": False, "jit": False, "axes": [], "env": False}


# -- linear_util -------------------------------------------------------------------------------

def _linear_util_uses(lu, api_util):
    """What libraries do with linear_util: results the same under JAX's and traxla's."""
    out = {}

    def f(x, y=1.0):
        return [x * 2.0 + y, x]
    dbg = api_util.debug_info("test", f, (1.0,), {})

    @lu.transformation
    def scale(c, *args):
        outs = yield args, {}
        yield [o * c for o in outs]

    @lu.transformation_with_aux
    def count_outs(*args):
        outs = yield args, {}
        yield outs, len(outs)

    def add_one(inner, *args):
        return [o + 1 for o in inner(*args)]

    def with_aux(inner, store, tag, *args):
        outs = inner(*args)
        store.store((tag, len(outs)))
        return outs

    base = lu.wrap_init(f, {"y": 3.0}, debug_info=dbg)
    out["scaled"] = scale(base, 10.0).call_wrapped(1.0)
    g, aux = count_outs(lu.transformation2(add_one)(base))
    out["aux"] = (g.call_wrapped(2.0), aux())
    h, aux2 = lu.transformation_with_aux2(with_aux)(base, "t")
    out["aux2"] = (h.call_wrapped(2.0), aux2())
    out["repr_core"] = repr(base).splitlines()[-1]
    out["eq"] = (scale(base, 2.0) == scale(base, 2.0), scale(base, 2.0) == scale(base, 3.0),
                 hash(scale(base, 2.0)) == hash(scale(base, 2.0)))

    calls = []

    @lu.cache
    def traced(fun, n):
        calls.append(n)
        return fun.call_wrapped(float(n))
    k1, a1 = count_outs(base)
    k2, a2 = count_outs(base)
    k3, a3 = count_outs(base)
    # a hit fills the new function's aux store from the first call's
    out["cache"] = (traced(k1, 1), traced(k2, 1), a2(), traced(k3, 2), list(calls), a3())

    def empty():
        raise lu.StoreException("Store empty")

    def full():
        return 5
    out["merge"] = [lu.merge_linear_aux(full, empty), lu.merge_linear_aux(empty, full)]
    for a, b in [(empty, empty), (full, full)]:
        try:
            lu.merge_linear_aux(a, b)
        except lu.StoreException as e:
            out["merge"].append(str(e))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lu.wrap_init(f)
    out["warns"] = [x.category.__name__ for x in w]
    return out


def test_linear_util_as_jax():
    assert _linear_util_uses(tlu, traxla.api_util) == _linear_util_uses(jlu, japi_util)


# -- backend, random, sharding -----------------------------------------------------------------

def test_backend_as_jax():
    from jax.extend import backend as jb
    from traxla.extend import backend as tb
    assert list(tb.backends()) == list(jb.backends()) == ["cpu"]
    assert tb.get_backend().platform == jb.get_backend().platform == "cpu"
    assert tb.get_backend("cpu") is tb.backends()["cpu"]
    assert tb.backend_xla_version() == jb.backend_xla_version()
    assert str(tb.get_default_device()) == str(jb.get_default_device())
    assert tb.ifrt_proxy is jb.ifrt_proxy
    for args in [(1, 1), (1, 2), (2, 1, np.array([[0], [1]]))]:
        t, j = tb.get_compile_options(*args), jb.get_compile_options(*args)
        assert (t.num_replicas, t.num_partitions) == (j.num_replicas, j.num_partitions)
        tbo, jbo = t.executable_build_options, j.executable_build_options
        assert (tbo.use_spmd_partitioning, tbo.memory_fitting_level, tbo.optimization_level) \
            == (jbo.use_spmd_partitioning, jbo.memory_fitting_level, jbo.optimization_level)
    with pytest.raises(ValueError, match="num_replicas"):
        tb.get_compile_options(3, 1, [0])
    cleared = []

    class Cache:
        def cache_clear(self):
            cleared.append(True)
    tb.register_backend_cache(Cache(), "test")
    traxla.clear_caches()
    assert cleared == [True]
    with pytest.raises(NotImplementedError, match="clear_backends"):
        tb.clear_backends()


def test_random_as_jax():
    from jax.extend import random as jr
    from traxla.extend import random as tr
    for attr in ("key_shape", "name", "tag"):
        for t_impl, j_impl in [(tr.threefry_prng_impl, jr.threefry_prng_impl),
                               (tr.rbg_prng_impl, jr.rbg_prng_impl),
                               (tr.unsafe_rbg_prng_impl, jr.unsafe_rbg_prng_impl)]:
            assert getattr(t_impl, attr) == getattr(j_impl, attr)
    seeds = np.array([1, 2])
    np.testing.assert_array_equal(
        traxla.random.key_data(tr.seed_with_impl(tr.threefry_prng_impl, 42)),
        jax.random.key_data(jr.seed_with_impl(jr.threefry_prng_impl, 42)))
    np.testing.assert_array_equal(
        traxla.random.key_data(tr.random_seed(seeds, impl=tr.threefry_prng_impl)),
        jax.random.key_data(jr.random_seed(seeds, impl=jr.threefry_prng_impl)))
    key, count = np.array([1, 2], np.uint32), np.arange(5, dtype=np.uint32)
    np.testing.assert_array_equal(traxla.jit(tr.threefry_2x32)(key, count),
                                  jax.jit(jr.threefry_2x32)(key, count))
    assert tr.threefry2x32_p is ALL_PRIMITIVES["threefry2x32"]
    # the key primitives bound by hand: JAX's values
    for mod, P, rnd, jit in [(tr, tcore.primitives, traxla.random, traxla.jit),
                             (jr, jcore.primitives, jax.random, jax.jit)]:
        def key_prims(k, P=P, rnd=rnd):
            return [P.random_bits_p.bind(k, bit_width=32, shape=(3,)),
                    rnd.key_data(P.random_split_p.bind(k, shape=(2,))),
                    rnd.key_data(P.random_fold_in_p.bind(k, np.uint32(5)))]
        out = jit(key_prims)(mod.seed_with_impl(mod.threefry_prng_impl, 7))
        if mod is tr:
            t_out = out
    for t, j in zip(t_out, out):
        np.testing.assert_array_equal(t, j)
    for impl in (tr.rbg_prng_impl, "unsafe_rbg"):
        with pytest.raises(NotImplementedError, match="rbg"):
            traxla.random.key(0, impl=impl)
    spec = tr.define_prng_impl(key_shape=(2,), seed=None, split=None, random_bits=None,
                               fold_in=None, name="n", tag="t")
    assert repr(spec) == repr(jr.define_prng_impl(key_shape=(2,), seed=None, split=None,
                                                  random_bits=None, fold_in=None, name="n",
                                                  tag="t")) == "PRNGSpec('n')"


def test_sharding_as_jax():
    from jax.extend import sharding as js
    from traxla.extend import sharding as ts
    xc = ts.xla_client
    hlo = xc.HloSharding.iota_tile([1, 1])
    blob = ts.get_serialized_proto_from_hlo_sharding(hlo)
    assert blob == js.get_serialized_proto_from_hlo_sharding(hlo)
    assert ts.get_hlo_sharding_from_serialized_proto(blob) == \
        js.get_hlo_sharding_from_serialized_proto(blob)
    assert ts.get_op_sharding_from_serialized_proto(blob).tile_assignment_dimensions == [1, 1]
    tg = ts.GSPMDSharding(traxla.devices(), hlo)
    jg = js.GSPMDSharding(jax.devices(), hlo)
    assert repr(tg) == repr(jg)
    assert (tg.num_devices, tg.is_fully_replicated, tg.memory_kind) == (
        jg.num_devices, jg.is_fully_replicated, jg.memory_kind)
    assert str(tg.devices_indices_map((4, 2))) == str(jg.devices_indices_map((4, 2)))
    x = traxla.device_put(np.arange(8.0).reshape(4, 2), tg)
    np.testing.assert_array_equal(x, np.arange(8.0).reshape(4, 2))
    assert tg.is_equivalent_to(x.sharding, 2) and tg.is_equivalent_to(tg, 2)
    assert jg.is_equivalent_to(jg, 2)
    assert isinstance(ts.GSPMDSharding.get_replicated(traxla.devices()), traxla.sharding.Sharding)


# -- mlir, lowering, xla, source_info_util -----------------------------------------------------

def test_mlir_lowering_and_xla_modules():
    from jaxlib import _jax
    from traxla.extend import lowering as tlow, mlir as tmlir, xla as txla
    assert tmlir.hlo_to_stablehlo is _jax.mlir.hlo_to_stablehlo
    assert tmlir.serialize_portable_artifact is _jax.mlir.serialize_portable_artifact
    from traxla.extend.mlir import passmanager
    from traxla.extend.mlir.dialects import mpmd, stablehlo
    assert passmanager.PassManager and mpmd and stablehlo.AddOp
    ctx = tlow.JaxIrContext()
    ctx.append_dialect_registry(tlow.upstream_dialects)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    with ctx:
        module = tmlir.ir.Module.parse(traxla.jit(lambda x: x + 1.0).lower(1.0).as_text())
        pm = passmanager.PassManager.parse("builtin.module(canonicalize)")
        pm.run(module.operation)
    seen = []
    txla.register_hlo_module_transformation(lambda blob: seen.append(type(blob)) and None,
                                            name="traxla_test_seen", platforms="cpu")
    try:
        assert float(traxla.jit(lambda x: x * 3.0 + 0.25)(2.0)) == 6.25
    finally:
        assert txla.clear_hlo_module_transformation("traxla_test_seen", platforms="cpu")
    assert seen and seen[0] is bytes
    assert not txla.clear_hlo_module_transformation("traxla_test_seen", platforms="cpu")
    with pytest.raises(TypeError, match="PipelineStage"):
        txla.register_hlo_module_transformation(lambda b: None, name="x", stage=0)


def _name_stacks(siu):
    ns = siu.new_name_stack("a").extend("b").transform("jvp").extend("c")
    out = [str(ns), len(ns), str(ns[:2]), str(siu.new_name_stack() + ns)]
    with siu.extend_name_stack("outer"):
        out.append(str(siu.current_name_stack()))
        with siu.transform_name_stack("vmap"):
            out.append(str(siu.current_name_stack()))
        with siu.reset_name_stack():
            out.append(str(siu.current_name_stack()))
    with siu.set_name_stack(siu.new_name_stack("set")):
        out.append(str(siu.current_name_stack()))
    out.append(siu.summarize(siu.new_source_info()))
    return out


def _scoped_location(jit, np_, siu):
    @siu.extend_name_stack("deco")
    def g(x):
        with siu.extend_name_stack("blk"):
            return np_.sin(x)
    text = jit(g).lower(1.0).as_text(debug_info=True)
    return [line.split("=", 1)[1].split("(")[0] for line in text.splitlines()
            if "blk" in line]


def test_source_info_util_as_jax():
    from jax.extend import source_info_util as jsiu
    from traxla.extend import source_info_util as tsiu
    assert _name_stacks(tsiu) == _name_stacks(jsiu)
    assert _scoped_location(traxla.jit, tnp, tsiu) == _scoped_location(jax.jit, jnp, jsiu)
    eqn = traxla.make_jaxpr(lambda x: tnp.sin(x))(1.0).eqns[0]
    assert tsiu.summarize(eqn.source_info).endswith("(test_source_info_util_as_jax.<locals>"
                                                    ".<lambda>)")
    # re-evaluating an equation under its own source info keeps where it came from
    with tsiu.user_context(eqn.source_info):
        again = traxla.make_jaxpr(lambda x: tnp.cos(x))(1.0).eqns[0]
    assert tsiu.summarize(again.source_info) == tsiu.summarize(eqn.source_info)


def test_take_current_trace_class_and_effects_type():
    # JAX's take_current_trace is a context-manager class; Effects is Set[Effect]
    import collections.abc
    from jax.extend import core as jcore
    seen = {}
    for name, api, np_, core in (("jax", jax, jnp, jcore), ("traxla", traxla, tnp, tcore)):
        assert isinstance(core.take_current_trace, type)
        assert core.Effects.__origin__ is collections.abc.Set
        assert core.Effects.__args__ == (core.Effect,)
        out = seen[name] = []

        def f(x):
            with core.take_current_trace() as trace:
                out.append(type(trace).__name__)
                out.append(np.asarray(np_.ones(2) + 1).tolist())  # eager inside the block
            return x * 2

        out.append(np.asarray(api.jit(f)(np.float32(3))).tolist())
    assert seen["jax"] == seen["traxla"]

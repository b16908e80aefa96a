"""Failures the ecosystem census (tools/ecosystem_census.py) found in JAX libraries, each as a
small reproduction run on JAX and on traxla (not the library itself)."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import jax
import jax.numpy as jjnp
from jax import lax as jlax

import traxla as tx
import traxla.numpy as jnp
from traxla import lax


def test_split_takes_an_array_of_indices():
    # jraph.unbatch: jnp.split(field, jnp.cumsum(n_node)[:-1])
    x = np.arange(10.0)
    for api, np_ in ((jax, jjnp), (tx, jnp)):
        del api
        parts = np_.split(np_.asarray(x), np_.cumsum(np_.array([3, 4, 3]))[:-1])
        assert [p.tolist() for p in parts] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0],
                                                [7.0, 8.0, 9.0]]
        parts = np_.array_split(np_.asarray(x), np_.array([2, 5]))
        assert [len(p) for p in parts] == [2, 3, 5]
        # a 0-d array is a number of sections
        assert [len(p) for p in np_.split(np_.asarray(x), np_.array(5))] == [2] * 5


def test_cond_older_five_argument_form():
    # blackjax's NUTS: lax.cond(pred, true_operand, true_fun, false_operand, false_fun)
    def f(lax_, np_, p):
        return lax_.cond(p, (np_.ones(2), 3.0), lambda x: x[0] * x[1],
                         np_.arange(2.0), lambda x: x - 1)
    for p in (True, False):
        want = np.asarray(jax.jit(lambda p: f(jlax, jjnp, p))(p))
        got = np.asarray(tx.jit(lambda p: f(lax, jnp, p))(p))
        np.testing.assert_array_equal(got, want)
    for lax_ in (jlax, lax):
        try:
            lax_.cond(True, 1.0, 2.0)
        except TypeError as e:
            assert "true_fun and false_fun arguments should be callable" in str(e)
        else:
            raise AssertionError("a non-callable branch must raise")


def test_src_core_trace_state_clean():
    # numpyro.util._is_under_jax_transform
    seen = {}
    for name, api in (("jax", jax), ("traxla", tx)):
        core = importlib.import_module("jax._src.core" if api is jax else "traxla._src.core")
        out = [core.trace_state_clean()]
        api.jit(lambda x: out.append(core.trace_state_clean()) or x)(1.0)
        api.vmap(lambda x: out.append(core.trace_state_clean()) or x)(np.ones(2))
        out.append(core.reset_trace_state())
        seen[name] = out
    assert seen["traxla"] == seen["jax"] == [True, False, False, True]


def test_src_lax_control_flow_module():
    # pytensor's JAX backend: from jax._src.lax.control_flow import scan
    import jax._src.lax.control_flow as jcf
    import traxla._src.lax.control_flow as tcf
    names = ["scan", "while_loop", "fori_loop", "cond", "switch", "map", "associative_scan",
             "cumsum", "custom_linear_solve", "custom_root", "scan_p", "while_p", "cond_p"]
    assert all(hasattr(jcf, n) for n in names) and all(hasattr(tcf, n) for n in names)

    def body(c, x):
        return c + x, c * x
    want = jcf.scan(body, 0.0, jjnp.arange(4.0))
    got = tcf.scan(body, 0.0, jnp.arange(4.0))
    for w, g in zip(want, got):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_register_lowering_takes_inline_and_cacheable():
    # drjax: mlir.register_lowering(prim, rule, inline=..., cacheable=False)
    from jax.extend import core as jcore
    from jax.interpreters import mlir as jmlir
    from traxla.extend import core as tcore
    from traxla.interpreters import mlir as tmlir
    results = []
    for api, core, mlir in ((jax, jcore, jmlir), (tx, tcore, tmlir)):
        p = core.Primitive("census_double")
        p.def_impl(lambda x: 2 * x)
        p.def_abstract_eval(lambda x: x)
        assert mlir.register_lowering(
            p, mlir.lower_fun(lambda x: x + x, multiple_results=False),
            inline=False, cacheable=False) is None
        results.append(np.asarray(api.jit(p.bind)(np.float32(1.5))))
    np.testing.assert_array_equal(results[1], results[0])


def test_config_update_takes_val_by_keyword():
    # klujax, sax: jax.config.update("jax_enable_x64", val=True); JAX's parameters: (name, val)
    import inspect
    assert list(inspect.signature(tx.config.update).parameters) == \
        list(inspect.signature(jax.config.update).parameters)
    before = tx.config.jax_enable_x64
    try:
        tx.config.update("jax_enable_x64", val=not before)
        assert tx.config.jax_enable_x64 == (not before)
    finally:
        tx.config.update("jax_enable_x64", before)


_UFUNC_NAMES = sorted(n for n in dir(jjnp) if isinstance(getattr(jjnp, n), jjnp.ufunc))


def test_jnp_ufunc_objects_and_their_methods():
    # tfp: jnp.add.at, jnp.maximum.reduce, ...: in JAX these are jnp.ufunc objects
    assert _UFUNC_NAMES  # JAX's own list (add, multiply, ..., negative)
    for name in _UFUNC_NAMES:
        f, g = getattr(jjnp, name), getattr(jnp, name)
        assert isinstance(g, jnp.ufunc), name
        assert (g.__name__, g.nin, g.nout, g.nargs) == (f.__name__, f.nin, f.nout, f.nargs)
        assert g.identity == f.identity, name
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    i = np.array([[1, 6, 3], [5, 2, 7]], np.int32)
    idx = np.array([0, 0, 2])
    cases = [
        lambda np_: np_.add.reduce(x, axis=1), lambda np_: np_.add.reduce(x, axis=None),
        lambda np_: np_.multiply.reduce(x, axis=0, keepdims=True),
        lambda np_: np_.maximum.reduce(x, axis=1), lambda np_: np_.minimum.reduce(x),
        lambda np_: np_.logaddexp.reduce(x, axis=1), lambda np_: np_.logaddexp2.reduce(x[0]),
        lambda np_: np_.logaddexp.reduce(x[0], initial=2.0),
        lambda np_: np_.bitwise_or.reduce(i, axis=1), lambda np_: np_.bitwise_xor.reduce(i),
        lambda np_: np_.logical_xor.reduce(x > 0, axis=1),
        lambda np_: np_.logical_and.reduce(x > 0, axis=0),
        lambda np_: np_.add.reduce(x, axis=1, where=x > 0),
        lambda np_: np_.add.accumulate(x, axis=1), lambda np_: np_.multiply.accumulate(i[0]),
        lambda np_: np_.maximum.accumulate(x, axis=1),
        lambda np_: np_.add.at(np.zeros(4, np.float32), idx, 1.5, inplace=False),
        lambda np_: np_.subtract.at(np.ones(4, np.float32), idx, 2.0, inplace=False),
        lambda np_: np_.multiply.at(np.full(4, 2, np.int32), idx, 3, inplace=False),
        lambda np_: np_.add.at(np.zeros(4, bool), idx, True, inplace=False),
        lambda np_: np_.add.reduceat(np.arange(8.0), np.array([0, 4, 6])),
        lambda np_: np_.add.outer(np.arange(2.0), np.arange(3.0)),
        lambda np_: np_.negative(x), lambda np_: np_.add(x, 2.0),
    ]
    for k, case in enumerate(cases):
        want, got = case(jjnp), case(jnp)
        assert got.dtype == want.dtype and got.shape == want.shape, k
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, err_msg=str(k))
    with pytest.raises(NotImplementedError):
        jnp.add.at(np.zeros(3), idx, 1.0)  # inplace=True, as JAX
    # usable inside jit and as a static argument
    assert float(tx.jit(lambda a: jnp.add.reduce(a))(x[0])) == float(x[0].sum())
    assert hash(jnp.add) == hash(jnp.add) and jnp.add == jnp.add and jnp.add != jnp.multiply


def test_pxla_thread_resources_physical_mesh():
    # drjax, google-tunix: pxla.thread_resources.env.physical_mesh (the legacy `with mesh:`)
    from traxla.interpreters import pxla
    from jax.interpreters import pxla as jpxla
    for api, p in ((jax, jpxla), (tx, pxla)):
        with pytest.warns(DeprecationWarning):
            tr = p.thread_resources
        assert tr.env.physical_mesh.empty and tr.env.physical_mesh.axis_names == ()
        mesh = api.make_mesh((1,), ("x",))
        with api.sharding.set_mesh(mesh):
            assert tr.env.physical_mesh.empty  # set_mesh is not the legacy context
        with mesh:
            assert tr.env.physical_mesh is mesh
            assert tr.env.physical_resource_axes == {"x"} and len(tr.stack) == 2
        assert tr.env.physical_mesh.empty and len(tr.stack) == 1


def test_small_names_libraries_use():
    # optree: jax._src.util.HashablePartial; flax: jax._src.core.physical_aval;
    # dm-haiku: jax.default_prng_impl (a config context manager)
    from jax._src.util import HashablePartial as JHP
    from traxla._src.util import HashablePartial as THP
    for hp in (JHP, THP):
        f = lambda a, b, c=0: a * 10 + b + c  # noqa: E731
        p, q = hp(f, 1, c=5), hp(f, 1, c=5)
        assert p == q and hash(p) == hash(q) and p(2) == 17 and p != hp(f, 2, c=5)
    from jax._src.core import physical_aval as jpa
    from traxla._src.core import physical_aval as tpa
    assert str(tpa(tx.typeof(tx.random.key(0)))) == str(jpa(jax.typeof(jax.random.key(0))))
    for api in (jax, tx):
        with api.default_prng_impl("threefry2x32"):
            assert api.default_prng_impl.value == "threefry2x32"
        with pytest.raises(ValueError, match="new enum value must be in"):
            with api.default_prng_impl("foo"):
                pass
    with pytest.raises(NotImplementedError, match="rbg"):
        with tx.default_prng_impl("rbg"):
            pass


def test_scipy_special_lpmn_values():
    # e3nn-jax: jax.scipy.special.lpmn_values (deprecated in JAX, still there)
    import warnings
    import traxla.scipy.special as tss
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import jax.scipy.special as jss
        jlpmn = jss.lpmn_values
    z = np.linspace(-0.9, 0.9, 5, dtype=np.float32)
    for norm in (True, False):
        want, got = jlpmn(3, 3, z, norm), tss.lpmn_values(3, 3, z, norm)
        assert got.shape == want.shape == (4, 4, 5) and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError):
        tss.lpmn_values(2, 3, z, True)


def test_sharding_manual_axis_type():
    # mujoco-mjx (warp's FFI): jax.sharding.ManualAxisType(varying=vma) as output metadata
    for api in (jax, tx):
        mat = api.sharding.ManualAxisType(varying=frozenset({"x"}))
        assert mat.varying == frozenset({"x"}) and mat.unreduced == frozenset()
        assert type(api.typeof(api.numpy.ones(2)).manual_axis_type) is api.sharding.ManualAxisType
        s = api.ShapeDtypeStruct((2,), np.float32, manual_axis_type=mat)
        assert s.manual_axis_type.varying == frozenset({"x"})
        with pytest.raises(ValueError, match="varying and unreduced cannot have common"):
            api.sharding.ManualAxisType(varying=frozenset({"x"}), unreduced=frozenset({"x"}))


def test_pxla_result_handlers():
    # flax fp8_ops (an extended dtype's result handler) and orbax's plugin programs build
    # Arrays from their shards with JAX's pxla result handlers
    import warnings
    from jax._src import core as jcore
    from jax._src.interpreters import pxla as jpxla
    from traxla._src.interpreters import pxla as tpxla
    from traxla import core as tcore
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for api, pxla, core in ((jax, jpxla, jcore), (tx, tpxla, tcore)):
        sharding = api.sharding.SingleDeviceSharding(api.devices()[0])
        aval = core.ShapedArray((2, 3), np.float32)
        handler = pxla.global_result_handlers[core.ShapedArray](aval, sharding, True)
        y = handler([api.device_put(x)])
        assert type(y) is type(api.numpy.ones(1)) and y.committed
        np.testing.assert_array_equal(y, x)
        public = importlib.import_module(f"{api.__name__}.interpreters.pxla")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            results = public.global_avals_to_results_handler([aval], [sharding], True)
        assert "deprecated as of JAX v0.8.2" in str(w[0].message)
        assert len(results.handlers) == 1 and results.out_avals == [aval]
        np.testing.assert_array_equal(results.handlers[0]([api.device_put(x)]), x)


def test_cudnn_attention_checks():
    # keras asks JAX's cuDNN attention checks whether flash attention is available
    from jax._src.cudnn import fused_attention_stablehlo as jf
    from traxla._src.cudnn import fused_attention_stablehlo as tf
    q = np.zeros((1, 4, 2, 8), jjnp.bfloat16)
    bad = np.zeros((1, 4, 2, 7), jjnp.bfloat16)

    def outcome(thunk):
        try:
            return ("ok", thunk())
        except Exception as e:  # noqa: BLE001 - comparing what each raises
            return (type(e).__name__, str(e))
    for mod in (jf, tf):
        assert mod._normalize_layout("BSNH").name == "BTNH"
    cases = [lambda m: m._normalize_layout("XYZW"), lambda m: m.check_cudnn_version(),
             lambda m: m.check_compute_capability("8.0"),
             lambda m: m.check_layout(q, q, q, None, None, None, None, None, None, None,
                                      layout=m._normalize_layout("BTNH")),
             lambda m: m.check_layout(q, q[:, :3], q, None, None, None, None, None, None,
                                      None, layout=m._normalize_layout("BTNH")),
             lambda m: m.check_layout(q.astype(np.float32), q, q, None, None, None, None,
                                      None, None, None, layout=m._normalize_layout("BNTH")),
             lambda m: m.check_is_flash_attention(q, q, q, 0, 90000, False, False),
             lambda m: m.check_is_flash_attention(bad, bad, bad, 0, 90000, False, False)]
    for case in cases:
        assert outcome(lambda: case(tf)) == outcome(lambda: case(jf))


def test_jitted_functions_are_pjit_functions():
    # qwix: isinstance(f, jax._src.lib._jax.PjitFunction), then f._fun under disable_jit
    from traxla._src.lib import _jax
    def g(x):
        return x
    f = tx.jit(g)
    assert isinstance(f, _jax.PjitFunction) and not isinstance(lambda x: x, _jax.PjitFunction)
    assert f._fun is g and jax.jit(g)._fun is g
    assert isinstance(jnp.ones(2), _jax.ArrayImpl)


def test_colocated_prng_wrapped_fun():
    # orbax wraps jax.experimental.colocated_python.func._make_prng_wrapped_fun
    from jax.experimental.colocated_python import func as jfunc
    from traxla.experimental.colocated_python import func as tfunc
    data = np.array([0, 5], np.uint32)
    outs = []
    for api, mod in ((jax, jfunc), (tx, tfunc)):
        def f(k, x, api=api):
            assert api.dtypes.issubdtype(k.dtype, api.dtypes.prng_key)
            return api.random.split(k), x + 1
        wrapped = mod._make_prng_wrapped_fun(f, {0: "threefry2x32"}, {0: "threefry2x32"})
        keys, y = wrapped(data, 1.0)
        assert keys.dtype == np.uint32 and wrapped.__name__ == "f"
        outs.append((np.asarray(keys), float(y)))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1] == 2.0


class _NdProxy:
    """A duck-typed array wrapper that is no ndarray (tensorflow-probability's variable is a
    proxy it registers with JAX's ``core.pytype_aval_mappings`` and canonicalization
    handlers, mapped to ``np.ndarray``'s entries)."""

    def __init__(self, value):
        self.value = np.asarray(value)

    def __array__(self, dtype=None, copy=None):
        return self.value if dtype is None else self.value.astype(dtype)

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)


def test_user_types_registered_as_arrays():
    # tensorflow-probability's backend/jax/ops.py registers NumpyVariable this way
    import warnings
    import traxla.interpreters.xla as txla
    import traxla.core as txcore
    from jax.interpreters import xla as jxla
    from traxla.ir import pytype_registry
    results = {}
    for name, api, np_, lax_, core, xla in (("jax", jax, jjnp, jlax, jax.core, jxla),
                                            ("traxla", tx, jnp, lax, txcore, txla)):
        class Proxy(_NdProxy):
            pass

        class Sub(Proxy):
            pass

        p = Proxy(np.arange(3.0, dtype=np.float32))
        out = results[name] = []
        with pytest.raises(TypeError):  # not registered: not an array to jit
            api.jit(lambda x: x * 2)(p)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            mappings = core.pytype_aval_mappings
        mappings[Proxy] = mappings[np.ndarray]
        try:
            out.append(str(mappings[np.ndarray](np.ones(2, np.float64))))
            out.append(str(api.typeof(p)))
            out.append(str(api.make_jaxpr(lambda x: x * 2)(p)))
            out.append(str(api.eval_shape(lambda x: x * 2, p)))
            for f in (lambda: api.jit(lambda x: x * 2)(p), lambda: api.grad(
                    lambda x: np_.sum(x ** 2))(p), lambda: lax_.add(p, p)):
                with pytest.raises(TypeError):  # an aval, but no way to a device yet
                    f()
            out.append(np.asarray(xla.canonicalize_dtype_handlers[Proxy](p)).dtype.name)
            xla.canonicalize_dtype_handlers[Proxy] = xla.canonicalize_dtype_handlers[np.ndarray]
            pi = Proxy(np.arange(3))  # int64: canonicalized to int32
            for v in (api.jit(lambda x: x * 2)(p), api.grad(lambda x: np_.sum(x ** 2))(p),
                      api.vmap(lambda x: x * 2)(p), np_.sin(p), np_.sum(p), lax_.add(p, p),
                      api.device_put(p), api.jit(lambda x: x)(pi), np_.sin(Sub(p.value)),
                      api.jit(lambda x: lax_.mul(x, p))(np.float32(2.0)),
                      api.jvp(np_.sin, (p,), (p,))[1]):
                out.append((str(v.dtype), np.asarray(v).tolist()))
        finally:
            del mappings[Proxy]
    assert results["jax"] == results["traxla"]
    assert not pytype_registry.user_aval_fn(_NdProxy)


def test_scalar_types_compare_as_numpys():
    # tfp's prefer_static compares FullArgSpecs whose defaults are jnp.float32 and np.float32
    import inspect
    for np_ in (jjnp, jnp):
        for name in ("float32", "int32", "bool_", "bfloat16", "complex64", "uint8"):
            t = getattr(np_, name)
            np_t = np.dtype(t).type
            assert t == np_t and np_t == t and not t != np_t and hash(t) == hash(np_t), name
            assert {np_t: 1}[t] == 1 and isinstance(np_t(0), t), name
        assert np_.float32 != np.float64 and np_.float32 == np.dtype("float32")

        def f(x, dtype=np_.float32):
            del x, dtype
        assert inspect.getfullargspec(f).defaults == (np.float32,)
        assert np_.float32(2).dtype == np.float32 and np_.float32(2).shape == ()


def test_interpreters_xla_after_import_jax():
    # tfp reads jax.interpreters.xla after a plain `import jax` (JAX imports it itself)
    import sys
    import traxla.interpreters as ti
    sys.modules.pop("traxla.interpreters.xla", None)
    ti.__dict__.pop("xla", None)
    importlib.reload(ti)  # the package alone brings its xla module
    for interp in (jax.interpreters, ti):
        h = interp.xla.canonicalize_dtype_handlers
        assert np.asarray(h[np.ndarray](np.arange(2))).dtype == np.int32
        assert not hasattr(interp.xla, "pytype_aval_mappings")  # (the name tfp sets: gone)


def test_mesh_utils_device_kind_handlers():
    # jax.experimental.mesh_utils.device_kind_handler_dict: builders per device kind
    from jax.experimental import mesh_utils as jmu
    from traxla.experimental import mesh_utils as tmu
    seen = {}
    for name, api, mu in (("jax", jax, jmu), ("traxla", tx, tmu)):
        kind = api.devices()[0].device_kind
        calls = seen[name] = [kind]

        def handler(shape, devices, *, contiguous_submeshes=False):
            calls.append((shape, len(devices), contiguous_submeshes))
            return None if calls[-1][2] else np.array(devices[::-1]).reshape(shape)

        assert kind not in mu.device_kind_handler_dict
        mu.device_kind_handler_dict[kind] = handler
        try:
            devs = api.devices()[:1]
            got = mu.create_device_mesh([1], devs)
            calls.append(list(got.shape) + [got.flat[0] is devs[0]])
            got = mu.create_device_mesh((1,), devs, contiguous_submeshes=True)  # -> default
            calls.append(list(got.shape))
        finally:
            del mu.device_kind_handler_dict[kind]
    assert seen["jax"] == seen["traxla"]


def test_memory_space_namespace():
    # jax.memory.Space: device_put into host memory and back
    seen = {}
    for name, api, np_ in (("jax", jax, jjnp), ("traxla", tx, jnp)):
        space = api.memory.Space
        out = seen[name] = [[repr(s) for s in space], hash(space.Host) != hash("Host")]
        x = np_.arange(3.0)
        h = api.device_put(x, space.Host)
        out += [h.sharding.memory_kind, str(api.typeof(h)),
                api.typeof(h).memory_space == space.Host, np.asarray(h).tolist()]
        d = api.device_put(h, space.Device)
        out += [d.sharding.memory_kind, str(api.typeof(d)),
                api.typeof(d).memory_space == space.Device,
                np.asarray(api.jit(lambda v: api.device_put(v, space.Device) * 2)(h)).tolist()]
        with pytest.raises(Exception):  # Any: no memory a value can be put in
            api.device_put(x, space.Any)
    assert seen["jax"] == seen["traxla"]


def test_hijax_transformed_ref():
    # jax.experimental.hijax.TransformedRef: what ref.at[...] gives (inside jit in JAX)
    import importlib
    seen = {}
    for name, api, np_ in (("jax", jax, jjnp), ("traxla", tx, jnp)):
        hijax = importlib.import_module(api.__name__ + ".experimental.hijax")
        out = seen[name] = []
        r = api.new_ref(np_.zeros(4))

        def f(r, hijax=hijax, out=out):
            v = r.at[1:3]
            out.append((isinstance(v, hijax.TransformedRef), v.shape, str(v.dtype)))
            v[...] += 1.0

        api.jit(f)(r)
        out.append(np.asarray(r[...]).tolist())
    assert seen["jax"] == seen["traxla"]


def test_example_optimizers_jax_is_the_package():
    # jax.example_libraries.optimizers.jax: the jax module the optimizers use
    import importlib
    seen = {}
    for name, api in (("jax", jax), ("traxla", tx)):
        opt = importlib.import_module(api.__name__ + ".example_libraries.optimizers")
        assert opt.jax is api
        init, update, get_params = opt.adam(0.1)
        state = init({"w": np.ones(2, np.float32)})
        for i in range(3):
            state = update(i, {"w": np.full(2, 0.5, np.float32)}, state)
        seen[name] = np.asarray(get_params(state)["w"]).tolist()
    np.testing.assert_allclose(seen["traxla"], seen["jax"], rtol=1e-5)


def test_pallas_tpu_core_module():
    # jax.experimental.pallas.tpu.core: the TPU core module pltpu exposes
    import importlib
    import types
    for api in (jax, tx):
        pltpu = importlib.import_module(api.__name__ + ".experimental.pallas.tpu")
        assert isinstance(pltpu.core, types.ModuleType)
        for n in ("ARBITRARY", "PARALLEL", "CORE_PARALLEL", "CompilerParams", "CoreType",
                  "GridDimensionSemantics", "MemorySpace", "PrefetchScalarGridSpec",
                  "SemaphoreType", "create_tensorcore_mesh", "dma_semaphore"):
            assert getattr(pltpu.core, n) is getattr(pltpu, n), n


def test_src_core_shapes_and_image_kernels():
    # torchax's resize reimplementation: jax._src.core shapes, jax._src.image.scale kernels
    import importlib
    seen = {}
    for name, api, np_ in (("jax", jax, jjnp), ("traxla", tx, jnp)):
        core = importlib.import_module(api.__name__ + "._src.core")
        scale = importlib.import_module(api.__name__ + "._src.image.scale")
        out = seen[name] = [core.canonicalize_shape([2, np.int32(3)]), core.canonicalize_shape(4),
                            core.dimension_as_value(5), core.DimSize is not None,
                            core.Shape is not None]
        with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
            core.canonicalize_shape([2.5], "in a test")
        out.append(scale.ResizeMethod.from_string("lanczos3").name)
        x = np_.linspace(-3.0, 3.0, 7)
        for m, (radius, kernel) in sorted(scale._kernels.items(), key=lambda kv: kv[0].name):
            out.append((m.name, radius, np.round(np.asarray(kernel(x)), 5).tolist()
                        if callable(kernel) else "marker"))  # (AREA: a marker object)
    assert seen["jax"] == seen["traxla"]

"""traxla as a drop-in ``jax`` (traxla.as_jax) and the jax.* module surface libraries import."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from _device_scripts import ForkServer

import traxla
import traxla.numpy as jnp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ``python -m traxla.as_jax ARGS`` in a process of its own, forked from one that ran what
# that command runs before its ``main``: importing the package traxla (the parent of
# traxla.as_jax) and the module (tests/_device_scripts.py: ForkServer). The fork starts
# in the folder the command would.
_AS_JAX = ForkServer("import os\nfrom traxla.as_jax import __main__ as as_jax_main\n",
                     env=dict(os.environ, JAX_PLATFORMS="cpu",
                              PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")))


def _run(args, tmp_path, script=None):
    if script is not None:
        path = tmp_path / "prog.py"
        path.write_text(textwrap.dedent(script))
        args = [str(path) if a == "{script}" else a for a in args]
    r = _AS_JAX.run(f"os.chdir({str(tmp_path)!r})\nas_jax_main.main({list(args)!r})")
    return subprocess.CompletedProcess(args, r["status"], r["stdout"], r["stderr"] + r["note"])


DROPIN_SCRIPT = """
    import sys
    import jax
    print("submodules", [n for n in ("jax.tree_util", "jax.lax", "jax.sharding", "jax.numpy",
                                     "jax.interpreters.xla", "jax.random", "jax.scipy")
                         if sys.modules.get(n) is None
                         or sys.modules.get(n) is not sys.modules.get("traxla" + n[3:])])
    import jax, jax.numpy as jnp
    from jax import lax
    import jax.core, jax.flatten_util, jax.api_util
    from jax.extend import linear_util as lu
    from jax.interpreters import partial_eval as pe
    from jax.experimental import mesh_utils
    from jax._src import dtypes, traceback_util, xla_bridge, compiler
    import traxla.runtime.compiler
    assert compiler is traxla.runtime.compiler  # one module: wrappers set on it take effect
    from jax._src.tree_util import _registry
    import traxla
    assert jax is traxla and jnp is traxla.numpy, (jax, jnp)
    print("argv", sys.argv[1:])
    print("version", jax.__version__, jax.__version_info__)
    print("jit", jax.jit(lambda x: lax.add(x, 1.0) * 2)(jnp.arange(3.0)).tolist())
    flat, unravel = jax.flatten_util.ravel_pytree({"a": jnp.ones(2), "b": 3.0})
    print("ravel", flat.tolist(), sorted(unravel(flat)))
    print("tracer", isinstance(jax.make_jaxpr(lambda x: x)(1.0), object),
          jax.core.Tracer is traxla.core.Tracer)
    print("registry", tuple in _registry, int in _registry)
    print("mesh", mesh_utils.create_device_mesh((1,)).shape)
    from jax.experimental.ode import odeint
    print("ode", round(float(odeint(lambda y, t: -y, jnp.ones(1), jnp.array([0., 1.]))[-1, 0]), 5))
    from jax.experimental.jet import jet
    print("jet", [round(float(t), 5) for t in jet(jnp.sin, (0.,), ((1., 0., 0.),))[1]])
    real = [m for m in sys.modules.values()
            if "site-packages/jax/" in (getattr(m, "__file__", None) or "")]
    print("real jax modules", len(real))
    print("src", jax._src.xla_bridge._backends is not None)
    try:
        import jax._src.no_such_module
    except ModuleNotFoundError as e:
        print("missing", type(e).__name__, "jax._src.no_such_module" in str(e))
"""


def test_script_runs_with_jax_mapped_to_traxla(tmp_path):
    r = _run(["{script}", "--flag", "x"], tmp_path, DROPIN_SCRIPT)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "argv ['--flag', 'x']" in out
    assert "submodules []" in out  # (as JAX's own imports put them there)
    assert "version 0.10.2 (0, 10, 2)" in out
    assert "jit [2.0, 4.0, 6.0]" in out
    assert "ravel [1.0, 1.0, 3.0] ['a', 'b']" in out
    assert "tracer True True" in out
    assert "registry True False" in out
    assert "mesh (1,)" in out
    assert "ode 0.36788" in out  # exp(-1)
    assert "jet [1.0, 0.0, -1.0]" in out  # the derivatives of sin at 0
    assert "real jax modules 0" in out  # the installed jax is never imported
    assert "missing ModuleNotFoundError True" in out
    assert "src True" in out


def test_module_mode_runs_pytest_collection(tmp_path):
    # `python -m traxla.as_jax -m pytest`: collection and the tests see traxla as jax.
    (tmp_path / "test_lib.py").write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        def test_uses_traxla():
            assert jax.__name__ == "traxla"
            assert float(jax.grad(lambda x: x * x)(3.0)) == 6.0
    """))
    r = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_lib.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed" in r.stdout


def test_usage_without_arguments(tmp_path):
    r = _run([], tmp_path)
    assert r.returncode == 2 and "usage" in r.stderr


def test_install_refuses_when_real_jax_is_loaded():
    from traxla import as_jax
    saved = sys.modules.get("jax")
    sys.modules["jax"] = type(sys)("jax")  # a stand-in for the real package
    try:
        with pytest.raises(RuntimeError, match="already imported"):
            as_jax.install()
    finally:
        if saved is None:
            del sys.modules["jax"]
        else:
            sys.modules["jax"] = saved
    assert not as_jax.installed()


def test_target_names_map_jax_paths_onto_traxla():
    from traxla.as_jax import target_name
    assert target_name("jax") == "traxla"
    assert target_name("jax.numpy.linalg") == "traxla.numpy.linalg"
    assert target_name("jax._src.compiler") == "traxla._src.compiler"
    assert target_name("jaxlib") is None and target_name("jaxtyping") is None


def test_ravel_pytree_matches_jax():
    jax_fu = pytest.importorskip("jax.flatten_util")
    from traxla.flatten_util import ravel_pytree
    tree = {"w": np.arange(6.0, dtype=np.float32).reshape(2, 3), "b": (np.int32(4), 2.5)}
    flat, unravel = ravel_pytree(tree)
    jflat, junravel = jax_fu.ravel_pytree(tree)
    assert flat.dtype == jflat.dtype
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(jflat))
    back = unravel(flat)
    assert np.asarray(back["b"][0]).dtype == np.asarray(junravel(jflat)["b"][0]).dtype
    np.testing.assert_array_equal(np.asarray(back["w"]), tree["w"])
    empty, _ = ravel_pytree({})
    assert empty.shape == (0,) and empty.dtype == np.float32
    with pytest.raises(TypeError, match="unravel function given array of dtype"):
        unravel(flat.astype(np.int32))


def test_partial_eval_splits_known_outputs():
    # flax's lazy_init and scan broadcasting: outputs of known inputs only are computed now.
    from traxla import api_util, core, tree_util
    from traxla.extend import linear_util as lu
    from traxla.interpreters import partial_eval as pe

    def f(a, b):
        return {"known": a * 2.0, "unknown": jnp.sin(b) + a}
    args = (jnp.float32(3.0), jnp.ones(2))
    flat, in_tree = tree_util.tree_flatten((args, {}))
    dbg = api_util.debug_info("test", f, args, {})
    f_flat, out_tree = api_util.flatten_fun(lu.wrap_init(f, debug_info=dbg), in_tree)
    pvals = [pe.PartialVal.known(flat[0]), pe.PartialVal.unknown(core.ShapedArray((2,),
                                                                              np.float32))]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(f_flat, pvals)
    outs = tree_util.tree_unflatten(out_tree(), out_pvals)
    assert outs["known"].is_known() and float(outs["known"].get_known()) == 6.0
    assert not outs["unknown"].is_known() and outs["unknown"][0].shape == (2,)
    assert len(jaxpr.invars) == 1 and len(jaxpr.outvars) == 1
    assert dbg.arg_names == ("a", "b")


def test_opaque_trace_state_tells_transformations_apart():
    from traxla.extend.core import get_opaque_trace_state
    outer = get_opaque_trace_state()
    seen = []
    traxla.jit(lambda x: seen.append(get_opaque_trace_state()) or x)(1.0)
    assert outer == get_opaque_trace_state()
    assert seen[0] != outer


def test_checking_leaks_reports_a_leaked_tracer():
    leaked = []

    def f(x):
        leaked.append(x * 2)
        return x + 1
    with traxla.checking_leaks():
        with pytest.raises(Exception, match="Leaked trace"):
            traxla.jit(f)(1.0)
        assert float(traxla.jit(lambda x: x + 1)(1.0)) == 2.0  # no leak, no error


def test_config_flags_api(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["prog", "--jax_debug_nans=true", "--other", "--",
                                      "--jax_debug_infs=true"])
    try:
        traxla.config.parse_flags_with_absl()
        assert traxla.config.jax_debug_nans is True
        assert traxla.config.values["jax_debug_infs"] is False  # after "--": not parsed
    finally:
        traxla.config.update("jax_debug_nans", False)
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        traxla.config.update("jax_no_such_flag", 1)


def test_compiles_go_through_the_patchable_compiler_hook():
    # chex.restrict_backends wraps jax._src.compiler.backend_compile_and_load.
    from traxla.runtime import compiler
    platforms = []
    inner = compiler.backend_compile_and_load

    def wrapper(backend, *args, **kwargs):
        platforms.append(backend.platform)
        return inner(backend, *args, **kwargs)
    compiler.backend_compile_and_load = wrapper
    try:
        traxla.jit(lambda x: x * 7 + 1)(np.float32(2.0))
    finally:
        compiler.backend_compile_and_load = inner
    assert platforms == ["cpu"]


def test_jax_core_removed_names_raise_jax_message():
    from traxla import core
    with pytest.raises(AttributeError, match="use jax.typeof instead"):
        core.get_aval  # noqa: B018
    assert core.find_top_trace(()) is not None


# -- bugs the library suites revealed -------------------------------------------------------

def test_reshape_and_ravel_in_fortran_order_match_numpy():
    # optax's microbatching reshapes with order='F'.
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for shape in [(4, 6), (24,), (3, 2, 4)]:
        np.testing.assert_array_equal(np.asarray(jnp.reshape(x, shape, order="F")),
                                      np.reshape(x, shape, order="F"))
    np.testing.assert_array_equal(np.asarray(jnp.ravel(x, order="F")), np.ravel(x, order="F"))
    np.testing.assert_array_equal(
        np.asarray(traxla.jit(lambda a: a.reshape(6, 4, order="F"))(x)),
        x.reshape(6, 4, order="F"))
    with pytest.raises(NotImplementedError, match="order=A"):
        jnp.reshape(x, (24,), order="A")
    with pytest.raises(ValueError, match="Unexpected value for 'order'"):
        jnp.reshape(x, (24,), order="K")


def test_environment_set_before_import_jax_is_honoured(tmp_path):
    # flax's tests set XLA_FLAGS (and others JAX_ENABLE_X64) before `import jax`; under the
    # hook traxla is imported earlier, so the environment is read again at `import jax`.
    r = _run(["{script}"], tmp_path, """
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"
        os.environ["JAX_ENABLE_X64"] = "1"
        import jax, jax.numpy as jnp
        print("devices", jax.device_count(), jnp.arange(2.0).dtype)
    """)
    assert r.returncode == 0, r.stderr
    assert "devices 3 float64" in r.stdout


def test_abstract_mesh_outside_any_mesh_is_empty_as_jax():
    # flax asks `jax.sharding.get_abstract_mesh().empty` before using a global mesh.
    jax_sharding = pytest.importorskip("jax.sharding")
    ours, theirs = traxla.sharding.get_abstract_mesh(), jax_sharding.get_abstract_mesh()
    assert ours.empty and theirs.empty
    assert repr(ours) == repr(theirs) and ours.size == theirs.size == 0
    assert dict(ours.shape) == dict(theirs.shape) == {}
    assert not ours.are_all_axes_explicit and not theirs.are_all_axes_explicit
    mesh = traxla.make_mesh((1,), ("x",))
    assert mesh.are_all_axes_explicit and not mesh.are_all_axes_auto and not mesh.empty
    assert mesh.abstract_mesh.abstract_mesh is mesh.abstract_mesh
    with traxla.sharding.set_mesh(mesh):
        assert not traxla.sharding.get_abstract_mesh().empty
        assert traxla.sharding.get_abstract_mesh().are_all_axes_explicit
        assert dict(traxla.sharding.get_abstract_mesh().shape) == {"x": 1}


class _Proxy:
    """Like flax.nnx's Variable: forwards attribute reads to the array it holds (so it
    seems to have ``aval``) and converts through ``__jax_array__``."""

    def __init__(self, value):
        self.value = value

    def __getattr__(self, name):
        return getattr(self.value, name)

    def __jax_array__(self):
        return self.value


def test_jax_array_protocol_objects_work_as_operands():
    x = jnp.arange(3.0)
    p = _Proxy(x)
    np.testing.assert_allclose(np.asarray(jnp.sin(p)), np.sin(np.arange(3.0)), rtol=1e-6)
    assert float(jnp.mean(p)) == 1.0
    np.testing.assert_array_equal(np.asarray(x * p), [0.0, 1.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(p)), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(traxla.jit(lambda v: jnp.sin(_Proxy(v)) * 2)(x)),
                                  np.asarray(jnp.sin(x) * 2))
    # (under grad, a proxy around a tracer reaching a ufunc's fast path is still refused:
    # TracerArrayConversionError, not a wrong value; jnp.mean/asarray convert it first)
    np.testing.assert_allclose(np.asarray(traxla.grad(lambda v: jnp.mean(_Proxy(v)))(x)),
                               np.full(3, 1 / 3), rtol=1e-6)


def test_samplers_take_out_sharding_as_jax():
    # flax's Dropout passes out_sharding= to jax.random.bernoulli.
    jr = pytest.importorskip("jax.random")
    k = traxla.random.key(0)
    np.testing.assert_array_equal(np.asarray(traxla.random.bernoulli(k, 0.5, (5,),
                                                                     out_sharding=None)),
                                  np.asarray(jr.bernoulli(jr.key(0), 0.5, (5,))))
    mesh = traxla.make_mesh((1,), ("x",))
    out = traxla.random.normal(k, (4,), out_sharding=traxla.sharding.NamedSharding(
        mesh, traxla.P("x")))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(traxla.random.normal(k, (4,))))
    assert out.sharding.spec == traxla.P("x")


def test_shard_indices_leave_unsplit_dimensions_whole_as_jax(tmp_path):
    # flax's jax_utils tests compare shard indices with slice(None) for unsplit dimensions.
    r = _run(["{script}"], tmp_path, """
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((2,), ("x",))
        a = jax.device_put(jax.numpy.ones((4, 2)), NamedSharding(mesh, P(None, "x")))
        print([s.index for s in a.addressable_shards])
    """)
    assert r.returncode == 0, r.stderr
    assert ("[(slice(None, None, None), slice(0, 1, None)), "
            "(slice(None, None, None), slice(1, 2, None))]") in r.stdout


def test_private_paths_of_the_documentation_pages():
    # jax-primitives.md: ``from jax._src.lax import lax`` / ``from jax._src import api``;
    # Writing_custom_interpreters: ``from jax._src.util import safe_map``
    from traxla._src import api
    from traxla._src.lax import lax
    from traxla._src.util import (merge_lists, partition_list, safe_map, safe_zip,
                                  split_list, subvals, unzip3)
    assert float(api.grad(lambda x: lax.add(lax.mul(x, x), 1.0))(3.0)) == 6.0
    assert api.jit is traxla.jit and api.vmap is traxla.vmap
    assert safe_map(lambda a, b: a + b, [1, 2], (3, 4)) == [4, 6]
    with pytest.raises(ValueError, match="length mismatch"):
        safe_zip([1, 2], [3])
    assert split_list(range(6), [1, 2]) == [[0], [1, 2], [3, 4, 5]]
    evens, odds = partition_list([False, True, False], "abc")
    assert (evens, odds) == (["a", "c"], ["b"])
    assert merge_lists([False, True, False], evens, odds) == ["a", "b", "c"]
    assert subvals((1, 2, 3), [(1, 9)]) == (1, 9, 3)
    assert unzip3([(1, 2, 3), (4, 5, 6)]) == ((1, 4), (2, 5), (3, 6))


def test_ad_util_names_the_primitive_lax_stop_gradient_binds():
    # lineax: ``from jax._src.ad_util import stop_gradient_p`` and registers its transpose
    from traxla._src.ad_util import stop_gradient_p
    assert stop_gradient_p is traxla.lax.stop_gradient_p
    jaxpr = traxla.make_jaxpr(traxla.lax.stop_gradient)(1.0).jaxpr
    assert [e.primitive for e in jaxpr.eqns] == [stop_gradient_p]


def test_a_symbolic_zero_is_a_pytree_without_leaves_as_in_jax():
    # lineax's jvp rules, vmapped by equinox, return ad_util.Zero tangents: vmap passes them
    import jax
    from jax._src import ad_util as jax_ad_util
    from traxla._src.ad_util import Zero
    for api, zero_cls in ((traxla, Zero), (jax, jax_ad_util.Zero)):
        z = zero_cls(api.core.ShapedArray((), np.dtype(np.float32)))
        leaves, tree = api.tree_util.tree_flatten(z)
        assert leaves == [] and type(api.tree_util.tree_unflatten(tree, [])) is zero_cls
        out = api.vmap(lambda x: (x * 2, z))(np.arange(3.0, dtype=np.float32))
        assert type(out[1]) is zero_cls and out[1].aval == z.aval


def test_autodidax_compiles_stablehlo_it_builds_itself():
    # autodidax.md's xla_callable: jax.extend.mlir's ir/func/stablehlo build a module,
    # jax._src.xla_bridge.get_backend gives the PJRT client that compiles it, and
    # jax._src.lib.xla_client puts the arguments on the device
    from traxla._src import xla_bridge as xb
    from traxla._src.lib import xla_client as xc
    from traxla._src.lib.mlir.dialects import hlo as hlo_alias
    from traxla.extend.mlir import ir
    from traxla.extend.mlir.dialects import func
    import traxla.extend.mlir.dialects.stablehlo as hlo
    assert hlo is hlo_alias
    with ir.Context() as ctx, ir.Location.unknown(ctx):
        hlo.register_dialect(ctx)
        m = ir.Module.create()
        f32 = ir.RankedTensorType.get((3,), ir.F32Type.get())
        with ir.InsertionPoint(m.body):
            @func.func(f32, f32)
            def main(x, y):
                return hlo.add(hlo.multiply(x, y), x)
    backend = xb.get_backend(None)
    assert backend.platform == "cpu"
    compiled = backend.compile_and_load(str(m), backend.devices()[:1])
    device = backend.devices()[0]
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0, 6.0], np.float32)
    aval = traxla.core.ShapedArray((3,), np.float32)
    bufs = [xc.batched_device_put(aval, xc.GSPMDSharding((device,), xc.OpSharding()), [v],
                                  [device], True, enable_x64=True) for v in (a, b)]
    out, = compiled.execute(bufs)
    assert np.asarray(out).tolist() == (a * b + a).tolist()


def test_ad_util_stop_gradient_p_takes_a_transpose_rule():
    # lineax: ``from jax._src.ad_util import stop_gradient_p`` and
    # ``ad.primitive_transposes[stop_gradient_p] = lambda ct, x: (ct,)``
    from traxla._src.ad_util import stop_gradient_p
    from traxla.interpreters import ad
    jaxpr = traxla.make_jaxpr(traxla.lax.stop_gradient)(1.0).jaxpr
    assert jaxpr.eqns[0].primitive is stop_gradient_p
    ad.primitive_transposes[stop_gradient_p] = lambda ct, x: (ct,)
    try:
        f = traxla.linear_transpose(lambda x: 2.0 * traxla.lax.stop_gradient(x), 1.0)
        assert float(f(3.0)[0]) == 6.0  # as on JAX with lineax imported
    finally:
        del ad.primitive_transposes[stop_gradient_p]

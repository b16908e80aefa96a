"""traxla.ffi end to end: the root CMake project builds the example kernels once per
session; they are registered and called under jit, vmap (each vmap_method) and grad
(custom_vjp), compared with NumPy, and bad use raises clear errors."""
from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import traxla as jax
import traxla.numpy as jnp
from traxla import ffi

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SDS:
    """Any object with ``shape`` and ``dtype`` declares a result (as in JAX)."""
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory):
    prebuilt = os.environ.get("TRAXLA_FFI_BUILD_DIR")  # .ci/run builds the native part first
    if prebuilt and os.path.exists(os.path.join(prebuilt, "libtraxla_ffi_examples.so")):
        return prebuilt
    if shutil.which("cmake") is None or shutil.which("c++") is None and shutil.which("g++") is None:
        pytest.skip("cmake or a C++ compiler is not installed: the FFI kernels cannot be built")
    out = tmp_path_factory.mktemp("ffi_build")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    # unoptimized (a Debug build without debug information): the kernels compute the same
    # (no fast-math either way), and compile in about half the time of the Release default
    unoptimized = ["-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG="]
    for cmd in (["cmake", "-S", ROOT, "-B", str(out), *gen, *unoptimized,
                 f"-DPython_EXECUTABLE={sys.executable}"],
                ["cmake", "--build", str(out)]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return str(out)


TARGETS = {"rms_norm": "RmsNorm", "rms_norm_fwd": "RmsNormFwd", "rms_norm_bwd": "RmsNormBwd",
           "attributes": "Attributes", "counter": "Counter"}


@pytest.fixture(scope="session")
def kernels(build_dir):
    lib = ctypes.cdll.LoadLibrary(os.path.join(build_dir, "libtraxla_ffi_examples.so"))
    for name, symbol in TARGETS.items():
        ffi.register_ffi_target(name, ffi.pycapsule(getattr(lib, symbol)), platform="cpu")
    return lib


def _rms_ref(x, eps=1e-5):
    x = np.asarray(x, np.float64)
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps)


def rms_norm(x, eps=1e-5, vmap_method="broadcast_all"):
    return ffi.ffi_call("rms_norm", SDS(x.shape, x.dtype), vmap_method=vmap_method)(
        x, eps=np.float32(eps))


X = np.random.RandomState(0).randn(3, 5).astype(np.float32)
rms_norm_jit = jax.jit(rms_norm, static_argnums=(1, 2))


def test_include_dir_holds_the_ffi_headers():
    assert os.path.isfile(os.path.join(ffi.include_dir(), "xla", "ffi", "api", "ffi.h"))


def test_eager_and_jit_match_numpy(kernels):
    np.testing.assert_allclose(rms_norm(jnp.asarray(X)), _rms_ref(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rms_norm_jit(X), _rms_ref(X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all", "legacy_vectorized"])
def test_vmap_each_method_matches_stacking(kernels, method):
    xs = np.random.RandomState(1).randn(2, 3, 4).astype(np.float32)
    out = jax.vmap(lambda x: rms_norm(x, vmap_method=method), in_axes=1)(xs)
    expected = np.stack([_rms_ref(xs[:, i]) for i in range(3)])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_vmap_jaxprs_follow_the_method(kernels):
    seq = jax.make_jaxpr(jax.vmap(functools.partial(rms_norm, vmap_method="sequential")))(X)
    assert "scan[" in str(seq) and "ffi_call[" in str(seq)
    bcast = str(jax.make_jaxpr(jax.vmap(rms_norm))(X))
    assert "scan[" not in bcast and "f32[3,5] = ffi_call[" in bcast
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.vmap(functools.partial(rms_norm, vmap_method=None))(X)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def rms_norm_diff(x, eps=1e-5):
    return rms_norm(x, eps)


def _rms_fwd(x, eps):
    y, res = ffi.ffi_call("rms_norm_fwd", (SDS(x.shape, x.dtype), SDS(x.shape[:-1], x.dtype)),
                          vmap_method="broadcast_all")(x, eps=np.float32(eps))
    return y, (res, x)


def _rms_bwd(eps, res, ct):
    scale, x = res
    return (ffi.ffi_call("rms_norm_bwd", SDS(x.shape, x.dtype), vmap_method="broadcast_all")(
        scale, x, ct),)


rms_norm_diff.defvjp(_rms_fwd, _rms_bwd)


def test_grad_through_custom_vjp_matches_finite_differences(kernels):
    w = np.random.RandomState(2).randn(*X.shape)
    loss = lambda x: (rms_norm_diff(x) * w.astype(np.float32)).sum()
    g = np.asarray(jax.jit(jax.grad(loss))(X), np.float64)
    ref = lambda x: (_rms_ref(x) * w).sum()
    eps, fd = 1e-6, np.zeros_like(g)
    x64 = X.astype(np.float64)
    for idx in np.ndindex(X.shape):
        d = np.zeros_like(x64)
        d[idx] = eps
        fd[idx] = (ref(x64 + d) - ref(x64 - d)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=2e-3, atol=2e-4)
    gv = jax.vmap(jax.grad(lambda x: (rms_norm_diff(x) * w[0].astype(np.float32)).sum()))(X)
    np.testing.assert_allclose(gv[0], g[0], rtol=1e-5, atol=1e-6)


def test_ffi_call_cannot_be_differentiated_directly(kernels):
    with pytest.raises(ValueError, match="The FFI call to `rms_norm` cannot be differentiated"):
        jax.grad(lambda x: rms_norm(x).sum())(X)


def test_every_attribute_kind_reaches_the_kernel(kernels):
    out = jax.jit(lambda: ffi.ffi_call("attributes", SDS((9,), np.float64))(
        a_i32=np.int32(-3), a_i64=np.int64(2 ** 40), a_f32=np.float32(1.5), a_f64=2.25,
        flag=True, name="hello", values=np.array([1, 2, 3], np.int64),
        params={"scale": 0.5, "count": np.int64(7)}))()
    np.testing.assert_array_equal(out, [-3, 2 ** 40, 1.5, 2.25, 1, 5, 6, 0.5, 7])


def test_side_effecting_call_runs_every_time(kernels):
    counter = ffi.ffi_call("counter", SDS((), np.int32), has_side_effect=True)
    f = jax.jit(lambda x: (counter(index=11), x * 2)[1])  # result unused: still runs
    f(1.0)
    f(2.0)
    assert int(counter(index=11)) == 3
    from traxla.ir.rules.ffi import ffi_effect
    assert jax.make_jaxpr(lambda: counter(index=11))().effects == {ffi_effect}
    g = jax.grad(lambda x: (counter(index=11), jax.lax.cond(x > 0, lambda: x * 2, lambda: x))[1])
    g(1.0)  # partial evaluation and DCE keep the call
    assert int(counter(index=11)) == 5


def test_jaxpr_prints_as_jax():
    f = ffi.ffi_call("some_target", SDS((3,), np.float32), vmap_method="sequential")
    text = str(jax.make_jaxpr(lambda x: f(x, scale=np.float32(2.0), n=np.int64(3), s="abc",
                                          arr=np.arange(3, dtype=np.int32)))(jnp.ones(3)))
    assert text == """{ lambda ; a:f32[3]. let
    b:f32[3] = ffi_call[
      attributes=(('arr', HashableArray(array([0, 1, 2], dtype=int32))), ('n', np.int64(3)), ('s', 'abc'), ('scale', np.float32(2.0)))
      custom_call_api_version=4
      has_side_effect=False
      input_layouts=((0,),)
      input_output_aliases=()
      legacy_backend_config=None
      output_layouts=((0,),)
      result_avals=(ShapedArray(float32[3]),)
      target_name=some_target
      vmap_method=sequential
    ] a
  in (b,) }"""
    hlo = jax.jit(lambda x: f(x, scale=np.float32(2.0), d={"a": np.int32(1)})).lower(
        jnp.ones(3)).as_text()
    assert ('stablehlo.custom_call @some_target(%arg0) {backend_config = "", '
            'mhlo.backend_config = {d = {a = 1 : i32}, scale = 2.000000e+00 : f32}, '
            'operand_layouts = [dense<0> : tensor<1xindex>], '
            'result_layouts = [dense<0> : tensor<1xindex>]}') in hlo


def test_unregistered_target_names_it_at_compile_time():
    f = ffi.ffi_call("no_such_target_anywhere", SDS((2,), np.float32))
    with pytest.raises(RuntimeError, match="no_such_target_anywhere.*register_ffi_target"):
        jax.jit(f)(np.ones(2, np.float32))
    assert float(jax.jit(lambda x: x + 1)(1.0)) == 2.0  # the process keeps working


def test_kernel_errors_and_wrong_declarations_raise(kernels):
    with pytest.raises(RuntimeError, match="eps must be positive"):
        rms_norm_jit(X, -1.0, "broadcast_all")
    with pytest.raises(RuntimeError, match="the result has 2 elements; expected 15"):
        ffi.ffi_call("rms_norm", SDS((2,), np.float32))(X, eps=np.float32(1e-5))
    with pytest.raises(RuntimeError, match="Wrong number of attributes"):
        ffi.ffi_call("attributes", SDS((9,), np.float64))(a_i32=np.int32(1))
    with pytest.raises(TypeError, match="unsupported attribute type for eps: object"):
        ffi.ffi_call("rms_norm", SDS(X.shape, np.float32))(X, eps=object())
    with pytest.raises(ValueError, match="must have 'shape' and 'dtype'"):
        ffi.ffi_call("rms_norm", [3])
    with pytest.raises(ValueError, match="vmap_method must be on of"):
        ffi.ffi_call("rms_norm", SDS((2,), np.float32), vmap_method="bogus")
    np.testing.assert_allclose(rms_norm_jit(X, 1e-5, "broadcast_all"), _rms_ref(X), rtol=1e-5,
                               atol=1e-6)


def test_registrations_dict_from_an_extension_module(build_dir):
    """A library written as JAX's tutorial writes it (``registrations()``) registers as is."""
    ext = os.path.join(build_dir, "traxla_ffi_example_ext.so")
    if not os.path.exists(ext):
        pytest.skip("the Python headers are not installed: the extension was not built")
    sys.path.insert(0, build_dir)
    try:
        import traxla_ffi_example_ext
    finally:
        sys.path.remove(build_dir)
    for name, capsule in traxla_ffi_example_ext.registrations().items():
        ffi.register_ffi_target("ext_" + name, capsule, platform="cpu")
    out = ffi.ffi_call("ext_rms_norm", SDS(X.shape, X.dtype))(X, eps=np.float32(1e-5))
    np.testing.assert_allclose(out, _rms_ref(X), rtol=1e-5, atol=1e-6)


def test_example_runs_with_jax_names(build_dir):
    """examples/ffi/rms_norm.py uses only JAX's names (jax.ffi.*, jax.ShapeDtypeStruct)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "ffi_rms_norm_example", os.path.join(ROOT, "examples", "ffi", "rms_norm.py"))
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    errors = example.main(build_dir)
    assert errors["jit"] < 1e-5 and errors["vmap"] < 1e-5 and errors["grad"] < 1e-4, errors
    out = jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(X.shape, X.dtype))(
        X, eps=np.float32(1e-5))
    np.testing.assert_allclose(out, _rms_ref(X), rtol=1e-5, atol=1e-6)

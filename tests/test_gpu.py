"""The CUDA path: plugin discovery, platform selection and their errors run everywhere;
tests marked ``gpu`` run programs on a GPU and are skipped where there is none
(``tools/gpu_check.sh`` runs them on a GPU machine)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import traxla
import traxla.numpy as jnp
from traxla.runtime import xla_adapter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code, env_extra=None, pythonpath=()):
    """Runs ``code`` in a fresh interpreter (platform choice is per process)."""
    env = dict(os.environ)
    env.pop("JAX_PLATFORMS", None)
    env.pop("TRAXLA_PLATFORMS", None)
    env["PYTHONPATH"] = os.pathsep.join([*pythonpath, REPO])
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, env=env)
    return proc


def _has_gpu():
    try:
        return traxla.default_backend() == "gpu"
    except RuntimeError:
        return False


gpu = pytest.mark.skipif(not _has_gpu(), reason="no GPU (and CUDA plugin) on this machine; "
                                                "tools/gpu_check.sh runs these on one")


def _fake_plugin(tmp_path, pjrt_version, so_bytes=b"not a shared object"):
    """A site folder holding a CUDA plugin layout: jax_plugins/xla_cuda12/xla_cuda_plugin.so
    and the distribution metadata of jax-cuda12-pjrt at ``pjrt_version``."""
    site = tmp_path / "site"
    plugin = site / "jax_plugins" / "xla_cuda12"
    plugin.mkdir(parents=True)
    (plugin / "xla_cuda_plugin.so").write_bytes(so_bytes)
    info = site / f"jax_cuda12_pjrt-{pjrt_version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: jax-cuda12-pjrt\n"
                                   f"Version: {pjrt_version}\n")
    return str(site)


# -- without a GPU ------------------------------------------------------------------------------

@pytest.mark.skipif(_has_gpu(), reason="checks the CPU-only behaviour")
def test_cpu_only_machine_selects_cpu_and_refuses_gpu():
    assert traxla.default_backend() == "cpu"
    assert traxla.devices() == traxla.devices("cpu")
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested, but no platforms "
                                           "that are instances of gpu are present. Platforms "
                                           "present are: cpu"):
        traxla.devices("gpu")
    with pytest.raises(RuntimeError, match=r"Unknown backend foo. Available backends are \['cpu'\]"):
        traxla.devices("foo")


def test_requested_cuda_without_plugin_says_what_to_install():
    proc = _run("""
        import traxla, traxla.numpy as jnp
        try:
            traxla.devices()
        except RuntimeError as e:
            print("ERR", e)
        traxla.config.update("platforms", "cpu")     # CPU keeps working
        print("CPU", float((jnp.ones(2) + 1).sum()))
    """, {"JAX_PLATFORMS": "cuda"})
    assert proc.returncode == 0, proc.stderr
    if "ERR" not in proc.stdout:
        pytest.skip("a CUDA plugin and GPU are present")
    err = proc.stdout.split("ERR ", 1)[1].splitlines()[0]
    assert err.startswith("Unable to initialize backend 'cuda': ")
    assert "pip install" in err or "no visible GPU" in err
    assert "JAX_PLATFORMS=''" in err
    assert "CPU 4.0" in proc.stdout


def test_unknown_platform_name_in_config():
    proc = _run("""
        import traxla
        try:
            traxla.devices()
        except RuntimeError as e:
            print("ERR", e)
    """, {"JAX_PLATFORMS": "foo"})
    assert "ERR Unable to initialize backend 'foo': Backend 'foo' is not in the list of known " \
           "backends: ['cpu', 'cuda', 'tpu']." in proc.stdout, proc.stdout + proc.stderr


def test_plugin_version_mismatch_is_one_line(tmp_path):
    site = _fake_plugin(tmp_path, "0.9.0")
    proc = _run("""
        import sys, traxla
        try:
            traxla.devices("cuda")
        except RuntimeError as e:
            print("ERR", e)
        assert traxla.default_backend() == "cpu"      # auto mode falls back to the CPU
        assert "jax" not in sys.modules
        print("OK")
    """, pythonpath=[site])
    assert proc.returncode == 0, proc.stderr
    assert "the CUDA plugin jax-cuda12-pjrt 0.9.0 does not match jaxlib " in proc.stdout
    assert "pip install" in proc.stdout and proc.stdout.strip().endswith("OK")


def test_broken_plugin_library_is_reported_and_cpu_keeps_working(tmp_path):
    site = _fake_plugin(tmp_path, xla_adapter.JAXLIB_VERSION)
    proc = _run("""
        import traxla, traxla.numpy as jnp
        try:
            traxla.devices("gpu")
        except RuntimeError as e:
            print("ERR", e)
        print("CPU", float(jnp.arange(3.0).sum()))
    """, {"JAX_PLATFORMS": "cuda,cpu"}, pythonpath=[site])
    assert "ERR Unable to initialize backend 'cuda': could not load the CUDA plugin " in proc.stdout, \
        proc.stdout + proc.stderr


def test_platform_is_fixed_once_computation_started():
    traxla.devices()
    current = traxla.config.read("platforms")
    with pytest.raises(RuntimeError, match="must run before the first computation"):
        traxla.config.update("platforms", "cuda" if current != "cuda" else "cpu")


def test_readback_without_buffer_protocol():
    """The copy-out path GPU buffers use, exercised on a CPU buffer."""
    x = jnp.arange(4.0)
    np.testing.assert_array_equal(xla_adapter.to_numpy_any(x._buf), np.arange(4.0, dtype=np.float32))


def test_lowering_target_follows_default_backend():
    text = traxla.jit(lambda x: x + 1).lower(np.ones(2, np.float32)).as_text()
    assert "stablehlo.add" in text
    from traxla.lowering import module
    assert module._target["platform"] == traxla.devices()[0].platform.replace("gpu", "cuda")


# -- on a GPU ---------------------------------------------------------------------------------

@gpu
def test_gpu_devices_and_placement():
    dev = traxla.devices("gpu")[0]
    assert dev.platform == "gpu" and "Cuda" in repr(dev)
    x = traxla.device_put(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert x.device.platform == "gpu"
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(2, 3))


@gpu
def test_gpu_jit_matches_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 32), np.float32), rng.standard_normal((32, 16), np.float32)
    f = traxla.jit(lambda a, b: jnp.tanh(a @ b).sum(axis=0))
    np.testing.assert_allclose(np.asarray(f(a, b)), np.tanh(a @ b).sum(axis=0), rtol=2e-4, atol=2e-4)


@gpu
def test_gpu_grad_vmap_and_bf16_readback():
    g = traxla.grad(lambda w: jnp.sum(jnp.sin(w) ** 2))(jnp.arange(4.0))
    np.testing.assert_allclose(np.asarray(g), np.sin(2 * np.arange(4.0)), rtol=1e-5, atol=1e-6)
    v = traxla.vmap(lambda r: r @ r)(jnp.ones((3, 5)))
    np.testing.assert_array_equal(np.asarray(v), np.full(3, 5.0))
    h = jnp.arange(4.0).astype(jnp.bfloat16) * 2
    np.testing.assert_array_equal(np.asarray(h).astype(np.float32), [0, 2, 4, 6])

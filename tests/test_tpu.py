"""The TPU tier (``pytest -m tpu``; tools/tpu_check.sh): devices, kinds, memory stats,
transfers both ways, donation and a differential run on the chip. Skipped without a TPU
(tests/conftest.py); the CPU-side parts of the platform layer are in test_tpu_platform.py."""
import numpy as np
import pytest

import traxla
import traxla.numpy as jnp
from traxla import lax

pytestmark = pytest.mark.tpu


def test_tpu_is_the_default_backend_with_jax_device_names():
    assert traxla.default_backend() == "tpu"
    dev = traxla.devices()[0]
    assert dev.platform == "tpu"
    assert dev.device_kind.startswith("TPU")          # "TPU v5 lite" on a v5e
    assert repr(dev).startswith("TpuDevice(id=0, process_index=0, coords=(")
    assert "core_on_chip=" in repr(dev)
    assert traxla.devices("tpu") == traxla.devices()
    assert traxla.local_devices(backend="tpu") == traxla.local_devices()


def test_cpu_devices_beside_the_tpu():
    cpu = traxla.devices("cpu")
    assert [repr(d) for d in cpu] == ["CpuDevice(id=0)"]
    assert traxla.local_devices(backend="cpu") == cpu


def test_memory_stats_report_the_allocator():
    stats = traxla.devices()[0].memory_stats()
    assert stats["bytes_limit"] > 1 << 30
    before = stats["bytes_in_use"]
    x = jnp.ones((1024, 1024), jnp.float32)
    x.block_until_ready()
    assert traxla.devices()[0].memory_stats()["bytes_in_use"] >= before + 4 * 1024 * 1024
    del x


def test_device_put_between_cpu_and_tpu():
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    cpu, tpu = traxla.devices("cpu")[0], traxla.devices()[0]
    on_cpu = traxla.device_put(host, cpu)
    assert on_cpu.devices() == {cpu}
    on_tpu = traxla.device_put(on_cpu, tpu)
    assert on_tpu.devices() == {tpu}
    back = traxla.device_put(on_tpu * 2, cpu)
    assert back.devices() == {cpu}
    np.testing.assert_array_equal(np.asarray(back), host * 2)
    # computing with a CPU-placed array runs on the CPU, as in JAX (committed arrays)
    tripled = back * 1.5
    assert tripled.devices() == {cpu}
    np.testing.assert_array_equal(np.asarray(tripled), host * 3)


def test_default_device_and_jit_backend_run_on_the_cpu_beside_the_tpu():
    cpu = traxla.devices("cpu")[0]
    with traxla.default_device(cpu):
        x = jnp.arange(4.0)
        y = traxla.jit(lambda v: jnp.sin(v) * 2)(x)
        key = traxla.random.normal(traxla.random.key(0), (3,))
    assert x.devices() == {cpu} and y.devices() == {cpu} and key.devices() == {cpu}
    assert not y.committed
    np.testing.assert_allclose(np.asarray(y), np.sin(np.arange(4.0)) * 2, rtol=1e-6)
    z = traxla.jit(lambda v: v + 1, backend="cpu")(np.float32(1))
    assert z.devices() == {cpu} and z.committed and float(z) == 2.0
    w = traxla.jit(lambda v: v + 1, device=cpu)(jnp.ones(2))  # a TPU operand moves over
    assert w.devices() == {cpu}
    with traxla.default_device("cpu"):
        assert (jnp.ones(2) + 1).devices() == {cpu}
    assert jnp.ones(2).devices() == {traxla.devices()[0]}


def test_donated_buffer_is_reused_and_deleted():
    f = traxla.jit(lambda x: x * 2 + 1, donate_argnums=0)
    x = jnp.ones((2048, 2048), jnp.float32)
    x.block_until_ready()
    y = f(x)
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x)
    np.testing.assert_array_equal(np.asarray(y[:2, :2]), np.full((2, 2), 3.0, np.float32))


def test_bfloat16_and_readback():
    x = jnp.arange(8, dtype=jnp.bfloat16) * 2
    assert x.dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(x).astype(np.float32), np.arange(8) * 2.0)


# Small programs against values computed here on the host (exact where the chip is exact:
# integers, adds, layout ops; matmuls under 'highest' precision to float32 accuracy).
_RNG = np.random.default_rng(0)
A = _RNG.standard_normal((64, 64)).astype(np.float32)
B = _RNG.standard_normal((64, 64)).astype(np.float32)
I = _RNG.integers(-100, 100, (16, 16)).astype(np.int32)

_EXACT = {
    "add": (lambda a, b: a + b, (A, B), lambda a, b: a + b),
    "int matmul": (lambda i: i @ i, (I,), lambda i: i @ i),
    "transpose reshape": (lambda a: a.T.reshape(32, 128), (A,), lambda a: a.T.reshape(32, 128)),
    "cumsum int": (lambda i: jnp.cumsum(i, axis=0), (I,), lambda i: np.cumsum(i, axis=0)),
    "sort": (lambda a: jnp.sort(a, axis=1), (A,), lambda a: np.sort(a, axis=1)),
    "argmax": (lambda a: jnp.argmax(a, axis=0), (A,), lambda a: np.argmax(a, axis=0)),
    "where": (lambda a, b: jnp.where(a > b, a, b), (A, B), np.maximum),
    "scan sum": (lambda i: lax.scan(lambda c, x: (c + x, c), jnp.zeros(16, jnp.int32), i),
                 (I,), lambda i: (i.sum(0), np.concatenate([np.zeros((1, 16), np.int32),
                                                            np.cumsum(i, 0)[:-1]]))),
}
_CLOSE = {
    "matmul highest": (lambda a, b: jnp.dot(a, b, precision="highest"), (A, B),
                       lambda a, b: a @ b, 1e-5),
    "tanh exp": (lambda a: jnp.tanh(a) * jnp.exp(a / 4), (A,),
                 lambda a: np.tanh(a) * np.exp(a / 4), 2e-4),  # the TPU's tanh/exp: ~1e-4
    "softmax": (lambda a: traxla.nn.softmax(a, axis=-1), (A,),
                lambda a: np.exp(a - a.max(-1, keepdims=True))
                / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True), 1e-5),
    "grad": (traxla.grad(lambda a: jnp.sum(jnp.sin(a) ** 2)), (A,),
             lambda a: 2 * np.sin(a) * np.cos(a), 1e-5),
}


@pytest.mark.parametrize("name", sorted(_EXACT))
def test_exact_programs_match_the_host(name):
    fn, args, ref = _EXACT[name]
    got, want = traxla.jit(fn)(*args), ref(*args)
    for g, w in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, want))):
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("name", sorted(_CLOSE))
def test_float_programs_match_the_host(name):
    fn, args, ref, rtol = _CLOSE[name]
    np.testing.assert_allclose(np.asarray(traxla.jit(fn)(*args)), ref(*args), rtol=rtol,
                               atol=rtol)


def test_default_matmul_precision_changes_the_tpu_result():
    # bf16 passes (DEFAULT) vs f32 (HIGHEST): the chip really uses the precision asked for
    f = lambda a, b: a @ b  # noqa: E731
    with traxla.default_matmul_precision("highest"):
        hi = np.asarray(traxla.jit(f)(A, B))
    lo = np.asarray(traxla.jit(f)(A, B))
    exact = A.astype(np.float64) @ B.astype(np.float64)
    assert np.abs(hi - exact).max() < 1e-4
    assert np.abs(lo - exact).max() > np.abs(hi - exact).max()


def test_approx_max_k_runs_the_tpu_approx_top_k():
    x = np.random.default_rng(1).permutation(256).astype(np.float32).reshape(2, 128)
    values, indices = traxla.jit(lambda x: lax.approx_max_k(x, 4))(x)
    values, indices = np.asarray(values), np.asarray(indices)
    assert values.shape == (2, 4) and indices.shape == (2, 4)
    np.testing.assert_array_equal(np.take_along_axis(x, indices, axis=1), values)
    assert (np.diff(values, axis=1) <= 0).all()  # sorted, largest first


def test_max_pool_gradient_with_padding():
    # the TPU's select_and_scatter with its own padding (JAX's TPU lowering)
    x = np.random.default_rng(2).permutation(49).astype(np.float32).reshape(1, 7, 7, 1)
    grad = traxla.jit(traxla.grad(lambda x: lax.reduce_window(
        x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME").sum()))(x)
    want = np.zeros_like(x)
    for i in range(0, 7, 2):
        for j in range(0, 7, 2):
            block = x[0, i:i + 2, j:j + 2, 0]
            a, b = np.unravel_index(np.argmax(block), block.shape)
            want[0, i + a, j + b, 0] += 1
    np.testing.assert_array_equal(np.asarray(grad), want)

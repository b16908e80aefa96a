"""The platform layer without a TPU: lowering for a platform that is not present (compared
with JAX's own lowering for it), default_matmul_precision as JAX, the TPU's errors on a
machine without one. The TPU tier itself is test_tpu.py."""
import os
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import jax
import jax.export  # noqa: F401 (jax.export.export)
import jax.numpy as jnp_
from jax import lax as jlax

import traxla
import traxla.export  # noqa: F401
import traxla.numpy as tnp
from traxla import lax as tlax

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
K = np.ones((1, 1, 2, 2), np.float32)
I = np.arange(12, dtype=np.int32).reshape(4, 3)

_OP = re.compile(r"((?:stablehlo|chlo|func|sdy)\.[a-z_]+)")
_CC = re.compile(r"custom_call @([\w.$-]+)")


def _structure(text):
    """The ops in order and the custom-call targets: names, locations and SSA numbering
    stripped (they differ between the two lowerings, meaning nothing)."""
    ops = [m.group(1) for line in text.splitlines()
           for m in [_OP.search(line.split(" = ", 1)[-1])] if m]
    return ops, sorted(set(_CC.findall(text)))


def _lower(jit, fn, args, platforms):
    return jit(fn).trace(*args).lower(lowering_platforms=platforms).as_text()


# (name, function of (numpy namespace, lax), arguments)
_PROGRAMS = [
    ("elementwise", lambda np_, lax_: lambda x: np_.tanh(x) * np_.exp(x) + 1.0, (X,)),
    ("matmul", lambda np_, lax_: lambda x: x @ x.T, (X,)),
    ("matmul int x float", lambda np_, lax_: lambda i, x: i @ x, (I, X)),
    ("dot bf16 to f32", lambda np_, lax_: lambda x: lax_.dot(
        x.astype(np_.bfloat16), x.T.astype(np_.bfloat16), preferred_element_type=np_.float32),
     (X,)),
    ("reductions", lambda np_, lax_: lambda x: (x.sum(0), x.max(1), x.min()), (X,)),
    ("conv", lambda np_, lax_: lambda k: lax_.conv(k, k, (1, 1), "SAME"), (K,)),
    ("cumsum", lambda np_, lax_: lambda x: np_.cumsum(x, axis=1), (X,)),
    ("sort", lambda np_, lax_: lambda x: np_.sort(x, axis=0), (X,)),
    ("scan", lambda np_, lax_: lambda x: lax_.scan(lambda c, r: (c + r, c * 2), x[0], x), (X,)),
    ("cond", lambda np_, lax_: lambda x: lax_.cond(x.sum() > 0, np_.sin, np_.cos, x), (X,)),
    ("gather", lambda np_, lax_: lambda x, i: x[i % 3], (X, I[:, 0])),
    ("rng bits", lambda np_, lax_: lambda x: lax_.rng_bit_generator(
        np_.zeros(4, np_.uint32), (2, 2))[1], (X,)),
]


@pytest.mark.parametrize("name", [p[0] for p in _PROGRAMS])
def test_tpu_lowering_has_jax_structure(name):
    # What differs between the platforms in JAX differs the same way in traxla: the same
    # custom-call targets for TPU, and the same ops wherever the CPU lowerings agree (some
    # programs lower to other ops on every platform, e.g. cumsum: not a TPU matter).
    _, build, args = next(p for p in _PROGRAMS if p[0] == name)
    jax_cpu, jax_tpu = (_structure(_lower(jax.jit, build(jnp_, jlax), args, (p,)))
                        for p in ("cpu", "tpu"))
    trx_cpu, trx_tpu = (_structure(_lower(traxla.jit, build(tnp, tlax), args, (p,)))
                        for p in ("cpu", "tpu"))
    assert trx_tpu[1] == jax_tpu[1]
    if trx_cpu == jax_cpu:
        assert trx_tpu == jax_tpu
    assert (trx_cpu == trx_tpu) == (jax_cpu == jax_tpu)


@pytest.mark.parametrize("dtype", [np.float32, "bfloat16"])
def test_approx_top_k_on_tpu_is_jax_approx_top_k_custom_call(dtype):
    x = X.astype(jnp_.bfloat16 if dtype == "bfloat16" else dtype)
    for build in (lambda l: lambda x: l.approx_max_k(x, 2),
                  lambda l: lambda x: l.approx_min_k(x, 2, reduction_dimension=0)):
        want = _lower(jax.jit, build(jlax), (x,), ("tpu",))
        assert "@ApproxTopK" in want
        assert _lower(traxla.jit, build(tlax), (x,), ("tpu",)) == want


def test_max_pool_gradient_keeps_its_padding_on_tpu_only():
    # select_and_scatter: JAX pads explicitly on CPU/GPU and uses the op's padding on TPU
    x = np.arange(49, dtype=np.float32).reshape(1, 7, 7, 1)

    def build(mod, lax_):
        return lambda x: mod.grad(lambda x: lax_.reduce_window(
            x, -np.inf, lax_.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME").sum())(x)
    for platform, padded in (("cpu", True), ("tpu", False)):
        text = _lower(traxla.jit, build(traxla, tlax), (x,), (platform,))
        assert ("stablehlo.pad" in text) == padded
    want = _lower(jax.jit, build(jax, jlax), (x,), ("tpu",))
    got = _lower(traxla.jit, build(traxla, tlax), (x,), ("tpu",))
    # (the op and its regions; SSA names differ: traxla keeps the unused forward pass)
    scatter = lambda t: re.sub(r"%[\w#]+", "%v", t[t.index('"stablehlo.select_and_scatter"'):])  # noqa: E731,E501
    assert scatter(got) == scatter(want)


def test_mixed_dtype_matmul_is_converted_on_cpu_but_not_on_tpu():
    fn = lambda i, x: i @ x  # noqa: E731
    assert "stablehlo.convert" in _lower(traxla.jit, fn, (I, X), ("cpu",))
    assert "stablehlo.convert" not in _lower(traxla.jit, fn, (I, X), ("tpu",))


def test_lowering_for_an_absent_platform_then_compiling_for_this_one():
    lowered = traxla.jit(lambda x: x + 1).trace(X).lower(lowering_platforms=("tpu",))
    np.testing.assert_array_equal(np.asarray(lowered.compile()(X)), X + 1)


def _multi_text(mod, np_, lax_, platforms, export=False):
    def f(x, i):
        y = mod.jit(lambda a: np_.sin(a) @ a.T)(x) @ x  # a nested jit: takes the index too
        return y * 2.0 + (i @ x)
    if export:
        return mod.export.export(mod.jit(f), platforms=platforms)(X, I.T[:, :3]).mlir_module()
    return _lower(mod.jit, f, (X, I.T[:, :3]), platforms)


def _strip_locations(text):
    return "\n".join(re.sub(r" loc\([^)]*\)", "", line) for line in text.splitlines()
                     if not line.startswith("#loc"))


@pytest.mark.parametrize("platforms", [("cpu", "tpu"), ("tpu", "cpu"), ("cpu", "cuda", "tpu")])
def test_several_platforms_lower_as_jax_per_equation(platforms):
    # JAX's form: each function takes the platform index, and an equation whose rules differ
    # by platform is a case (platform -> rule, then one branch per rule)
    want = _multi_text(jax, jnp_, jlax, platforms)
    got = _multi_text(traxla, tnp, tlax, platforms)
    rename = lambda t: t.replace('@"<lambda>"', "@_lambda")  # noqa: E731 (a known naming diff)
    assert rename(got) == rename(want)


def test_export_for_several_platforms_is_jax_text():
    want = _strip_locations(_multi_text(jax, jnp_, jlax, ("cpu", "tpu"), export=True))
    got = _strip_locations(_multi_text(traxla, tnp, tlax, ("cpu", "tpu"), export=True))
    rename = lambda t: t.replace('@"<lambda>"', "@_lambda")  # noqa: E731
    assert _structure(rename(got)) == _structure(rename(want))


def test_lowering_for_several_platforms_takes_the_platform_index():
    text = _lower(traxla.jit, lambda x: x @ x.T, (X,), ("cpu", "tpu"))
    assert re.search(r'@main\(%arg0: tensor<i32> \{jax.global_constant = "_platform_index"\}',
                     text)
    assert "stablehlo.case" in text
    lowered = traxla.jit(lambda x: x * 2).trace(X).lower(lowering_platforms=("cpu", "tpu"))
    with pytest.raises(NotImplementedError, match="lowered for several platforms"):
        lowered.compile()


def test_export_for_tpu_and_for_cpu_and_tpu():
    from traxla import export
    exp = export.export(traxla.jit(lambda x: x @ x.T), platforms=("tpu",))(X)
    assert exp.platforms == ("tpu",)
    multi = export.export(traxla.jit(lambda x: x @ x.T), platforms=("cpu", "tpu"))(X)
    assert multi.platforms == ("cpu", "tpu")
    np.testing.assert_allclose(np.asarray(multi.call(X)), X @ X.T, rtol=1e-6)


def test_gpu_lowering_without_a_gpu_is_jax_error():
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested, but no platforms "
                                           "that are instances of gpu are present"):
        traxla.jit(lambda x: x).trace(X).lower(lowering_platforms=("gpu",))


# -- default_matmul_precision -----------------------------------------------------------------

def _precisions(mod, np_, lax_, value):
    with mod.default_matmul_precision(value):
        dot = mod.make_jaxpr(np_.dot)(X, X.T).jaxpr.eqns[0].params
        conv = mod.make_jaxpr(lambda k: lax_.conv(k, k, (1, 1), "SAME"))(K).jaxpr.eqns[0].params
        explicit = mod.make_jaxpr(lambda a, b: np_.dot(a, b, precision="high"))(X, X.T)
    return (str(dot["precision"]), str(dot["preferred_element_type"]), str(conv["precision"]),
            str(explicit.jaxpr.eqns[0].params["precision"]))


@pytest.mark.parametrize("value", ["highest", "float32", "bfloat16", "tensorfloat32", "high",
                                   "default", "F32_F32_F32", None])
def test_default_matmul_precision_in_jaxprs_as_jax(value):
    assert _precisions(traxla, tnp, tlax, value) == _precisions(jax, jnp_, jlax, value)


def test_default_matmul_precision_reaches_the_stablehlo_precision_config():
    with traxla.default_matmul_precision("highest"):
        text = traxla.jit(tnp.dot).lower(X, X.T).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text
    traxla.config.update("jax_default_matmul_precision", "tensorfloat32")
    try:
        text = traxla.jit(tnp.dot).lower(X, X.T).as_text()
    finally:
        traxla.config.update("jax_default_matmul_precision", None)
    assert "precision = [HIGH, HIGH]" in text


def test_default_matmul_precision_is_per_thread_and_keys_the_jit_cache():
    f = traxla.jit(lambda a, b: a @ b)
    seen = {}

    def trace(value):
        with traxla.default_matmul_precision(value):
            seen[value] = str(f.trace(X, X.T).jaxpr.eqns[0].params["precision"])
            f(X, X.T)

    threads = [threading.Thread(target=trace, args=(v,)) for v in ("highest", "bfloat16")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"highest": "(Precision.HIGHEST, Precision.HIGHEST)",
                    "bfloat16": "(Precision.DEFAULT, Precision.DEFAULT)"}
    assert str(f.trace(X, X.T).jaxpr.eqns[0].params["precision"]) == "None"


def test_bad_default_matmul_precision_is_jax_error():
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        with traxla.default_matmul_precision("fastest"):
            pass


# -- no TPU here --------------------------------------------------------------------------------

def test_requested_tpu_without_one_names_what_is_missing():
    from traxla.runtime import xla_adapter
    if xla_adapter.find_libtpu() and xla_adapter.tpu_chips_present():
        pytest.skip("a TPU is present")
    code = textwrap.dedent("""
        import traxla
        try:
            traxla.devices()
        except RuntimeError as e:
            print("ERR", e)
    """)
    env = {**os.environ, "JAX_PLATFORMS": "tpu", "PYTHONPATH": REPO}
    env.pop("TRAXLA_PLATFORMS", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env).stdout
    if xla_adapter.find_libtpu() is None:
        assert "ERR Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so" in out
    elif xla_adapter.tpu_chips_present() == 0:
        assert "ERR Unable to initialize backend 'tpu': no TPU chip found" in out
    assert "(set JAX_PLATFORMS='' to automatically choose an available backend)" in out


def test_cpu_machine_keeps_the_cpu_default_and_refuses_tpu_by_name():
    from traxla.runtime import xla_adapter
    if xla_adapter.find_libtpu() and xla_adapter.tpu_chips_present():
        pytest.skip("a TPU is present")
    assert traxla.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        traxla.devices("tpu")


def test_platform_dependent_exported_for_several_platforms_runs_the_cpu_branch():
    from traxla import export
    f = lambda x: tlax.platform_dependent(x, cpu=tnp.cos, tpu=tnp.sin)  # noqa: E731
    exp = export.export(traxla.jit(f), platforms=("tpu", "cpu"))(X)
    assert exp.mlir_module().count("stablehlo.case") >= 2
    np.testing.assert_allclose(np.asarray(exp.call(X)), np.cos(X), rtol=1e-6)
    # and JAX, calling traxla's artifact, picks the same branch
    pytest.importorskip("flatbuffers")  # (serialization needs it; the TPU machine lacks it)
    np.testing.assert_allclose(np.asarray(jax.export.deserialize(exp.serialize()).call(X)),
                               np.cos(X), rtol=1e-6)

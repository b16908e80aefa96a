"""lax names of issue #31's census: dot algorithms (``DotAlgorithm``, ``DotAlgorithmPreset``
as ``precision=``), and the small operations JAX 0.10.2's lax exports (checked against JAX:
jaxprs, lowered StableHLO where it shows the semantics, values, errors, transformations)."""
import ml_dtypes
import numpy as np
import pytest

import traxla
import traxla.lax as tl

jax = pytest.importorskip("jax")
jl = jax.lax

X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
Y = np.linspace(0.5, 2, 6, dtype=np.float32).reshape(3, 2)


def _both(fn, *args):
    return fn(traxla, tl, *args), fn(jax, jl, *args)


def _run_or_error(fn):
    try:
        return ("ok", np.asarray(fn()))
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return (type(e).__name__, str(e))


# -- dot algorithms ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", [p.name for p in jl.DotAlgorithmPreset])
def test_dot_algorithm_preset_on_cpu_as_jax(name):
    """Each preset computes (after rounding the operands to its types) or is refused with
    JAX's error: XLA's CPU backend ignores the algorithm attribute."""
    ours = _run_or_error(lambda: tl.dot(X, Y, precision=getattr(tl.DotAlgorithmPreset, name)))
    theirs = _run_or_error(lambda: jl.dot(X, Y, precision=getattr(jl.DotAlgorithmPreset, name)))
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours[1].dtype == theirs[1].dtype
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    else:
        assert ours[1] == theirs[1]


@pytest.mark.parametrize("precision", ["F16_F16_F16", "BF16_BF16_F32_X3", "F64_F64_F64",
                                       "F32_F32_F32"])
def test_dot_algorithm_lowering_matches_jax(precision):
    """The operands go in converted to the algorithm's types, the product accumulates in its
    type, and the module carries StableHLO's algorithm attribute."""
    ours, theirs = _both(lambda m, lax: m.jit(lambda a, b: lax.dot(a, b, precision=precision))
                         .lower(X, Y).as_text())
    assert ours == theirs


def test_dot_algorithm_bf16_operands_keep_their_type():
    xb = X.astype(ml_dtypes.bfloat16)
    ours, theirs = _both(lambda m, lax: m.jit(lambda a, b: lax.dot(
        a, b, precision=lax.DotAlgorithmPreset.BF16_BF16_F32)).lower(xb, xb.T).as_text())
    assert ours == theirs


def test_dot_algorithm_explicit_prints_and_is_refused_on_cpu_as_jax():
    def alg(lax):
        return lax.DotAlgorithm(np.float32, np.float32, np.float32)
    ours, theirs = _both(lambda m, lax: str(m.make_jaxpr(
        lambda a, b: lax.dot(a, b, precision=alg(lax)))(X, Y)))
    assert ours == theirs
    assert tl.DotAlgorithm._fields == jl.DotAlgorithm._fields
    assert tl.DotAlgorithm(np.float16, np.float16, np.float32) == \
        jl.DotAlgorithm(np.float16, np.float16, np.float32)
    ours = _run_or_error(lambda: tl.dot(X, Y, precision=alg(tl)))
    theirs = _run_or_error(lambda: jl.dot(X, Y, precision=alg(jl)))
    assert ours == theirs and ours[0] == "ValueError"


def test_dot_algorithm_under_grad_and_vmap():
    p = "F32_F32_F32"
    ours, theirs = _both(lambda m, lax: str(m.make_jaxpr(m.grad(
        lambda a: lax.dot(a, Y, precision=p).sum()))(X)))
    assert ours == theirs
    batch = np.stack([X, 2 * X])
    ours, theirs = _both(lambda m, lax: np.asarray(m.vmap(
        lambda a: lax.dot(a, Y, precision=lax.DotAlgorithmPreset.F16_F16_F16))(batch)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-3)


def test_conv_accepts_a_preset():
    lhs = np.ones((1, 1, 4), np.float32)
    rhs = np.ones((1, 1, 2), np.float32)
    ours, theirs = _both(lambda m, lax: np.asarray(lax.conv_general_dilated(
        lhs, rhs, (1,), "VALID", precision=lax.DotAlgorithmPreset.F32_F32_F32)))
    np.testing.assert_allclose(ours, theirs)

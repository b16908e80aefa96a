"""Lowering of transcendental unary ops as JAX: ``accuracy=`` (lax.Tolerance,
lax.AccuracyMode) printed in the jaxpr and lowered to StableHLO's ``result_accuracy``, and
complex sin/cos by JAX's formula."""
import re

import numpy as np
import pytest

import traxla

jax = pytest.importorskip("jax")

X = np.linspace(0.1, 2.0, 5, dtype=np.float32)
OPS = ("exp", "exp2", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan", "sqrt", "rsqrt",
       "cbrt", "logistic")
ACCURACIES = {
    "highest": lambda lax: lax.AccuracyMode.HIGHEST,
    "default": lambda lax: lax.AccuracyMode.DEFAULT,
    "tolerance": lambda lax: lax.Tolerance(atol=1e-3, ulps=2),
    "none": lambda lax: None,
}


def _accuracy_ops(module_text):
    """The ops that carry a result accuracy (JAX emits a dead copy without it, too)."""
    return [re.sub(r"^%\S+ = |loc\(.*\)", "", line.strip())
            for line in module_text.splitlines() if "result_accuracy" in line]


@pytest.mark.parametrize("accuracy", ACCURACIES)
@pytest.mark.parametrize("name", OPS)
def test_accuracy_lowers_and_prints_as_jax(name, accuracy, jax_side):
    def run(m):
        acc = ACCURACIES[accuracy](m.lax)
        fn = m.jit(lambda x: getattr(m.lax, name)(x, accuracy=acc))
        text = re.sub(r"<\S*Tolerance object at 0x\w+>", "<Tolerance>",
                      str(m.make_jaxpr(fn)(X)))
        return _accuracy_ops(fn.lower(X).as_text()), np.asarray(fn(X)), text
    j_ops, j_val, j_jaxpr = jax_side(lambda: run(jax))  # (stored: JAX is pinned)
    t_ops, t_val, t_jaxpr = run(traxla)
    assert t_ops == j_ops
    np.testing.assert_allclose(t_val, j_val, rtol=1e-6)
    assert t_jaxpr == j_jaxpr


def test_tolerance_validation_matches_jax():
    for kwargs in ({}, {"atol": -1.0}):
        with pytest.raises(ValueError) as ours:
            traxla.lax.Tolerance(**kwargs)
        with pytest.raises(ValueError) as theirs:
            jax.lax.Tolerance(**kwargs)
        assert str(ours.value) == str(theirs.value)


def test_unknown_accuracy_is_refused_at_lowering():
    with pytest.raises(NotImplementedError, match="Accuracy fast not supported"):
        traxla.jit(lambda x: traxla.lax.exp(x, accuracy="fast"))(X)


Z = np.array([0.3 + 0.7j, -1.2 + 2.5j, 30j, 100j, 2 - 0.001j, 0j, -3 - 40j], np.complex64)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_complex_sin_cos_bit_identical_with_jax(name):
    """JAX computes them by a formula with expm1 (not XLA's complex sine/cosine)."""
    expect = np.asarray(jax.jit(getattr(jax.numpy, name))(Z))
    np.testing.assert_array_equal(np.asarray(traxla.jit(getattr(traxla.numpy, name))(Z)), expect)
    np.testing.assert_array_equal(np.asarray(getattr(traxla.numpy, name)(Z)), expect)
    jac = [m.jit(m.jacfwd(lambda z: getattr(m.numpy, name)(z) * z, holomorphic=True))(Z[:3])
           for m in (jax, traxla)]
    np.testing.assert_array_equal(np.asarray(jac[1]), np.asarray(jac[0]))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "complex64"])
def test_logistic_lowers_as_jax_and_is_bit_identical(dtype):
    x = np.asarray(jax.numpy.asarray(np.linspace(-30, 30, 301, dtype=np.float32)).astype(dtype))
    expect = np.asarray(jax.jit(jax.nn.sigmoid)(x))
    np.testing.assert_array_equal(np.asarray(traxla.jit(traxla.nn.sigmoid)(x)), expect)
    ops = [[line.split("=")[1].split()[0] if "=" in line else line.split()[0]
            for line in m.jit(m.nn.sigmoid).lower(x).as_text().splitlines()
            if "stablehlo." in line and "return" not in line] for m in (jax, traxla)]
    assert ops[1] == ops[0]

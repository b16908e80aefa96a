"""Per-platform lowering rules: a rule registered for one platform overrides the default in
modules lowered for that platform only (JAX's ``register_lowering(..., platform=)``)."""
import numpy as np
import pytest

import traxla as tx
from traxla import export
from traxla.extend import core
from traxla.interpreters import mlir
from traxla.lowering import registry


def _demo_primitive(name):
    prim = core.Primitive(name)
    prim.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
    return prim


def _ops(platforms, fn, *args):
    text = export.export(tx.jit(fn), platforms=platforms)(*args).mlir_module()
    return "stablehlo.negate" in text, "stablehlo.exponential" in text


def test_platform_rule_overrides_the_default_only_on_its_platform():
    prim = _demo_primitive("platform_demo")
    mlir.register_lowering(prim, lambda ctx, x: [mlir.hlo.negate(x)])
    mlir.register_lowering(prim, lambda ctx, x: [mlir.hlo.exponential(x)], platform="gpu")
    fn = lambda x: prim.bind(x)
    assert float(tx.jit(fn)(np.float32(1.0))) == -1.0  # this machine: the default rule
    assert _ops(("cpu",), fn, np.float32(1.0)) == (True, False)
    assert _ops(("tpu",), fn, np.float32(1.0)) == (True, False)
    assert _ops(("cuda",), fn, np.float32(1.0)) == (False, True)  # "gpu" is CUDA and ROCm
    assert _ops(("rocm",), fn, np.float32(1.0)) == (False, True)
    assert _ops(("cpu", "cuda"), fn, np.float32(1.0)) == (True, True)


def test_platform_only_rule_refuses_other_platforms_naming_the_platform():
    prim = _demo_primitive("tpu_only_demo")
    mlir.register_lowering(prim, lambda ctx, x: [mlir.hlo.negate(x)], platform="tpu")
    fn = lambda x: prim.bind(x)
    assert _ops(("tpu",), fn, np.float32(1.0)) == (True, False)
    with pytest.raises(NotImplementedError,
                       match="No lowering rule for primitive 'tpu_only_demo' on platform 'cpu'"):
        tx.jit(fn)(np.float32(1.0))


def test_platform_rule_replaces_an_inline_op_on_its_platform():
    prim = next(p for p in registry.inline_ops if p.name == "exp")
    assert prim in registry.inline_ops  # one op emitted inline by the equation loop
    default_rules, default_inline = registry.rules_for("platform_without_rules")
    assert default_rules is registry.lowering_rules  # no rules of its own: no copy
    try:
        registry.register_lowering(prim, lambda ctx, x, **params: mlir.hlo.negate(x), platform="cuda")
        rules, inline = registry.rules_for("cuda")
        assert prim not in inline and prim in registry.inline_ops
        assert _ops(("cuda",), tx.numpy.exp, np.float32(1.0)) == (True, False)
        assert _ops(("cpu",), tx.numpy.exp, np.float32(1.0)) == (False, True)
    finally:
        registry.platform_rules["cuda"].pop(prim)
        registry._views.clear()

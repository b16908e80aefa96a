"""The equation loop's inline path (``lowering.registry.inline_ops``: one-op primitives
emitted without a rule call) must emit exactly what the primitives' rules emit, with the
same locations; and the whole-program pre-passes' shortcuts must agree with the exact
per-equation looks."""
import numpy as np
import pytest

import traxla
import traxla.numpy as jnp
from traxla import lax
from traxla.ir.jaxpr import eqns_with_subjaxprs, has_subjaxprs
from traxla.lowering import registry

X = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
W = np.linspace(0.5, 1.5, 12, dtype=np.float32).reshape(3, 4)


def _mixed(x, w):
    with traxla.named_scope("layer"):
        z = jnp.tanh(x @ w * 0.5 + 0.1)
    z = jnp.where(z > 0, z, 0.01 * z)
    e = jnp.exp(z - jnp.max(z, axis=1, keepdims=True))
    p = e / jnp.sum(e, axis=1, keepdims=True)
    q = p.reshape(4, 2).astype(jnp.int32).astype(jnp.float32) + p.T.reshape(4, 2)
    return lax.squeeze(q[:1], (0,)) - jnp.mean(x) ** 2, (x >= 0) & (x != 1), lax.abs(-x)


def _ints(x, w):
    i = x.astype(jnp.int32)
    u = x.astype(jnp.uint8)
    return (i << 2) >> 1, i % 3, u < 2, jnp.float32(2.0) ** x, jnp.maximum(x, 0.25)


def _keys(x, w):
    keys = traxla.random.split(traxla.random.key(0), 4)
    return traxla.random.key_data(jnp.broadcast_to(keys[:1], (3, 1)).reshape(3))


def _memos(x, w):
    """The inline path's no-call checks (an accuracy, complex sin/cos: the rule) and the
    module's attribute memos (dot_general by its dimension numbers, compare, broadcasts)."""
    c = x.astype(jnp.complex64) * 1j
    for _ in range(2):
        x = jnp.tanh(x @ w @ w.T) + (x > 0.25) - jnp.float32(0.5)
    return (jnp.sin(c), jnp.cos(c), lax.sin(x, accuracy=lax.AccuracyMode.HIGHEST),
            lax.tanh(x, accuracy=lax.Tolerance(atol=1e-3)), jnp.sin(x) + jnp.cos(x))


def _lowered_text(f):
    return traxla.jit(f).lower(X, W).as_text(debug_info=True)


@pytest.mark.parametrize("f", [_mixed, _ints, _keys, _memos], ids=lambda f: f.__name__)
def test_inline_ops_emit_what_their_rules_emit(f, monkeypatch):
    inline = _lowered_text(f)
    monkeypatch.setattr(registry, "inline_ops", {})
    monkeypatch.setattr(registry, "_views", {})  # the per-platform tables, rebuilt without them
    assert _lowered_text(f) == inline


def _repeated(x, w):
    for _ in range(3):  # the same locations again: cloned reductions, one callee for the calls
        x = x - jnp.max(x, axis=1, keepdims=True) + jnp.sum(x) ** 2
        x = jnp.where(x > 0, x, x ** 3) + jnp.min(x, axis=0)
    return x, jnp.all(x > 0), jnp.prod(x)


@pytest.mark.parametrize("f", [_mixed, _repeated], ids=lambda f: f.__name__)
def test_direct_rules_emit_what_their_rules_emit(f, monkeypatch):
    """The equation loop's direct rules (``registry.direct_rules``: reductions, cloned from
    the first at a location; inner jit calls; integer_pow) emit what the rules emit."""
    direct = _lowered_text(f)
    assert direct.count("stablehlo.reduce") >= (11 if f is _repeated else 2)
    monkeypatch.setattr(registry, "direct_rules", {})
    monkeypatch.setattr(registry, "_views", {})  # the per-platform tables, rebuilt without them
    assert _lowered_text(f) == direct


def test_every_inline_op_has_a_rule():
    for prim, (op_name, _, _) in registry.inline_ops.items():
        assert prim in registry.lowering_rules, prim
        assert op_name.startswith(("stablehlo.", "chlo.")), op_name


def test_nested_jaxprs_found_by_the_shortcut():
    def f(x, w):
        y = lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)  # branches: a tuple of jaxprs
        y = traxla.jit(lambda a: a * 2)(y)
        return lax.fori_loop(0, 2, lambda i, c: c + 1.0, y) @ w

    jaxpr = traxla.make_jaxpr(f)(X, W).jaxpr
    want = [e for e in jaxpr.eqns if e.params and has_subjaxprs(e.params)]
    assert len(want) >= 3
    assert eqns_with_subjaxprs(jaxpr) == want
    flat = traxla.make_jaxpr(lambda x, w: jnp.tanh(x @ w))(X, W).jaxpr
    assert eqns_with_subjaxprs(flat) == []

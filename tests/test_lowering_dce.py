"""The module a top-level ``jit`` hands to XLA is JAX's: without ``keep_unused`` the
equations no result depends on are dropped before lowering, and then the arguments only
they used (JAX's ``_prune_unused_inputs``); effectful equations stay. Compared with JAX."""
from __future__ import annotations

import re

import jax
import jax.numpy as jjnp
import numpy as np

import traxla
import traxla.numpy as tnp

X = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)


def _both(make):
    return make(jax, jjnp), make(traxla, tnp)


def _dead_code(m, np_):
    def f(x, y):
        np_.sin(y)  # no result depends on it
        return x * 2
    return f


def test_dead_equation_and_the_argument_only_it_uses_are_pruned_as_in_jax():
    jf, tf = _both(_dead_code)
    for keep_unused in (False, True):
        want = jax.jit(jf, keep_unused=keep_unused).lower(X, X).as_text()
        got = traxla.jit(tf, keep_unused=keep_unused).lower(X, X).as_text()
        assert got == want
        assert ("sine" in got) == keep_unused and ("%arg1" in got) == keep_unused
    np.testing.assert_array_equal(np.asarray(traxla.jit(tf)(X, X)), X * 2)
    compiled = traxla.jit(tf).lower(X, X).compile()
    np.testing.assert_array_equal(np.asarray(compiled(X, X)), X * 2)


def test_dead_effectful_equation_still_runs(capfd):
    def f(x, y):
        traxla.debug.print("y max {s}", s=y.max())
        return x + 1
    out = traxla.jit(f)(X, X)
    traxla.effects_barrier()
    np.testing.assert_array_equal(np.asarray(out), X + 1)
    assert "y max 1.0" in capfd.readouterr().out


def _ops(text):
    """The module's operations, constants set apart (JAX lowers a literal at each use,
    traxla once per value) and SSA names normalised."""
    text = re.sub(r"%cst(_\d+)?", "%cst", text)
    return [line for line in text.splitlines() if "stablehlo.constant" not in line]


def test_gradient_of_logsumexp_lowers_to_jax_operations():
    # logsumexp's max is stop_gradient'ed: its (dead) JVP equations are in the jaxpr, not
    # in the module
    def make(m, np_):
        def step(w, x):
            def loss(w):
                logits = x @ w
                return -np_.mean(logits - m.nn.logsumexp(logits, axis=-1, keepdims=True))
            return w - 0.1 * m.grad(loss)(w)
        return step
    jf, tf = _both(make)
    w = np.ones((3, 4), np.float32)
    assert _ops(traxla.jit(tf).lower(w, X).as_text()) == _ops(jax.jit(jf).lower(w, X).as_text())
    np.testing.assert_allclose(np.asarray(traxla.jit(tf)(w, X)), np.asarray(jax.jit(jf)(w, X)),
                               rtol=1e-6)


def test_scan_loop_body_indexes_by_its_counter_without_dead_operations():
    """A scan (unroll 1) steps with the loop counter itself, as JAX's module does: no
    multiply/add of the counter, and no index constant when nothing is sliced."""
    w = np.eye(3, dtype=np.float32) * 0.5
    h = np.ones(3, np.float32)

    def carry_only(w, h):
        return traxla.lax.scan(lambda h, _: (tnp.tanh(w @ h), None), h, None, length=4)[0]

    def with_xs(w, h):
        return traxla.lax.scan(lambda c, x: (c + x, c * x), h, tnp.stack([h, 2 * h]))

    text = traxla.jit(carry_only).lower(w, h).as_text()
    assert "multiply" not in text and text.count("stablehlo.constant") == 3  # 0, 4 and 1
    text = traxla.jit(with_xs).lower(w, h).as_text()
    assert re.search(r"multiply %iterArg,", text) is None  # (the counter is %iterArg)
    assert re.search(r"dynamic_slice %iterArg_\d+, %iterArg,", text)
    want = jax.jit(lambda w, h: jax.lax.scan(lambda c, x: (c + x, c * x), h,
                                             jjnp.stack([h, 2 * h])))(w, h)
    got = traxla.jit(with_xs)(w, h)
    for g, e in zip(jax.tree_util.tree_leaves(want), traxla.tree_util.tree_leaves(got)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
    np.testing.assert_allclose(np.asarray(traxla.jit(carry_only)(w, h)),
                               np.asarray(jax.jit(lambda w, h: jax.lax.scan(
                                   lambda h, _: (jjnp.tanh(w @ h), None), h, None, length=4)[0])(
                                       w, h)), rtol=1e-6)


def test_compile_options_are_jaxs_byte_for_byte(monkeypatch):
    """The options XLA compiles a one-device jit with are JAX's (sharding propagation
    allowed per parameter and per result, memory fitting level, no AutoFDO profile), so
    the same module compiles the same way and takes as long."""
    import jax._src.compiler as jax_compiler
    import traxla.runtime.xla_adapter.compiling as adapter  # (where compile() calls it)
    seen = {}
    jax_compile = jax_compiler.backend_compile_and_load

    def spy_jax(backend, module, devices, options, host_callbacks):
        seen["jax"] = options.SerializeAsString()
        return jax_compile(backend, module, devices, options, host_callbacks)
    traxla_options = adapter.compile_options

    def spy_traxla(*args, **kwargs):
        opts = traxla_options(*args, **kwargs)
        seen["traxla"] = opts.SerializeAsString()
        return opts
    monkeypatch.setattr(jax_compiler, "backend_compile_and_load", spy_jax)
    monkeypatch.setattr(adapter, "compile_options", spy_traxla)

    def f(w, h):
        for _ in range(6):  # enough operations for XLA's detailed logging, as in JAX
            h = w @ h + 1.0
        return h, w.sum()
    w = np.eye(3, dtype=np.float32)
    jax.jit(f)(w, X[0])
    traxla.jit(f)(w, X[0])
    assert seen["traxla"] == seen["jax"]


def test_fast_prune_agrees_with_the_general_walk():
    """``prune_unused`` (C-level liveness check before lowering) gives what the
    per-equation ``_dce_jaxpr`` gives: the same equations and used inputs, the jaxpr itself
    when nothing is dead; a dead chain, an unused argument, a nested jit with an unused
    result, an effect and a multi-result primitive each tried."""
    from traxla.autodiff.partial_eval import _dce_jaxpr, prune_unused

    inner = traxla.jit(lambda a: (a + 1.0, a * 3.0))

    def programs():
        yield lambda x, y: tnp.sin(x) * 0.5 + x, False                    # nothing dead
        yield lambda x, y: (tnp.cos(tnp.sin(y)), x * 2)[1], True           # a dead chain
        yield lambda x, y: inner(x)[0] * y, True                           # jit's result
        yield lambda x, y: inner(x)[0] + inner(y)[1], True
        yield lambda x, y: traxla.lax.sort((x, y), num_keys=1)[1], True    # _ result: walked
        yield lambda x, y: x + traxla.lax.stop_gradient(y), False

    def with_print(x, y):
        traxla.debug.print("{}", y)
        return x
    cases = list(programs()) + [(with_print, False)]
    for f, changes in cases:
        jaxpr = traxla.make_jaxpr(f)(X, X).jaxpr
        want, want_used = _dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars),
                                     [False] * len(jaxpr.invars))
        got, got_used = prune_unused(jaxpr)
        assert got_used == want_used
        assert str(got) == str(want)
        if not changes and all(want_used):
            assert got is jaxpr

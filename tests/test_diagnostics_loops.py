"""The unrolled-loop detector, re-rolling into scan, and the compile report."""
import functools
import logging
import warnings

import numpy as np
import pytest

import traxla
import traxla.numpy as jnp
from traxla import diagnostics

RNG = np.random.default_rng(0)
W = (RNG.standard_normal((32, 32)) / 8).astype(np.float32)
H = RNG.standard_normal(32).astype(np.float32)
RNN_PARAMS = (RNG.standard_normal((4, 8)).astype(np.float32),
              (RNG.standard_normal((8, 8)) / 3).astype(np.float32), np.zeros(8, np.float32))
XS = [RNG.standard_normal(4).astype(np.float32) for _ in range(40)]
H0 = np.zeros(8, np.float32)
Y0 = np.array([1.0, 0.0], np.float32)


def article(W, h):
    for _ in range(100):
        h = jnp.tanh(W @ h)  # ARTICLE-LOOP
    return h


def rnn(params, xs, h):
    Wx, Wh, b = params
    for x in xs:
        h = jnp.tanh(x @ Wx + h @ Wh + b)  # RNN-LOOP
    return h


def rnn_indexed(params, xs, h):
    Wx, Wh, b = params
    for t in range(xs.shape[0]):
        h = jnp.tanh(xs[t] @ Wx + h @ Wh + b)
    return h


def pendulum(y):
    return jnp.stack([y[1], -jnp.sin(y[0])])


def rk4(y, dt, steps=40):
    for _ in range(steps):
        k1 = pendulum(y)
        k2 = pendulum(y + dt / 2 * k1)
        k3 = pendulum(y + dt / 2 * k2)
        k4 = pendulum(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def short_article(W, h):
    for _ in range(24):
        h = jnp.tanh(W @ h)
    return h


def trajectory(W, h):
    hs = []
    for _ in range(12):
        h = jnp.tanh(W @ h)
        hs.append(h)
    return jnp.stack(hs), h


def two_step(a, b):  # reads the two steps before it: re-rolled two steps per block
    for _ in range(13):
        a, b = b, jnp.sin(a) + b
    return a, b


def mlp(x):  # no repetition: every layer has its own width
    for width in range(8, 48):
        x = jnp.sin(jnp.ones((x.shape[0], width), x.dtype).T @ x[:, None])[:, 0]
    return x


def _line_of(marker):
    with open(__file__) as fh:
        return next(i for i, line in enumerate(fh, 1) if line.rstrip().endswith(marker))


def _quiet_jaxpr(fun, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
        return traxla.make_jaxpr(fun)(*args)


def test_finds_the_articles_loop_and_warns_at_its_line():
    with pytest.warns(diagnostics.UnrolledLoopWarning,
                      match=r"100 repetitions of a 2-equation block \[dot_general, tanh\]") as rec:
        traxla.jit(article).trace(W, H)
    warning = next(w for w in rec if w.category is diagnostics.UnrolledLoopWarning)
    assert (warning.filename, warning.lineno) == (__file__, _line_of("# ARTICLE-LOOP"))
    text = str(warning.message)
    assert "Predicted XLA compile" in text and "lax.scan" in text
    [loop] = diagnostics.find_unrolled_loops(_quiet_jaxpr(article, W, H))
    assert (loop.start, loop.block_len, loop.repeats, loop.rerollable) == (0, 2, 100, True)
    # (a 200-equation program: the unrolled compile is predicted several times the scan's)
    assert loop.predicted_compile_seconds > 2 * loop.predicted_rolled_seconds
    lo, hi = loop.predicted_compile_range
    assert lo < loop.predicted_compile_seconds < hi
    [quick] = diagnostics.find_unrolled_loops(_quiet_jaxpr(article, W, H), verify=False)
    assert (quick.start, quick.block_len, quick.repeats, quick.rerollable) == (0, 2, 100, None)


def test_warning_can_be_silenced():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with traxla.config.flag("warn_unrolled_loops", False):
            traxla.jit(article).trace(W, H)
    assert not [w for w in rec if w.category is diagnostics.UnrolledLoopWarning]


def test_finds_an_unrolled_rnn():
    [loop] = diagnostics.find_unrolled_loops(_quiet_jaxpr(rnn, RNN_PARAMS, XS, H0))
    assert (loop.block_len, loop.repeats, loop.line) == (5, 40, _line_of("# RNN-LOOP"))
    assert loop.primitives == ("dot_general", "dot_general", "add", "add", "tanh")


def test_finds_an_unrolled_rk4_integrator():
    jaxpr = _quiet_jaxpr(rk4, Y0, np.float32(0.05))
    [loop] = diagnostics.find_unrolled_loops(jaxpr)
    assert loop.repeats == 40 and loop.equations == len(jaxpr.eqns)
    assert loop.block_len * 40 == len(jaxpr.eqns)


def test_indexed_rnn_is_found_and_indexes_by_step():
    jaxpr = _quiet_jaxpr(rnn_indexed, RNN_PARAMS, np.stack(XS), H0)
    [loop] = diagnostics.find_unrolled_loops(jaxpr)
    assert loop.repeats == 40 and loop.rerollable
    assert loop.indexed == {0: ((0, 0), (1, 0), (1, 4))}   # xs[t]: a window moving by 1


def printing(W, h):
    for _ in range(20):
        h = jnp.tanh(W @ h)
        traxla.debug.print("{}", h[0])
    return h


def test_loop_with_effects_is_reported_but_not_rerolled():
    jaxpr = _quiet_jaxpr(printing, W, H)
    [loop] = diagnostics.find_unrolled_loops(jaxpr)
    assert loop.repeats == 20 and not loop.rerollable
    assert "side effects" in loop.reason and "does not apply here" in loop.describe()
    assert diagnostics.reroll_jaxpr(jaxpr) == (jaxpr, [])


def test_silent_without_repetition():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        jaxpr = traxla.make_jaxpr(mlp)(np.ones(4, np.float32))
        short = traxla.make_jaxpr(lambda W, h: jnp.tanh(W @ jnp.tanh(W @ jnp.tanh(W @ h))))(W, H)
    assert len(jaxpr.eqns) > 150
    for verify in (True, False):
        assert diagnostics.find_unrolled_loops(jaxpr, verify=verify) == []
        assert diagnostics.find_unrolled_loops(short, verify=verify) == []
    assert not [w for w in rec if w.category is diagnostics.UnrolledLoopWarning]


def _bitwise(a, b):
    for x, y in zip(traxla.tree_util.tree_leaves(a), traxla.tree_util.tree_leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


# Small loops (re-rolled from 4 repetitions on): the unrolled side must compile too.
@pytest.mark.parametrize("fun, args", [
    (short_article, (W, H)),
    (rnn, (RNN_PARAMS, XS[:12], H0)),
    (rnn_indexed, (RNN_PARAMS, np.stack(XS[:12]), H0)),
    (functools.partial(rk4, steps=6), (Y0, np.float32(0.05))),
    (trajectory, (W, H)),
    (two_step, (H, H + 1)),
], ids=["article", "rnn", "rnn_indexed", "rk4", "trajectory", "two_step"])
def test_reroll_gives_the_same_numbers(fun, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
        unrolled = traxla.jit(fun)(*args)
        rerolled_fn = traxla.jit(diagnostics.reroll(fun, min_repeats=4, min_equations=8))
        rerolled = rerolled_fn(*args)
        jaxpr = rerolled_fn.trace(*args).jaxpr
    _bitwise(unrolled, rerolled)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names.count("scan") == 1 and len(names) <= 30, names


def test_reroll_config_rewrites_jit_traces():
    with traxla.config.flag("reroll_loops", True):
        f = traxla.jit(article)
        jaxpr = f.trace(W, H).jaxpr
        out = f(W, H)
    scan = jaxpr.jaxpr.eqns[0]
    assert len(jaxpr.jaxpr.eqns) == 1 and scan.primitive.name == "scan"
    assert scan.params["length"] == 100 and scan.params["num_carry"] == 1
    assert [e.primitive.name for e in scan.params["jaxpr"].jaxpr.eqns] == ["dot_general", "tanh"]
    # the body keeps the user's source line
    assert scan.params["jaxpr"].jaxpr.eqns[1].source_info.line == _line_of("# ARTICLE-LOOP")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
        _bitwise(traxla.jit(article)(W, H), out)


def test_switching_reroll_on_retraces_nested_jits():
    inner = traxla.jit(article)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
        before = traxla.make_jaxpr(lambda W, h: inner(W, h))(W, H)
    with traxla.config.flag("reroll_loops", True):
        after = traxla.make_jaxpr(lambda W, h: inner(W, h))(W, H)
    assert "scan" not in str(before) and "scan[" in str(after)


def test_compile_report():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
        lowered = traxla.jit(rnn).lower(RNN_PARAMS, XS[:20], H0)
        report = lowered.compile().report()
    assert report.name == "rnn" and report.equations == 100 == report.equations_total
    assert report.compile_seconds > 0 and report.trace_seconds > 0
    assert report.lower_seconds == lowered.lower_seconds
    top = report.by_line[0]
    assert top.location == f"{__file__}:{_line_of('# RNN-LOOP')}"
    assert top.equations == 100 and top.ops >= 100
    assert report.ops >= 100
    text = str(report)
    assert "Compile report for jit(rnn)" in text and top.location in text
    assert report.loops and report.loops[0].repeats == 20


def test_log_compiles_logs_the_report(caplog):
    caplog.set_level(logging.WARNING, logger="traxla")
    with traxla.config.flag("log_compiles", True), \
            traxla.config.flag("compile_report_seconds", 0.0):
        f = traxla.jit(lambda x: jnp.sin(x) * 2)
        f(np.ones(3, np.float32))
    [text] = [r.getMessage() for r in caplog.records
              if r.getMessage().startswith("Compile report for jit(<lambda>)")]
    assert "top-level equations" in text and __file__ in text
    assert diagnostics.last_compile_report(f).equations == 2


def test_rerolled_program_differentiates_and_batches():
    W8 = (RNG.standard_normal((8, 8)) / 3).astype(np.float32)

    def loss(W, h):
        for _ in range(40):
            h = jnp.tanh(W @ h)
        return h.sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
        expected = traxla.jit(traxla.grad(loss))(W8, H0 + 1)
        batched_expected = traxla.vmap(loss, in_axes=(None, 0))(W8, np.ones((3, 8), np.float32))
    with traxla.config.flag("reroll_loops", True):
        inner = traxla.jit(loss)
        jaxpr = traxla.make_jaxpr(traxla.grad(inner))(W8, H0 + 1)
        got = traxla.jit(traxla.grad(inner))(W8, H0 + 1)
        batched = traxla.vmap(inner, in_axes=(None, 0))(W8, np.ones((3, 8), np.float32))
    assert "scan" in str(jaxpr)
    # the forward pass is the same numbers; W's cotangent sums 40 terms in another order
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(batched), np.asarray(batched_expected), rtol=1e-6)


def nested(W, h):
    for _ in range(4):
        for _ in range(16):
            h = jnp.tanh(W @ h)
        h = h / (1 + jnp.abs(h).sum())
    return h


def test_nested_loops_reroll_into_nested_scans():
    W8 = (RNG.standard_normal((8, 8)) / 3).astype(np.float32)
    h = np.linspace(-1, 1, 8).astype(np.float32)
    rolled = diagnostics.reroll(nested, min_repeats=4, min_equations=16)
    jaxpr = traxla.make_jaxpr(rolled)(W8, h)
    [outer] = jaxpr.jaxpr.eqns
    assert outer.primitive.name == "scan" and outer.params["length"] == 4
    inner = [e for e in outer.params["jaxpr"].jaxpr.eqns if e.primitive.name == "scan"]
    assert len(inner) == 1 and inner[0].params["length"] == 16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
        expected = traxla.jit(nested)(W8, h)
    # XLA may round the division by a reduction differently inside a loop body (1 ulp)
    np.testing.assert_allclose(np.asarray(traxla.jit(rolled)(W8, h)), np.asarray(expected),
                               rtol=1e-6, atol=1e-9)


def test_a_loop_inside_an_installed_library_does_not_warn(tmp_path, monkeypatch):
    # the same loop, once as user code and once as an installed package's module
    source = ("def chain(x):\n    for _ in range(40):\n        x = x * 1.5 + 1.0\n"
              "        x = x - 0.5\n    return x\n")
    for where, expected in (("user_code", 1), ("site-packages", 0)):
        root = tmp_path / where
        (root / f"lib_{where.replace('-', '_')}").mkdir(parents=True)
        mod_dir = root / f"lib_{where.replace('-', '_')}"
        (mod_dir / "__init__.py").write_text(source)
        monkeypatch.syspath_prepend(str(root))
        import importlib
        mod = importlib.import_module(mod_dir.name)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            jaxpr = traxla.jit(mod.chain).trace(np.float32(1.0)).jaxpr
        got = [w for w in rec if w.category is diagnostics.UnrolledLoopWarning]
        assert len(got) == expected, (where, [str(w.message) for w in got])
        assert len(diagnostics.find_unrolled_loops(jaxpr)) == 1  # still found when asked

"""debug_nans / debug_infs name the first primitive (and its source line) producing an
invalid value in a jitted program; disable_jit runs jitted functions as Python;
log_compiles logs compilations; inspect/visualize_array_sharding."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp


@pytest.fixture
def nan_checks():
    traxla.config.update("debug_nans", True)
    traxla.config.update("debug_infs", True)
    try:
        yield
    finally:
        traxla.config.update("debug_nans", False)
        traxla.config.update("debug_infs", False)


@traxla.jit
def _inner(y):
    return tnp.sqrt(y)  # the NaN comes from here for y < 0


@traxla.jit
def _program(x):
    a = x * 2.0
    b = tlax.cond(a[0] > 0, lambda v: _inner(v - 10.0), lambda v: v, a)
    return b + 1.0


@traxla.jit
def _div(x, y):
    return x / y


def test_debug_nans_names_the_primitive_and_line(nan_checks):
    ok = np.array([6.0, 7.0], np.float32)
    np.testing.assert_allclose(np.asarray(_program(ok)), np.sqrt(ok * 2 - 10) + 1, rtol=1e-6)
    with pytest.raises(FloatingPointError) as info:
        _program(np.array([1.0, 7.0], np.float32))
    message = str(info.value)
    assert message.startswith("invalid value (nan) encountered in sqrt")
    assert "test_debug_checks.py:" in message and "_inner" in message


def test_debug_infs_and_off_by_default(nan_checks):
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
        _div(np.float32(1.0), np.float32(0.0))
    traxla.config.update("debug_infs", False)
    assert np.isinf(float(_div(np.float32(1.0), np.float32(0.0))))


def test_debug_nans_eager(nan_checks):
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
        tnp.log(np.float32(-1.0))


def test_without_flag_nan_passes_through():
    out = _program(np.array([1.0, 7.0], np.float32))
    assert np.isnan(np.asarray(out)[0])


def test_disable_jit_runs_python(capsys):
    seen = []

    @traxla.jit
    def f(x):
        seen.append(type(x).__name__)
        traxla.debug.print("x={}", x)
        return x + 1

    with traxla.disable_jit():
        assert float(f(np.float32(1.0))) == 2.0
    assert seen == ["float32"]
    assert capsys.readouterr().out == "x=1.0\n"
    assert float(f(np.float32(1.0))) == 2.0
    assert seen[-1] == "DynamicJaxprTracer"


def test_log_compiles(caplog):
    traxla.config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="traxla"):
            traxla.jit(lambda x: x * 3)(np.float32(1.0))
    finally:
        traxla.config.update("log_compiles", False)
    assert any("Compiling <lambda> with global shapes and types" in r.getMessage()
               for r in caplog.records)


def test_inspect_and_visualize_array_sharding(capsys):
    seen = []

    @traxla.jit
    def f(x):
        traxla.debug.inspect_array_sharding(x, callback=seen.append)
        return x

    x = traxla.device_put(np.ones((4, 2), np.float32))
    f(x)
    assert len(seen) == 1 and traxla.devices()[0] in seen[0].device_set
    import importlib.util
    if importlib.util.find_spec("rich") is None:  # drawn with rich, as JAX's
        with pytest.raises(ValueError, match="`visualize_sharding` requires `rich`"):
            traxla.debug.visualize_array_sharding(x)
        return
    traxla.debug.visualize_array_sharding(x)
    table = capsys.readouterr().out
    assert "CPU 0" in table and table.startswith("┌")


def test_breakpoint_terminal_session(monkeypatch, capsys):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO("p x * 2\nlabel\nnope_name\nc\n"))

    @traxla.jit
    def f(x):
        label = "static"  # noqa: F841 - shown by the debugger
        y = x + 1
        traxla.debug.breakpoint()
        return y

    assert float(f(np.float32(1.5))) == 2.5
    out = capsys.readouterr().out
    assert "Entering jdb:" in out and "traxla.debug.breakpoint()" in out
    assert "np.float32(3.0)" in out or "3.0" in out
    assert "'static'" in out and "*** NameError" in out


@traxla.jit
def _loops(xs):
    def body(c, x):
        return c + tnp.log(x), c   # log of the negative element gives the NaN
    total, _ = tlax.scan(body, np.float32(0), xs)
    return tlax.while_loop(lambda c: c < 100.0, lambda c: c * 2.0 + tnp.sqrt(c - 1.0), total)


def test_debug_nans_inside_scan_and_while(nan_checks):
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log "
                                                 r"\(from line .*test_debug_checks.py"):
        _loops(np.array([1.0, -1.0, 2.0], np.float32))
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in sqrt"):
        _loops(np.array([1.0, 1.0], np.float32))  # total 0: sqrt(-1) in the while body
    assert float(_loops(np.array([np.e ** 2], np.float32))) >= 100.0


def test_deoptimized_notice_printed_as_jax(nan_checks, capsys):
    """JAX prints a notice when a jitted function (a ``jit``, or a ``jnp`` ufunc, which JAX
    jits) gives a NaN, before re-running it de-optimized; a bare lax primitive prints none."""
    notice = ("Invalid nan value encountered in the output of a jax.jit function. "
              "Calling the de-optimized version.\n")
    with pytest.raises(FloatingPointError, match="encountered in log"):
        tlax.log(-1.0)
    assert capsys.readouterr().out == ""
    with pytest.raises(FloatingPointError, match="encountered in log"):
        tnp.log(-1.0)
    assert capsys.readouterr().out == notice
    with pytest.raises(FloatingPointError, match="encountered in sqrt"):
        _inner(-1.0)
    assert capsys.readouterr().out.startswith(notice)

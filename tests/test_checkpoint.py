"""checkpoint / remat (issue #12): a differential corpus against JAX 0.10.2.

Each program is written once against ``(ns, jnp, lax)`` and run with traxla and with JAX:
the printed jaxprs (the ``remat2`` equation, its JVP, linearization, transpose and vmap,
under every ``checkpoint_policies`` policy), ``print_saved_residuals``'s output and the
gradients must be the same. Programs that cannot match are listed in
``KNOWN_DIFFERENCES`` with the reason, and run as strict xfails.

Run ``python tests/test_checkpoint.py [name-substring ...]`` to print the differences.
"""
from __future__ import annotations

import contextlib
import io
import sys

import os
import re

import numpy as np
import pytest

from _corpus import print_differences
import traxla
import traxla.ad_checkpoint  # noqa: F401
import traxla.lax as tlax
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
import jax.ad_checkpoint  # noqa: E402,F401
import jax.lax as jlax  # noqa: E402
import jax.numpy as jnp_  # noqa: E402


def make_cases(ns, jnp, lax):
    """The corpus: name -> thunk giving a jaxpr, printed text or values."""
    P = ns.checkpoint_policies
    adc = ns.ad_checkpoint
    def f(x, y):
        a = jnp.sin(x) * y
        b = adc.checkpoint_name(jnp.cos(a), "b")
        return jnp.sum(b * x)
    def g(W, x):
        h = jnp.tanh(W @ x)
        h = adc.checkpoint_name(h, "h")
        return jnp.sum(jnp.sin(W @ h))
    def gb(W, x):  # batched dot
        h = jnp.tanh(jnp.einsum('bij,bj->bi', W, x))
        return jnp.sum(jnp.sin(h) * x)
    x = np.linspace(0.1, 1.0, 3, dtype=np.float32); y = np.arange(3, dtype=np.float32)
    W = np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)
    Wb = np.linspace(-1, 1, 18, dtype=np.float32).reshape(2, 3, 3); xb = np.ones((2, 3), np.float32)
    policies = {
        "none": None, "everything": P.everything_saveable, "nothing": P.nothing_saveable,
        "dots": P.dots_saveable, "dots_nb": P.dots_with_no_batch_dims_saveable,
        "except_names": P.save_anything_except_these_names("h"),
        "names_but": P.save_any_names_but_these("h"), "only_b": P.save_only_these_names("b", "h"),
        "both": P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("b")),
    }
    cases = {}
    cases["plain"] = lambda: ns.make_jaxpr(ns.checkpoint(f))(x, y)
    cases["no_cse"] = lambda: ns.make_jaxpr(ns.checkpoint(f, prevent_cse=False))(x, y)
    cases["cse_tuple"] = lambda: ns.make_jaxpr(ns.grad(ns.checkpoint(f, prevent_cse=(True, False))))(x, y)
    cases["vmap"] = lambda: ns.make_jaxpr(ns.vmap(ns.checkpoint(f)))(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    cases["jvp"] = lambda: ns.make_jaxpr(lambda a, b: ns.jvp(ns.checkpoint(f), (a, b), (a, b)))(x, y)
    cases["linearize"] = lambda: ns.make_jaxpr(lambda a, b: ns.linearize(ns.checkpoint(f), a, b)[1](a, b))(x, y)
    cases["static"] = lambda: ns.make_jaxpr(ns.grad(ns.checkpoint(lambda a, n: jnp.sum(jnp.sin(a) ** n), static_argnums=1)))(x, 3)
    cases["nested_jit"] = lambda: ns.make_jaxpr(ns.grad(ns.checkpoint(lambda a: jnp.sum(ns.jit(jnp.sin)(a) * a))))(x)
    cases["twice"] = lambda: ns.make_jaxpr(ns.grad(lambda a: ns.checkpoint(f)(a, y) + ns.checkpoint(f)(jnp.cos(a), y)))(x)
    cases["closure"] = lambda: ns.make_jaxpr(lambda a: ns.grad(ns.checkpoint(lambda z: jnp.sum(jnp.sin(z * a))))(a))(x)
    for k, pol in policies.items():
        cases[f"grad_f_{k}"] = (lambda pol=pol: ns.make_jaxpr(ns.grad(ns.checkpoint(f, policy=pol), argnums=(0, 1)))(x, y))
        cases[f"grad_g_{k}"] = (lambda pol=pol: ns.make_jaxpr(ns.grad(ns.checkpoint(g, policy=pol)))(W, x))
        cases[f"grad_gb_{k}"] = (lambda pol=pol: ns.make_jaxpr(ns.grad(ns.checkpoint(gb, policy=pol)))(Wb, xb))
        def res(pol=pol):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                adc.print_saved_residuals(ns.checkpoint(f, policy=pol), x, y)
                adc.print_saved_residuals(ns.checkpoint(g, policy=pol), W, x)
                adc.print_saved_residuals(ns.checkpoint(gb, policy=pol), Wb, xb)
            return buf.getvalue()
        cases[f"residuals_{k}"] = res
        cases[f"values_{k}"] = (lambda pol=pol: [np.asarray(v) for v in
            list(ns.grad(ns.checkpoint(f, policy=pol), argnums=(0, 1))(x, y)) + [ns.grad(ns.checkpoint(g, policy=pol))(W, x), ns.grad(ns.checkpoint(gb, policy=pol))(Wb, xb)]])
    def res_plain():
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            adc.print_saved_residuals(f, x, y)
            adc.print_saved_residuals(g, W, x)
        return buf.getvalue()
    cases["residuals_plain"] = res_plain
    # composition: layers, nesting, scan bodies, vmap/jit around, pytrees, constants
    def layer(W, h):
        return jnp.tanh(W @ h)
    def net(W, h):
        for _ in range(2):
            h = ns.checkpoint(layer)(W, h)
        return jnp.sum(h)
    cases["two_layers"] = lambda: ns.make_jaxpr(ns.grad(net))(W, x)
    def nested(W, h):
        inner = ns.checkpoint(lambda a: jnp.sin(W @ a), policy=P.dots_saveable)
        return jnp.sum(ns.checkpoint(lambda a: inner(inner(a)))(h))
    cases["nested"] = lambda: ns.make_jaxpr(ns.grad(nested))(W, x)
    def scanned(W, h):
        def body(c, _):
            return ns.checkpoint(layer)(W, c), None
        c, _ = lax.scan(body, h, None, length=3)
        return jnp.sum(c)
    cases["scan_body"] = lambda: ns.make_jaxpr(ns.grad(scanned))(W, x)
    cases["scan_body_val"] = lambda: ns.grad(scanned)(W, x)
    def scan_inside(W, h):
        def f(a):
            c, _ = lax.scan(lambda c, _: (jnp.sin(W @ c), None), a, None, length=2)
            return jnp.sum(c)
        return ns.checkpoint(f)(h)
    cases["scan_inside"] = lambda: ns.make_jaxpr(ns.grad(scan_inside))(W, x)
    cases["scan_inside_val"] = lambda: ns.grad(scan_inside)(W, x)
    cases["vmap_grad"] = lambda: ns.make_jaxpr(ns.vmap(ns.grad(ns.checkpoint(lambda a: jnp.sum(jnp.sin(a) ** 2)))))(W)
    cases["jit_grad"] = lambda: ns.make_jaxpr(ns.jit(ns.grad(ns.checkpoint(lambda a: jnp.sum(jnp.sin(a) ** 2)))))(x)
    cases["grad_jit_inside"] = lambda: ns.make_jaxpr(ns.grad(ns.checkpoint(ns.jit(lambda a: jnp.sum(jnp.sin(a) ** 2)))))(x)
    cases["int_arg"] = lambda: ns.make_jaxpr(ns.grad(ns.checkpoint(lambda a, n: jnp.sum(a * n))))(x, np.int32(3))
    cases["pytree"] = lambda: ns.make_jaxpr(ns.grad(ns.checkpoint(lambda d: jnp.sum(d['a'] * jnp.cos(d['b'])))))({'a': x, 'b': x})
    cases["cse_tuple_pytree"] = lambda: ns.make_jaxpr(ns.grad(ns.checkpoint(lambda d, y: jnp.sum(d['a'] * jnp.cos(d['b']) * y), prevent_cse=({'a': True, 'b': False}, False))))({'a': x, 'b': x}, x)
    cases["closure_const"] = lambda: ns.make_jaxpr(ns.grad(ns.checkpoint(lambda a: jnp.sum(a * np.arange(3.0, dtype=np.float32)))))(x)
    # kwargs, integer and None outputs, closures over tracers, eager calls, aux outputs
    x = np.linspace(0.1, 1.0, 3, dtype=np.float32)
    cases["kwargs"] = lambda: ns.make_jaxpr(ns.grad(lambda a: ns.checkpoint(lambda u, v=1.0: jnp.sum(jnp.sin(u) * v))(a, v=a)))(x)
    cases["int_out"] = lambda: ns.make_jaxpr(ns.grad(lambda a: ns.checkpoint(lambda u: (jnp.sum(jnp.sin(u)), jnp.argmax(u)))(a)[0]))(x)
    cases["none_out"] = lambda: ns.make_jaxpr(ns.checkpoint(lambda u: (u, None)))(x)
    cases["closure_grad"] = lambda: ns.make_jaxpr(ns.grad(lambda a: ns.checkpoint(lambda u: jnp.sum(jnp.sin(u * a)))(x)))(2.0)
    cases["closure_jit"] = lambda: ns.make_jaxpr(ns.jit(lambda a: ns.grad(ns.checkpoint(lambda u: jnp.sum(jnp.sin(u * a))))(x)))(2.0)
    cases["linearize_policy"] = lambda: ns.make_jaxpr(lambda a: ns.linearize(ns.checkpoint(lambda u: jnp.sum(jnp.sin(jnp.cos(u))), policy=ns.checkpoint_policies.everything_saveable), a)[1](a))(x)
    cases["eager"] = lambda: (ns.checkpoint(lambda u: jnp.sin(u) * 2)(x), ns.grad(ns.checkpoint(lambda u: jnp.sum(jnp.sin(u) * 2)))(x))
    cases["value_and_grad_aux"] = lambda: ns.value_and_grad(ns.checkpoint(lambda u: (jnp.sum(u ** 2), u * 3)), has_aux=True)(x)
    return cases


KNOWN_DIFFERENCES = {
    "nested": "a checkpoint inside a checkpoint: JAX keeps the inner known part as a remat2 "
              "equation (its partial_eval_jaxpr_custom rule); traxla inlines it (same "
              "gradients, another jaxpr)",
    "scan_inside": "a scan inside a checkpoint: JAX's known part is a closed_call around the "
                   "scan; traxla's is the scan itself (same gradients)",
}

_JAX = make_cases(jax, jnp_, jlax)
_TRAXLA = make_cases(traxla, tnp, tlax)


@contextlib.contextmanager
def _jaxlib_tracebacks():
    """JAX's source locations come from jaxlib's traceback records, which traxla may have
    switched off around its own calls; the oracle runs with them on."""
    from jaxlib import _jax
    before = _jax.tracebacks_enabled()
    _jax.set_tracebacks_enabled(True)
    try:
        yield
    finally:
        _jax.set_tracebacks_enabled(before)


def _texts(name):
    with _jaxlib_tracebacks():
        want = _JAX[name]()
    got = _TRAXLA[name]()
    if name.startswith("values"):
        return want, got
    return str(want), str(got)


def _portable(text):
    """Residual sources name this file: stored with its folder left out, so that the stored
    text holds in any checkout."""
    text = text.replace(os.path.dirname(os.path.abspath(__file__)), "<tests>")
    # A frozenset of names prints in string-hash order, which PYTHONHASHSEED changes.
    return re.sub(r"frozenset\(\{([^}]*)\}\)",
                  lambda m: "frozenset({%s})" % ", ".join(sorted(m.group(1).split(", "))), text)


@pytest.mark.parametrize("name", [pytest.param(
    n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[n]))
    if n in KNOWN_DIFFERENCES else n for n in _JAX])
def test_matches_jax(name, jax_side):
    def theirs():
        with _jaxlib_tracebacks():
            want = _JAX[name]()
        return want if name.startswith("values") else _portable(str(want))
    want = jax_side(theirs)
    got = _TRAXLA[name]()
    got = got if name.startswith("values") else _portable(str(got))
    if name.startswith("values"):
        assert len(want) == len(got)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    else:
        assert got == want


# -- beyond the corpus: compiled programs, control flow, errors ---------------------------------

def _mlp(W, x):
    h = tnp.tanh(W @ x)
    h = traxla.ad_checkpoint.checkpoint_name(h, "h")
    return tnp.sum(tnp.sin(W @ h))


_W = np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)
_X = np.linspace(0.1, 1.0, 3, dtype=np.float32)


def test_jitted_gradient_with_barrier_matches_plain_gradient():
    P = traxla.checkpoint_policies
    want = traxla.grad(_mlp)(_W, _X)
    step = traxla.jit(traxla.grad(traxla.checkpoint(_mlp, policy=P.save_only_these_names("h"))))
    np.testing.assert_allclose(step(_W, _X), want, rtol=1e-5, atol=1e-6)
    text = step.lower(_W, _X).as_text()
    assert "stablehlo.optimization_barrier" in text
    assert "stablehlo.reduce_precision" in text


def test_checkpointed_scan_body_and_hessian():
    def body(c, w):
        return tnp.sin(c * w), c

    def loss(ws):
        c, _ = tlax.scan(traxla.checkpoint(body), 1.0, ws)
        return c

    ws = np.linspace(0.5, 1.5, 4, dtype=np.float32)

    def jloss(ws):
        c, _ = jlax.scan(jax.checkpoint(lambda c, w: (jnp_.sin(c * w), c)), 1.0, ws)
        return c

    np.testing.assert_allclose(traxla.grad(loss)(ws), jax.grad(jloss)(ws), rtol=1e-5)
    f = lambda x: tnp.sum(tnp.sin(x) ** 3)  # noqa: E731
    np.testing.assert_allclose(traxla.hessian(traxla.checkpoint(f))(_X),
                               traxla.hessian(f)(_X), rtol=1e-5, atol=1e-6)


def test_checkpoint_static_argnums_retraces_per_value():
    f = traxla.checkpoint(lambda x, n: tnp.sum(x ** n), static_argnums=(1,))
    assert float(traxla.grad(f)(np.float32(2.0), 3)) == 12.0
    assert float(traxla.grad(f)(np.float32(2.0), 2)) == 4.0


def test_checkpoint_errors_as_jax():
    with pytest.raises(ValueError, match="static_argnums.*len\\(args\\)"):
        traxla.checkpoint(lambda x: x, static_argnums=3)(1.0)
    with pytest.raises(TypeError, match="prevent_cse must be a bool or tuple of bools"):
        traxla.checkpoint(lambda x: x, prevent_cse="yes")
    with pytest.raises(NotImplementedError, match="static_argnums"):
        traxla.checkpoint(lambda x: x, concrete=True)
    with pytest.raises(AttributeError, match="use jax.checkpoint instead"):
        traxla.ad_checkpoint.checkpoint  # noqa: B018
    with pytest.raises(TypeError, match="Value returned by a remat policy should be a bool"):
        traxla.grad(traxla.checkpoint(_mlp, policy=lambda *a, **k: 3))(_W, _X)
    P = traxla.checkpoint_policies
    with pytest.raises(NotImplementedError, match="offload"):
        traxla.grad(traxla.checkpoint(
            _mlp, policy=P.offload_dot_with_no_batch_dims("device", "pinned_host")))(_W, _X)
    with pytest.raises(ValueError, match="should not intersect"):
        P.save_and_offload_only_these_names(names_which_can_be_saved=["a"],
                                            names_which_can_be_offloaded=["a"],
                                            offload_src="device", offload_dst="pinned_host")


def test_checkpoint_name_is_identity_eagerly():
    x = tnp.ones(3)
    assert traxla.ad_checkpoint.checkpoint_name(x, "x") is x


if __name__ == "__main__":
    print_differences(_JAX, KNOWN_DIFFERENCES, lambda name: tuple(map(str, _texts(name))),
                      sys.argv[1:])


def test_debug_print_in_a_checkpoint_runs_again_in_the_backward_pass(capsys):
    """JAX rematerializes effects too: the print runs forward, then again when recomputing."""
    def f(x):
        traxla.debug.print("x={}", x)
        return tnp.sin(x) * 2
    g = traxla.grad(traxla.checkpoint(f))(1.0)
    jf = lambda x: (jax.debug.print("x={}", x), jnp_.sin(x) * 2)[1]  # noqa: E731
    want_g = jax.grad(jax.checkpoint(jf))(1.0)
    out = capsys.readouterr().out
    assert float(g) == pytest.approx(float(want_g))
    assert out == "x=1.0\nx=1.0\n" * 2  # twice for traxla, twice for JAX


def test_remat3_checkpointed_function_names_its_arguments_as_jax():
    """Under ``jax_remat3`` JAX's ``checkpoint`` returns a ``functools.partial`` (signature
    ``(*args, **kwargs)``): saved residuals are reported from ``args[0]``...; without it,
    from the parameters' names."""
    def f(w, x):
        return jnp_.sum(jnp_.sin(w * x[0]))

    def tf(w, x):
        return tnp.sum(tnp.sin(w * x[0]))
    outs = {}
    for ns, fun in ((jax, f), (traxla, tf)):
        for flag in (True, False):
            ns.config.update("jax_remat3", flag)
            try:
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    ns.ad_checkpoint.print_saved_residuals(
                        ns.checkpoint(fun), np.float32(2.), [np.float32(3.)])
                outs[ns.__name__, flag] = out.getvalue()
            finally:
                ns.config.update("jax_remat3", False)
    assert outs["traxla", True] == outs["jax", True] and "args[1][0]" in outs["jax", True]
    assert outs["traxla", False] == outs["jax", False] and "x[0]" in outs["jax", False]

"""``lax.cond``/``switch``/``while_loop``/``fori_loop``/``scan`` under ``disable_jit()`` run
in Python as JAX's do: only the chosen branch is called, a loop body once per iteration, with
concrete arrays (jaxopt counts its function evaluations so, with ``jit=False``); abstract
values (under vmap) fall back to the primitive."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import traxla as tx


def _record(lib):
    calls = []

    def branch(name):
        def f(x):
            calls.append((name, type(x).__name__))
            return x + 1
        return f

    with lib.disable_jit():
        x = lib.numpy.arange(3.0)
        out = [lib.lax.cond(x[0] == 0, branch("t"), branch("f"), x),
               lib.lax.cond(1, branch("t"), branch("f"), x),  # an int predicate
               lib.lax.switch(5, [branch("s0"), branch("s1")], x),  # clamped index
               lib.lax.while_loop(lambda v: v[0] < 3, branch("w"), x),
               lib.lax.fori_loop(0, 2, lambda i, v: branch("fori")(v), x),
               lib.lax.fori_loop(2, 2, lambda i, v: branch("never")(v), x),
               lib.lax.scan(lambda c, xi: (branch("scan")(c), c * xi), 0.0, x),
               lib.lax.scan(lambda c, xi: (c + xi, None), 0.0, x, reverse=True),
               lib.grad(lambda v: lib.lax.cond(v > 0, branch("gt"), branch("le"), v))(2.0)]
    return out, calls


def test_control_flow_runs_in_python_as_jax():
    got, calls = _record(tx)
    want, want_calls = _record(jax)
    assert calls == [(n, "ArrayImpl" if t == "ArrayImpl" else t) for n, t in want_calls]
    assert [n for n, _ in calls].count("w") == 3 and "never" not in [n for n, _ in calls]
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w))
        assert np.asarray(g).dtype == np.asarray(w).dtype


def test_zero_length_scan_and_abstract_values():
    with tx.disable_jit():
        with pytest.raises(ValueError, match="zero-length scan is not supported in disable_jit"):
            tx.lax.scan(lambda c, x: (c, x), 0.0, tx.numpy.zeros((0,)))
        # under vmap the predicate is abstract: the primitive runs, as in JAX
        out = tx.vmap(lambda v: tx.lax.while_loop(lambda u: u < 3, lambda u: u + 1, v))(
            tx.numpy.arange(4))
    np.testing.assert_array_equal(out, [3, 3, 3, 3])

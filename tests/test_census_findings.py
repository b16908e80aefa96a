"""Failures the ecosystem census (tools/ecosystem_census.py) found in JAX libraries, each as a
small reproduction run on JAX and on traxla (not the library itself)."""
from __future__ import annotations

import importlib

import numpy as np

import jax
import jax.numpy as jjnp
from jax import lax as jlax

import traxla as tx
import traxla.numpy as jnp
from traxla import lax


def test_split_takes_an_array_of_indices():
    # jraph.unbatch: jnp.split(field, jnp.cumsum(n_node)[:-1])
    x = np.arange(10.0)
    for api, np_ in ((jax, jjnp), (tx, jnp)):
        del api
        parts = np_.split(np_.asarray(x), np_.cumsum(np_.array([3, 4, 3]))[:-1])
        assert [p.tolist() for p in parts] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0],
                                                [7.0, 8.0, 9.0]]
        parts = np_.array_split(np_.asarray(x), np_.array([2, 5]))
        assert [len(p) for p in parts] == [2, 3, 5]
        # a 0-d array is a number of sections
        assert [len(p) for p in np_.split(np_.asarray(x), np_.array(5))] == [2] * 5


def test_cond_older_five_argument_form():
    # blackjax's NUTS: lax.cond(pred, true_operand, true_fun, false_operand, false_fun)
    def f(lax_, np_, p):
        return lax_.cond(p, (np_.ones(2), 3.0), lambda x: x[0] * x[1],
                         np_.arange(2.0), lambda x: x - 1)
    for p in (True, False):
        want = np.asarray(jax.jit(lambda p: f(jlax, jjnp, p))(p))
        got = np.asarray(tx.jit(lambda p: f(lax, jnp, p))(p))
        np.testing.assert_array_equal(got, want)
    for lax_ in (jlax, lax):
        try:
            lax_.cond(True, 1.0, 2.0)
        except TypeError as e:
            assert "true_fun and false_fun arguments should be callable" in str(e)
        else:
            raise AssertionError("a non-callable branch must raise")


def test_src_core_trace_state_clean():
    # numpyro.util._is_under_jax_transform
    seen = {}
    for name, api in (("jax", jax), ("traxla", tx)):
        core = importlib.import_module("jax._src.core" if api is jax else "traxla._src.core")
        out = [core.trace_state_clean()]
        api.jit(lambda x: out.append(core.trace_state_clean()) or x)(1.0)
        api.vmap(lambda x: out.append(core.trace_state_clean()) or x)(np.ones(2))
        out.append(core.reset_trace_state())
        seen[name] = out
    assert seen["traxla"] == seen["jax"] == [True, False, False, True]


def test_src_lax_control_flow_module():
    # pytensor's JAX backend: from jax._src.lax.control_flow import scan
    import jax._src.lax.control_flow as jcf
    import traxla._src.lax.control_flow as tcf
    names = ["scan", "while_loop", "fori_loop", "cond", "switch", "map", "associative_scan",
             "cumsum", "custom_linear_solve", "custom_root", "scan_p", "while_p", "cond_p"]
    assert all(hasattr(jcf, n) for n in names) and all(hasattr(tcf, n) for n in names)

    def body(c, x):
        return c + x, c * x
    want = jcf.scan(body, 0.0, jjnp.arange(4.0))
    got = tcf.scan(body, 0.0, jnp.arange(4.0))
    for w, g in zip(want, got):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_register_lowering_takes_inline_and_cacheable():
    # drjax: mlir.register_lowering(prim, rule, inline=..., cacheable=False)
    from jax.extend import core as jcore
    from jax.interpreters import mlir as jmlir
    from traxla.extend import core as tcore
    from traxla.interpreters import mlir as tmlir
    results = []
    for api, core, mlir in ((jax, jcore, jmlir), (tx, tcore, tmlir)):
        p = core.Primitive("census_double")
        p.def_impl(lambda x: 2 * x)
        p.def_abstract_eval(lambda x: x)
        assert mlir.register_lowering(
            p, mlir.lower_fun(lambda x: x + x, multiple_results=False),
            inline=False, cacheable=False) is None
        results.append(np.asarray(api.jit(p.bind)(np.float32(1.5))))
    np.testing.assert_array_equal(results[1], results[0])

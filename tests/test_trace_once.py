"""Traced callees are traced once per distinct function and signature, as JAX's caches do
(issue #41): a cond/switch with the same function in several branches, a loop body reused,
a nested jit, a closure over the enclosing trace's tracers reused within that trace. The
count of each scenario's Python side effects is compared with JAX 0.10.2's."""
import jax
import jax.numpy as jjnp
from jax import lax as jlax

import traxla
import traxla.numpy as tjnp
from traxla import lax as tlax


def _counts(api, jnp, lax):
    counts = {}
    calls = [0]

    def counted(fn):
        def wrapped(*a):
            calls[0] += 1
            return fn(*a)
        return wrapped

    def run(name, fun, *args):
        calls[0] = 0
        api.make_jaxpr(fun)(*args)
        counts[name] = calls[0]

    g = counted(lambda y: y + 1)
    run("cond_same_branches", lambda x: lax.cond(x > 0, g, g, x), 1.0)
    run("cond_again_same_types", lambda x: lax.cond(x > 0, g, g, x) * 2, 1.0)
    run("cond_new_types", lambda x: lax.cond(x.sum() > 0, g, g, x), jnp.ones(2))
    run("switch_same_branches", lambda x: lax.switch(2, [counted(lambda y: y * 2)] * 4, x), 1.0)
    h = counted(lambda y: y * 3)
    run("cond_distinct", lambda x: lax.cond(x > 0, h, counted(lambda y: y), x), 1.0)

    def closure(x):
        c = counted(lambda y: y + x)  # closes over this trace's tracer
        return lax.cond(x > 0, c, c, x) + lax.cond(x > 0, c, c, x) + lax.switch(1, [c] * 3, x)
    run("closure_reused_within_trace", closure, 1.0)
    run("closure_new_trace", closure, 1.0)
    body = counted(lambda c: c + 1)
    run("while_body_twice", lambda x: lax.while_loop(lambda c: c < 5, body, x)
        + lax.while_loop(lambda c: c < 6, body, x), 1.0)
    step = counted(lambda c, _: (c * 5, None))
    run("scan_body_twice", lambda x: lax.scan(step, x, None, length=2)[0]
        + lax.scan(step, x, None, length=3)[0], 1.0)
    k = counted(lambda y: y * 4)
    jk = api.jit(k)
    run("nested_jit", lambda x: jk(x) + jk(x) + jk(x + 1), 1.0)
    run("fresh_jit_same_function", lambda x: api.jit(k)(x), 1.0)
    m = counted(lambda y: y * 6)
    run("eval_shape_then_make_jaxpr", lambda x: api.eval_shape(m, x).shape and x, 1.0)
    run("make_jaxpr_of_traced", m, 1.0)
    return counts


def test_trace_counts_match_jax():
    assert _counts(traxla, tjnp, tlax) == _counts(jax, jjnp, jlax)


def test_cond_same_branch_traced_once():
    calls = []

    def g(y):
        calls.append(1)
        return y + 1

    jaxpr = traxla.make_jaxpr(lambda x: tlax.cond(x > 0, g, g, x))(1.0)
    assert len(calls) == 1
    assert "cond" in str(jaxpr)
    assert float(traxla.jit(lambda x: tlax.switch(3, [g] * 4, x))(1.0)) == 2.0

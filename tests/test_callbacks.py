"""Host callbacks and effects: debug.print / debug.callback golden outputs and jaxprs
compared with JAX's (the same program written once against both namespaces), ordered
effects through jit, cond, while, scan and nested jits, vmap (one print per lane) and grad
(the forward pass prints once)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

T = SimpleNamespace(debug=traxla.debug, lax=tlax, np=tnp, jit=traxla.jit, vmap=traxla.vmap,
                    grad=traxla.grad, make_jaxpr=traxla.make_jaxpr, jvp=traxla.jvp)
J = SimpleNamespace(debug=jax.debug, lax=jlax, np=jnp, jit=jax.jit, vmap=jax.vmap,
                    grad=jax.grad, make_jaxpr=jax.make_jaxpr, jvp=jax.jvp)

F3 = np.array([0.5, -1.25, 2.0], np.float32)


def p_jit(ns):
    def f(x):
        ns.debug.print("x={x}", x=x)
        return x * 2
    return ns.jit(f), (np.float32(1.5),)


def p_positional_no_placeholders(ns):
    def f(x, y):
        ns.debug.print("values:", x, y, skip_format_check=True)
        return x + y
    return ns.jit(f), (np.float32(1.0), F3)


def p_cond(ns):
    def f(x):
        def yes(x):
            ns.debug.print("positive {}", x, ordered=True)
            return x * 2
        def no(x):
            ns.debug.print("not positive {}", x, ordered=True)
            return -x
        return ns.lax.cond(x > 0, yes, no, x)
    return ns.jit(f), (np.float32(-3.0),)


def p_scan_ordered(ns):
    def f(xs):
        def body(c, x):
            ns.debug.print("c={} x={}", c, x, ordered=True)
            return c + x, c
        return ns.lax.scan(body, np.float32(0), xs)
    return ns.jit(f), (F3,)


def p_while(ns):
    def f(n):
        def body(i):
            ns.debug.print("i={}", i)
            return i + 1
        return ns.lax.while_loop(lambda i: i < n, body, np.int32(0))
    return ns.jit(f), (np.int32(3),)


def p_fori_ordered(ns):
    def f(x):
        def body(i, c):
            ns.debug.print("step {} carry {}", i, c, ordered=True)
            return c * 2
        return ns.lax.fori_loop(0, 3, body, x)
    return ns.jit(f), (np.float32(1.0),)


def p_vmap(ns):
    def f(x):
        ns.debug.print("lane {}", x)
        return x * 2
    return ns.jit(ns.vmap(f)), (F3,)


def p_vmap_unbatched_arg(ns):
    def f(x, y):
        ns.debug.print("x={} y={}", x, y)
        return x * y
    return ns.jit(ns.vmap(f, in_axes=(0, None))), (F3, np.float32(2.0))


def p_grad(ns):
    def f(x):
        ns.debug.print("forward x={}", x)
        return x * x
    return ns.jit(ns.grad(f)), (np.float32(3.0),)


def p_nested_jit_ordered(ns):
    @ns.jit
    def inner(x):
        ns.debug.print("inner {}", x, ordered=True)
        return x + 1
    def f(x):
        ns.debug.print("before {}", x, ordered=True)
        y = inner(inner(x))
        ns.debug.print("after {}", y, ordered=True)
        return y
    return ns.jit(f), (np.float32(0.0),)


def p_static_and_array(ns):
    def f(x):
        ns.debug.print("{name}: {x:.2f}", name="x", x=x)
        return x
    return ns.jit(f), (np.float32(3.14159),)


def p_callback(ns):
    def f(x):
        ns.debug.callback(lambda v: print("callback got", np.asarray(v) * 10), x)
        return x
    return ns.jit(f), (F3,)


def p_while_cond_ordered(ns):
    def f(x):
        def cond(c):
            ns.debug.print("cond {}", c, ordered=True)
            return c < 2
        def body(c):
            ns.debug.print("body {}", c, ordered=True)
            return c + 1
        return ns.lax.while_loop(cond, body, x)
    return ns.jit(f), (np.int32(0),)


def p_vmap_callback(ns):
    def f(x, y):
        ns.debug.callback(lambda a, b: print("lane", np.asarray(a), np.asarray(b)), x, y)
        return x
    return ns.jit(ns.vmap(f, in_axes=(0, None))), (F3, np.float32(4.0))


PROGRAMS = {name[2:]: fn for name, fn in dict(globals()).items() if name.startswith("p_")}


def _run(ns, program, capsys):
    fn, args = program(ns)
    capsys.readouterr()
    out = fn(*args)
    if ns is J:
        jax.effects_barrier()
    else:
        traxla.effects_barrier()
    printed = capsys.readouterr().out
    text = str(ns.make_jaxpr(fn)(*args))
    return out, printed, text


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_debug_print_matches_jax(name, capsys):
    t_out, t_printed, t_text = _run(T, PROGRAMS[name], capsys)
    j_out, j_printed, j_text = _run(J, PROGRAMS[name], capsys)
    assert t_printed == j_printed
    assert t_printed  # something was printed
    assert t_text == j_text
    for a, b in zip(jax.tree_util.tree_leaves(t_out), jax.tree_util.tree_leaves(j_out)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_scan_order_is_program_order(capsys):
    @traxla.jit
    def f(xs):
        def body(c, x):
            traxla.debug.print("a{}", x, ordered=True)
            traxla.debug.print("b{}", x, ordered=True)
            return c, x
        return tlax.scan(body, np.int32(0), xs)
    f(np.arange(4, dtype=np.int32))
    assert capsys.readouterr().out.split() == [f"{p}{i}" for i in range(4) for p in "ab"]


def test_effects_set_of_jaxprs():
    def f(x):
        traxla.debug.print("{}", x)
        return x
    def g(x):
        traxla.debug.print("{}", x, ordered=True)
        return tlax.cond(x > 0, f, f, x)
    assert {str(e) for e in traxla.make_jaxpr(f)(1.0).effects} == {"Debug"}
    assert {str(e) for e in traxla.make_jaxpr(g)(1.0).effects} == {"Debug", "OrderedDebug"}
    assert traxla.make_jaxpr(lambda x: x * 2)(1.0).effects == frozenset()


def test_print_outside_jit_runs_now(capsys):
    traxla.debug.print("eager {} {y}", np.float32(2.5), y=F3)
    assert capsys.readouterr().out == "eager 2.5 y=[ 0.5  -1.25  2.  ]\n".replace("y=", "")


def test_dce_keeps_effects_and_grad_of_jit_prints_once(capsys):
    inner = traxla.jit(lambda y: (traxla.debug.print("y={}", y), y * y)[1])
    g = traxla.grad(lambda x: inner(x))
    assert float(g(np.float32(2.0))) == 4.0
    assert capsys.readouterr().out == "y=2.0\n"


def test_format_errors_as_jax():
    with pytest.raises(ValueError, match="Unused positional arguments"):
        traxla.debug.print("no placeholder {}", 1.0, 2.0)
    with pytest.raises(ValueError, match="Unused keyword arguments"):
        traxla.debug.print("{x}", x=1.0, y=2.0)
    with pytest.raises(TypeError, match="must be callable"):
        traxla.debug.callback(3, 1.0)





def _control_flow_program(ns, use_while):
    def f(x):
        def yes(x):
            ns.debug.print("yes {}", x)
            return x * x
        y = ns.lax.cond(x > 0, yes, lambda x: -x, x)

        def body(c, z):
            ns.debug.print("scan c={} z={}", c, z, ordered=True)
            return c * z, c
        c, _ = ns.lax.scan(body, y, ns.np.arange(1., 3.))

        def wbody(c):
            ns.debug.print("loop {}", c[0])
            return (c[0] + 1, c[1] * 1.5)
        if use_while:
            return ns.lax.while_loop(lambda c: c[0] < 2, wbody, (0, c))[1]
        return ns.lax.fori_loop(0, 2, lambda i, c: wbody((i, c))[1], c)
    return f


def test_prints_under_grad_and_jvp_of_control_flow_match_jax(capsys):
    outputs = []
    for ns in (T, J):
        f, fw = _control_flow_program(ns, False), _control_flow_program(ns, True)
        capsys.readouterr()
        results = [ns.jit(ns.grad(f))(2.), ns.jit(lambda x: ns.jvp(fw, (x,), (1.,)))(2.)]
        (jax.effects_barrier if ns is J else traxla.effects_barrier)()
        outputs.append((capsys.readouterr().out,
                        [np.asarray(r).tolist() for r in jax.tree_util.tree_leaves(results)]))
    assert outputs[0] == outputs[1]


def _custom_rules_program(lib):
    @lib.custom_jvp
    def f(x):
        lib.debug.print("f primal {}", x, ordered=True)
        return x * 2

    @f.defjvp
    def f_jvp(p, t):
        lib.debug.print("f jvp {}", p[0], ordered=True)
        return f(p[0]), t[0] * 2

    @lib.custom_vjp
    def g(x):
        lib.debug.print("g primal {}", x, ordered=True)
        return x * 3

    def g_fwd(x):
        lib.debug.print("g fwd {}", x, ordered=True)
        return g(x), None

    def g_bwd(r, ct):
        lib.debug.print("g bwd {}", ct, ordered=True)
        return (ct * 3,)
    g.defvjp(g_fwd, g_bwd)
    return lambda x: g(f(x))


def test_prints_in_custom_jvp_and_vjp_rules_match_jax(capsys):
    printed = []
    for lib in (traxla, jax):
        h = _custom_rules_program(lib)
        capsys.readouterr()
        values = [float(lib.jit(h)(1.0)), float(lib.jit(lib.grad(h))(1.0))]
        lib.effects_barrier()
        printed.append((capsys.readouterr().out, values))
    assert printed[0] == printed[1]


def _lane_order(api, np_):
    """external-callbacks.md: vmap of a jit function with a debug callback, run eagerly,
    calls back once per lane in lane order (the jit equation runs as its own program)."""
    seen = []

    @api.jit
    def f(x):
        api.debug.callback(lambda v: seen.append(float(v)), x)
        return x
    api.vmap(f)(np_.arange(5.0))
    api.jvp(api.vmap(f), (np_.arange(3.0),), (np_.ones(3),))
    return seen


def test_vmap_of_a_jit_function_calls_back_in_lane_order():
    got = _lane_order(traxla, tnp)
    assert got == _lane_order(jax, jnp)
    assert got[:5] == [0.0, 1.0, 2.0, 3.0, 4.0]

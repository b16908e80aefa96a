"""Control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop`` and ``scan``.

1. Numerics against plain Python/NumPy reference loops, eagerly and under ``jit``.
2. The article's golden jaxprs (cond, and scan as the pinned JAX 0.10.2 prints it,
   with ``num_carry``/``num_consts``), and its tracing counts (both branches traced;
   the scan body traced once).
3. Jaxpr text equal to JAX's for a corpus of control-flow programs written once
   against a namespace ``(np_, lax_, jit_)``. Programs whose text cannot match are in
   ``KNOWN_DIFFERENCES`` (one-line reason each) and run as ``xfail(strict=True)``.
4. Errors and their messages, compared with JAX's for the same program.

Run ``python tests/test_control_flow.py [name-substring ...]`` to print the two jaxprs
of every corpus program that differs.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp
from traxla import errors

try:
    import jax
    import jax.lax as jlax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - the oracle is a test dependency
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="jax (the oracle) is not installed")

MODES = ("eager", "jit")

F0 = np.float32(1.5)
NF0 = np.float32(-2.0)
F3 = np.array([0.5, -1.25, 2.0], np.float32)
G3 = np.array([1.0, 0.25, -0.5], np.float32)
F5 = np.array([0.5, -1.0, 2.0, 0.25, -0.75], np.float32)
F7 = np.array([0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 3.0], np.float32)
F53 = ((np.arange(15, dtype=np.float32).reshape(5, 3) - 7) / 4).astype(np.float32)
I0 = np.int32(1)
N4 = np.int32(4)
CONST3 = np.array([1.0, 2.0, 3.0], np.float32)   # a concrete array closed over


def f32(x):
    return np.asarray(x, np.float32)


def i32(x):
    return np.asarray(x, np.int32)


# == 1. numerics against reference loops ===============================================

@dataclass
class Num:
    name: str
    fun: Callable            # the traxla program
    argsets: list            # lists of arguments; each is run
    ref: Callable            # NumPy reference: same arguments -> same pytree
    rtol: float = 1e-5


NUMERIC: dict[str, Num] = {}


def N(name, argsets, ref, rtol=1e-5):
    def deco(fun):
        assert name not in NUMERIC, name
        NUMERIC[name] = Num(name, fun, [list(a) for a in argsets], ref, rtol)
        return fun
    return deco


# -- cond / switch --

@N("cond/scalar", [[F0], [NF0]], lambda x: f32(x * 10 if x > 0 else x - 10))
def _cond_scalar(x):
    return tlax.cond(x > 0, lambda v: v * 10, lambda v: v - 10, x)


def _ref_cond_pytree(x, y):
    if y > 0:
        return {"p": (f32(y), f32(x + 1)), "s": f32(x * y)}
    return {"p": (f32(-y), f32(x)), "s": f32(x - 1)}


@N("cond/pytree_operands_and_outputs", [[F3, F0], [F3, NF0]], _ref_cond_pytree)
def _cond_pytree(x, y):
    return tlax.cond(y > 0,
                     lambda t: {"s": t[0] * t[1]["a"], "p": (t[1]["a"], t[0] + 1)},
                     lambda t: {"s": t[0] - 1, "p": (-t[1]["a"], t[0])},
                     (x, {"a": y}))


@N("cond/closures", [[F3, F0], [F3, np.float32(0.5)]],
   lambda x, y: f32(x + y * CONST3) if y > 1 else f32(x * y))
def _cond_closures(x, y):
    # y: an outer tracer under jit, a concrete value eagerly; CONST3: a concrete array
    return tlax.cond(y > 1, lambda v: v + y * CONST3, lambda v: v * y, x)


@N("cond/int_predicate", [[F3, np.int32(0)], [F3, np.int32(3)]],
   lambda x, i: f32(x + 1) if i else f32(x - 1))
def _cond_int_pred(x, i):
    return tlax.cond(i, lambda v: v + 1, lambda v: v - 1, x)


@N("cond/forwarded_outputs", [[F3, F0], [F3, NF0]],
   lambda x, y: (f32(x), f32(y * 2) if y > 0 else f32(y + 1)))
def _cond_forwarded(x, y):
    # output 0 is the same operand in both branches: JAX prunes it from the equation
    return tlax.cond(y > 0, lambda a, b: (a, b * 2), lambda a, b: (a, b + 1), x, y)


def _ref_switch(x, i):
    k = min(max(int(i), 0), 2)
    return [f32(x + 1), f32(x * 2), f32(-x + CONST3)][k]


@N("switch/index_clamped", [[F3, i32(k)] for k in (-3, 1, 7)], _ref_switch)
def _switch(x, i):
    return tlax.switch(i, [lambda v: v + 1, lambda v: v * 2, lambda v: -v + CONST3], x)


def _ref_switch_tuple(x, y, i):
    k = min(max(int(i), 0), 1)
    return [(f32(x * y), f32(y)), (f32(x - y), f32(y * 3))][k]


@N("switch/tuple_outputs_closure", [[F3, F0, i32(0)], [F3, F0, i32(1)]], _ref_switch_tuple)
def _switch_tuple(x, y, i):
    return tlax.switch(i, [lambda v: (v * y, y), lambda v: (v - y, y * 3)], x)


# -- while_loop --

def _ref_collatz(n):
    n, steps = int(n), 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return i32(n), i32(steps)


@N("while/collatz_tuple_carry", [[np.int32(27)], [np.int32(6)]], _ref_collatz)
def _while_collatz(n):
    def body(c):
        m, steps = c
        return tnp.where(m % 2 == 0, m // 2, 3 * m + 1), steps + 1
    return tlax.while_loop(lambda c: c[0] != 1, body, (n, np.int32(0)))


def _ref_while_dict(x, n):
    i, v = 0, f32(x)
    while i < n:
        i, v = i + 1, f32(v * 2 + CONST3)
    return {"i": i32(i), "x": v}


@N("while/dict_carry_closure", [[F3, N4]], _ref_while_dict)
def _while_dict(x, n):
    return tlax.while_loop(lambda c: c["i"] < n,
                           lambda c: {"i": c["i"] + 1, "x": c["x"] * 2 + CONST3},
                           {"i": 0, "x": x})


def _ref_while_weak(y):
    c = np.float32(0)
    while c < 10:
        c = np.float32(c * y + 1)
    return f32(c)


@N("while/python_int_init_promoted", [[F0]], _ref_while_weak)
def _while_weak(y):
    # init 0 is a weakly typed int; the body makes it float32, so the loop is retraced
    return tlax.while_loop(lambda c: c < 10, lambda c: c * y + 1, 0)


def _ref_while_readonly(x, y):
    i, v = 0, f32(x)
    while i < 5:
        i, v = i + 1, f32(v * y)
    return i32(i), v, f32(y)


@N("while/read_only_carry", [[F3, np.float32(1.25)]], _ref_while_readonly)
def _while_readonly(x, y):
    # c[2] is forwarded unchanged and unused by cond_fun: it becomes a body constant
    return tlax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * c[2], c[2]),
                           (0, x, y))


# -- fori_loop --

def _ref_fori(lo, hi, body, x):
    for i in range(int(lo), int(hi)):
        x = body(i, x)
    return x


@N("fori/static", [[F3]], lambda x: _ref_fori(2, 9, lambda i, c: f32(c * 0.5 + i), x))
def _fori_static(x):
    return tlax.fori_loop(2, 9, lambda i, c: c * 0.5 + i, x)


@N("fori/traced_bounds", [[F3, i32(1), i32(6)], [F3, i32(4), i32(2)]],
   lambda x, lo, hi: _ref_fori(lo, hi, lambda i, c: f32(c * 0.5 + i), x))
def _fori_traced(x, lo, hi):
    # traced bounds under jit: a while loop; concrete bounds eagerly: a scan
    return tlax.fori_loop(lo, hi, lambda i, c: c * 0.5 + i, x)


@N("fori/python_lower_traced_upper", [[F3, N4]],
   lambda x, n: _ref_fori(0, n, lambda i, c: f32(c + i * i), x))
def _fori_mixed(x, n):
    return tlax.fori_loop(0, n, lambda i, c: c + i * i, x)


@N("fori/unroll3_length7", [[F3]], lambda x: _ref_fori(0, 7, lambda i, c: f32(c * 0.5 + i), x))
def _fori_unroll(x):
    return tlax.fori_loop(0, 7, lambda i, c: c * 0.5 + i, x, unroll=3)


@N("fori/pytree_carry", [[F3, F0]],
   lambda x, y: _ref_fori(0, 3, lambda i, c: (f32(c[0] + c[1] * i), f32(c[1] * 2)), (x, y)))
def _fori_pytree(x, y):
    return tlax.fori_loop(0, 3, lambda i, c: (c[0] + c[1] * i, c[1] * 2), (x, y))


@N("fori/empty_range", [[F3]], lambda x: f32(x))
def _fori_empty(x):
    return tlax.fori_loop(5, 2, lambda i, c: c * i, x)


# -- scan --

def _ref_scan(body, carry, xs, length=None, reverse=False):
    n = len(xs) if xs is not None else length
    order = range(n - 1, -1, -1) if reverse else range(n)
    ys = [None] * n
    for t in order:
        carry, ys[t] = body(carry, None if xs is None else xs[t])
    return carry, ys


def _scan_body(c, x):
    return c * 0.5 + x, c * x


def _ref_scan_unroll(c, xs, reverse):
    carry, ys = _ref_scan(lambda c, x: (f32(c * 0.5 + x), f32(c * x)), f32(c), xs,
                          reverse=reverse)
    return carry, f32(ys)


for _u in (1, 2, 3, 7, True):
    for _r in (False, True):
        N(f"scan/unroll={_u}/reverse={_r}", [[F0, F7]],
          lambda c, xs, _r=_r: _ref_scan_unroll(c, xs, _r))(
            lambda c, xs, _u=_u, _r=_r: tlax.scan(_scan_body, c, xs, reverse=_r, unroll=_u))


def _ref_scan_none(c, reverse):
    carry, ys = _ref_scan(lambda c, _: (f32(c * 2 + 1), f32(c)), f32(c), None, length=5,
                          reverse=reverse)
    return carry, f32(ys)


@N("scan/xs_none_length", [[F0]], lambda c: _ref_scan_none(c, False))
def _scan_none(c):
    return tlax.scan(lambda c, _: (c * 2 + 1, c), c, None, length=5)


@N("scan/xs_none_length_reverse_unroll2", [[F0]], lambda c: _ref_scan_none(c, True))
def _scan_none_rev(c):
    return tlax.scan(lambda c, _: (c * 2 + 1, c), c, None, length=5, reverse=True, unroll=2)


def _ref_scan_pytree(h, xs, v):
    def body(c, x):
        m, e = x
        h = f32(np.tanh(c["h"] * 0.5 + m))
        return ({"h": h, "n": i32(c["n"] + 1)},
                {"s": f32(c["h"].sum()), "pair": (f32(m * e), i32(c["n"]))})
    carry, ys = _ref_scan(body, {"h": f32(h), "n": i32(0)}, list(zip(xs, v)))
    return carry, {"pair": (f32([y["pair"][0] for y in ys]), i32([y["pair"][1] for y in ys])),
                   "s": f32([y["s"] for y in ys])}


@N("scan/pytree_carry_xs_ys", [[F3, F53, F5]], _ref_scan_pytree)
def _scan_pytree(h, xs, v):
    def body(c, x):
        m, e = x
        return ({"h": tnp.tanh(c["h"] * 0.5 + m), "n": c["n"] + 1},
                {"s": c["h"].sum(), "pair": (m * e, c["n"])})
    return tlax.scan(body, {"h": h, "n": 0}, (xs, v))


def _ref_scan_closure(c, xs, y):
    carry, ys = _ref_scan(lambda c, x: (f32(c * y + x * CONST3), f32((c * CONST3).sum())),
                          f32(c), xs)
    return carry, f32(ys)


@N("scan/closures", [[F3, F53, np.float32(0.5)]], _ref_scan_closure)
def _scan_closure(c, xs, y):
    return tlax.scan(lambda c, x: (c * y + x * CONST3, (c * CONST3).sum()), c, xs)


def _ref_scan_fwd(a, xs):
    carry, ys = _ref_scan(lambda c, x: ((f32(c[0] + x * c[1]), c[1]), (f32(x), f32(c[0].sum()))),
                          (f32(a), f32(a * 2)), xs)
    return carry, (f32([y[0] for y in ys]), f32([y[1] for y in ys]))


@N("scan/forwarded_carry_and_ys", [[F3, F53]], _ref_scan_fwd)
def _scan_fwd(a, xs):
    # carry[1] is read-only (moved to a const); ys[0] is x itself (forwarded as xs)
    return tlax.scan(lambda c, x: ((c[0] + x * c[1], c[1]), (x, c[0].sum())), (a, a * 2), xs)


@N("scan/length_zero", [[F3]], lambda c: (f32(c), np.zeros((0,), np.float32)))
def _scan_empty(c):
    return tlax.scan(lambda c, x: (c + x, c.sum()), c, np.zeros((0, 3), np.float32))


def _ref_scan_weak(xs):
    carry, ys = _ref_scan(lambda c, x: (f32(c + x), f32(c)), f32(0), xs)
    return carry, f32(ys)


@N("scan/python_scalar_init", [[F5]], _ref_scan_weak)
def _scan_weak(xs):
    return tlax.scan(lambda c, x: (c + x, c), 0, xs)   # int 0 adopts float32


# -- nested control flow --

def _ref_scan_in_cond(c, xs):
    if c > 0:
        return f32(c + xs.sum())
    return f32(c)


@N("nested/scan_in_cond", [[F0, F5], [NF0, F5]], _ref_scan_in_cond, rtol=1e-5)
def _scan_in_cond(c, xs):
    return tlax.cond(c > 0, lambda c: tlax.scan(lambda c, x: (c + x, c), c, xs)[0],
                     lambda c: c, c)


def _ref_cond_in_scan(c, xs):
    carry, ys = _ref_scan(lambda c, x: (f32(c + x) if x > 0 else f32(c - x), f32(c)), f32(c), xs)
    return carry, f32(ys)


@N("nested/cond_in_scan", [[F0, F5]], _ref_cond_in_scan)
def _cond_in_scan(c, xs):
    return tlax.scan(lambda c, x: (tlax.cond(x > 0, lambda a: a + x, lambda a: a - x, c), c), c, xs)


def _ref_while_in_scan(c, xs):
    def body(c, x):
        a = c
        while a < x + 10:
            a = f32(a + 3)
        return a, f32(c)
    carry, ys = _ref_scan(body, f32(c), xs)
    return carry, f32(ys)


@N("nested/while_in_scan", [[F0, F5]], _ref_while_in_scan)
def _while_in_scan(c, xs):
    return tlax.scan(lambda c, x: (tlax.while_loop(lambda a: a < x + 10, lambda a: a + 3, c), c),
                     c, xs)


def _ref_fori_in_fori(x):
    for i in range(4):
        for j in range(i):
            x = f32(x + j * i)
    return f32(x)


@N("nested/fori_in_fori", [[F0]], _ref_fori_in_fori)
def _fori_in_fori(x):
    # the inner upper bound is the outer (traced) index: the inner loop is a while
    return tlax.fori_loop(0, 4, lambda i, c: tlax.fori_loop(0, i, lambda j, d: d + j * i, c), x)


def _ref_switch_in_while(x):
    i, v = 0, f32(x)
    while i < 6:
        k = min(max(i % 4, 0), 2)
        v = [f32(v + 1), f32(v * 2), f32(v - 3)][k]
        i += 1
    return i32(i), v


@N("nested/switch_in_while", [[F3]], _ref_switch_in_while)
def _switch_in_while(x):
    def body(c):
        i, v = c
        return i + 1, tlax.switch(i % 4, [lambda a: a + 1, lambda a: a * 2, lambda a: a - 3], v)
    return tlax.while_loop(lambda c: c[0] < 6, body, (0, x))


@traxla.jit
def _helper(c, x):
    return tnp.sin(c) + x * 2


def _ref_jit_helper(c, xs):
    carry, ys = _ref_scan(lambda c, x: (f32(np.sin(c) + x * 2), f32(c.sum())), f32(c), xs)
    return carry, f32(ys)


@N("nested/jitted_helper_in_scan_body", [[F3, F53]], _ref_jit_helper)
def _jit_helper_in_scan(c, xs):
    return tlax.scan(lambda c, x: (_helper(c, x), c.sum()), c, xs)


# -- machinery --

def _flat(tree):
    return traxla.tree_util.tree_leaves(tree)


def _check_close(got, want, rtol):
    got_leaves, want_leaves = _flat(got), _flat(want)
    assert traxla.tree_util.tree_structure(got) == traxla.tree_util.tree_structure(want), (
        got, want)
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-5)


_JIT_CHUNK = 10  # cases whose jit runs are one compiled program
_JIT_SHARED: dict = {}


def _jit_shared(name):
    """{case name: [output per argset]} of ``jit`` of the cases of chunk holding ``name``
    (10 cases in all, in table order), every case on every argset in ONE jitted program,
    computed on first use in a process: one compile per chunk instead of one per case (the
    compiles were most of this test's time). None where the chunk cannot run together (each
    case's test then jits its own function)."""
    names = list(NUMERIC)
    chunk = names.index(name) // _JIT_CHUNK
    if chunk not in _JIT_SHARED:
        cases = [NUMERIC[n] for n in names[chunk * _JIT_CHUNK:(chunk + 1) * _JIT_CHUNK]]

        def run_all(all_args):
            return [[c.fun(*args) for args in argsets] for c, argsets in zip(cases, all_args)]
        try:
            outs = traxla.jit(run_all)([c.argsets for c in cases])
            _JIT_SHARED[chunk] = {c.name: o for c, o in zip(cases, outs)}
        except Exception:  # noqa: BLE001 - the failing case's own test reports it
            _JIT_SHARED[chunk] = None
    return _JIT_SHARED[chunk]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(NUMERIC))
def test_numerics_against_reference_loops(name, mode):
    case = NUMERIC[name]
    if mode == "jit":
        shared = _jit_shared(name)
        if shared is not None:
            for args, got in zip(case.argsets, shared[name], strict=True):
                _check_close(got, case.ref(*args), case.rtol)
            return
    fun = traxla.jit(case.fun) if mode == "jit" else case.fun
    for args in case.argsets:
        _check_close(fun(*args), case.ref(*args), case.rtol)


def test_jit_of_function_calling_jitted_helper_in_scan_body():
    def f(c, xs):
        return tlax.scan(lambda c, x: (_helper(c, x), c.sum()), c, xs)

    _check_close(traxla.jit(f)(F3, F53), _ref_jit_helper(F3, F53), 1e-5)
    text = str(traxla.make_jaxpr(f)(F3, F53))
    assert "scan[" in text and "name=_helper" in text


def test_fori_traced_bounds_stage_a_while_static_bounds_a_scan():
    body = lambda i, c: c + i  # noqa: E731
    traced = str(traxla.make_jaxpr(lambda x, n: tlax.fori_loop(0, n, body, x))(F3, N4))
    static = str(traxla.make_jaxpr(lambda x: tlax.fori_loop(0, 4, body, x))(F3))
    assert " = while[" in traced and "scan[" not in traced
    assert " = scan[" in static and "while[" not in static


@pytest.mark.parametrize("unroll,expected", [(1, 1), (2, 2), (3, 3), (7, 7), (True, 7),
                                             (False, 1)])
def test_scan_unroll_param(unroll, expected):
    closed = traxla.make_jaxpr(lambda c, xs: tlax.scan(_scan_body, c, xs, unroll=unroll))(F0, F7)
    eqn, = closed.jaxpr.eqns
    assert eqn.params["unroll"] == expected


@pytest.mark.parametrize("unroll", [1, 2, 3, 7])
def test_scan_lowering_is_a_while_with_dynamic_slices(unroll):
    f = lambda c, xs: tlax.scan(_scan_body, c, xs, unroll=unroll)  # noqa: E731
    text = traxla.jit(f).lower(F0, F7).as_text()
    assert "stablehlo.while" in text or unroll == 7
    assert "stablehlo.dynamic_slice" in text and "stablehlo.dynamic_update_slice" in text


def test_cond_lowers_to_case_and_while_to_while():
    assert "stablehlo.case" in traxla.jit(_cond_scalar).lower(F0).as_text()
    assert "stablehlo.while" in traxla.jit(_while_collatz).lower(np.int32(27)).as_text()


# == 2. the article's jaxprs and tracing counts ========================================

ARTICLE_COND = """\
{ lambda ; a:f32[]. let
    b:bool[] = gt a 0.0:f32[]
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = neg e in (f,) }
        { lambda ; g:f32[]. let  in (g,) }
      )
    ] c a
  in (d,) }"""

# The pinned JAX 0.10.2 prints num_carry/num_consts (the article's newer release omits them).
ARTICLE_SCAN = """\
{ lambda ; a:f32[] b:f32[1000]. let
    c:f32[] d:f32[1000] = scan[
      jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = add e f in (g, e) }
      length=1000
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a b
  in (c, d) }"""


def test_article_cond_jaxpr():
    def good(x):
        return tlax.cond(x > 0, lambda v: v, lambda v: -v, x)

    assert str(traxla.make_jaxpr(good)(tnp.float32(1.0))) == ARTICLE_COND
    assert float(good(tnp.float32(1.0))) == 1.0
    assert float(traxla.jit(good)(tnp.float32(-3.0))) == 3.0


def test_article_cond_traces_both_branches_true_first():
    hits = []

    def true_fn(v):
        hits.append("true")
        return v * 10

    def false_fn(v):
        hits.append("false")
        return v - 10

    traxla.make_jaxpr(lambda x: tlax.cond(x > 0, true_fn, false_fn, x))(tnp.float32(1.0))
    assert hits == ["true", "false"]


def test_article_scan_jaxpr_and_single_trace():
    n = []

    def body(carry, x):
        n.append(1)
        return carry + x, carry

    text = str(traxla.make_jaxpr(lambda c, xs: tlax.scan(body, c, xs))(
        tnp.float32(0.), tnp.arange(1000, dtype=tnp.float32)))
    assert text == ARTICLE_SCAN
    assert len(n) == 1


def test_article_scan_runs():
    def body(carry, x):
        return carry + x, carry

    xs = np.arange(1000, dtype=np.float32)
    c, ys = traxla.jit(lambda c, xs: tlax.scan(body, c, xs))(np.float32(0.), xs)
    assert float(c) == float(xs.sum())
    np.testing.assert_array_equal(np.asarray(ys), np.concatenate([[0], np.cumsum(xs)[:-1]]))


@needs_jax
def test_article_jaxprs_are_what_pinned_jax_prints():
    def good(x):
        return jlax.cond(x > 0, lambda v: v, lambda v: -v, x)

    assert str(jax.make_jaxpr(good)(jnp.float32(1.0))) == ARTICLE_COND
    body = lambda c, x: (c + x, c)  # noqa: E731
    assert str(jax.make_jaxpr(lambda c, xs: jlax.scan(body, c, xs))(
        jnp.float32(0.), jnp.arange(1000, dtype=jnp.float32))) == ARTICLE_SCAN


# == 3. jaxpr text equal to JAX's =======================================================

@dataclass
class Prog:
    name: str
    build: Callable          # (np_, lax_, jit_) -> function
    args: tuple
    rtol: float = 1e-5


CORPUS: dict[str, Prog] = {}


def P(name, args, rtol=1e-5):
    def deco(build):
        assert name not in CORPUS, name
        CORPUS[name] = Prog(name, build, tuple(args), rtol)
        return build
    return deco


# -- cond / switch --
@P("cond/article", [F0])
def _(np_, lax_, jit_): return lambda x: lax_.cond(x > 0, lambda v: v, lambda v: -v, x)
@P("cond/mul_sub", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.cond(x.sum() > 0, lambda v: v * 10, lambda v: v - 10, x)
@P("cond/closure_tracer", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 1, lambda v: v + y, lambda v: v * 2, x)
@P("cond/closures_in_both_branches", [F3, F0, G3])
def _(np_, lax_, jit_): return lambda x, y, z: lax_.cond(y > 1, lambda v: v + z, lambda v: v * y, x)
@P("cond/same_closure_both_branches", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 0, lambda a: a * y, lambda a: a + y, x)
@P("cond/closure_concrete_array", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 1, lambda v: v + CONST3, lambda v: v, x)
@P("cond/int_predicate", [F3, I0])
def _(np_, lax_, jit_): return lambda x, i: lax_.cond(i, lambda v: v + 1, lambda v: v - 1, x)
@P("cond/float_predicate", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y, lambda a: a * 2, lambda a: a + 1, x)
@P("cond/concrete_predicate", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.cond(True, lambda a: a * 2, lambda a: a + 1, x)
@P("cond/python_int_predicate", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.cond(0, lambda a: a * 2, lambda a: a + 1, x)
@P("cond/pytree_operands", [F3, F0])
def _(np_, lax_, jit_):
    return lambda x, y: lax_.cond(y > 0, lambda t: (t[0] * t[1]['a'], t[1]),
                                  lambda t: (t[0], {'a': -t[1]['a']}), (x, {'a': y}))
@P("cond/no_operands", [F0])
def _(np_, lax_, jit_): return lambda y: lax_.cond(y > 0, lambda: y * 2, lambda: y + 1)
@P("cond/weak_outputs", [F0])
def _(np_, lax_, jit_): return lambda y: lax_.cond(y > 0, lambda: 1.0, lambda: 2.0)
@P("cond/two_operands", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 0, lambda a, b: a * b, lambda a, b: a - b, x, y)
@P("cond/forwarded_output_pruned", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 0, lambda a, b: (a, b * 2), lambda a, b: (a, b + 1), x, y)
@P("cond/all_outputs_forwarded", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 0, lambda a: a, lambda a: a, x)
@P("cond/swapped_outputs_kept", [F3, G3, F0])
def _(np_, lax_, jit_): return lambda x, z, y: lax_.cond(y > 0, lambda a, b: (a, b), lambda a, b: (b, a), x, z)
@P("switch/three_branches_clamped", [F3, I0])
def _(np_, lax_, jit_): return lambda x, i: lax_.switch(i, [lambda v: v + 1, lambda v: v * 2, lambda v: -v], x)
@P("switch/closures", [F3, I0, F0])
def _(np_, lax_, jit_): return lambda x, i, y: lax_.switch(i, [lambda v: v + y, lambda v: v * CONST3], x)
@P("switch/consts_in_each_branch", [F3, F0, G3, np.int32(5)])
def _(np_, lax_, jit_):
    return lambda x, y, z, i: lax_.switch(i, [lambda a: a * y, lambda a: a + z,
                                              lambda a: a - y * CONST3], x)
@P("switch/single_branch_inlined", [F3, I0])
def _(np_, lax_, jit_): return lambda x, i: lax_.switch(i, [lambda v: v + 1], x)
@P("switch/python_int_index", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.switch(1, [lambda a: a * 2, lambda a: a + 1], x)
@P("switch/uint8_index", [F3, np.uint8(1)])
def _(np_, lax_, jit_): return lambda x, i: lax_.switch(i, [lambda a: a * 2, lambda a: a + 1], x)

# -- while_loop --
@P("while/python_int_carry", [])
def _(np_, lax_, jit_): return lambda: lax_.while_loop(lambda c: c < 10, lambda c: c + 1, 0)
@P("while/closure_bound", [I0])
def _(np_, lax_, jit_): return lambda n: lax_.while_loop(lambda c: c < n, lambda c: c * 2, 1)
@P("while/dict_carry", [F3, N4])
def _(np_, lax_, jit_):
    return lambda x, n: lax_.while_loop(lambda c: c['i'] < n,
                                        lambda c: {'i': c['i'] + 1, 'x': c['x'] * 2},
                                        {'i': 0, 'x': x})
@P("while/tuple_carry_closures", [F3, F0])
def _(np_, lax_, jit_):
    return lambda x, y: lax_.while_loop(lambda c: c[1].sum() < y * 100,
                                        lambda c: (c[0] + 1, c[1] * 2 + CONST3), (0, x))
@P("while/python_float_carry", [F0])
def _(np_, lax_, jit_): return lambda y: lax_.while_loop(lambda c: c < 100.0, lambda c: c * y + 1, 1.0)
@P("while/python_int_carry_promoted_to_float", [F0])
def _(np_, lax_, jit_): return lambda y: lax_.while_loop(lambda c: c < 10, lambda c: c + y, 0)
@P("while/read_only_carry_becomes_const", [F3, F0])
def _(np_, lax_, jit_):
    return lambda x, y: lax_.while_loop(lambda c: c[0] < 5,
                                        lambda c: (c[0] + 1, c[1] * c[2], c[2]), (0, x, y))
@P("while/read_only_carry_read_by_cond", [F3, F0])
def _(np_, lax_, jit_):
    return lambda x, y: lax_.while_loop(lambda c: c[1].sum() < c[2],
                                        lambda c: (c[0] + 1, c[1] * 2, c[2]), (0, x, y))
@P("while/cond_dead_code_removed", [F3, F0])
def _(np_, lax_, jit_):
    def cond(c):
        unused = c[1] * 3  # noqa: F841
        return c[0] < 5
    return lambda x, y: lax_.while_loop(cond, lambda c: (c[0] + 1, c[1], c[2] + 1), (0, x, y))

# -- fori_loop --
@P("fori/static", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.fori_loop(0, 5, lambda i, c: c + i, x)
@P("fori/static_lower", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.fori_loop(2, 7, lambda i, c: c * 2 + i, x)
@P("fori/numpy_bounds", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.fori_loop(np.int32(1), np.int32(4), lambda i, c: c * i, x)
@P("fori/traced_upper", [F3, N4])
def _(np_, lax_, jit_): return lambda x, n: lax_.fori_loop(0, n, lambda i, c: c + i, x)
@P("fori/traced_both", [F3, I0, N4])
def _(np_, lax_, jit_): return lambda x, a, b: lax_.fori_loop(a, b, lambda i, c: c * i, x)
@P("fori/python_lower_traced_upper", [F3, N4])
def _(np_, lax_, jit_): return lambda x, n: lax_.fori_loop(1, n, lambda i, c: c * i, x)
@P("fori/unroll3", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.fori_loop(0, 7, lambda i, c: c + i, x, unroll=3)
@P("fori/unroll_true", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.fori_loop(0, 4, lambda i, c: c + i, x, unroll=True)
@P("fori/pytree_carry", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.fori_loop(0, 3, lambda i, c: (c[0] + c[1], c[1] * y), (x, y))
@P("fori/python_float_carry", [])
def _(np_, lax_, jit_): return lambda: lax_.fori_loop(0, 4, lambda i, c: c + i, 0.0)
@P("fori/empty_range", [F3])
def _(np_, lax_, jit_): return lambda x: lax_.fori_loop(5, 2, lambda i, c: c * i, x)

# -- scan --
@P("scan/article", [np.float32(0.), np.arange(1000, dtype=np.float32)])
def _(np_, lax_, jit_): return lambda c, xs: lax_.scan(lambda c, x: (c + x, c), c, xs)
@P("scan/consts", [F0, F5, F0])
def _(np_, lax_, jit_): return lambda c, xs, y: lax_.scan(lambda c, x: (c * y + x, c + CONST3.sum()), c, xs)
@P("scan/const_array", [F3, F53])
def _(np_, lax_, jit_): return lambda c, xs: lax_.scan(lambda c, x: (c + x * CONST3, c * 2), c, xs)
@P("scan/reverse", [F0, F5])
def _(np_, lax_, jit_): return lambda c, xs: lax_.scan(lambda c, x: (c * 0.5 + x, c), c, xs, reverse=True)
@P("scan/unroll2", [F0, F5])
def _(np_, lax_, jit_): return lambda c, xs: lax_.scan(lambda c, x: (c + x, c * x), c, xs, unroll=2)
@P("scan/unroll_true", [F0, F5])
def _(np_, lax_, jit_): return lambda c, xs: lax_.scan(lambda c, x: (c + x, c * x), c, xs, unroll=True)
@P("scan/unroll3_reverse", [F0, F5])
def _(np_, lax_, jit_):
    return lambda c, xs: lax_.scan(lambda c, x: (c * 0.5 + x, c), c, xs, reverse=True, unroll=3)
@P("scan/xs_none_length", [F0])
def _(np_, lax_, jit_): return lambda c: lax_.scan(lambda c, _: (c * 2, c), c, None, length=4)
@P("scan/pytree_carry_and_ys", [F3, F0, F53])
def _(np_, lax_, jit_):
    return lambda a, b, xs: lax_.scan(
        lambda c, x: ({'a': c['a'] + x, 'b': c['b'] * 2}, (c['b'], {'s': x.sum()})),
        {'a': a, 'b': b}, xs)
@P("scan/xs_tuple", [F0, F5, F53])
def _(np_, lax_, jit_): return lambda c, a, b: lax_.scan(lambda c, x: (c + x[0], x[1] * c), c, (a, b))
@P("scan/python_float_init", [F5])
def _(np_, lax_, jit_): return lambda xs: lax_.scan(lambda c, x: (c + x, c), 0.0, xs)
@P("scan/python_int_init_promoted", [F5])
def _(np_, lax_, jit_): return lambda xs: lax_.scan(lambda c, x: (c + x, c), 0, xs)
@P("scan/python_int_init_stays_int", [F5])
def _(np_, lax_, jit_): return lambda xs: lax_.scan(lambda c, x: (c + 1, x * c), 0, xs)
@P("scan/read_only_carry_becomes_const", [F3, F53])
def _(np_, lax_, jit_):
    return lambda a, xs: lax_.scan(lambda c, x: ((c[0] + x * c[1], c[1]), c[0].sum()), (a, a * 2), xs)
@P("scan/y_is_x_forwarded", [F0, F53])
def _(np_, lax_, jit_): return lambda a, xs: lax_.scan(lambda c, x: (c + x.sum(), (x, c)), a, xs)
@P("scan/ys_none", [F0, F5])
def _(np_, lax_, jit_): return lambda a, xs: lax_.scan(lambda c, x: (c + x, None), a, xs)
@P("scan/length_zero", [F0])
def _(np_, lax_, jit_): return lambda a: lax_.scan(lambda c, x: (c + x, c), a, np_.zeros((0,), np_.float32))
@P("scan/list_output", [F0, F5])
def _(np_, lax_, jit_): return lambda c, xs: lax_.scan(lambda c, x: [c + x, c], c, xs)
@P("scan/rnn_rows", [F3, F53])
def _(np_, lax_, jit_): return lambda h, xs: lax_.scan(lambda h, x: (np_.tanh(h * 0.5 + x), h.sum()), h, xs)
@P("scan/weak_ys", [F0, F5])
def _(np_, lax_, jit_): return lambda c, xs: lax_.scan(lambda c, x: (c + x, 2.0), c, xs)
@P("scan/carry_swapped", [F0, F5])
def _(np_, lax_, jit_): return lambda c, xs: lax_.scan(lambda c, x: ((c[1], c[0] + x), x), (c, c * 2), xs)
@P("scan/carry_out_is_closure", [F0, F5, F0])
def _(np_, lax_, jit_): return lambda c, xs, y: lax_.scan(lambda c, x: (y, c + x), c, xs)
@P("scan/everything_forwarded", [F3, F5])
def _(np_, lax_, jit_): return lambda x, xs: lax_.scan(lambda c, x: (c, x), x, xs)
@P("cond/both_return_closure", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 0, lambda a: (a * 2, y), lambda a: (a, y), x)
@P("cond/same_const_array_both_branches", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 0, lambda a: a * CONST3, lambda a: a + CONST3, x)
@P("cond/weak_outputs_used", [F3, F0])
def _(np_, lax_, jit_): return lambda x, y: lax_.cond(y > 0, lambda: 1.0, lambda: 2.0) + x
@P("cond/weak_and_strong_outputs", [F0])
def _(np_, lax_, jit_): return lambda y: lax_.cond(y > 0, lambda: 1.0, lambda: y) + 1
@P("while/bool_carry", [F0])
def _(np_, lax_, jit_):
    return lambda x: lax_.while_loop(lambda c: c[0], lambda c: (c[1] < 3, c[1] + 1), (True, x))
@P("while/two_read_only_carries", [F3, F0])
def _(np_, lax_, jit_):
    return lambda x, y: lax_.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1], c[2]), (0, x, y))
@P("while/scan_in_cond_fun", [F0, F5])
def _(np_, lax_, jit_):
    return lambda c, xs: lax_.while_loop(
        lambda a: lax_.scan(lambda s, x: (s + x, None), a, xs)[0] < 100, lambda a: a * 2 + 1, c)
@P("fori/int16_traced_bounds", [np.int16(1), np.int16(5)])
def _(np_, lax_, jit_): return lambda a, b: lax_.fori_loop(a, b, lambda i, c: c + i, np_.int16(0))
@P("fori/int16_lower_python_upper", [np.int16(1)])
def _(np_, lax_, jit_): return lambda a: lax_.fori_loop(a, 5, lambda i, c: c + i, np_.int16(0))

# -- nested --
@P("nested/scan_in_cond", [F0, F5])
def _(np_, lax_, jit_):
    return lambda c, xs: lax_.cond(c > 0, lambda c: lax_.scan(lambda c, x: (c + x, c), c, xs)[0],
                                   lambda c: c, c)
@P("nested/cond_in_scan", [F0, F5])
def _(np_, lax_, jit_):
    return lambda c, xs: lax_.scan(
        lambda c, x: (lax_.cond(x > 0, lambda a: a + x, lambda a: a - x, c), c), c, xs)
@P("nested/while_in_scan", [F0, F5])
def _(np_, lax_, jit_):
    return lambda c, xs: lax_.scan(
        lambda c, x: (lax_.while_loop(lambda a: a < x + 10, lambda a: a + 3, c), c), c, xs)
@P("nested/fori_in_fori", [F0])
def _(np_, lax_, jit_):
    return lambda x: lax_.fori_loop(0, 3, lambda i, c: lax_.fori_loop(0, i, lambda j, d: d + j * i, c), x)
@P("nested/fori_in_traced_fori", [F0, np.int32(3)])
def _(np_, lax_, jit_):
    return lambda x, n: lax_.fori_loop(0, n, lambda i, c: lax_.fori_loop(0, 2, lambda j, d: d + j * i, c), x)
@P("nested/switch_in_while", [F3])
def _(np_, lax_, jit_):
    return lambda x: lax_.while_loop(
        lambda c: c[0] < 6,
        lambda c: (c[0] + 1, lax_.switch(c[0] % 4, [lambda a: a + 1, lambda a: a * 2], c[1])), (0, x))
@P("nested/jitted_helper_in_scan_body", [F3, F53])
def _(np_, lax_, jit_):
    @jit_
    def helper(c, x):
        return np_.sin(c) + x * 2
    return lambda c, xs: lax_.scan(lambda c, x: (helper(c, x), c.sum()), c, xs)


# == known differences ==================================================================
# name -> why traxla's text cannot match JAX's without changes outside the control-flow files.

# (The six programs whose nested jaxprs end at columns 81-82 were listed here until
# traxla/ir/jaxpr_printer.py's _skeleton put the trailing " }" inside the group, as JAX does.)
KNOWN_DIFFERENCES: dict[str, str] = {}


TRAXLA_NS = (tnp, tlax, traxla.jit)


def _jax_ns():
    return (jnp, jlax, jax.jit)


def jaxpr_texts(prog: Prog) -> tuple[str, str]:
    want = str(jax.make_jaxpr(prog.build(*_jax_ns()))(*prog.args))
    got = str(traxla.make_jaxpr(prog.build(*TRAXLA_NS))(*prog.args))
    return want, got


def _params(known):
    return [pytest.param(n, id=n, marks=(pytest.mark.xfail(strict=True, reason=known[n]),)
                         if n in known else ()) for n in CORPUS]


def test_corpus_size_and_known_differences():
    assert len(CORPUS) >= 25
    assert set(KNOWN_DIFFERENCES) <= set(CORPUS)
    assert NUMERICS_COVERED_ABOVE <= set(CORPUS)


def test_corpus_jaxprs_pass_the_checker():
    from traxla.ir.checker import check_jaxpr
    for prog in CORPUS.values():
        check_jaxpr(traxla.make_jaxpr(prog.build(*TRAXLA_NS))(*prog.args))


@needs_jax
@pytest.mark.parametrize("name", _params(KNOWN_DIFFERENCES))
def test_jaxpr_text_matches_jax(name):
    want, got = jaxpr_texts(CORPUS[name])
    assert got == want, f"\n--- jax\n{want}\n--- traxla\n{got}"


# Programs whose numerics section 1 already checks against reference loops; the rest
# also run under both jits (each costs two compiles, so the overlap is skipped).
NUMERICS_COVERED_ABOVE = {
    "cond/article", "cond/mul_sub", "cond/closure_tracer", "cond/closures_in_both_branches",
    "cond/same_closure_both_branches", "cond/closure_concrete_array", "cond/int_predicate",
    "cond/pytree_operands", "cond/two_operands", "cond/forwarded_output_pruned",
    "switch/three_branches_clamped", "switch/closures", "while/closure_bound",
    "while/dict_carry", "while/tuple_carry_closures", "while/python_int_carry_promoted_to_float",
    "while/read_only_carry_becomes_const", "fori/static", "fori/static_lower",
    "fori/traced_upper", "fori/python_lower_traced_upper", "fori/unroll3", "fori/pytree_carry",
    "fori/empty_range", "scan/article", "scan/consts", "scan/reverse", "scan/unroll2",
    "scan/unroll_true", "scan/unroll3_reverse", "scan/xs_none_length", "scan/pytree_carry_and_ys",
    "scan/python_float_init", "scan/python_int_init_promoted",
    "scan/read_only_carry_becomes_const", "scan/length_zero", "scan/rnn_rows",
    "nested/scan_in_cond", "nested/cond_in_scan", "nested/while_in_scan", "nested/fori_in_fori",
    "nested/jitted_helper_in_scan_body",
}


@needs_jax
@pytest.mark.parametrize("name", [n for n in CORPUS if n not in NUMERICS_COVERED_ABOVE])
def test_corpus_results_match_jax(name, jax_side):
    prog = CORPUS[name]
    want = jax_side(lambda: jax.tree_util.tree_leaves(jax.jit(prog.build(*_jax_ns()))(*prog.args)))
    got = _flat(traxla.jit(prog.build(*TRAXLA_NS))(*prog.args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=prog.rtol, atol=1e-5)


# == 4. errors ==========================================================================

def _raises(fun, *args):
    with pytest.raises(Exception) as info:
        traxla.make_jaxpr(fun)(*args)
    return info.value


def _where(fun):
    code = fun.__code__
    return f"{code.co_name} at {code.co_filename}:{code.co_firstlineno}"


def test_cond_branch_types_differ_names_both_branches_and_types():
    tf = lambda v: v  # noqa: E731
    ff = lambda v: v.astype(tnp.int32)  # noqa: E731
    err = _raises(lambda x: tlax.cond(x > 0, tf, ff, x), F0)
    assert type(err) is TypeError
    assert str(err) == (
        "cond branches must have equal output types but they differ.\n\n"
        f"true_fun is {_where(tf)}\nfalse_fun is {_where(ff)}\n\n"
        "The output of true_fun has type float32[] but the corresponding output of false_fun "
        "has type int32[], so the dtypes do not match.\n\n"
        "Revise true_fun and/or false_fun so that all output types match.")


def test_cond_branch_pytree_structures_differ():
    tf = lambda v: (v, v)  # noqa: E731
    ff = lambda v: v  # noqa: E731
    err = _raises(lambda x: tlax.cond(x > 0, tf, ff, x), F0)
    assert type(err) is TypeError
    assert str(err) == (
        "cond branch outputs must have the same pytree structure, but they differ:\n\n"
        f"true_fun is {_where(tf)}\nfalse_fun is {_where(ff)}\n\n"
        "true_fun output is a <class 'tuple'> but false_fun output is a pytree leaf, so their "
        "Python types differ.\n\n"
        "Revise true_fun and/or false_fun so that they have the same pytree structure.")


def test_scan_carry_type_changes_names_the_leaf():
    def body(c, x):
        return {"a": (c["a"] > 0).astype(tnp.int32)}, x

    err = _raises(lambda xs: tlax.scan(body, {"a": tnp.float32(0)}, xs), F5)
    assert type(err) is TypeError
    assert str(err) == (
        "scan body function carry input and carry output must have equal types, but they "
        "differ:\n\nThe input carry component c['a'] has type float32[] but the corresponding "
        "output carry component has type int32[], so the dtypes do not match.\n\n"
        "Revise the function so that all output types match the corresponding input types.")


def test_while_carry_type_changes_names_the_leaf():
    err = _raises(lambda x: tlax.while_loop(lambda c: c["a"] > 0,
                                            lambda c: {"a": c["a"].astype(tnp.int32)},
                                            {"a": x}), F0)
    assert type(err) is TypeError
    assert ("The input carry component c['a'] has type float32[] but the corresponding output "
            "carry component has type int32[], so the dtypes do not match.") in str(err)
    assert str(err).startswith("while_loop body function carry input and carry output")


def test_cond_fun_must_return_boolean_scalar():
    err = _raises(lambda x: tlax.while_loop(lambda c: c, lambda c: c + 1, x), F0)
    assert type(err) is TypeError
    assert str(err) == ("cond_fun must return a boolean scalar, but got output type(s) "
                        "[ShapedArray(float32[])].")
    err = _raises(lambda x: tlax.while_loop(lambda c: c > 0, lambda c: c - 1, x), F3)
    assert "[ShapedArray(bool[3])]" in str(err)


def test_scan_xs_with_different_leading_sizes():
    err = _raises(lambda a, b: tlax.scan(lambda c, x: (c, x), 0.0, (a, b)), F5, F3)
    assert type(err) is ValueError
    assert str(err) == "scan got values with different leading axis sizes: 5, 3."


def test_scan_without_xs_or_length():
    err = _raises(lambda c: tlax.scan(lambda c, x: (c, x), c, None), F0)
    assert type(err) is ValueError
    assert str(err) == "scan got no values to scan over and `length` not provided."


def test_non_scalar_predicate():
    err = _raises(lambda x: tlax.cond(x > 0, lambda v: v, lambda v: -v, x), F3)
    assert type(err) is TypeError
    assert re.fullmatch(r"Pred must be a scalar, got .*bool\[3\].* of shape \(3,\)\.", str(err))


def _range_over_traced(n):
    total = 0
    for i in range(n):
        total += i
    return total


def test_python_range_over_traced_bound():
    with pytest.raises(errors.TracerIntegerConversionError) as info:
        traxla.jit(_range_over_traced)(np.int32(3))
    message = str(info.value)
    assert message.startswith(
        "The __index__() method was called on traced array with shape int32[]\n"
        f"The error occurred while tracing the function _range_over_traced at {__file__}:"
        f"{_range_over_traced.__code__.co_firstlineno} for jit. This concrete value was not "
        "available in Python because it depends on the value of the argument n.")
    assert "fori_loop" in message


# -- the same programs in JAX: same exception class, same message --------------------

ERRORS: dict[str, tuple[Callable, tuple]] = {}


def E(name, args):
    def deco(build):
        assert name not in ERRORS, name
        ERRORS[name] = (build, tuple(args))
        return build
    return deco


@E("cond/tree_type", [F0])
def _(np_, lax_): return lambda x: lax_.cond(x > 0, lambda v: (v, v), lambda v: v, x)
@E("cond/tree_length", [F0])
def _(np_, lax_): return lambda x: lax_.cond(x > 0, lambda v: (v, v), lambda v: (v,), x)
@E("cond/tree_dict_keys", [F0])
def _(np_, lax_): return lambda x: lax_.cond(x > 0, lambda v: {'a': v}, lambda v: {'b': v}, x)
@E("cond/dtype", [F0])
def _(np_, lax_): return lambda x: lax_.cond(x > 0, lambda v: v, lambda v: v.astype(np_.int32), x)
@E("cond/shape", [F3])
def _(np_, lax_): return lambda x: lax_.cond(x.sum() > 0, lambda v: v, lambda v: v[:2], x)
@E("cond/dtype_at_path", [F0])
def _(np_, lax_):
    return lambda x: lax_.cond(x > 0, lambda v: {'a': v, 'b': v},
                               lambda v: {'a': v, 'b': v.astype(np_.int32)}, x)
@E("cond/two_type_differences", [F0])
def _(np_, lax_):
    return lambda x: lax_.cond(x > 0, lambda v: (v, v),
                               lambda v: (v.astype(np_.int32), v.astype(np_.int32)), x)
@E("cond/list_predicate", [F0])
def _(np_, lax_): return lambda x: lax_.cond([True], lambda v: v, lambda v: v, x)
@E("cond/complex_predicate", [F0])
def _(np_, lax_): return lambda x: lax_.cond(np.complex64(1), lambda v: v, lambda v: v, x)
@E("cond/bool_conversion_in_branch", [F0])
def _(np_, lax_):
    def tf(v):
        if v > 0:
            return v
        return -v
    return lambda x: lax_.cond(x > 0, tf, lambda v: v, x)
@E("switch/dtype", [F0, I0])
def _(np_, lax_):
    return lambda x, i: lax_.switch(i, [lambda v: v, lambda v: v, lambda v: v.astype(np_.int32)], x)
@E("switch/tree", [F0, I0])
def _(np_, lax_): return lambda x, i: lax_.switch(i, [lambda v: v, lambda v: [v]], x)
@E("switch/empty", [F0])
def _(np_, lax_): return lambda x: lax_.switch(np.int32(0), [], x)
@E("switch/bool_conversion_in_branch", [F0, I0])
def _(np_, lax_):
    def br(v):
        if v > 0:
            return v
        return -v
    return lambda x, i: lax_.switch(i, [lambda v: v, br], x)
@E("scan/carry_dtype_dict", [F5])
def _(np_, lax_):
    def body(c, x):
        return {'a': (c['a'] > 0).astype(np_.int32)}, x
    return lambda xs: lax_.scan(body, {'a': np_.float32(0)}, xs)
@E("scan/carry_dtype_named_carry", [F5])
def _(np_, lax_):
    def body(carry, x):
        return carry.astype(np_.int32), x
    return lambda xs: lax_.scan(body, np_.float32(0), xs)
@E("scan/carry_tuple_dtype", [F5])
def _(np_, lax_):
    return lambda xs: lax_.scan(lambda c, x: ((c[0], c[1].astype(np_.int32)), x),
                                (np_.float32(0), np_.float32(0)), xs)
@E("scan/two_carry_differences", [F5])
def _(np_, lax_):
    return lambda xs: lax_.scan(
        lambda c, x: ((c[0].astype(np_.int32), c[1].astype(np_.int32)), x),
        (np_.float32(0), np_.float32(0)), xs)
@E("scan/carry_tree_length", [F5])
def _(np_, lax_): return lambda xs: lax_.scan(lambda c, x: ((c[0], c[1], c[0]), x), (0.0, 0.0), xs)
@E("scan/leading_sizes", [F5, F3])
def _(np_, lax_): return lambda a, b: lax_.scan(lambda c, x: (c, x), 0.0, (a, b))
@E("scan/no_xs_no_length", [F0])
def _(np_, lax_): return lambda c: lax_.scan(lambda c, x: (c, x), c, None)
@E("scan/length_disagrees", [F5])
def _(np_, lax_): return lambda a: lax_.scan(lambda c, x: (c, x), 0.0, a, length=3)
@E("scan/traced_length", [np.int32(3)])
def _(np_, lax_): return lambda n: lax_.scan(lambda c, x: (c, x), 0.0, None, length=n)
@E("scan/output_not_a_pair", [F5])
def _(np_, lax_): return lambda a: lax_.scan(lambda c, x: c + x, 0.0, a)
@E("scan/output_triple", [F5])
def _(np_, lax_): return lambda a: lax_.scan(lambda c, x: (c + x, x, x), 0.0, a)
@E("scan/negative_unroll", [F5])
def _(np_, lax_): return lambda xs: lax_.scan(lambda c, x: (c, x), 0.0, xs, unroll=-1)
@E("scan/bool_conversion_in_body", [F5])
def _(np_, lax_):
    def step(carry, x):
        if carry['a'] > 0:
            return carry, x
        return carry, -x
    return lambda xs: lax_.scan(step, {'a': 0.0}, xs)
@E("while/cond_not_bool", [F0])
def _(np_, lax_): return lambda x: lax_.while_loop(lambda c: c, lambda c: c + 1, x)
@E("while/cond_vector", [F3])
def _(np_, lax_): return lambda x: lax_.while_loop(lambda c: c > 0, lambda c: c - 1, x)
@E("while/cond_returns_tuple", [F0])
def _(np_, lax_): return lambda x: lax_.while_loop(lambda c: (c > 0, c > 1), lambda c: c - 1, x)
@E("while/carry_dtype", [F0])
def _(np_, lax_):
    return lambda x: lax_.while_loop(lambda c: c['a'] > 0,
                                     lambda c: {'a': c['a'].astype(np_.int32)}, {'a': x})
@E("while/carry_tree_length", [F0])
def _(np_, lax_): return lambda x: lax_.while_loop(lambda c: c[0] > 0, lambda c: (c[0], c[1], c[0]), (x, x))
@E("while/bool_conversion_in_body", [F0])
def _(np_, lax_):
    def body(v):
        if v > 0:
            return v
        return -v
    return lambda x: lax_.while_loop(lambda c: c < 3, body, x)
@E("while/bool_conversion_in_cond", [F0])
def _(np_, lax_):
    def cnd(v):
        if v > 0:
            return v < 3
        return v < 2
    return lambda x: lax_.while_loop(cnd, lambda c: c + 1, x)
@E("fori/bool_conversion_in_body", [F0])
def _(np_, lax_):
    def body(i, v):
        if v > 0:
            return v
        return -v
    return lambda x: lax_.fori_loop(0, 3, body, x)
@E("fori/bool_conversion_in_body_traced_bounds", [F0, np.int32(3)])
def _(np_, lax_):
    def body(i, v):
        if v > 0:
            return v
        return -v
    return lambda x, n: lax_.fori_loop(0, n, body, x)
@E("fori/carry_dtype_static", [F0])
def _(np_, lax_):
    def body(i, v):
        return v.astype(np_.int32)
    return lambda x: lax_.fori_loop(0, 3, body, x)
@E("fori/carry_dtype_traced", [F0, np.int32(3)])
def _(np_, lax_):
    def body(i, v):
        return v.astype(np_.int32)
    return lambda x, n: lax_.fori_loop(0, n, body, x)
@E("fori/bound_dtypes_differ", [np.int16(3)])
def _(np_, lax_): return lambda n: lax_.fori_loop(np_.int32(0), n, lambda i, c: c, 0.0)
@E("fori/unroll_with_traced_bounds", [np.int32(3)])
def _(np_, lax_): return lambda n: lax_.fori_loop(0, n, lambda i, c: c, 0.0, unroll=2)
# Messages that quote a tracer or a ShapedArray's class differ only in that quotation.
@E("cond/vector_predicate", [F3])
def _(np_, lax_): return lambda x: lax_.cond(x > 0, lambda v: v, lambda v: -v, x)
@E("switch/float_index", [F0])
def _(np_, lax_): return lambda x: lax_.switch(x, [lambda v: v, lambda v: -v], x)
@E("switch/vector_index", [F3])
def _(np_, lax_): return lambda x: lax_.switch(x.astype(np_.int32), [lambda v: v, lambda v: -v], x)
@E("scan/carry_tree_type", [F5])
def _(np_, lax_): return lambda xs: lax_.scan(lambda c, x: ((c, c), x), np_.float32(0), xs)
@E("while/carry_tree_type", [F0])
def _(np_, lax_): return lambda x: lax_.while_loop(lambda c: c > 0, lambda c: (c, c), x)


def _normalize(message: str) -> str:
    """The two spellings that legitimately differ: a tracer's repr and ShapedArray's module."""
    message = re.sub(r"JitTracer\(([^)]*)\)", r"<tracer \1>", message)
    message = re.sub(r"DynamicJaxprTracer<([^>]*)>", r"<tracer \1>", message)
    return message.replace("jax._src.core.ShapedArray", "ShapedArray").replace(
        "traxla.ir.avals.ShapedArray", "ShapedArray")


def _error_of(make_jaxpr, fun, args):
    try:
        make_jaxpr(fun)(*args)
    except Exception as e:  # noqa: BLE001
        return e
    return None


@needs_jax
@pytest.mark.parametrize("name", list(ERRORS))
def test_error_matches_jax(name):
    build, args = ERRORS[name]
    want = _error_of(jax.make_jaxpr, build(jnp, jlax), args)
    got = _error_of(traxla.make_jaxpr, build(tnp, tlax), args)
    assert want is not None and got is not None, (want, got)
    assert type(got).__name__ == type(want).__name__
    assert isinstance(got, TypeError) == isinstance(want, TypeError)
    assert isinstance(got, ValueError) == isinstance(want, ValueError)
    assert _normalize(str(got)) == _normalize(str(want))


def test_scan_over_a_scalar_says_what_has_no_leading_axis():
    # JAX raises a bare IndexError ("tuple index out of range") here; traxla explains.
    err = _raises(lambda a: tlax.scan(lambda c, x: (c, x), 0.0, a), F0)
    assert type(err) is ValueError
    assert str(err) == "scan got value with no leading axis to scan over: float32[]."


if __name__ == "__main__":
    from _corpus import print_differences
    print_differences(CORPUS, KNOWN_DIFFERENCES, jaxpr_texts, sys.argv[1:])


def test_scan_traces_a_body_once_per_function_and_types():
    # as JAX's trace_to_jaxpr cache: the same body over the same types is not retraced;
    # new types, or a closure over another trace's values, trace again
    import traxla
    import traxla.numpy as tnp_
    calls = []

    def body(c, x):
        calls.append(1)
        return c + 1, x * 2
    traxla.lax.scan(body, 0, tnp_.arange(4))
    out = traxla.lax.scan(body, 0, tnp_.arange(4))
    assert len(calls) == 1 and int(out[0]) == 4
    traxla.lax.scan(body, 0.0, tnp_.arange(4.0))
    assert len(calls) == 2

    @traxla.jit
    def h(v):
        return traxla.lax.scan(lambda c, x: (c + v, x), 0.0, tnp_.arange(3.0))[0]
    assert float(h(1.0)) == 3.0 and float(h(2.0)) == 6.0

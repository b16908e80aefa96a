"""``jax.export.symbolic_shape`` with constraints, symbolic ``floordiv``/``mod``/``max``/
``min`` and symbolic dimensions through numpy/lax (what keras traces its layers with:
``symbolic_shape("(dynamic_dimension)", constraints=["dynamic_dimension>=2"])`` then
``eval_shape``), each against JAX. Only shapes are traced; one small export compiles."""
from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import export as texport

COMPARISONS = [
    ("a, b", ["a >= b", "b >= 3"], ["a >= 3", "a >= 4", "a - b >= 0", "a > b", "a + b >= 6",
                                    "a*b >= 9", "a*b >= 10", "b <= a", "2*a - b >= 3", "a < 3"]),
    ("d", ["d>=2"], ["d >= 2", "d > 1", "d >= 3", "d*d >= 4", "d*d - d >= 2", "d < 2",
                     "(d - 3)//2 + 1 >= 0", "(d - 3)//2 + 1 >= 1", "d % 3 <= 2", "d % 3 >= 0",
                     "(d + 1)//2 <= d", "d.max(4) >= d", "d.max(4) >= 4", "d.min(4) >= 2",
                     "(d//2)*2 <= d", "d == 2", "d != 2", "d.max(1) == d"]),
    ("a, b", ["a == 2*b"], ["a >= 2", "a >= 3", "a - b >= 1", "a + b >= 3", "a*b >= 2",
                            "a == 2*b", "str(a + b)", "str(a // 2)"]),
    ("a, b", ["a <= 10", "b >= a"], ["a <= 10", "a >= 11", "b - a >= 0", "a < 11",
                                     "a*a <= 100", "a*a <= 99"]),
    ("x, y", ["x + y >= 5", "x <= 2"], ["y >= 3", "y >= 4", "x + 2*y >= 8"]),
]


def _ev(mod, spec, constraints, query):
    names = [n.strip() for n in spec.split(",")]
    env = dict(zip(names, mod.symbolic_shape(spec, constraints=constraints)))
    try:
        return repr(eval(query, {}, env))
    except Exception as e:  # noqa: BLE001  (the exception's class is compared)
        return type(e).__name__


def test_comparisons_under_constraints_decide_as_jax():
    for spec, constraints, queries in COMPARISONS:
        for q in queries:
            assert _ev(texport, spec, constraints, q) == _ev(jax.export, spec, constraints, q), \
                (spec, constraints, q)


def test_bad_constraints_raise_as_jax():
    cases = [["a >= 5", "a <= 3"], ["a == 2", "a >= 3"], ["3 >= 4"], ["a + 1 == 3"],
             ["a > 3"], "a >= 2", ["a == 1", "a == 2"]]
    for c in cases:
        got = []
        for mod in (texport, jax.export):
            try:
                a, = mod.symbolic_shape("a", constraints=c)
                got.append(repr(a >= 1))
            except Exception as e:  # noqa: BLE001
                got.append(type(e).__name__)
        assert got[0] == got[1], c
    with pytest.raises(ValueError, match="both a `scope` and `constraints`"):
        texport.symbolic_shape("a", constraints=["a >= 2"], scope=texport.SymbolicScope())
    a, = texport.symbolic_shape("a")
    a2, = texport.symbolic_shape("a")
    assert a != a2  # two scopes, as JAX's
    with pytest.raises(ValueError, match="Invalid mixing of symbolic scopes"):
        a + a2  # noqa: B018
    scope = texport.SymbolicScope(["a >= 4"])
    a3, = texport.symbolic_shape("a", scope=scope)
    b3, = texport.symbolic_shape("b", scope=scope)
    assert a3 >= 4 and a3 + b3 >= 5 and scope.constraints == ("a >= 4",)


def test_symbolic_operations_print_as_jax():
    spec = ("a + b, a*a + a*b, 2*a*b*c + a*a - 3, a*floordiv(b,2) + b*b*b, a^2 + b, "
            "floordiv(a,2)*a + max(a, b), mod(a, 3) + floordiv(a*b, 2) - min(a, 4)*b")
    assert [str(d) for d in texport.symbolic_shape(spec)] == \
        [str(d) for d in jax.export.symbolic_shape(spec)]
    for mod in (texport, jax.export):
        d, = mod.symbolic_shape("d", constraints=["d >= 2"])
        got = [str(x) for x in ((d - 3) // 2 + 1, -((-d) // 2), d % 3, (2 * d + 1) // 2,
                                divmod(d * d + d, d + 1), d.max(4), d.min(1), d.max(1))]
        if mod is texport:
            mine = got
    assert mine == got


SHAPE_FNS = {
    "conv_valid_s2": (lambda np_, m, x: m.lax.conv_general_dilated(
        x, np_.ones((2, 3, 3, 3)), (2, 2), "VALID", dimension_numbers=("NHWC", "OIHW", "NHWC")),
        "1, d, d, 3"),
    "reduce_window": (lambda np_, m, x: m.lax.reduce_window(
        x, -np_.inf, m.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), "1, d, d, 3"),
    "same_padding": (lambda np_, m, x: (
        m.lax.conv_general_dilated(x, np_.ones((2, 3, 3, 3)), (2, 2), "SAME",
                                   dimension_numbers=("NHWC", "OIHW", "NHWC")),
        m.lax.reduce_window(x, 0.0, m.lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")),
        "1, d, d, 3"),
    "gather_broadcast_roll": (lambda np_, m, x: (
        x[np_.array([0, 1])], x[-1], x[1:-1], np_.broadcast_to(x[:, :1], (x.shape[0], 4)),
        np_.roll(x, 1, axis=0)), "d, 4"),
    "arange_diag": (lambda np_, m, x: (np_.arange(x.shape[0]), np_.arange(1, x.shape[0], 2),
                                       np_.diagonal(x @ x.T)), "d, 4"),
    "einsum_attention": (lambda np_, m, x: (
        np_.einsum("ij,kj->ik", x, x),
        m.nn.dot_product_attention(x[None, :, None], x[None, :, None], x[None, :, None],
                                   is_causal=True)), "d, 4"),
    "size": (lambda np_, m, x: x.reshape(-1) if x.size > 4 else x, "d, 4"),
    "strided_slices": (lambda np_, m, x: (x[::2], x[1::3], x[:1], x[::-1]), "d, 4"),
    "concat_rev_max": (lambda np_, m, x: (np_.concatenate([x, x[:1]]),
                                          np_.maximum(x, x[::-1])), "d, 4"),
    "dim_as_value": (lambda np_, m, x: (x.sum(0) / np_.asarray(x.shape[0], np_.float32),
                                        x * (x.shape[0] * 1.0), x / x.shape[0]), "d, 4"),
    "triu_tile_argsort": (lambda np_, m, x: (np_.triu(x @ x.T), np_.tile(x, (3, 1)),
                                             np_.argsort(x, axis=0)), "d, 4"),
    "misc": (lambda np_, m, x: (np_.cumsum(x, axis=0), np_.var(x, axis=0),
                                m.nn.softmax(x, axis=0), x.reshape(-1), x.T @ x,
                                m.lax.top_k(x.T, 2)[0], np_.sort(x, axis=0)), "d, 4"),
}


def _shapes(mod, np_, fn, spec):
    s = mod.export.symbolic_shape(spec, constraints=["d>=2"])
    out = mod.eval_shape(lambda x: fn(np_, mod, x), mod.ShapeDtypeStruct(s, np.float32))
    leaves = (mod.tree_util.tree_leaves(out))
    return [(tuple(str(d) for d in a.shape), str(a.dtype)) for a in leaves]


@pytest.mark.parametrize("name", sorted(SHAPE_FNS))
def test_symbolic_shapes_through_ops_as_jax(name):
    fn, spec = SHAPE_FNS[name]
    assert _shapes(traxla, tnp, fn, spec) == _shapes(jax, jnp, fn, spec)


def test_export_with_floordiv_and_mod_shapes_runs_in_both():
    b, = texport.symbolic_shape("b")

    def f(x):
        n = x.shape[0]
        return tnp.zeros(((n + 1) // 2, n % 3 + 1, (n - 7) // 2 + 5, (-n) % 4 + 1))

    exp = texport.export(traxla.jit(f))(traxla.ShapeDtypeStruct((b,), np.float32))
    assert str(exp.out_avals[0].shape) == \
        "(floordiv(b + 1, 2), mod(b, 3) + 1, floordiv(b - 7, 2) + 5, mod(- b, 4) + 1)"
    in_jax = jax.export.deserialize(exp.serialize())
    for n in (1, 6):
        want = ((n + 1) // 2, n % 3 + 1, (n - 7) // 2 + 5, (-n) % 4 + 1)
        assert exp.call(np.zeros(n, np.float32)).shape == want
        assert in_jax.call(np.zeros(n, np.float32)).shape == want


def test_padded_shapes_hold_python_ints():
    # keras keeps a dimension only when it is an int: np.pad's config (NumPy integers) must
    # not leak into shapes
    d, = texport.symbolic_shape("d", constraints=["d >= 2"])
    out = traxla.eval_shape(lambda x: tnp.pad(x, ((0, 0), (0, 3), (0, 0))),
                            traxla.ShapeDtypeStruct((d, d, 4), np.float32))
    assert type(out.shape[2]) is int and str(out.shape[1]) == "d + 3"
    assert all(type(n) is int for n in traxla.eval_shape(
        lambda x: tnp.pad(x, np.array([[1, 2]])), traxla.ShapeDtypeStruct((3,), np.float32)).shape)


def test_tracers_are_weakly_referable():
    refs = []
    traxla.jit(lambda x: (refs.append(weakref.ref(x)), x)[1])(tnp.ones(2))
    traxla.grad(lambda x: (refs.append(weakref.ref(x)), x.sum())[1])(tnp.ones(2))
    traxla.vmap(lambda x: (refs.append(weakref.ref(x)), x)[1])(tnp.ones(2))
    assert len(refs) == 3

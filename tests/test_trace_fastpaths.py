"""The tracing fast paths (issue #18) give the same jaxprs, types and errors as the
general paths they short-cut: memoized typing, cached jnp promotion, the matmul fast
path, per-call-site source info, and the unrolled-loop scan's shortcuts."""
import sys
import threading

import numpy as np
import pytest

import traxla
import traxla.numpy as jnp
from traxla import lax
from traxla.diagnostics import unrolled
from traxla.ir.avals import ShapedArray
from traxla.ir.sharding_rules import infer_avals
from traxla.numpy import _linalg, _promotion

F32 = np.dtype("float32")


def test_memoized_typing_keeps_param_type_errors():
    # y=2 and y=2.0 are equal dict keys; only the int is a valid exponent.
    pow_p = lax._E["integer_pow"]
    x = ShapedArray((3,), F32)
    assert infer_avals(pow_p, [x], {"y": 2}) == x
    with pytest.raises(TypeError, match="integer exponent"):
        infer_avals(pow_p, [x], {"y": 2.0})


def test_memoized_typing_interns_and_matches_equal_avals():
    mul_p = lax.mul_p
    a, b = ShapedArray((4, 2), F32), ShapedArray((4, 2), F32)  # equal, distinct objects
    first = infer_avals(mul_p, [a, a], {})
    second = infer_avals(mul_p, [b, b], {})
    assert first is second and first == a
    with pytest.raises(TypeError, match="same dtypes"):
        infer_avals(mul_p, [a, ShapedArray((4, 2), np.dtype("int32"))], {})


def _operands():
    """(name, value) pairs: tracer stand-ins made inside the traced function, and scalars."""
    return [("f32", np.ones(3, np.float32)), ("i32", np.ones(3, np.int32)),
            ("bool", np.ones(3, bool)), ("f32s", np.float32(2.0))]


_SCALARS = [1, 2.5, True, 1j, 2**40]
_FUNCS = [jnp.add, jnp.multiply, jnp.subtract, jnp.true_divide, jnp.arctan2, jnp.maximum]


def _text_or_error(f, *args):
    try:
        return str(traxla.make_jaxpr(f)(*args))
    except Exception as e:  # noqa: BLE001 - compared between the two paths
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("fn", _FUNCS, ids=lambda f: f.__name__)
def test_promotion_fast_path_matches_general_path(fn, monkeypatch):
    cases = []
    for (_, x), (_, y) in [(a, b) for a in _operands() for b in _operands()]:
        cases.append((lambda x, y, fn=fn: fn(x, y), (x, y)))
    for _, x in _operands():
        for s in _SCALARS:
            cases.append((lambda x, s=s, fn=fn: fn(x, s), (x,)))
            cases.append((lambda x, s=s, fn=fn: fn(s, x), (x,)))
    fast = [_text_or_error(f, *args) for f, args in cases]
    monkeypatch.setattr(_promotion, "_promote_pair", lambda *a: None)
    monkeypatch.setattr(_promotion, "_promote_one", lambda *a: None)
    general = [_text_or_error(f, *args) for f, args in cases]
    assert fast == general
    assert any("mul" in t or "add" in t or "sub" in t or "div" in t or "atan2" in t
               or "max" in t for t in fast)


def test_weak_scalar_recurrence_jaxpr_as_jax():
    def f(W, h):
        for _ in range(2):
            h = jnp.tanh(W @ h) * 0.5 + 0.25
        return h
    W, h = np.ones((4, 4), np.float32), np.ones(4, np.float32)
    text = str(traxla.make_jaxpr(f)(W, h))
    assert "mul d 0.5:f32[]" in text and "add e 0.25:f32[]" in text
    assert text.count("dot_general") == 2 and "preferred_element_type=float32" in text


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((4,), (4, 3)), ((2, 3), (3, 5)), ((4,), (4,))])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int32", "int32"),
                                    ("float32", "int32"), ("bool", "bool")])
def test_matmul_fast_path_matches_general_path(shapes, dtypes, monkeypatch):
    a = np.ones(shapes[0], dtypes[0])
    b = np.ones(shapes[1], dtypes[1])
    fast = _text_or_error(lambda a, b: a @ b, a, b)
    monkeypatch.setattr(_linalg, "plain_aval", lambda x: None)
    assert fast == _text_or_error(lambda a, b: a @ b, a, b)


def test_source_info_line_and_call_site_sharing():
    def f(x):
        y = jnp.sin(x)
        line = sys._getframe().f_lineno
        return jnp.cos(y), line

    closed, (_, line) = traxla.make_jaxpr(f, return_shape=True)(np.ones(2, np.float32))[0], \
        f(np.ones(2, np.float32))
    sin_eqn, cos_eqn = closed.jaxpr.eqns
    assert sin_eqn.source_info.line == line - 1 and cos_eqn.source_info.line == line + 1
    assert sin_eqn.source_info.function == "f"

    def loop(x):
        for _ in range(3):
            x = jnp.sin(x)
        return x
    eqns = traxla.make_jaxpr(loop)(np.ones(2, np.float32)).jaxpr.eqns
    assert eqns[0].source_info is eqns[1].source_info is eqns[2].source_info


def test_source_info_name_scopes_per_thread():
    results = {}

    def work(name):
        with traxla.named_scope(name):
            eqn = traxla.make_jaxpr(lambda x: jnp.sin(x))(np.ones(2, np.float32)).jaxpr.eqns[0]
        results[name] = eqn.source_info.name_stack

    threads = [threading.Thread(target=work, args=(n,)) for n in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"left": ("left",), "right": ("right",)}


def _stretches_reference(ids, min_repeats, max_block):
    """The run-length computation for every period, without the scan's shortcuts."""
    n, found = len(ids), []
    for L in range(1, min(max_block, n // max(min_repeats, 2)) + 1):
        eq = np.concatenate([[False], ids[L:] == ids[:-L], [False]])
        d = np.diff(eq.astype(np.int8))
        starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]
        lengths = ends - starts
        keep = lengths >= (min_repeats - 1) * L
        for s, length in zip(starts[keep], lengths[keep]):
            repeats = (int(length) + L) // L
            found.append((repeats * L, L, int(s), repeats))
    found.sort(key=lambda c: (-c[0], c[1]))
    return found


@pytest.mark.parametrize("ids", [
    np.tile([0, 1], 100),                                        # periodic throughout
    np.tile([0, 1, 2, 3], 50),
    np.concatenate([[7, 8, 9], np.tile([0, 1, 1], 40), [5]]),    # prologue and epilogue
    np.concatenate([np.tile([0, 1], 30), np.tile([2, 3, 4], 30)]),
    np.arange(200),                                              # no loop at all
])
def test_periodic_stretches_shortcuts_match_reference(ids):
    assert unrolled._periodic_stretches(ids, 16, 256) == _stretches_reference(ids, 16, 256)


def test_interning_never_hands_out_numpy_int_shapes():
    """An aval whose shape holds NumPy ints equals the plain-int one; sharing it would print
    ``slice_sizes=(np.int64(4), 3)`` in every later program of that shape."""
    from traxla.ir.avals import ShapedArray, interned
    odd = ShapedArray((np.int64(13), 29), np.dtype("float32"))
    got = interned(odd)  # itself (not shared), or an equal plain-int aval interned earlier
    assert got is odd or all(type(d) is int for d in got.shape)
    plain = interned(ShapedArray((13, 29), np.dtype("float32")))
    assert all(type(d) is int for d in plain.shape)
    x = np.ones((5, 7), np.float32)
    text = str(traxla.make_jaxpr(traxla.vmap(lambda r: traxla.lax.dynamic_slice(r, (1,), (4,))))(x))
    assert "slice_sizes=(5, 4)" in text  # (JAX itself prints np.int64 in offset_dims here)

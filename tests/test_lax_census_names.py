"""lax names of issue #31's census: dot algorithms (``DotAlgorithm``, ``DotAlgorithmPreset``
as ``precision=``), and the small operations JAX 0.10.2's lax exports (checked against JAX:
jaxprs, lowered StableHLO where it shows the semantics, values, errors, transformations)."""
import ml_dtypes
import numpy as np
import pytest

import traxla
import traxla.lax as tl

jax = pytest.importorskip("jax")
jl = jax.lax

X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
Y = np.linspace(0.5, 2, 6, dtype=np.float32).reshape(3, 2)


def _both(fn, *args):
    return fn(traxla, tl, *args), fn(jax, jl, *args)


def _run_or_error(fn):
    try:
        return ("ok", np.asarray(fn()))
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return (type(e).__name__, str(e))


# -- dot algorithms ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", [p.name for p in jl.DotAlgorithmPreset])
def test_dot_algorithm_preset_on_cpu_as_jax(name):
    """Each preset computes (after rounding the operands to its types) or is refused with
    JAX's error: XLA's CPU backend ignores the algorithm attribute."""
    ours = _run_or_error(lambda: tl.dot(X, Y, precision=getattr(tl.DotAlgorithmPreset, name)))
    theirs = _run_or_error(lambda: jl.dot(X, Y, precision=getattr(jl.DotAlgorithmPreset, name)))
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours[1].dtype == theirs[1].dtype
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    else:
        assert ours[1] == theirs[1]


@pytest.mark.parametrize("precision", ["F16_F16_F16", "BF16_BF16_F32_X3", "F64_F64_F64",
                                       "F32_F32_F32"])
def test_dot_algorithm_lowering_matches_jax(precision):
    """The operands go in converted to the algorithm's types, the product accumulates in its
    type, and the module carries StableHLO's algorithm attribute."""
    ours, theirs = _both(lambda m, lax: m.jit(lambda a, b: lax.dot(a, b, precision=precision))
                         .lower(X, Y).as_text())
    assert ours == theirs


def test_dot_algorithm_bf16_operands_keep_their_type():
    xb = X.astype(ml_dtypes.bfloat16)
    ours, theirs = _both(lambda m, lax: m.jit(lambda a, b: lax.dot(
        a, b, precision=lax.DotAlgorithmPreset.BF16_BF16_F32)).lower(xb, xb.T).as_text())
    assert ours == theirs


def test_dot_algorithm_explicit_prints_and_is_refused_on_cpu_as_jax():
    def alg(lax):
        return lax.DotAlgorithm(np.float32, np.float32, np.float32)
    ours, theirs = _both(lambda m, lax: str(m.make_jaxpr(
        lambda a, b: lax.dot(a, b, precision=alg(lax)))(X, Y)))
    assert ours == theirs
    assert tl.DotAlgorithm._fields == jl.DotAlgorithm._fields
    assert tl.DotAlgorithm(np.float16, np.float16, np.float32) == \
        jl.DotAlgorithm(np.float16, np.float16, np.float32)
    ours = _run_or_error(lambda: tl.dot(X, Y, precision=alg(tl)))
    theirs = _run_or_error(lambda: jl.dot(X, Y, precision=alg(jl)))
    assert ours == theirs and ours[0] == "ValueError"


def test_dot_algorithm_under_grad_and_vmap():
    p = "F32_F32_F32"
    ours, theirs = _both(lambda m, lax: str(m.make_jaxpr(m.grad(
        lambda a: lax.dot(a, Y, precision=p).sum()))(X)))
    assert ours == theirs
    batch = np.stack([X, 2 * X])
    ours, theirs = _both(lambda m, lax: np.asarray(m.vmap(
        lambda a: lax.dot(a, Y, precision=lax.DotAlgorithmPreset.F16_F16_F16))(batch)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-3)


def test_conv_accepts_a_preset():
    lhs = np.ones((1, 1, 4), np.float32)
    rhs = np.ones((1, 1, 2), np.float32)
    ours, theirs = _both(lambda m, lax: np.asarray(lax.conv_general_dilated(
        lhs, rhs, (1,), "VALID", precision=lax.DotAlgorithmPreset.F32_F32_F32)))
    np.testing.assert_allclose(ours, theirs)


# -- lax.dtype ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [
    int, float, complex, bool, 3, 3.0, 1j, True, np.float32, np.int8, np.float64, np.uint64,
    np.dtype("float64"), "int8", "bfloat16", np.float64(1), np.array([1.0]),
    np.array([1], np.int64), np.array(3, np.float16), ml_dtypes.bfloat16, None, [1, 2],
    np.array(["a"]), object, str, np.dtype(object)], ids=repr)
def test_lax_dtype_as_jax(value):
    import warnings
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        ours = _run_or_error(lambda: tl.dtype(value))
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        theirs = _run_or_error(lambda: jl.dtype(value))
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1] if ours[0] != "ok" else ours[1].item() == theirs[1].item()
    assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]


def test_lax_dtype_keeps_an_array_dtype():
    assert tl.dtype(traxla.numpy.ones(3, np.int8)) == np.int8
    assert str(traxla.make_jaxpr(lambda x: (tl.dtype(x), x)[1])(1.0)) == \
        str(jax.make_jaxpr(lambda x: (jl.dtype(x), x)[1])(1.0))


# -- shape_as_value ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3), (), (2**40,), (0,)])
def test_shape_as_value_as_jax(shape):
    ours, theirs = tl.shape_as_value(shape), jl.shape_as_value(shape)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_shape_as_value_of_a_symbolic_shape():
    def program(m):
        (a,) = m.export.symbolic_shape("a")
        spec = m.ShapeDtypeStruct((a, 3), np.float32)
        text = str(m.make_jaxpr(lambda x: m.lax.shape_as_value(x.shape) * 2)(spec))
        exp = m.export.export(m.jit(lambda x: m.lax.shape_as_value(x.shape)))(spec)
        return text, np.asarray(exp.call(np.ones((5, 3), np.float32))).tolist()
    assert program(traxla) == program(jax)


# -- stage -------------------------------------------------------------------------------------

def test_stage_as_jax():
    def program(m):
        lax = m.lax
        out = [str(m.make_jaxpr(lambda x: lax.stage(x) + lax.stage(2.))(1.)),
               str(m.make_jaxpr(lambda x: lax.stage(np.arange(3.0)) * x)(1.)),
               str(m.make_jaxpr(lambda x: lax.stage_p.bind(x))(1.)),
               str(m.make_jaxpr(m.grad(lambda x: lax.stage(x) * 3))(1.)),
               str(m.make_jaxpr(m.vmap(lambda x: lax.stage(x) * 3))(np.ones(3, np.float32))),
               str(m.make_jaxpr(m.linear_transpose(lax.stage, 1.))(2.))]
        staged = lax.stage(2.)
        out.append((type(staged).__name__, staged.dtype, staged.aval.weak_type))
        out.append(repr(lax.stage(np.arange(3))))
        out.append(tuple(float(v) for v in m.jvp(lax.stage, (1.,), (2.,))))
        return out
    assert program(traxla) == program(jax)
    assert tl.stage_p.name == jl.stage_p.name


# -- dce_sink ----------------------------------------------------------------------------------

def _sinks(m):
    lax = m.lax

    def f(x):
        lax.dce_sink(x * 2)
        lax.dce_sink({"a": x, "b": (x, x + 1)}, prevent_mlir_dce=False)
        return x * 3

    def g(x):
        lax.dce_sink(x * 2, prevent_mlir_dce=True)
        return x * 3
    x = np.float32(1.5)
    return [str(m.make_jaxpr(f)(x)), str(m.make_jaxpr(m.jit(f))(x)),
            str(m.make_jaxpr(lambda x: m.jvp(f, (x,), (x,)))(x)),
            str(m.make_jaxpr(m.grad(f))(x)),
            str(m.make_jaxpr(m.vmap(f))(np.ones(3, np.float32))),
            m.jit(f).lower(x).as_text(), m.jit(g).lower(x).as_text(),
            float(f(x)), float(m.jit(f)(x)), float(m.grad(f)(x)), float(m.jit(g)(x)),
            lax.dce_sink(x), str(m.make_jaxpr(
                lambda x: lax.dce_sink_p.bind(x, prevent_mlir_dce=False))(x)),
            str(m.make_jaxpr(lambda x: lax.cond(
                x > 0, lambda x: (lax.dce_sink(x), x)[1], lambda x: x, x))(x))]


def test_dce_sink_as_jax():
    """Kept by dead-code elimination (an effect), sunk again for tangents, dropped by vmap
    (as JAX's batching rule), nothing in the module unless prevent_mlir_dce (a custom call
    XLA's CPU runtime provides)."""
    assert _sinks(traxla) == _sinks(jax)


# -- empty -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, dtype", [
    ((3,), np.float32), (3, np.dtype("int32")), ((2, 0), np.float16), ((), np.bool_),
    ((2,), np.float64), ((2,), "float32"), ((2,), float), ((2,), np.dtype("complex64"))])
def test_empty_as_jax(shape, dtype):
    """Zeros on CPU; the dtype stays as given (not canonicalized), as JAX's ShapedArray."""
    def program(m):
        r = m.lax.empty(shape, dtype)
        return (r.shape, r.dtype, str(m.typeof(r)), np.asarray(r).tolist(),
                str(m.make_jaxpr(lambda: m.lax.empty(shape, dtype))()))
    assert program(traxla) == program(jax)


def test_empty_lowering_and_vmap_as_jax():
    def program(m):
        lax = m.lax
        return [m.jit(lambda: lax.empty((3,), np.float32)).lower().as_text(),
                str(m.make_jaxpr(m.vmap(lambda x: lax.empty((2,), np.float32) + x))(
                    np.ones(3, np.float32))),
                np.asarray(m.vmap(lambda x: lax.empty((2,), np.float32) * 0 + x)(
                    np.ones(3, np.float32))).tolist(),
                float(m.grad(lambda x: (lax.empty((2,), np.float32) * 0 + x).sum())(1.0))]
    assert program(traxla) == program(jax)


# -- scatter_apply -----------------------------------------------------------------------------

def _scatter_applies(m):
    lax, jnp = m.lax, m.numpy
    x = np.arange(5, dtype=np.float32)
    idx = np.array([[1], [3], [1]], np.int32)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    f = lambda x: lax.scatter_apply(x, idx, jnp.exp, dn, update_shape=(3,))  # noqa: E731
    g = lambda x: lax.scatter_apply(x, idx, lambda v: v * 2 + 1, dn,  # noqa: E731
                                    update_shape=(3,), mode="clip")
    dn2 = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    grid = np.arange(12, dtype=np.float32).reshape(4, 3)
    out_of_bounds = np.array([[1], [7]], np.int32)
    values = [f(x), m.jit(f)(x), g(x), m.jit(g)(x), m.vmap(f)(np.stack([x, x + 1])),
              lax.scatter_apply(grid, np.array([[0], [2]]), jnp.negative, dn2,
                                update_shape=(2, 3)),
              lax.scatter_apply(x, out_of_bounds, jnp.negative, dn, update_shape=(2,),
                                mode="drop"),
              lax.scatter_apply(x, out_of_bounds, jnp.negative, dn, update_shape=(2,),
                                mode="clip")]
    texts = [str(m.make_jaxpr(f)(x)), str(m.make_jaxpr(g)(x))]
    return [np.asarray(v).tolist() for v in values], texts, _run_or_error(
        lambda: m.grad(lambda x: f(x).sum())(x))


def test_scatter_apply_as_jax():
    """Duplicate indices apply the function again; out-of-bounds indices follow the mode;
    differentiating it raises JAX's NotImplementedError."""
    ours, theirs = _scatter_applies(traxla), _scatter_applies(jax)
    np.testing.assert_allclose(np.array(ours[0][0]), np.array(theirs[0][0]), rtol=1e-6)
    assert ours[0][2:] == theirs[0][2:] and ours[1] == theirs[1] and ours[2] == theirs[2]


# -- ragged_dot --------------------------------------------------------------------------------

_R = np.random.RandomState(0)
LHS = _R.randn(7, 4).astype(np.float32)
RHS = _R.randn(3, 4, 3).astype(np.float32)
GS = np.array([2, 0, 4], np.int32)  # the last row is in no group: zeros
L4, R4 = _R.randn(2, 5, 3).astype(np.float32), _R.randn(2, 2, 3, 4).astype(np.float32)


def _ragged_programs(m):
    lax = m.lax
    f = lambda a, b: (lax.ragged_dot(a, b, GS) ** 2).sum()  # noqa: E731
    out = [str(m.make_jaxpr(lax.ragged_dot)(LHS, RHS, GS)),
           str(m.make_jaxpr(m.grad(f, argnums=(0, 1)))(LHS, RHS)),
           str(m.make_jaxpr(m.vmap(lax.ragged_dot))(np.stack([LHS, LHS]), np.stack([RHS, RHS]),
                                                    np.stack([GS, GS]))),
           str(m.make_jaxpr(lambda a, b, t: m.jvp(lambda a, b: lax.ragged_dot(a, b, GS),
                                                  (a, b), (t, b)))(LHS, RHS, LHS)),
           str(m.make_jaxpr(lambda a, b: lax.ragged_dot(
               a, b, GS, preferred_element_type=np.float32, precision="highest"))(
                   LHS.astype(np.float16), RHS.astype(np.float16)))]
    contracting = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    batched = lax.RaggedDotDimensionNumbers((([2], [2]), ([0], [1])), [1], [0])
    l4, r4 = L4, R4
    g4 = np.array([[2, 3], [4, 1]], np.int32)
    out.append(str(m.make_jaxpr(lambda a, b, c: lax.ragged_dot_general(a, b, c, contracting))(
        LHS[:3, :], RHS[0], GS)))
    out.append(str(m.make_jaxpr(m.grad(lambda a, b: lax.ragged_dot_general(
        a, b, g4, batched).sum(), argnums=(0, 1)))(l4, r4)))
    values = [lax.ragged_dot(LHS, RHS, GS), m.jit(lax.ragged_dot)(LHS, RHS, GS),
              *m.grad(f, argnums=(0, 1))(LHS, RHS),
              m.vmap(lax.ragged_dot)(np.stack([LHS, 2 * LHS]), np.stack([RHS, RHS]),
                                     np.stack([GS, GS[::-1]])),
              lax.ragged_dot_general(LHS[:3, :], RHS[0], GS, contracting),
              lax.ragged_dot_general(l4, r4, g4, batched)]
    errors = [_run_or_error(bad) for bad in (
        lambda: lax.ragged_dot(LHS, RHS, GS.astype(np.float32)),
        lambda: lax.ragged_dot(LHS, RHS[:2], GS),
        lambda: lax.ragged_dot(LHS, RHS, np.int32(3)),
        lambda: m.grad(lambda a: lax.ragged_dot_general(a, RHS[0], GS, contracting).sum())(
            LHS[:3, :]))]
    return out, values, errors


def test_ragged_dot_as_jax():
    """Jaxprs (of the primitive, its gradient, jvp and vmap), values in the three modes (rows
    outside every group are zeros), and JAX's errors."""
    ours, theirs = _ragged_programs(traxla), _ragged_programs(jax)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        assert np.asarray(a).shape == np.asarray(b).shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
    assert [e[0] for e in ours[2]] == [e[0] for e in theirs[2]]
    assert [e[1] for e in ours[2]] == [e[1] for e in theirs[2]]


def test_ragged_dot_matches_per_group_products():
    out = np.asarray(tl.ragged_dot(LHS, RHS, GS))
    starts = np.concatenate([[0], np.cumsum(GS)[:-1]])
    expected = np.zeros((7, 3), np.float32)
    for g, (s, n) in enumerate(zip(starts, GS)):
        expected[s:s + n] = LHS[s:s + n] @ RHS[g]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_ragged_dot_gradient_by_finite_differences():
    with traxla.config.flag("enable_x64", True):
        lhs, rhs = LHS.astype(np.float64), RHS.astype(np.float64)
        f = lambda a, b: (tl.ragged_dot(a, b, GS) ** 2).sum()  # noqa: E731
        ga, gb = (np.asarray(g) for g in traxla.grad(f, argnums=(0, 1))(lhs, rhs))
        eps = 1e-6
        for arr, grad, which in ((lhs, ga, 0), (rhs, gb, 1)):
            for idx in [(0,) * arr.ndim, tuple(s - 1 for s in arr.shape),
                        tuple(s // 2 for s in arr.shape)]:
                bump = np.zeros_like(arr)
                bump[idx] = eps
                args_p = [lhs, rhs]
                args_m = [lhs, rhs]
                args_p[which], args_m[which] = arr + bump, arr - bump
                fd = (float(f(*args_p)) - float(f(*args_m))) / (2 * eps)
                np.testing.assert_allclose(grad[idx], fd, rtol=1e-6, atol=1e-6)


# -- select_and_scatter_p ----------------------------------------------------------------------

_POOL = np.array([[1., 5., 2., 0.], [3., 4., 8., 1.], [0., 2., 7., 6.], [9., 1., 3., 2.]],
                 np.float32)
_SRC = np.array([[10., 20.], [30., 40.]], np.float32)


def _select_and_scatters(m, binder):
    lax = m.lax
    f = lambda x, s: binder(x, lax.ge, (2, 2), (2, 2), ((0, 0), (0, 0)), s,  # noqa: E731
                            np.float32(0), lax.add)
    g = lambda x, s: binder(x, lax.le, (3, 3), (1, 1), ((1, 1), (1, 1)), s,  # noqa: E731
                            np.float32(1), lax.mul)
    return [np.asarray(f(_POOL, _SRC)).tolist(), np.asarray(m.jit(f)(_POOL, _SRC)).tolist(),
            str(m.make_jaxpr(f)(_POOL, _SRC)), m.jit(f).lower(_POOL, _SRC).as_text(),
            np.asarray(g(_POOL, np.full((4, 4), 2, np.float32))).tolist(),
            lax.select_and_scatter_p.name]


def test_select_and_scatter_p_as_jax():
    """JAX's general select_and_scatter (bound by its private ``_select_and_scatter``)."""
    from jax._src.lax.windowed_reductions import _select_and_scatter as theirs
    from traxla.lax.windowed import _select_and_scatter as ours
    assert _select_and_scatters(traxla, ours) == _select_and_scatters(jax, theirs)


def test_select_and_scatter_batches_exactly():
    """JAX has no batching rule; traxla's (the batch axis as a size-1 window dim) agrees
    with a loop."""
    from traxla.lax.windowed import _select_and_scatter
    f = lambda x, s: _select_and_scatter(x, tl.ge, (2, 2), (2, 2), ((0, 0), (0, 0)), s,  # noqa: E731
                                         np.float32(0), tl.add)
    xs, ss = np.stack([_POOL, _POOL[::-1]]), np.stack([_SRC, 2 * _SRC])
    np.testing.assert_array_equal(np.asarray(traxla.vmap(f)(xs, ss)),
                                  np.stack([np.asarray(f(a, b)) for a, b in zip(xs, ss)]))
    np.testing.assert_array_equal(np.asarray(traxla.vmap(f, in_axes=(None, 0))(_POOL, ss)),
                                  np.stack([np.asarray(f(_POOL, b)) for b in ss]))


# -- tokens: create_token, after_all -----------------------------------------------------------

def _tokens(m):
    lax = m.lax
    t = lax.create_token()
    out = [type(t).__name__, repr(m.typeof(t)),
           str(m.make_jaxpr(lambda x: lax.after_all(lax.create_token(), lax.create_token()))(1.)),
           str(m.make_jaxpr(lambda x: lax.create_token(x))(1.)),
           str(m.make_jaxpr(lambda x: (x, lax.after_all()))(1.)),
           m.jit(lambda x: (x, lax.after_all(lax.create_token(), lax.create_token())))
           .lower(1.).as_text(),
           str(m.make_jaxpr(lambda t: lax.after_all(t, t))(t)),
           m.jit(lambda t, x: (lax.after_all(t), x * 2)).lower(t, 1.).as_text(),
           type(lax.after_all(t, t)).__name__, len(m.tree.leaves(t)),
           _run_or_error(lambda: lax.after_all(t, 1.0)),
           float(m.grad(lambda x: (lax.create_token(), x * 3)[1])(1.)),
           str(m.make_jaxpr(m.vmap(lambda x: (lax.create_token(), x * 2)[1]))(
               np.ones(2, np.float32)))]
    f = m.jit(lambda x: (x * 2, lax.create_token()))
    g = m.jit(lambda t, x: (lax.after_all(t), x + 1))
    x = m.numpy.ones(3)
    for _ in range(3):  # the cached calls too hand back Tokens
        out.append([type(v).__name__ for v in f(x)])
        out.append([type(v).__name__ for v in g(t, x)])
    out.append(type(m.jit(lambda x: lax.create_token()).lower(x).compile()(x)).__name__)
    return out


def test_tokens_as_jax():
    """Tokens print as ``Tok``, lower to ``!stablehlo.token`` (also as jit arguments and
    results), and come back from programs as Token objects."""
    assert _tokens(traxla) == _tokens(jax)
    assert tl.create_token_p.name == jl.create_token_p.name
    assert tl.after_all_p.name == jl.after_all_p.name

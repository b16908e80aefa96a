"""traxla.export with JAX as the oracle: artifacts round-trip traxla -> bytes -> JAX and
JAX -> bytes -> traxla with equal results (an MLP, a scan RNN, a shape-polymorphic batch
program), VJPs travel with ``vjp_order``, and bad calls fail as JAX's do."""
import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import export as texport

RNG = np.random.default_rng(0)
F32 = np.float32


def _params(np_mod):
    return {"w1": RNG.standard_normal((4, 8)).astype(F32), "b1": np.zeros(8, F32),
            "w2": RNG.standard_normal((8, 3)).astype(F32)}


PARAMS = _params(np)
X = RNG.standard_normal((5, 4)).astype(F32)


def mlp(np_mod, params, x):
    h = np_mod.tanh(x @ params["w1"] + params["b1"])
    return {"logits": h @ params["w2"], "norm": np_mod.sum(h * h)}


def rnn(lax_mod, np_mod, w, xs):
    def step(h, x):
        h = np_mod.tanh(h @ w + x)
        return h, h.sum()
    return lax_mod.scan(step, np_mod.zeros(w.shape[0], F32), xs)


def poly_batch(np_mod, x, w):
    # elementwise, dot, reductions and reshape over a symbolic batch dimension
    y = np_mod.maximum(x @ w, 0.0) * 2.0 + 1.0
    return y.reshape(-1, 3, 2).sum(axis=1), np_mod.mean(y, axis=1)


W_RNN = (RNG.standard_normal((3, 3)) * 0.5).astype(F32)
XS = RNG.standard_normal((6, 3)).astype(F32)
W_POLY = RNG.standard_normal((4, 6)).astype(F32)

t_mlp = traxla.jit(lambda p, x: mlp(tnp, p, x))
j_mlp = jax.jit(lambda p, x: mlp(jnp, p, x))
t_rnn = traxla.jit(lambda w, xs: rnn(traxla.lax, tnp, w, xs))
j_rnn = jax.jit(lambda w, xs: rnn(jax.lax, jnp, w, xs))
t_poly = traxla.jit(lambda x, w: poly_batch(tnp, x, w))
j_poly = jax.jit(lambda x, w: poly_batch(jnp, x, w))


def _close(a, b):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=2e-5, atol=2e-5)


@pytest.fixture(scope="module")
def t_exports():
    b, = texport.symbolic_shape("b")
    return {
        "mlp": texport.export(t_mlp)(PARAMS, X),
        "rnn": texport.export(t_rnn)(W_RNN, XS),
        "poly": texport.export(t_poly)(traxla.ShapeDtypeStruct((b, 4), F32),
                                        traxla.ShapeDtypeStruct((4, 6), F32)),
    }


@pytest.fixture(scope="module")
def j_exports():
    b, = jax.export.symbolic_shape("b")
    return {
        "mlp": jax.export.export(j_mlp)(PARAMS, X),
        "rnn": jax.export.export(j_rnn)(W_RNN, XS),
        "poly": jax.export.export(j_poly)(jax.ShapeDtypeStruct((b, 4), F32),
                                          jax.ShapeDtypeStruct((4, 6), F32)),
    }


CASES = {"mlp": ((PARAMS, X), j_mlp), "rnn": ((W_RNN, XS), j_rnn),
         "poly": ((X, W_POLY), j_poly)}


@pytest.mark.parametrize("name", ["mlp", "rnn", "poly"])
def test_traxla_bytes_run_in_jax(t_exports, name):
    args, oracle = CASES[name]
    blob = t_exports[name].serialize()
    exp = jax.export.deserialize(blob)
    _close(exp.call(*args), oracle(*args))
    assert exp.in_tree == jax.tree_util.tree_structure((args, {}))
    assert [str(a) for a in exp.in_avals] == [str(a) for a in t_exports[name].in_avals]


@pytest.mark.parametrize("name", ["mlp", "rnn", "poly"])
def test_jax_bytes_run_in_traxla(j_exports, name):
    args, oracle = CASES[name]
    exp = texport.deserialize(j_exports[name].serialize())
    _close(exp.call(*args), oracle(*args))
    _close(traxla.jit(exp.call)(*args), oracle(*args))  # the call also stages under jit


def test_polymorphic_batch_sizes_both_ways(t_exports, j_exports):
    t_poly_exp = t_exports["poly"]
    assert str(t_poly_exp.in_avals[0].shape[0]) == "b"
    assert [a.shape for a in t_poly_exp.out_avals][0][1:] == (2,)
    from_jax = texport.deserialize(j_exports["poly"].serialize())
    in_jax = jax.export.deserialize(t_poly_exp.serialize())
    for n in (3, 7):
        x = RNG.standard_normal((n, 4)).astype(F32)
        want = j_poly(x, W_POLY)
        _close(t_poly_exp.call(x, W_POLY), want)
        _close(from_jax.call(x, W_POLY), want)
        _close(in_jax.call(x, W_POLY), want)
    assert t_poly_exp.uses_global_constants and "jax.uses_shape_polymorphism = true" in \
        t_poly_exp.mlir_module()


def test_exported_fields_match_jax(t_exports, j_exports):
    t, j = t_exports["mlp"], j_exports["mlp"]
    assert t.fun_name == "<lambda>" == j.fun_name
    assert t.calling_convention_version == j.calling_convention_version == 10
    assert t.nr_devices == j.nr_devices == 1
    assert t.platforms == j.platforms == ("cpu",)
    assert t.in_shardings_hlo == j.in_shardings_hlo == (None,) * 4
    assert t.module_kept_var_idx == j.module_kept_var_idx
    assert str(t.in_tree) == str(j.in_tree) and str(t.out_tree) == str(j.out_tree)
    assert [str(a) for a in t.out_avals] == [str(a) for a in j.out_avals]
    assert "jax.uses_shape_polymorphism = false" in t.mlir_module()
    assert isinstance(t.mlir_module_serialized, bytes)


def test_vjp_order_both_ways(t_exports):
    loss_t = lambda w, xs: t_rnn(w, xs)[1].sum()  # noqa: E731
    blob = t_exports["rnn"].serialize(vjp_order=1)
    in_jax = jax.export.deserialize(blob)
    g_jax = jax.grad(lambda w: in_jax.call(w, XS)[1].sum())(W_RNN)
    g_ref = jax.grad(lambda w: j_rnn(w, XS)[1].sum())(W_RNN)
    _close(g_jax, g_ref)
    _close(traxla.grad(loss_t)(W_RNN, XS), g_ref)
    j_blob = jax.export.export(j_rnn)(W_RNN, XS).serialize(vjp_order=1)
    from_jax = texport.deserialize(j_blob)
    assert from_jax.has_vjp()
    _close(traxla.grad(lambda w: from_jax.call(w, XS)[1].sum())(W_RNN), g_ref)
    with pytest.raises(ValueError, match="No VJP"):
        texport.deserialize(t_exports["rnn"].serialize()).vjp()


def test_vmap_of_an_exported_call(t_exports):
    exp = texport.deserialize(t_exports["rnn"].serialize())
    ws = np.stack([W_RNN, W_RNN * 0.5])
    got = traxla.vmap(lambda w: exp.call(w, XS))(ws)
    _close(got, jax.vmap(lambda w: j_rnn(w, XS))(ws))


def test_call_errors_as_jax(t_exports):
    exp = t_exports["poly"]
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\].shape\[1\] \(expected "
                                         r"same constant\)"):
        exp.call(np.zeros((3, 5), F32), W_POLY)
    with pytest.raises(ValueError, match=r"Dtype mismatch for args\[1\]"):
        exp.call(X, W_POLY.astype(np.int32))
    with pytest.raises(ValueError, match=r"Rank mismatch for args\[0\]"):
        exp.call(X[0], W_POLY)
    with pytest.raises(ValueError, match="same pytree structure"):
        exp.call((X, W_POLY))
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        texport.export(lambda x: x)
    b, = texport.symbolic_shape("b")
    with pytest.raises(texport.InconclusiveDimensionOperation):
        texport.export(traxla.jit(lambda x: tnp.zeros(int(x.shape[0]))))(
            traxla.ShapeDtypeStruct((b,), F32))


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


traxla.tree_util.register_pytree_node(Point, lambda p: ((p.x, p.y), None),
                                      lambda _, c: Point(*c))
jax.tree_util.register_pytree_node(Point, lambda p: ((p.x, p.y), None), lambda _, c: Point(*c))
texport.register_pytree_node_serialization(
    Point, serialized_name="test_export.Point", serialize_auxdata=lambda _: b"",
    deserialize_auxdata=lambda _: None)
jax.export.register_pytree_node_serialization(
    Point, serialized_name="test_export.Point", serialize_auxdata=lambda _: b"",
    deserialize_auxdata=lambda _: None)
Pair = collections.namedtuple("Pair", ["a", "b"])
texport.register_namedtuple_serialization(Pair, serialized_name="test_export.Pair")
jax.export.register_namedtuple_serialization(Pair, serialized_name="test_export.Pair")


def test_custom_pytree_nodes_round_trip():
    f = traxla.jit(lambda p: Pair(p.x + p.y, p.x * p.y))
    p = Point(np.float32(2.0), np.float32(3.0))
    blob = texport.export(f)(p).serialize()
    in_jax = jax.export.deserialize(blob)
    out = in_jax.call(Point(np.float32(2.0), np.float32(3.0)))
    assert isinstance(out, Pair) and float(out.a) == 5.0 and float(out.b) == 6.0
    back = texport.deserialize(blob).call(p)
    assert isinstance(back, Pair) and float(back.b) == 6.0
    with pytest.raises(ValueError, match="Duplicate serialization registration"):
        texport.register_namedtuple_serialization(Pair, serialized_name="other")

    class Unregistered(Point):
        pass
    traxla.tree_util.register_pytree_node(Unregistered, lambda p: ((p.x,), None),
                                          lambda _, c: Unregistered(c[0], c[0]))
    with pytest.raises(ValueError, match="unregistered type"):
        texport.export(traxla.jit(lambda u: u.x))(Unregistered(1.0, 1.0)).serialize()


def test_symbolic_shapes_parse_and_print_as_jax():
    for spec in ["b, 4", "(b, 2*b)", "b + 1, c", "4*b*c", "b - 1"]:
        t = texport.symbolic_shape(spec)
        j = jax.export.symbolic_shape(spec)
        assert [str(d) for d in t] == [str(d) for d in j]
    b, = texport.symbolic_shape("b")
    assert (2 * b) // 2 == b and b * 3 - b == 2 * b and hash(b + 0) == hash(b)
    assert b >= 1 and b + 1 > b and not b < 1 and 2 * b >= b
    with pytest.raises(texport.InconclusiveDimensionOperation, match="inconclusive"):
        b >= 2  # noqa: B015
    jb, = jax.export.symbolic_shape("b")
    assert str(b // 2) == str(jb // 2) == "floordiv(b, 2)"  # a symbolic floordiv, as JAX's
    specs = texport.symbolic_args_specs((X, W_POLY), ("b, ...", None))
    assert str(specs[0].shape[0]) == "b" and specs[0].shape[1] == 4 and specs[1].shape == (4, 6)
    with pytest.raises(ValueError, match="syntax error"):
        texport.symbolic_shape("b, 2**b")


def test_bad_bytes_raise():
    with pytest.raises(ValueError, match="too short"):
        texport.deserialize(b"abc")


def test_multi_platform_export_takes_the_platform_index():
    f = traxla.jit(lambda x: tnp.sin(x) * 2.0)
    b, = texport.symbolic_shape("b")
    exp = texport.export(f, platforms=("cuda", "cpu"))(traxla.ShapeDtypeStruct((b,), F32))
    assert exp.platforms == ("cuda", "cpu") and exp.uses_global_constants
    assert 'jax.global_constant = "_platform_index"' in exp.mlir_module()
    x = np.arange(4, dtype=F32)
    want = np.sin(x) * 2.0
    _close(exp.call(x), want)
    _close(jax.export.deserialize(exp.serialize()).call(x), want)
    j = jax.export.export(jax.jit(lambda x: jnp.sin(x) * 2.0), platforms=("cuda", "cpu"))(x)
    _close(texport.deserialize(j.serialize()).call(x), want)
    only_tpu = jax.export.export(jax.jit(jnp.sin), platforms=("tpu",))(x)
    with pytest.raises(ValueError, match="was exported for platforms"):
        texport.deserialize(only_tpu.serialize()).call(x)


POLY_PROGRAMS = {  # (traxla, jax) pairs over a (b, 4) batch
    "mean_over_batch": lambda np_mod: lambda x: np_mod.mean(x, axis=0) + x.sum(0) / x.shape[0],
    "argmax_where": lambda np_mod: lambda x: np_mod.argmax(np_mod.where(x > 0.5, x, 0.0), axis=1),
    "concat_transpose": lambda np_mod: lambda x: (np_mod.concatenate([x, 2 * x]).T
                                                  @ np_mod.concatenate([x, x])),
    "broadcast_ones": lambda np_mod: lambda x: x * np_mod.ones_like(x) + np_mod.zeros(x.shape[1]),
    "stack_cond": lambda np_mod: lambda x: _lax(np_mod).cond(
        x.sum() > 0, lambda y: np_mod.stack([y, -y], 1), lambda y: np_mod.stack([y, y], 1), x),
    "scan_rnn_over_batch": lambda np_mod: lambda x: _lax(np_mod).scan(  # carry (b, 4), 3 steps
        lambda h, w: (np_mod.tanh(h @ w + x), h.mean(axis=1)), np_mod.zeros_like(x),
        np_mod.stack([np.eye(4, dtype=F32) * (k + 1) * 0.3 for k in range(3)])),
}


def _lax(np_mod):
    return jax.lax if np_mod is jnp else traxla.lax


@pytest.mark.parametrize("name", sorted(POLY_PROGRAMS))
def test_polymorphic_programs_agree_with_jax(name):
    b, = texport.symbolic_shape("b")
    t_fn, j_fn = POLY_PROGRAMS[name](tnp), POLY_PROGRAMS[name](jnp)
    exp = texport.export(traxla.jit(t_fn))(traxla.ShapeDtypeStruct((b, 4), F32))
    in_jax = jax.export.deserialize(exp.serialize())
    x = RNG.random((5, 4)).astype(F32)
    want = j_fn(x)
    _close(exp.call(x), want)
    _close(in_jax.call(x), want)
    assert [str(a) for a in in_jax.out_avals] == [
        str(a) for a in jax.export.export(jax.jit(j_fn))(
            jax.ShapeDtypeStruct((jax.export.symbolic_shape("b")[0], 4), F32)).out_avals]


def test_polymorphic_jaxpr_prints_as_jax():
    def f(np_mod):
        return lambda x, w: (np_mod.tanh(x @ w) * 2.0).reshape(-1, 2).sum(0) / x.shape[0]
    b, = texport.symbolic_shape("b")
    jb, = jax.export.symbolic_shape("b")
    got = traxla.make_jaxpr(f(tnp))(traxla.ShapeDtypeStruct((b, 4), F32),
                                    traxla.ShapeDtypeStruct((4, 6), F32))
    want = jax.make_jaxpr(f(jnp))(jax.ShapeDtypeStruct((jb, 4), F32),
                                  jax.ShapeDtypeStruct((4, 6), F32))
    assert str(got) == str(want)


def test_truncated_or_corrupt_bytes_raise_value_error(t_exports):
    blob = bytes(t_exports["mlp"].serialize())
    for bad in (blob[:len(blob) // 3], blob[:40], b"\xff" * 64):
        with pytest.raises(ValueError):
            texport.deserialize(bad)


def test_cli_describes_an_artifact(t_exports, tmp_path, capsys):
    from traxla.__main__ import main
    path = tmp_path / "poly.bin"
    path.write_bytes(bytes(t_exports["poly"].serialize(vjp_order=1)))
    assert main(["exported", str(path)]) == 0
    out = capsys.readouterr().out
    assert "f32[b,4] f32[4,6]" in out and "polymorphic     yes" in out
    assert "vjp orders      1" in out and "platforms       cpu" in out


def test_vmap_inside_a_polymorphic_export():
    b, = texport.symbolic_shape("b")

    def f(np_mod, vmap):
        return vmap(lambda x: np_mod.argmax(x) + x.sum() / x.shape[0])
    exp = texport.export(traxla.jit(f(tnp, traxla.vmap)))(traxla.ShapeDtypeStruct((3, b), F32))
    x = RNG.random((3, 5)).astype(F32)
    _close(exp.call(x), f(jnp, jax.vmap)(x))
    _close(jax.export.deserialize(exp.serialize()).call(x), f(jnp, jax.vmap)(x))


def test_kwargs_unused_arguments_and_foreign_arrays():
    f = traxla.jit(lambda x, unused, *, scale: x * scale)
    exp = texport.export(f)(X, np.zeros(2, np.int32), scale=np.float32(3.0))
    assert exp.module_kept_var_idx == (0, 2)
    assert exp._arg_names == ["args[0]", "args[1]", "kwargs['scale']"]
    in_jax = jax.export.deserialize(exp.serialize())
    assert in_jax.module_kept_var_idx == (0, 2)
    _close(in_jax.call(X, np.zeros(2, np.int32), scale=np.float32(3.0)), X * 3)
    # a jax.Array argument is taken by value
    _close(exp.call(jnp.asarray(X), np.zeros(2, np.int32), scale=np.float32(3.0)), X * 3)
    with pytest.raises(ValueError, match=r"Dtype mismatch for kwargs\['scale'\]"):
        exp.call(X, np.zeros(2, np.int32), scale=np.int32(3))


A_SPD = (RNG.random((4, 4)) + 4 * np.eye(4)).astype(F32)
JAX_PROGRAMS = {  # JAX lowerings traxla never emits itself: LAPACK kernels, threefry, sort
    "solve": lambda a: jnp.linalg.solve(a, jnp.ones(4)),
    "random": lambda a: jax.random.normal(jax.random.key(0), (4,)) + a[0],
    "sort_fft": lambda a: jnp.sort(a, axis=0) + jnp.fft.fft(a).real,
}


@pytest.mark.parametrize("name", sorted(JAX_PROGRAMS))
def test_jax_lowerings_run_in_traxla(name):
    fn = JAX_PROGRAMS[name]
    exp = texport.deserialize(jax.export.export(jax.jit(fn))(A_SPD).serialize())
    _close(exp.call(A_SPD), fn(A_SPD))


def test_jax_linalg_artifact_in_a_process_without_jax(tmp_path):
    import os
    import subprocess
    import sys
    blob = tmp_path / "solve.bin"
    blob.write_bytes(bytes(jax.export.export(jax.jit(JAX_PROGRAMS["solve"]))(A_SPD).serialize()))
    np.save(tmp_path / "a.npy", A_SPD)
    script = ("import sys, numpy as np, traxla\n"
              f"e = traxla.export.deserialize(open({str(blob)!r}, 'rb').read())\n"
              f"a = np.load({str(tmp_path / 'a.npy')!r})\n"
              "np.testing.assert_allclose(e.call(a), np.linalg.solve(a, np.ones(4)), "
              "rtol=1e-4)\n"
              "assert 'jax' not in sys.modules\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def test_jaxpr_of_an_exported_call_prints_as_jax():
    x = np.ones((3,), F32)
    t = texport.export(traxla.jit(lambda x: x * 2))(x)
    j = jax.export.export(jax.jit(lambda x: x * 2))(x)
    assert str(traxla.make_jaxpr(t.call)(x)) == str(jax.make_jaxpr(j.call)(x))


def test_grad_without_a_stored_vjp_says_so(j_exports):
    exp = texport.deserialize(j_exports["rnn"].serialize())  # vjp_order=0
    with pytest.raises(ValueError, match="No VJP is available"):
        traxla.grad(lambda w: exp.call(w, XS)[1].sum())(W_RNN)


def test_vjp_of_a_polymorphic_export_in_jax():
    b, = texport.symbolic_shape("b")

    def f(np_mod):
        return lambda x, w: (np_mod.tanh(x @ w).sum(0) / x.shape[0]).sum()
    exp = texport.export(traxla.jit(f(tnp)))(traxla.ShapeDtypeStruct((b, 4), F32),
                                              traxla.ShapeDtypeStruct((4, 6), F32))
    in_jax = jax.export.deserialize(exp.serialize(vjp_order=1))
    want = jax.grad(f(jnp), argnums=1)(X, W_POLY)
    _close(jax.grad(lambda w: in_jax.call(X, w))(W_POLY), want)
    _close(traxla.grad(lambda w: exp.call(X, w))(W_POLY), want)


def _scale_by_count(x, n):
    return x * n.astype(x.dtype), n * 2


N_INT = np.arange(3, dtype=np.int32)
X_F = np.arange(3, dtype=F32) + 0.5


@pytest.mark.parametrize("writer", ["traxla", "jax"])
def test_vjp_with_an_int_argument_round_trips(writer):
    """The exported VJP of a function with an int32 argument and output: float0 cotangents
    (in and out) as JAX's own export has them, and grads through the artifact in both
    libraries, whoever wrote it."""
    j_exp = jax.export.export(jax.jit(_scale_by_count))(X_F, N_INT)
    exp = (texport.export(traxla.jit(_scale_by_count))(X_F, N_INT) if writer == "traxla"
           else j_exp)
    blob = exp.serialize(vjp_order=1)
    in_jax, in_traxla = jax.export.deserialize(blob), texport.deserialize(blob)
    want_in = [str(a) for a in j_exp.vjp().in_avals]
    want_out = [str(a) for a in j_exp.vjp().out_avals]
    assert want_in == ["float32[3]", "int32[3]", "float32[3]", "float0[3]"]
    assert want_out == ["float32[3]", "float0[3]"]
    for back in (in_jax, in_traxla):
        assert [str(a) for a in back.vjp().in_avals] == want_in
        assert [str(a) for a in back.vjp().out_avals] == want_out
    g_ref = jax.grad(lambda x, n: _scale_by_count(x, n)[0].sum(), argnums=(0, 1),
                     allow_int=True)(X_F, N_INT)
    g_jax = jax.grad(lambda x, n: in_jax.call(x, n)[0].sum(), argnums=(0, 1),
                     allow_int=True)(X_F, N_INT)
    g_t = traxla.grad(lambda x, n: in_traxla.call(x, n)[0].sum(), argnums=(0, 1),
                      allow_int=True)(X_F, N_INT)
    for g in (g_jax, g_t):
        np.testing.assert_array_equal(np.asarray(g[0]), np.asarray(g_ref[0]))
        assert np.asarray(g[1]).dtype == jax.dtypes.float0 and np.shape(g[1]) == (3,)
    cts = in_traxla.vjp().call(X_F, N_INT, np.ones(3, F32), np.zeros(3, jax.dtypes.float0))
    np.testing.assert_array_equal(np.asarray(cts[0]), N_INT.astype(F32))
    assert np.asarray(cts[1]).dtype == jax.dtypes.float0

"""The StableHLO traxla emits for TPU against JAX's (lowered for TPU on this CPU machine):
the same custom-call targets and the same multiset of op names (locations, constants' values
and SSA names aside), for linear algebra and a few other families; JAX's TPU-only errors;
and the values of the TPU algorithms, run on CPU with the TPU rules swapped in."""
import collections
import contextlib
import re

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
import traxla.scipy.linalg as tsl
from traxla.ir.rules import linalg as L
from traxla.lowering import registry
from traxla.lowering.rules import linalg as cpu_linalg
from traxla.numpy import _tpu_eigh, _tpu_linalg

jax = pytest.importorskip("jax")
jnp = jax.numpy
jsl = pytest.importorskip("jax.scipy.linalg")
jax_linalg = pytest.importorskip("jax._src.lax.linalg")

_OP = re.compile(r'^\s*(?:%[\w#:,% ]+ = )?"?([a-z_]+\.[a-z_.]+|call)\b')
_TARGET = re.compile(r'custom_call @([\w.]+)')


def _summary(text):
    """(op name multiset, custom-call targets) of a module's text."""
    ops = collections.Counter()
    for line in text.splitlines():
        m = _OP.match(line)
        if m and not line.lstrip().startswith(("#loc", "module")):
            ops[m.group(1)] += 1
    return ops, set(_TARGET.findall(text))


def _jax_module(f, args, platform="tpu"):
    return jax.export.export(jax.jit(f), platforms=(platform,))(*args).mlir_module()


def _traxla_module(f, args, platform="tpu"):
    return traxla.export.export(traxla.jit(f), platforms=(platform,))(*args).mlir_module()


def _diff(jax_side, jf, tf, args, platform="tpu"):
    # JAX's summary stored (tests/_jax_stored.py): exporting JAX's TPU modules took seconds
    jo, jt = jax_side(lambda: (lambda ops, targets: (dict(ops), sorted(targets)))(
        *_summary(_jax_module(jf, args, platform))))
    jo, jt = collections.Counter(jo), set(jt)
    to, tt = _summary(_traxla_module(tf, args, platform))
    return jt, tt, dict(jo - to), dict(to - jo)


_rng = np.random.default_rng(0)
A = _rng.standard_normal((4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = _rng.standard_normal((4, 3)).astype(np.float32)
TALL = _rng.standard_normal((5, 3)).astype(np.float32)
BATCH = _rng.standard_normal((2, 4, 4)).astype(np.float32)
C64 = (A + 1j * A.T).astype(np.complex64)


def _both(make):
    """``make(jnp-like namespace, lax.linalg-like, scipy.linalg-like)`` for JAX and traxla."""
    return (make(jnp, jax_linalg, jsl, jax), make(tnp, traxla.lax.linalg, tsl, traxla))


# name -> (function maker, args): TPU modules with equal targets and op multisets
SAME = {
    "cholesky": (lambda np_, la, sl, top: np_.linalg.cholesky, [SPD]),
    "cholesky_batched": (lambda np_, la, sl, top: np_.linalg.cholesky, [np.stack([SPD, SPD])]),
    "triangular_solve_left_lower": (lambda np_, la, sl, top: lambda a, b: la.triangular_solve(
        a, b, left_side=True, lower=True), [A, B]),
    "triangular_solve_right_transposed": (lambda np_, la, sl, top: lambda a, b: la.triangular_solve(
        a, b.T, left_side=False, lower=False, transpose_a=True), [A, B]),
    "triangular_solve_conjugate": (lambda np_, la, sl, top: lambda a: la.triangular_solve(
        a, a, left_side=True, lower=True, conjugate_a=True), [C64]),
    "lu": (lambda np_, la, sl, top: la.lu, [A]),
    "lu_batched_complex": (lambda np_, la, sl, top: la.lu, [np.stack([C64, C64])]),
    "qr_reduced": (lambda np_, la, sl, top: np_.linalg.qr, [TALL]),
    "qr_complete": (lambda np_, la, sl, top: lambda a: np_.linalg.qr(a, mode="complete"), [TALL]),
    "geqrf": (lambda np_, la, sl, top: la.geqrf, [TALL]),
    "householder_product": (lambda np_, la, sl, top: lambda a: la.householder_product(
        a, a[0, :3]), [TALL]),
    "eigh": (lambda np_, la, sl, top: np_.linalg.eigh, [SPD]),
    "eigh_upper": (lambda np_, la, sl, top: lambda a: np_.linalg.eigh(a, UPLO="U"), [SPD]),
    "eigh_complex": (lambda np_, la, sl, top: np_.linalg.eigh, [C64 + C64.conj().T]),
    "eigh_batched": (lambda np_, la, sl, top: np_.linalg.eigh, [BATCH + BATCH.transpose(0, 2, 1)]),
    "eigh_subset": (lambda np_, la, sl, top: lambda a: la.eigh(a, subset_by_index=(1, 3)), [SPD]),
    "eigh_jacobi": (lambda np_, la, sl, top: lambda a: la.eigh(
        a, implementation=la.EighImplementation.JACOBI), [SPD]),
    "eigvalsh": (lambda np_, la, sl, top: np_.linalg.eigvalsh, [SPD]),
    "solve": (lambda np_, la, sl, top: np_.linalg.solve, [A, B]),
    "inv": (lambda np_, la, sl, top: np_.linalg.inv, [A]),
    "scipy_lu_factor": (lambda np_, la, sl, top: sl.lu_factor, [A]),
    "scipy_cho_solve": (lambda np_, la, sl, top: lambda a, b: sl.cho_solve((a, True), b), [SPD, B]),
    "scipy_solve_triangular": (lambda np_, la, sl, top: sl.solve_triangular, [A, B]),
    "scipy_cholesky": (lambda np_, la, sl, top: sl.cholesky, [SPD]),
    "scipy_eigh": (lambda np_, la, sl, top: sl.eigh, [SPD]),
    "scipy_qr_economic": (lambda np_, la, sl, top: lambda a: sl.qr(a, mode="economic"), [TALL]),
    "scipy_solve_positive": (lambda np_, la, sl, top: lambda a, b: sl.solve(a, b, assume_a="pos"),
                             [SPD, B]),
    "cholesky_upper": (lambda np_, la, sl, top: lambda a: np_.linalg.cholesky(a, upper=True),
                       [SPD]),
    "matrix_power_negative": (lambda np_, la, sl, top: lambda a: np_.linalg.matrix_power(a, -2),
                              [A]),
    "solve_batched": (lambda np_, la, sl, top: np_.linalg.solve, [BATCH, BATCH[:, :, :2]]),
    "logistic": (lambda np_, la, sl, top: top.nn.sigmoid, [A]),
    "logistic_complex": (lambda np_, la, sl, top: top.lax.logistic, [C64]),
    "dot_float_int": (lambda np_, la, sl, top: lambda a, b: a @ b, [A, B.astype(np.int32)]),
    "dot_float_bool": (lambda np_, la, sl, top: lambda a, b: a @ b, [A, B > 0]),
    "dot_complex_float": (lambda np_, la, sl, top: lambda a, b: a @ b, [C64, B]),
    "fft": (lambda np_, la, sl, top: np_.fft.fft, [A]),
    "rfft2": (lambda np_, la, sl, top: np_.fft.rfft2, [A]),
    "conv": (lambda np_, la, sl, top: lambda x, k: top.lax.conv(x, k, (1, 1), "SAME"),
             [BATCH[:1, None], BATCH[:1, None, :3, :3]]),
    "sort": (lambda np_, la, sl, top: np_.sort, [A]),
    "argsort": (lambda np_, la, sl, top: np_.argsort, [A]),
    "scatter_add": (lambda np_, la, sl, top: lambda a: a.at[1, 2].add(2.0), [A]),
    "gather": (lambda np_, la, sl, top: lambda a: a[np_.array([2, 0])], [A]),
    "approx_max_k": (lambda np_, la, sl, top: lambda a: top.lax.approx_max_k(a, 2), [A]),
    "approx_min_k_two": (lambda np_, la, sl, top: lambda a: (top.lax.approx_min_k(a[0], 3),
                                                            top.lax.approx_min_k(a[1], 2)), [A]),
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_tpu_module_has_jax_targets_and_ops(name, jax_side):
    make, args = SAME[name]
    jf, tf = _both(make)
    jt, tt, only_jax, only_traxla = _diff(jax_side, jf, tf, args)
    assert tt == jt
    assert (only_jax, only_traxla) == ({}, {})


# Functions whose TPU modules differ from JAX's only where their CPU modules differ too: the
# generic lax/numpy code they share (jnp.diagonal's bounds check, expm's Padé structure,
# cumsum's cached function, the PRNG's bit generation, cholesky_update's row updates, LU
# pivots to a permutation, the reduced QR of a square matrix) lowers differently from JAX's on
# every platform; the TPU rules add no difference of their own.
CPU_TOO = {
    "det": (lambda np_, la, sl, top: np_.linalg.det, [A]),
    "slogdet": (lambda np_, la, sl, top: np_.linalg.slogdet, [A]),
    "expm": (lambda np_, la, sl, top: sl.expm, [A]),
    "cumsum": (lambda np_, la, sl, top: np_.cumsum, [A]),
    "cholesky_update": (lambda np_, la, sl, top: lambda r, w: la.cholesky_update(r, w),
                        [np.triu(SPD), A[0]]),
    "random_normal": (lambda np_, la, sl, top: lambda a: top.random.normal(
        top.random.key(0), (3,)) + a[0, :3], [A]),
    "scipy_lu": (lambda np_, la, sl, top: sl.lu, [A]),
    "scipy_det": (lambda np_, la, sl, top: sl.det, [A]),
    "qr_batched_square": (lambda np_, la, sl, top: np_.linalg.qr, [BATCH]),
}

# Lowered to LAPACK on CPU, to JAX's Python algorithms on TPU: the algorithm (or the generic
# piece that differs) lowered for CPU by itself differs from JAX's exactly as on TPU.
_PIVOTS = np.array([1, 1, 3, 3], np.int32)
ALGORITHM_AS_ON_CPU = {
    "ormqr": (lambda np_, la, sl, top: lambda a: la.ormqr(a, a[0, :3], a @ a.T), [TALL],
              lambda a: jax_linalg._ormqr_lowering(a, a[0, :3], a @ a.T, left=True,
                                                   transpose=False),
              lambda a: _tpu_linalg.ormqr_tpu(a, a[0, :3], a @ a.T, left=True, transpose=False),
              [TALL]),
    "tridiagonal_solve": (
        lambda np_, la, sl, top: lambda d, b: la.tridiagonal_solve(d[0], d[1], d[2], b),
        [A[:3], B],
        lambda d, b: jax_linalg._tridiagonal_solve_jax(d[0], d[1], d[2], b,
                                                       perturb_singular=False),
        lambda d, b: _tpu_linalg.tridiagonal_solve_tpu(d[0], d[1], d[2], b,
                                                       perturb_singular=False),
        [A[:3], B]),
    "scipy_lu_solve": (  # its pivots-to-permutation (a generic decomposition) is what differs
        lambda np_, la, sl, top: lambda a, b: sl.lu_solve(sl.lu_factor(a), b), [A, B],
        lambda p: jax_linalg.lu_pivots_to_permutation(p, 4),
        lambda p: traxla.lax.linalg.lu_pivots_to_permutation(p, 4), [_PIVOTS]),
}


@pytest.mark.parametrize("name", sorted(ALGORITHM_AS_ON_CPU))
def test_tpu_module_differs_from_jax_exactly_as_the_algorithm_on_cpu(name, jax_side):
    make, args, jax_algorithm, traxla_algorithm, algorithm_args = ALGORITHM_AS_ON_CPU[name]
    jf, tf = _both(make)
    jt, tt, only_jax, only_traxla = _diff(jax_side, jf, tf, args)
    assert tt == jt
    _, _, cpu_only_jax, cpu_only_traxla = _diff(jax_side, jax_algorithm, traxla_algorithm,
                                                algorithm_args, "cpu")
    assert (only_jax, only_traxla) == (cpu_only_jax, cpu_only_traxla)


@pytest.mark.parametrize("name", sorted(CPU_TOO))
def test_tpu_module_differs_from_jax_only_as_on_cpu(name, jax_side):
    make, args = CPU_TOO[name]
    jf, tf = _both(make)
    jt, tt, only_jax, only_traxla = _diff(jax_side, jf, tf, args)
    assert tt == jt
    _, _, cpu_only_jax, cpu_only_traxla = _diff(jax_side, jf, tf, args, "cpu")
    assert set(only_jax) <= set(cpu_only_jax) | set(cpu_only_traxla)
    assert set(only_traxla) <= set(cpu_only_jax) | set(cpu_only_traxla)


@contextlib.contextmanager
def _qdwh_stand_in():
    """The same stand-in for QDWH in JAX and traxla: traxla's QDWH (lax/_qdwh.py, shared with
    lax.linalg.qdwh on every platform) precomputes its coefficients and nests fewer jits than
    JAX's, so the SVD's own structure is compared around it."""
    import jax._src.tpu.linalg.qdwh as jax_qdwh
    originals = jax_qdwh.qdwh, _tpu_linalg._qdwh, _tpu_eigh._qdwh
    stand_in = lambda a, is_hermitian=False, max_iterations=None, dynamic_shape=None: (  # noqa: E731
        a, a.T @ a, 0, True)

    def forget_traces():  # the SVD's nested jits and traxla's traced decompositions
        jax.clear_caches()
        traxla.clear_caches()
        cpu_linalg._traced.clear()
    jax_qdwh.qdwh = _tpu_linalg._qdwh = _tpu_eigh._qdwh = stand_in
    forget_traces()
    try:
        yield
    finally:
        jax_qdwh.qdwh, _tpu_linalg._qdwh, _tpu_eigh._qdwh = originals
        forget_traces()


SVD = {
    "svd": (lambda np_, la, sl, top: np_.linalg.svd, [TALL]),
    "svd_wide_reduced": (lambda np_, la, sl, top: lambda a: np_.linalg.svd(
        a, full_matrices=False), [TALL.T]),
    "svd_values": (lambda np_, la, sl, top: lambda a: np_.linalg.svd(a, compute_uv=False), [A]),
    "pinv": (lambda np_, la, sl, top: np_.linalg.pinv, [TALL]),
    "lstsq": (lambda np_, la, sl, top: lambda a, b: np_.linalg.lstsq(a, b)[0], [A, B]),
    "matrix_rank": (lambda np_, la, sl, top: np_.linalg.matrix_rank, [A]),
    "cond": (lambda np_, la, sl, top: np_.linalg.cond, [A]),
    "norm_2": (lambda np_, la, sl, top: lambda a: np_.linalg.norm(a, ord=2), [A]),
    "svd_batched": (lambda np_, la, sl, top: np_.linalg.svd, [BATCH[:, :, :3]]),
}


@pytest.mark.parametrize("name", sorted(SVD))
def test_tpu_svd_module_matches_jax_around_qdwh(name, jax_side):
    make, args = SVD[name]
    jf, tf = _both(make)
    jt, tt, _, _ = _diff(jax_side, jf, tf, args)
    assert tt == jt == {"Qr", "ProductOfElementaryHouseholderReflectors", "Eigh"}
    with _qdwh_stand_in():
        jt, tt, only_jax, only_traxla = _diff(jax_side, jf, tf, args)
    assert tt == jt
    if name in ("svd", "svd_wide_reduced", "svd_values"):
        assert only_jax == {}
        assert only_traxla == {}
    else:  # and the code around the SVD differs from JAX's as it does on CPU
        _, _, cpu_only_jax, cpu_only_traxla = _diff(jax_side, jf, tf, args, "cpu")
        allowed = {"stablehlo.slice"} | set(cpu_only_jax) | set(
            cpu_only_traxla)
        # vmap of a while loop with a batched predicate: JAX broadcasts it once more (on CPU
        # too), in the batched SVD's two loops
        allowed.add("stablehlo.broadcast_in_dim")
        assert set(only_jax) | set(only_traxla) <= allowed


# -- JAX's TPU refusals -----------------------------------------------------------------------

REFUSED = {
    "eig": lambda la: lambda a: la.eig(a),
    "schur": lambda la: lambda a: la.schur(a),
    "hessenberg": lambda la: lambda a: la.hessenberg(a),
    "tridiagonal": lambda la: lambda a: la.tridiagonal(a),
    "eigh_qr": lambda la: lambda a: la.eigh(a, implementation=la.EighImplementation.QR),
    "svd_qr": lambda la: lambda a: la.svd(a, algorithm=la.SvdAlgorithm.QR),
    "qr_pivoting": lambda la: lambda a: la.qr(a, pivoting=True),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_tpu_refuses_as_jax(name, jax_side):
    jax_error = jax_side.raises(lambda: _jax_module(REFUSED[name](jax_linalg), [SPD]))
    assert issubclass(jax_error.type, NotImplementedError)
    with pytest.raises(NotImplementedError) as traxla_error:
        _traxla_module(REFUSED[name](traxla.lax.linalg), [SPD])
    assert str(traxla_error.value) == jax_error.message


def test_tpu_eigh_beyond_the_jacobi_size_is_jaxs_divide_and_conquer(jax_side):
    # n > 256: QDWH spectral divide-and-conquer around the Jacobi kernel, as JAX
    h = np.eye(300, dtype=np.float32)
    jt, tt, _, _ = _diff(jax_side, jnp.linalg.eigh, tnp.linalg.eigh, [h])
    assert tt == jt == {"Eigh", "Qr", "ProductOfElementaryHouseholderReflectors"}
    with _qdwh_stand_in():
        jt, tt, only_jax, only_traxla = _diff(jax_side, jnp.linalg.eigh, tnp.linalg.eigh, [h])
    assert only_traxla == {}
    # what JAX has more, all from code shared with CPU: jnp.diag's bounds-check case,
    # argmin's NaN test on integers, nanmedian's convert, a nested jit (jnp.where) that
    # traxla emits once where JAX emits it twice
    assert set(only_jax) <= {"stablehlo.case", "stablehlo.return", "stablehlo.constant",
                             "stablehlo.compare", "stablehlo.or", "stablehlo.convert",
                             "func.func", "func.call"}
    assert only_jax.get("stablehlo.case", 0) <= 4  # two jnp.diag of a matrix


# -- values: the TPU algorithms run on CPU ------------------------------------------------------

@contextlib.contextmanager
def _tpu_rules_on_cpu(*prims):
    """Lower ``prims`` with their TPU rules in CPU modules, with eigh's Jacobi kernel (TPU's
    ``Eigh`` custom call) replaced by LAPACK's: the TPU algorithms around them then run here."""
    tpu, saved = registry.platform_rules["tpu"], dict(registry.platform_rules.get("cpu", {}))
    cpu = registry.platform_rules.setdefault("cpu", {})

    def eigh_rule(ctx, x, **params):
        if str(getattr(params["algorithm"], "name", "")) == "JACOBI":
            return cpu_linalg._eigh(ctx, x, **{**params, "algorithm": None})
        return tpu[L.eigh_p](ctx, x, **params)
    cpu.update({p: tpu[p] for p in prims})
    cpu[L.eigh_p] = eigh_rule
    registry._views.clear()
    try:
        yield
    finally:
        cpu.clear()
        cpu.update(saved)
        registry._views.clear()


# one program per case: the decomposition and the singular values alone (XLA shares their
# common work; two programs cost more to compile); used only under _tpu_rules_on_cpu(L.svd_p)
_tpu_svd_and_singular_values = traxla.jit(
    lambda a, full_matrices: (traxla.lax.linalg.svd(a, full_matrices=full_matrices),
                              traxla.lax.linalg.svd(a, compute_uv=False)),
    static_argnames="full_matrices")


@pytest.mark.parametrize("shape,full_matrices", [((5, 3), False), ((5, 3), True), ((3, 5), True),
                                                 ((4, 4), False), ((2, 6, 4), False),
                                                 ((20, 4), True)])
def test_tpu_svd_algorithm_values_on_cpu(shape, full_matrices):
    a = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with _tpu_rules_on_cpu(L.svd_p):
        (u, s, vh), s_only = _tpu_svd_and_singular_values(a, full_matrices=full_matrices)
    u, s, vh = map(np.asarray, (u, s, vh))
    k = min(shape[-2:])
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(s_only), s, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=2e-5)
    eye = lambda n: np.broadcast_to(np.eye(n, dtype=np.float32), shape[:-2] + (n, n))
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, eye(u.shape[-1]), atol=2e-5)
    np.testing.assert_allclose(vh @ np.swapaxes(vh, -1, -2), eye(vh.shape[-2]), atol=2e-5)


def test_tpu_svd_of_non_finite_input_is_nan_on_cpu():
    a = np.array([[1.0, np.inf], [0.0, 1.0]], np.float32)
    with _tpu_rules_on_cpu(L.svd_p):
        u, s, vh = traxla.jit(traxla.lax.linalg.svd)(a)
    assert np.isnan(np.asarray(s)).all() and np.isnan(np.asarray(u)).all()


@pytest.mark.parametrize("lower", [True, False])
def test_tpu_eigh_algorithm_values_on_cpu(lower):
    a = np.random.default_rng(2).standard_normal((6, 6)).astype(np.float32)
    h = a + a.T
    only = np.tril(h) if lower else np.triu(h)  # the other triangle must not be read
    with _tpu_rules_on_cpu():
        (v, w), (vs, ws) = traxla.jit(lambda x: (  # one program
            traxla.lax.linalg.eigh(x, lower=lower, symmetrize_input=False),
            traxla.lax.linalg.eigh(x, lower=lower, symmetrize_input=False,
                                   subset_by_index=(2, 5))))(only)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(h), rtol=1e-5, atol=1e-5)
    v = np.asarray(v)
    np.testing.assert_allclose(h @ v, v * np.asarray(w), atol=2e-5)
    np.testing.assert_allclose(np.asarray(ws), np.linalg.eigvalsh(h)[2:5], rtol=1e-5, atol=1e-5)
    assert vs.shape == (6, 3)


def test_tpu_eigh_divide_and_conquer_values_on_cpu():
    # LAPACK sorts where TPU's Jacobi kernel keeps the order: 1x1 base blocks, as JAX notes
    rng = np.random.default_rng(6)
    a = rng.standard_normal((10, 10))
    q = np.linalg.qr(rng.standard_normal((10, 10)))[0]
    spread = (a + a.T).astype(np.float32)
    # repeated eigenvalues: nearly diagonal blocks end the recursion
    repeated = (q @ np.diag(np.r_[np.ones(5), 2 * np.ones(5)]) @ q.T).astype(np.float32)
    eigh = traxla.jit(lambda x: _tpu_linalg.eigh_tpu(
        x, lower=True, sort_eigenvalues=True, subset_by_index=None, termination_size=1))
    with _tpu_rules_on_cpu():
        results = [tuple(map(np.asarray, eigh(h))) for h in (spread, repeated)]
    for h, (v, w) in zip((spread, repeated), results):
        np.testing.assert_allclose(w, np.linalg.eigvalsh(h), atol=2e-5)
        np.testing.assert_allclose(h @ v, v * w, atol=2e-5)


@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, False),
                                            (False, True)])
def test_tpu_ormqr_algorithm_values_on_cpu(left, transpose):
    a = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    c = np.random.default_rng(4).standard_normal((5, 5)).astype(np.float32)
    h, taus = traxla.lax.linalg.geqrf(a)
    want = traxla.lax.linalg.ormqr(h, taus, c, left=left, transpose=transpose)  # LAPACK
    with _tpu_rules_on_cpu(L.ormqr_p):
        got = traxla.jit(lambda h, t, c: traxla.lax.linalg.ormqr(
            h, t, c, left=left, transpose=transpose))(h, taus, c)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-5)


def test_tpu_tridiagonal_solve_algorithm_values_on_cpu():
    rng = np.random.default_rng(5)
    dl = np.r_[0, rng.standard_normal(4)].astype(np.float32)
    d = (4 + rng.random(5)).astype(np.float32)
    du = np.r_[rng.standard_normal(4), 0].astype(np.float32)
    b = rng.standard_normal((5, 2)).astype(np.float32)
    with _tpu_rules_on_cpu(L.tridiagonal_solve_p):
        x = traxla.jit(traxla.lax.linalg.tridiagonal_solve)(dl, d, du, b)
    m = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    np.testing.assert_allclose(m @ np.asarray(x), b, atol=1e-5)


def test_tpu_mixed_dot_values_on_cpu():
    from traxla.ir.rules.reduction import dot_general_p
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    with _tpu_rules_on_cpu(dot_general_p):
        # the TPU rule hands mixed float/int operands to dot_general as they are; CPU's XLA
        # refuses that, so only the bool case (converted on TPU) runs here
        prod = traxla.jit(lambda a, b: a @ b)(ints.astype(np.float32)[:, :3], ints > 4)
    np.testing.assert_allclose(np.asarray(prod), ints[:, :3].astype(np.float32) @ (ints > 4))


def _custom_call_lines(text):
    """The custom calls of a module with SSA names and locations blanked."""
    return [re.sub(r"%[\w#]+", "%", line.split(" loc(")[0]).strip()
            for line in text.splitlines() if "custom_call @" in line]


@pytest.mark.parametrize("name", ["lu", "qr_complete", "eigh_upper", "eigh_jacobi",
                                  "householder_product", "approx_max_k", "lu_batched_complex"])
def test_tpu_custom_calls_have_jax_attributes_and_types(name, jax_side):
    make, args = SAME[name]
    jf, tf = _both(make)
    jax_calls = jax_side(lambda: _custom_call_lines(_jax_module(jf, args)))
    assert jax_calls and _custom_call_lines(_traxla_module(tf, args)) == jax_calls

"""Linear algebra numerics (issue #13): factorizations and solvers against NumPy/SciPy for
f32, f64, c64 and c128 on random well-conditioned, batched inputs (hypothesis);
finite-difference checks of JVPs and VJPs in float64; ``vmap`` against stacking; ``jit``
against eager; failed factorizations give NaNs; trace-time errors name the function."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
import scipy.linalg as sla

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp
import traxla.scipy.linalg as tsl

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

L = tlax.linalg
LA = tnp.linalg


@contextlib.contextmanager
def x64():
    old = traxla.config.read("enable_x64")
    traxla.config.update("enable_x64", True)
    try:
        yield
    finally:
        traxla.config.update("enable_x64", old)


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 2e-4, np.complex64: 2e-4, np.float64: 1e-10, np.complex128: 1e-10}


def _rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _well_conditioned(rng, shape, dtype):
    n = shape[-1]
    return (_rand(rng, shape, dtype) + 2 * n * np.eye(n)).astype(dtype)


def _hpd(rng, shape, dtype):
    a = _rand(rng, shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


@traxla.jit
def _factorize(a, spd, b):
    """Everything at once, so that one compiled program serves an input type."""
    q, r = LA.qr(a)
    w, v = LA.eigh(spd)
    u, s, vh = LA.svd(a, full_matrices=False)
    lu, piv, perm = L.lu(a)
    return dict(chol=LA.cholesky(spd), solve=LA.solve(a, b), inv=LA.inv(a), det=LA.det(a),
                slogdet=tuple(LA.slogdet(a)), q=q, r=r, w=w, v=v, u=u, s=s, vh=vh, lu=lu,
                perm=perm, tri=L.triangular_solve(a, b, left_side=True, lower=True),
                eigvals=LA.eigvals(a))


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=2, deadline=None)
@given(n=st.sampled_from([3]), batch=st.sampled_from([(), (2,)]), seed=st.integers(0, 2 ** 16))
def test_factorizations_match_numpy(dtype, n, batch, seed):
    rng = np.random.default_rng(seed)
    shape = batch + (n, n)
    a, spd, b = (_well_conditioned(rng, shape, dtype), _hpd(rng, shape, dtype),
                 _rand(rng, batch + (n, 2), dtype))
    tol = TOL[dtype]
    with x64():
        out = {k: (tuple(np.asarray(t) for t in v) if isinstance(v, tuple) else np.asarray(v))
               for k, v in _factorize(a, spd, b).items()}
    close = lambda x, y: np.testing.assert_allclose(x, y, rtol=tol * 10, atol=tol * 10)  # noqa: E731
    assert out["chol"].dtype == dtype
    close(out["chol"], np.linalg.cholesky(spd))
    close(out["solve"], np.linalg.solve(a, b))
    close(out["inv"], np.linalg.inv(a))
    close(out["det"], np.linalg.det(a))
    close(out["slogdet"][1], np.linalg.slogdet(a)[1])
    close(out["slogdet"][0], np.linalg.slogdet(a)[0])
    close(out["q"] @ out["r"], a)
    close(_H(out["q"]) @ out["q"], np.broadcast_to(np.eye(n), shape))
    close(np.tril(out["r"], -1), 0)
    close(out["w"], np.linalg.eigvalsh(spd))
    close(out["v"] @ (out["w"][..., None] * _H(out["v"])), spd)
    close(out["s"], np.linalg.svd(a, compute_uv=False))
    close((out["u"] * out["s"][..., None, :]) @ out["vh"], a)
    low = np.tril(out["lu"], -1) + np.eye(n)
    up = np.triu(out["lu"])
    close(np.take_along_axis(a, out["perm"][..., None], axis=-2), low @ up)
    close(np.tril(a) @ out["tri"], b)
    close(np.sort_complex(out["eigvals"].reshape(-1, n)),
          np.sort_complex(np.linalg.eigvals(a).reshape(-1, n)))


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=1, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_scipy_linalg_matches_scipy(dtype, seed):
    rng = np.random.default_rng(seed)
    a, spd, b = _well_conditioned(rng, (3, 3), dtype), _hpd(rng, (3, 3), dtype), _rand(rng, (3, 2), dtype)
    tol = TOL[dtype] * 10
    with x64():
        got = _scipy_all(a, spd, b)
        got = {k: np.asarray(v) for k, v in got.items()}
    want = dict(cho=sla.cho_solve(sla.cho_factor(spd), b), lu=sla.lu_solve(sla.lu_factor(a), b),
                lu_t=sla.lu_solve(sla.lu_factor(a), b, trans=1),
                tri=sla.solve_triangular(a, b, lower=True),
                pos=sla.solve(spd, b, assume_a="pos"), sqrtm=sla.sqrtm(spd),
                polar=sla.polar(a)[0], hess=sla.hessenberg(a))
    for k, w in want.items():
        np.testing.assert_allclose(got[k], w, rtol=tol, atol=tol, err_msg=k)


@traxla.jit
def _scipy_all(a, spd, b):
    return dict(cho=tsl.cho_solve(tsl.cho_factor(spd), b), lu=tsl.lu_solve(tsl.lu_factor(a), b),
                lu_t=tsl.lu_solve(tsl.lu_factor(a), b, trans=1),
                tri=tsl.solve_triangular(a, b, lower=True),
                pos=tsl.solve(spd, b, assume_a="pos"), sqrtm=tsl.sqrtm(spd),
                polar=tsl.polar(a, method="svd")[0], hess=tsl.hessenberg(a))


def test_qdwh_polar_decomposition():
    a = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)
    u, h, num_iters, converged = tlax.linalg.qdwh(a)
    want_u, want_h = sla.polar(a)
    np.testing.assert_allclose(u, want_u, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-5)
    assert bool(converged) and 0 < int(num_iters) <= 10


# -- gradients by finite differences (float64) ---------------------------------------------------

_g = np.random.default_rng(7)
_A = _g.standard_normal((3, 3)) + 3 * np.eye(3)
_SPD = _A @ _A.T + np.eye(3)
_B = _g.standard_normal((3, 2))
_W = _g.standard_normal((4, 3))

GRAD_CASES = {
    "cholesky": (lambda x: L.cholesky(x), _SPD),
    "solve": (lambda x: LA.solve(x, _B), _A),
    "solve_b": (lambda y: LA.solve(_A, y), _B),
    "inv": (lambda x: LA.inv(x), _A),
    "det": (lambda x: LA.det(x), _A),
    "det_4x4": (lambda x: LA.det(x), _g.standard_normal((4, 4)) + 4 * np.eye(4)),
    "slogdet": (lambda x: LA.slogdet(x)[1], _A),
    "eigh": (lambda x: (lambda w, v: (w, v * v[..., :1, :]))(*LA.eigh(x)), _SPD),
    "svd": (lambda x: (lambda u, s, vh: (s, u * u[..., :1, :], vh * vh[..., :, :1]))(
        *LA.svd(x, full_matrices=False)), _W),
    "qr": (lambda x: LA.qr(x), _W),
    "qr_wide": (lambda x: LA.qr(x), _W.T),
    "qr_complete_tall": (lambda x: LA.qr(x, mode="complete"), _W),
    "eig_vectors": (lambda x: (lambda w, v: (tlax.real(w), tlax.real(v * tlax.conj(v))))(
        *L.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)), _A),
    "lu_solve": (lambda x: tsl.lu_solve(tsl.lu_factor(x), _B), _A),
    "triangular_solve": (lambda x: L.triangular_solve(x, _B, left_side=True, lower=True), _A),
    "triangular_solve_right": (lambda x: L.triangular_solve(x, _B.T, transpose_a=True), _A),
    "expm": (lambda x: tsl.expm(x), _A / 3),
    "pinv": (lambda x: LA.pinv(x), _W),
    "cho_solve": (lambda x: tsl.cho_solve(tsl.cho_factor(x), _B), _SPD),
    "eigvals": (lambda x: tlax.real(LA.eigvals(x)), _SPD),
    "lu": (lambda x: L.lu(x)[0], _A),
    "tridiagonal_solve": (lambda d: L.tridiagonal_solve(_B[:, 0] * 0 + np.array([0., 1, 1]), d,
                                                        np.array([1., 1, 0]), _B), _A[0] + 4),
    "tridiagonal_solve_rhs": (lambda b: L.tridiagonal_solve(np.array([0., 1, 1]), _A[0] + 4,
                                                            np.array([1., 1, 0]), b), _B),
    "symmetric_product": (lambda a: L.symmetric_product(a, _SPD, alpha=2.0, beta=0.5), _W.T),
}


def _cotangents(f, x, rng):
    """Random cotangents shaped like ``f(x)``, from the traced output types (no compile)."""
    holder = {}

    def leaves(x):
        holder["tree"] = traxla.tree_util.tree_structure(f(x))
        return traxla.tree_util.tree_leaves(f(x))
    closed = traxla.make_jaxpr(leaves)(x)
    return traxla.tree_util.tree_unflatten(holder["tree"],
                                           [rng.standard_normal(a.shape) for a in closed.out_avals])


# inputs read as symmetric (one triangle): perturbed symmetrically, as their JVPs assume
SYMMETRIC = {"cho_solve", "eigh", "cholesky", "eigvals"}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_match_finite_differences(name):
    f, x = GRAD_CASES[name]
    rng = np.random.default_rng(0)
    dx = rng.standard_normal(x.shape)
    if name in SYMMETRIC:
        dx = dx + dx.T
    with x64():
        # one compiled program per case: the JVP and the VJP together; evaluated again at
        # x +- eps dx it also gives the primal outputs for the finite differences
        def both(x, dx, ct):
            primal, tangent = traxla.jvp(f, (x,), (dx,))
            return primal, tangent, traxla.vjp(f, x)[1](ct)[0]

        program = traxla.jit(both)
        cts = _cotangents(f, x, rng)
        primal, tangent, grad = program(x, dx, cts)
        eps = 1e-6
        plus = traxla.tree_util.tree_leaves(program(x + eps * dx, dx, cts)[0])
        minus = traxla.tree_util.tree_leaves(program(x - eps * dx, dx, cts)[0])
        tangents = [np.asarray(t) for t in traxla.tree_util.tree_leaves(tangent)]
        for t, p, m in zip(tangents, plus, minus):
            np.testing.assert_allclose(t, (np.asarray(p) - np.asarray(m)) / (2 * eps),
                                       rtol=1e-5, atol=1e-6, err_msg=name)
        if name == "expm":
            np.testing.assert_allclose(np.asarray(primal), sla.expm(x), rtol=1e-12, atol=1e-12)
            # the Fréchet derivative is the JVP: scipy.linalg.expm_frechet
            np.testing.assert_allclose(tangents[0], sla.expm_frechet(x, dx)[1], rtol=1e-10,
                                       atol=1e-12)
        # <ct, J dx> == <J^T ct, dx>
        lhs = sum(np.sum(np.asarray(c) * t) for c, t in zip(traxla.tree_util.tree_leaves(cts),
                                                            tangents))
        np.testing.assert_allclose(np.sum(np.asarray(grad) * dx), lhs, rtol=1e-7, atol=1e-8)


# -- vmap equals stacking, jit equals eager ------------------------------------------------------

_S = np.stack([_SPD, 2 * _SPD + np.eye(3)]).astype(np.float32)
_As = np.stack([_A, _A.T]).astype(np.float32)
_Bs = np.stack([_B, -_B]).astype(np.float32)

VMAP_CASES = {
    "cholesky": (lambda x: LA.cholesky(x), (_S,)),
    "solve": (lambda a, b: LA.solve(a, b), (_As, _Bs)),
    "triangular_solve_unbatched_a": (lambda b: L.triangular_solve(_A.astype(np.float32), b,
                                                                 left_side=True), (_Bs,)),
    "triangular_solve_right_unbatched_a": (lambda b: L.triangular_solve(
        _A.astype(np.float32), b.T, lower=True), (_Bs,)),
    "lu": (lambda x: L.lu(x), (_As,)),
    "qr": (lambda x: LA.qr(x), (_As,)),
    "eigvalsh": (lambda x: LA.eigvalsh(x), (_S,)),
    "svdvals": (lambda x: LA.svdvals(x), (_As,)),
    "det": (lambda x: LA.det(x), (_As,)),
    "inv": (lambda x: LA.inv(x), (_As,)),
    "eigvals": (lambda x: LA.eigvals(x), (_As,)),
    "lu_solve": (lambda a, b: tsl.lu_solve(tsl.lu_factor(a), b), (_As, _Bs)),
}


EAGER_TOO = {"cholesky", "lu", "solve"}   # op-by-op evaluation compiles each primitive: a few


_VMAP_RESULTS = {}


def _vmap_results():
    """Every case at once, computed once per process: ``jit(vmap(all))`` over the stacks and
    ``jit(all)`` on each row (two compiled programs instead of two per case)."""
    if not _VMAP_RESULTS:
        def all_cases(args):
            return {name: f(*args[name]) for name, (f, _) in VMAP_CASES.items()}
        stacks = {name: tuple(args) for name, (_, args) in VMAP_CASES.items()}
        batched = traxla.jit(traxla.vmap(all_cases))(stacks)
        one = traxla.jit(all_cases)
        rows = [one(traxla.tree_util.tree_map(lambda a: a[i], stacks)) for i in range(2)]
        for name in VMAP_CASES:
            _VMAP_RESULTS[name] = (traxla.tree_util.tree_leaves(batched[name]),
                                   [traxla.tree_util.tree_leaves(r[name]) for r in rows])
    return _VMAP_RESULTS


@pytest.mark.parametrize("name", list(VMAP_CASES))
def test_vmap_equals_stacking_and_jit_equals_eager(name):
    f, args = VMAP_CASES[name]
    batched, rows = _vmap_results()[name]
    eager = [traxla.tree_util.tree_leaves(f(*[a[i] for a in args])) for i in range(2)] \
        if name in EAGER_TOO else rows
    for k, leaf in enumerate(batched):
        stacked = np.stack([np.asarray(r[k]) for r in rows])
        np.testing.assert_allclose(np.asarray(leaf), stacked, rtol=1e-4, atol=1e-4, err_msg=name)
        np.testing.assert_allclose(np.stack([np.asarray(e[k]) for e in eager]), stacked,
                                   rtol=1e-5, atol=1e-5, err_msg=name)


# -- failures and errors -------------------------------------------------------------------------

def test_failed_factorizations_give_nans():
    bad = -np.eye(3, dtype=np.float32)
    lower = np.tril(np.ones((3, 3), bool))
    out = np.asarray(LA.cholesky(bad))
    assert np.isnan(out[lower]).all() and (out[~lower] == 0).all()   # as JAX: tril of NaNs
    batch = np.stack([np.eye(3, dtype=np.float32), bad])
    out = np.asarray(traxla.jit(LA.cholesky)(batch))
    np.testing.assert_array_equal(out[0], np.eye(3))
    assert np.isnan(out[1][lower]).all()
    w, v = LA.eigh(np.full((2, 2), np.nan, np.float32))
    assert np.isnan(np.asarray(w)).all() and np.isnan(np.asarray(v)).all()


def test_singular_solve_is_not_garbage():
    out = np.asarray(LA.solve(np.zeros((2, 2), np.float32), np.ones(2, np.float32)))
    assert not np.isfinite(out).all()


@pytest.mark.parametrize("fn, args, exc, match", [
    (lambda x: L.cholesky(x, symmetrize_input=False), (np.ones((2, 3), np.float32),), ValueError,
     r"The input to cholesky must be a square matrix. Got shape \(2, 3\)"),
    (lambda x: LA.cholesky(x), (np.ones((2, 3), np.float32),), TypeError,
     r"add got incompatible shapes for broadcasting: \(2, 3\), \(3, 2\)"),
    (lambda x: LA.inv(x), (np.ones(3, np.float32),), ValueError,
     r"Argument to inv must have shape \[..., n, n\], got \(3,\)"),
    (lambda x: L.cholesky(x, symmetrize_input=False), (np.ones(3, np.float32),), TypeError,
     r"Input 0 to cholesky must have rank at least 2, but got shape=\(3,\)"),
    (lambda x: L.lu(x), (np.ones((3, 3), np.int32),), TypeError,
     r"lu does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
     r"subtypes of floating, complexfloating."),
    (lambda a, b: L.triangular_solve(a, b), (np.ones((2, 3, 3), np.float32),
                                             np.ones((3, 3), np.float32)), TypeError,
     r"All inputs to triangular_solve must have the same batch dimensions"),
    (lambda a, b: L.triangular_solve(a, b), (np.ones((2, 3, 3), np.float32),
                                             np.ones((2, 1, 3, 3), np.float32)), TypeError,
     r"All inputs to triangular_solve must have the same number of batch dimensions"),
    (lambda a, b: LA.solve(a, b), (np.ones((3, 3), np.float32), np.ones((4,), np.float32)),
     ValueError, r"The arguments to solve must have shapes"),
    (lambda x: LA.eigh(x, UPLO="X"), (np.eye(2, dtype=np.float32),), ValueError,
     r"UPLO must be one of None, 'L', or 'U', got X"),
])
def test_errors_name_the_function_and_shapes(fn, args, exc, match):
    with pytest.raises(exc, match=match):
        traxla.make_jaxpr(fn)(*args)


def test_integer_input_is_promoted_as_jax_does():
    out = LA.cholesky(np.eye(2, dtype=np.int32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.eye(2))


def test_lapack_targets_registered_once_through_the_adapter():
    from traxla.runtime import xla_adapter
    LA.cholesky(np.eye(2, dtype=np.float32))
    assert "lapack" in xla_adapter._registered_libraries


# -- every scipy.linalg function against SciPy (float64, one compiled program) -------------------

_s = np.random.default_rng(11)
_SA = _s.standard_normal((4, 4))
_SSPD = _SA @ _SA.T + 4 * np.eye(4)
_SB = _s.standard_normal((4, 2))
_SV = _s.standard_normal(4)
_SD, _SE = _s.standard_normal(5), _s.standard_normal(4)
_SC = _s.standard_normal((4, 3))
_SB3 = _s.standard_normal((3, 3))


def _every_scipy(la, sin, polar_kw=None):
    """Each public scipy.linalg function once; ``la`` is scipy.linalg or traxla's."""
    lu_piv = la.lu_factor(_SA)
    return {
        "block_diag": la.block_diag(_SA, _SB, _SV), "cho_factor": la.cho_factor(_SSPD)[0],
        "cho_solve": la.cho_solve(la.cho_factor(_SSPD), _SB), "cholesky": la.cholesky(_SSPD),
        "circulant": la.circulant(_SV), "companion": la.companion(_SV),
        "convolution_matrix": la.convolution_matrix(_SV, 3), "det": la.det(_SA),
        "dft": la.dft(4), "eigh": la.eigh(_SSPD, eigvals_only=True),
        "eigh_tridiagonal": la.eigh_tridiagonal(_SD, _SE, eigvals_only=True),
        "fiedler": la.fiedler(_SV), "fiedler_companion": la.fiedler_companion(_SD),
        "funm": la.funm(_SA / 4, sin), "hadamard": la.hadamard(4), "hankel": la.hankel(_SV, _SD),
        "helmert": la.helmert(4, full=True), "hessenberg": la.hessenberg(_SA),
        "hilbert": la.hilbert(4), "inv": la.inv(_SA), "invhilbert": la.invhilbert(4),
        "invpascal": la.invpascal(4), "leslie": la.leslie(_SV, _SD[:3]),
        "lu": la.lu(_SA)[2], "lu_factor": lu_piv[0], "lu_solve": la.lu_solve(lu_piv, _SB),
        "pascal": la.pascal(4), "polar": la.polar(_SA, **(polar_kw or {}))[1], "qr": la.qr(_SA)[1],
        "qr_multiply": la.qr_multiply(_SA, _SB.T)[0],
        "rsf2csf": la.rsf2csf(*la.schur(_SA))[0].diagonal(), "schur": la.schur(_SSPD)[0],
        "solve": la.solve(_SA, _SB), "solve_sylvester": la.solve_sylvester(_SA, _SB3, _SC),
        "solve_triangular": la.solve_triangular(_SA, _SB, lower=True),
        "sqrtm": la.sqrtm(_SSPD), "svd": la.svd(_SA, compute_uv=False),
        "toeplitz": la.toeplitz(_SV, _SD),
    }


_UP_TO_SIGN = {"qr", "qr_multiply"}
_UP_TO_ORDER = {"rsf2csf"}
_UPPER_ONLY = {"cho_factor"}   # SciPy leaves the other triangle unspecified


def test_every_scipy_linalg_function_matches_scipy():
    with x64():
        got = traxla.jit(lambda: _every_scipy(tsl, tnp.sin, {"method": "svd"}))()
        got = {k: np.asarray(v) for k, v in got.items()}
    want = _every_scipy(sla, np.sin)
    # expm and expm_frechet: test_gradients_match_finite_differences[expm] (against SciPy)
    assert set(got) | {"expm", "expm_frechet"} == set(tsl.__all__)
    for k, w in want.items():
        g, w = got[k], np.asarray(w)
        if k in _UP_TO_SIGN:
            g, w = np.abs(g), np.abs(w)
        if k in _UP_TO_ORDER:   # eigenvalues, in whatever order
            order = lambda z: np.array(sorted(z, key=lambda c: (round(c.real, 6), round(c.imag, 6))))  # noqa: E731
            g, w = order(g), order(w)
        if k in _UPPER_ONLY:
            g, w = np.triu(g), np.triu(w)
        rtol = 2e-6 if k == "pascal" else 1e-6   # float32 in JAX too (lgamma-based)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-8, err_msg=k)


# -- vmap of more primitives equals stacking (one program each way) -----------------------------

def _more(x, spd, b):
    w, v = L.eigh(spd)
    u, s, vh = L.svd(x)
    t, z = L.schur(x)
    h, taus = L.hessenberg(x)
    a_t, d, e, taus_t = L.tridiagonal(spd)
    g, tq = L.geqrf(x)
    q, r, p = L.qr(x, pivoting=True)
    return dict(w=w, v_abs=tlax.abs(v), s=s, u_abs=tlax.abs(u), t_diag=tnp.diagonal(t), h=h,
                taus=taus, d=d, e=e, g=g, tq=tq, hh=L.householder_product(g, tq), q=q, r=r, p=p,
                orm=L.ormqr(g, tq, b), tri=L.tridiagonal_solve(b[:, 0], spd.diagonal(), b[:, 1], b),
                sym=L.symmetric_product(b.T, spd[:2, :2]), eigw=LA.eigvals(x),
                upd=L.cholesky_update(L.cholesky(spd).T, b[:, 0]),
                piv=L.lu_pivots_to_permutation(L.lu(x)[1], 3))


def test_vmap_of_every_primitive_equals_stacking():
    xs = np.stack([_A, _A.T + np.eye(3)]).astype(np.float32)
    spds = np.stack([_SPD, _SPD + 2 * np.eye(3)]).astype(np.float32)
    bs = np.stack([_B, 2 * _B]).astype(np.float32)
    batched = traxla.jit(traxla.vmap(_more))(xs, spds, bs)
    one = traxla.jit(_more)
    rows = [one(xs[i], spds[i], bs[i]) for i in range(2)]
    for k, leaf in batched.items():
        np.testing.assert_allclose(np.asarray(leaf), np.stack([np.asarray(r[k]) for r in rows]),
                                   rtol=1e-5, atol=1e-5, err_msg=k)


_SHARDED = r"""
import numpy as np, traxla
traxla.config.update("num_cpu_devices", 2)
import traxla.numpy as jnp
from traxla.errors import ShardingTypeError
from traxla.sharding import AxisType, NamedSharding, PartitionSpec as P, make_mesh, set_mesh
mesh = make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
a = np.stack([np.eye(4, dtype=np.float32) * 4, np.eye(4, dtype=np.float32) * 9])
with set_mesh(mesh):
    out = traxla.jit(jnp.linalg.cholesky)(traxla.device_put(a, NamedSharding(mesh, P("x"))))
    assert str(traxla.typeof(out)) == "float32[2@x,4,4]", traxla.typeof(out)
    np.testing.assert_allclose(np.asarray(out), np.sqrt(a))
    try:
        traxla.jit(jnp.linalg.cholesky)(traxla.device_put(a, NamedSharding(mesh, P(None, "x"))))
    except ShardingTypeError as e:
        # JAX's own error, from the symmetrization before the factorization
        assert "produces an illegally sharded result" in str(e), e
    else:
        raise AssertionError("no ShardingTypeError")
print("ok")
"""


def test_batch_sharded_factorization_and_sharded_matrix_dims_refused():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _SHARDED], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_lowering_for_gpu_names_the_primitive():
    from traxla.lowering import module
    closed = traxla.make_jaxpr(LA.cholesky)(np.eye(2, dtype=np.float32))
    module.set_default_platform("cuda")
    try:
        with pytest.raises(NotImplementedError, match="'cholesky' to LAPACK on CPU only"):
            module.lower_jaxpr(closed, "f")
    finally:
        module.set_default_platform("cpu")

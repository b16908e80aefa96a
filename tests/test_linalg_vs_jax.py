"""Linear algebra against JAX (issue #13): the printed jaxprs of the ``lax.linalg``
primitives and the main ``numpy.linalg`` wrappers are JAX's, character for character; the
StableHLO of each calls the same LAPACK targets with the same attributes; results agree.

Run ``python tests/test_linalg_vs_jax.py [name-substring ...]`` to print differing jaxprs."""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest

from _corpus import print_differences
import traxla
import traxla.lax as tlax
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsla  # noqa: E402
import traxla.scipy.linalg as tsla  # noqa: E402

_rng = np.random.default_rng(0)
A33 = (_rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
SPD = (A33 @ A33.T).astype(np.float32)
B32 = _rng.standard_normal((3, 2)).astype(np.float32)
V3 = _rng.standard_normal(3).astype(np.float32)
A243 = _rng.standard_normal((2, 4, 3)).astype(np.float32)
A234 = _rng.standard_normal((2, 3, 4)).astype(np.float32)
C33 = (A33 + 1j * A33.T).astype(np.complex64)
P2 = np.array([2, 2], np.int32)
A44 = (_rng.standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.float32)
W43 = _rng.standard_normal((4, 3)).astype(np.float32)


def _cases(L, np_):
    """Programs written once against a ``lax.linalg`` and a ``numpy`` namespace."""
    LA = np_.linalg
    lax_ = tlax if np_ is tnp else jlax
    sla = tsla if np_ is tnp else jsla
    return {
        "sp_cholesky": (lambda a: sla.cholesky(a), (SPD,)),
        "sp_cho_solve": (lambda a, b: sla.cho_solve((a, True), b), (SPD, B32)),
        "sp_lu_factor": (lambda a: sla.lu_factor(a), (A33,)),
        "sp_lu_solve": (lambda a, b: sla.lu_solve(sla.lu_factor(a), b), (A33, B32)),
        "sp_lu_solve_T": (lambda a, b: sla.lu_solve(sla.lu_factor(a), b, trans=1), (A33, B32)),
        "sp_solve_triangular": (lambda a, b: sla.solve_triangular(a, b, lower=True), (A33, B32)),
        "sp_solve_pos_vector": (lambda a, b: sla.solve(a, b, assume_a="pos"), (SPD, V3)),
        "sp_solve_pos": (lambda a, b: sla.solve(a, b, assume_a="pos"), (SPD, B32)),
        "sp_eigh": (lambda a: sla.eigh(a), (SPD,)),
        "sp_qr": (lambda a: sla.qr(a), (A33,)),
        "sp_svd": (lambda a: sla.svd(a), (A33,)),
        "sp_det": (lambda a: sla.det(a), (A33,)),
        "sp_schur": (lambda a: sla.schur(a), (A33,)),
        "sp_hessenberg": (lambda a: sla.hessenberg(a), (A33,)),
        "sp_block_diag": (lambda a, b: sla.block_diag(a, b), (A33, B32)),
        "sp_hilbert": (lambda: sla.hilbert(3), ()),
        "custom_linear_solve_symmetric": (lambda a, b: lax_.custom_linear_solve(
            lambda x: a * x, b, lambda mv, x: x / a, symmetric=True), (V3 + 4, V3)),
        "custom_linear_solve_transpose": (lambda a, b: lax_.custom_linear_solve(
            lambda x: a * x, b, lambda mv, x: x / a, lambda vm, x: x / a), (V3 + 4, V3)),
        "cholesky": (lambda x: L.cholesky(x), (SPD,)),
        "cholesky_nosym": (lambda x: L.cholesky(x, symmetrize_input=False), (SPD,)),
        "cholesky_complex": (lambda x: L.cholesky(x), (C33 @ C33.conj().T,)),
        "triangular_solve_left": (lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True),
                                  (A33, B32)),
        "triangular_solve_right_T": (lambda a, b: L.triangular_solve(
            a, b.T, transpose_a=True, unit_diagonal=True), (A33, B32)),
        "triangular_solve_vec": (lambda a, b: L.triangular_solve(a, b, left_side=True), (A33, V3)),
        "lu": (lambda x: L.lu(x), (A33,)),
        "lu_batched_wide": (lambda x: L.lu(x), (A234,)),
        "lu_pivots_to_permutation": (lambda p: L.lu_pivots_to_permutation(p, 4), (P2,)),
        "qr": (lambda x: L.qr(x), (A33,)),
        "qr_reduced_batched": (lambda x: L.qr(x, full_matrices=False), (A243,)),
        "eigh": (lambda x: L.eigh(x), (SPD,)),
        "eigh_upper_nosym": (lambda x: L.eigh(x, lower=False, symmetrize_input=False), (SPD,)),
        "svd": (lambda x: L.svd(x), (A243,)),
        "svd_no_uv": (lambda x: L.svd(x, compute_uv=False), (A33,)),
        "svd_reduced": (lambda x: L.svd(x, full_matrices=False), (A234,)),
        "eig": (lambda x: L.eig(x), (A33,)),
        "eig_values": (lambda x: L.eig(x, compute_left_eigenvectors=False,
                                       compute_right_eigenvectors=False), (A33,)),
        "schur": (lambda x: L.schur(x), (A33,)),
        "hessenberg": (lambda x: L.hessenberg(x), (A33,)),
        "tridiagonal": (lambda x: L.tridiagonal(x), (SPD,)),
        "tridiagonal_solve": (lambda a, b, c, d: L.tridiagonal_solve(a, b, c, d),
                              (V3, V3 + 4, V3, B32)),
        "householder_product": (lambda a, t: L.householder_product(a, t), (A33, V3)),
        "qr_pivoting": (lambda x: L.qr(x, pivoting=True), (A243,)),
        "ormqr": (lambda a, t, c: L.ormqr(a, t, c, left=True, transpose=True), (A33, V3, B32)),
        "symmetric_product": (lambda a, c: L.symmetric_product(a, c, alpha=2.0, beta=0.5,
                                                               symmetrize_output=True), (B32.T, SPD[:2, :2])),
        "np_cholesky": (lambda x: LA.cholesky(x), (SPD,)),
        "np_cholesky_upper": (lambda x: LA.cholesky(x, upper=True), (SPD,)),
        "np_eigh": (lambda x: LA.eigh(x), (SPD,)),
        "np_eigvalsh": (lambda x: LA.eigvalsh(x), (SPD,)),
        "np_svd": (lambda x: LA.svd(x, full_matrices=False), (A243,)),
        "np_svdvals": (lambda x: LA.svdvals(x), (A243,)),
        "np_qr": (lambda x: LA.qr(x), (A243,)),
        "np_qr_complete": (lambda x: LA.qr(x, mode="complete"), (A33,)),
        "np_eigvals": (lambda x: LA.eigvals(x), (A33,)),
        "np_eig": (lambda x: LA.eig(x), (A33,)),
        "np_norm_fro": (lambda x: LA.norm(x), (A33,)),
        "np_norm_2": (lambda x: LA.norm(x, 2), (A33,)),
        "np_vector_norm": (lambda x: LA.vector_norm(x, axis=-1), (A243,)),
        "np_matrix_transpose": (lambda x: LA.matrix_transpose(x), (A243,)),
        "np_diagonal": (lambda x: LA.diagonal(x), (A243,)),
        "np_trace": (lambda x: LA.trace(x), (A243,)),
        "np_outer": (lambda x, y: LA.outer(x, y), (V3, V3)),
        "np_matmul": (lambda x, y: LA.matmul(x, y), (A33, B32)),
        "np_int_cholesky": (lambda x: LA.cholesky(x), (np.eye(3, dtype=np.int32),)),
        "np_det2": (lambda a: LA.det(a), (A33[:2, :2].copy(),)),
        "np_det3": (lambda a: LA.det(a), (A33,)),
        "np_det4": (lambda a: LA.det(a), (A44,)),
        "np_slogdet": (lambda a: LA.slogdet(a), (A44,)),
        "np_slogdet_2x2": (lambda a: LA.slogdet(a), (A33[:2, :2].copy(),)),
        "np_solve": (lambda a, b: LA.solve(a, b), (A33, B32)),
        "np_inv": (lambda a: LA.inv(a), (A33,)),
        "np_pinv": (lambda a: LA.pinv(a), (W43,)),
        "np_lstsq": (lambda a, b: LA.lstsq(a, b), (W43, W43[:, 0].copy())),
        "np_tensorinv": (lambda a: LA.tensorinv(a, ind=1), (A44.reshape(4, 2, 2),)),
        "np_tensorsolve": (lambda a, b: LA.tensorsolve(a, b), (A44.reshape(2, 2, 4),
                                                               W43[:2, :2].copy())),
        "np_matrix_power": (lambda a: LA.matrix_power(a, 5), (A33,)),
        "np_matrix_rank": (lambda a: LA.matrix_rank(a), (W43,)),
        "np_cond": (lambda a: LA.cond(a), (A33,)),
        "np_multi_dot": (lambda a, b: LA.multi_dot([a, a, b]), (A33, B32)),
        "np_cross": (lambda a, b: LA.cross(a, b), (V3, V3[::-1].copy())),
        "np_vecdot": (lambda a, b: LA.vecdot(a, b), (W43, W43)),
        "np_norm_inf": (lambda a: LA.norm(a, np.inf), (W43,)),
        "np_norm_1": (lambda a: LA.norm(a, 1), (W43,)),
        "np_norm_nuc": (lambda a: LA.norm(a, "nuc"), (W43,)),
        "np_vector_norm_3": (lambda a: LA.vector_norm(a, ord=3), (V3,)),
        "np_vector_norm_0": (lambda a: LA.vector_norm(a, ord=0), (V3,)),
        "np_matrix_norm": (lambda a: LA.matrix_norm(a), (W43,)),
        "np_svd_hermitian": (lambda a: LA.svd(a, hermitian=True), (SPD,)),
        "np_eigvalsh_upper": (lambda a: LA.eigvalsh(a, UPLO="U"), (A33,)),
        "np_qr_raw": (lambda a: LA.qr(a, mode="raw"), (W43,)),
        "np_qr_r": (lambda a: LA.qr(a, mode="r"), (W43,)),
    }


T_CASES = _cases(tlax.linalg, tnp)
J_CASES = _cases(jlax.linalg, jnp)

# Differences we know of, with the reason (run as strict xfails); none at present.
KNOWN: dict = {}


def _texts(name):
    tf, args = T_CASES[name]
    jf, _ = J_CASES[name]
    return str(jax.make_jaxpr(jf)(*args)), str(traxla.make_jaxpr(tf)(*args))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[n]))
                                  if n in KNOWN else n for n in T_CASES])
def test_jaxpr_text_matches_jax(name):
    want, got = _texts(name)
    assert got == want


_TARGET = re.compile(r"custom_call @(\w+)\(.*?mhlo\.backend_config = (\{[^}]*\})"
                     r".*?num_batch_dims = \"(\d+)\".*?operand_layouts = (\[[^\]]*\])")


def _calls(text):
    return _TARGET.findall(text)


# programs whose StableHLO custom calls are compared (target, attributes, batch dims, layouts)
HLO_CASES = ["cholesky", "triangular_solve_left", "triangular_solve_right_T", "lu_batched_wide",
             "qr_reduced_batched", "eigh", "svd", "svd_no_uv", "eig", "schur", "hessenberg",
             "tridiagonal", "tridiagonal_solve", "householder_product", "cholesky_complex",
             "qr_pivoting", "ormqr"]


@pytest.mark.parametrize("name", HLO_CASES)
def test_stablehlo_calls_the_same_lapack_targets(name):
    tf, args = T_CASES[name]
    jf, _ = J_CASES[name]
    want = _calls(jax.jit(jf).lower(*args).as_text())
    got = _calls(traxla.jit(tf).lower(*args).as_text())
    assert want and got == want


@pytest.mark.parametrize("name", ["lu_batched_wide", "qr_reduced_batched", "svd",
                                  "tridiagonal_solve", "qr_pivoting"])
def test_results_match_jax(name):
    tf, args = T_CASES[name]
    jf, _ = J_CASES[name]
    got = jax.tree_util.tree_leaves(traxla.jit(tf)(*args))
    want = jax.tree_util.tree_leaves(jf(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if name.startswith(("svd", "np_svd", "eigh", "np_qr", "qr")) and g.dtype.kind != "i":
            g, w = np.abs(g), np.abs(w)
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4, err_msg=name)


if __name__ == "__main__":
    print_differences({n: n for n in T_CASES}, KNOWN, _texts, sys.argv[1:])


def test_batched_1d_solves_warn_as_jax():
    """cho_solve, lu_solve and solve_triangular of a batch of vectors: JAX's FutureWarning."""
    import warnings
    a = np.eye(3, dtype=np.float32)[None].repeat(2, 0) * 2
    b = np.ones((2, 3), np.float32)

    def messages(sla):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sla.cho_solve((a, True), b)
            sla.lu_solve(sla.lu_factor(a), b)
            sla.solve_triangular(a, b)
        return [str(w.message) for w in caught if w.category is FutureWarning]
    got, want = messages(tsla), messages(jsla)
    assert len(want) == 3 and got == want

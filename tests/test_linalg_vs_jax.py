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

_rng = np.random.default_rng(0)
A33 = (_rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
SPD = (A33 @ A33.T).astype(np.float32)
B32 = _rng.standard_normal((3, 2)).astype(np.float32)
V3 = _rng.standard_normal(3).astype(np.float32)
A243 = _rng.standard_normal((2, 4, 3)).astype(np.float32)
A234 = _rng.standard_normal((2, 3, 4)).astype(np.float32)
C33 = (A33 + 1j * A33.T).astype(np.complex64)
P2 = np.array([2, 2], np.int32)


def _cases(L, np_):
    """Programs written once against a ``lax.linalg`` and a ``numpy`` namespace."""
    LA = np_.linalg
    return {
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
    }


T_CASES = _cases(tlax.linalg, tnp)
J_CASES = _cases(jlax.linalg, jnp)

# Differences we know of, with the reason (run as strict xfails).
KNOWN = {}


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
             "tridiagonal", "tridiagonal_solve", "householder_product", "cholesky_complex"]


@pytest.mark.parametrize("name", HLO_CASES)
def test_stablehlo_calls_the_same_lapack_targets(name):
    tf, args = T_CASES[name]
    jf, _ = J_CASES[name]
    want = _calls(jax.jit(jf).lower(*args).as_text())
    got = _calls(traxla.jit(tf).lower(*args).as_text())
    assert want and got == want


@pytest.mark.parametrize("name", ["lu_batched_wide", "qr_reduced_batched", "svd",
                                  "tridiagonal_solve"])
def test_results_match_jax(name):
    tf, args = T_CASES[name]
    jf, _ = J_CASES[name]
    got = jax.tree_util.tree_leaves(traxla.jit(tf)(*args))
    want = jax.tree_util.tree_leaves(jf(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if name.startswith(("svd", "np_svd", "eigh", "np_qr", "qr")):  # vectors up to sign
            g, w = np.abs(g), np.abs(w)
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4, err_msg=name)


if __name__ == "__main__":
    print_differences({n: n for n in T_CASES}, KNOWN, _texts, sys.argv[1:])

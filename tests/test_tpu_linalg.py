"""Linear algebra, callbacks and the other TPU-specific lowerings, run on a TPU: values
against NumPy (float64), with tolerances for float32 on the MXU. Skipped without a TPU.

Run on the TPU machine:  PYTHONPATH=. python -m pytest -q tests/test_tpu_linalg.py"""
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
import traxla.scipy.linalg as tsl
from traxla.lax import linalg as tla

pytestmark = [pytest.mark.tpu,
              pytest.mark.skipif(traxla.default_backend() != "tpu", reason="needs a TPU")]

_rng = np.random.default_rng(0)


def _matrix(*shape, dtype=np.float32):
    a = _rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * _rng.standard_normal(shape)
    return a.astype(dtype)


def _spd(n, dtype=np.float32):
    a = _matrix(n, n, dtype=dtype)
    return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


def _close(got, want, tol=2e-3):
    got, want = np.asarray(got, np.complex128), np.asarray(want, np.complex128)
    scale = max(1.0, float(np.abs(want).max()))
    assert np.abs(got - want).max() <= tol * scale, np.abs(got - want).max()


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_tpu_cholesky(dtype):
    a = _spd(6, dtype)
    l = np.asarray(traxla.jit(tnp.linalg.cholesky)(a))
    _close(l, np.linalg.cholesky(a.astype(np.complex128)))


@pytest.mark.parametrize("left_side,lower,transpose_a", [(True, True, False), (False, False, True),
                                                         (True, False, True)])
def test_tpu_triangular_solve(left_side, lower, transpose_a):
    a = np.tril(_matrix(5, 5)) + 5 * np.eye(5, dtype=np.float32)
    a = a if lower else a.T
    b = _matrix(5, 3) if left_side else _matrix(3, 5)
    x = np.asarray(traxla.jit(lambda a, b: tla.triangular_solve(
        a, b, left_side=left_side, lower=lower, transpose_a=transpose_a))(a, b))
    op = a.T if transpose_a else a
    _close(op @ x if left_side else x @ op, b)


def test_tpu_lu():
    a = _matrix(6, 6)
    lu, pivots, perm = map(np.asarray, traxla.jit(tla.lu)(a))
    l, u = np.tril(lu, -1) + np.eye(6), np.triu(lu)
    _close(l @ u, a[perm])


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_tpu_qr(mode):
    a = _matrix(7, 4)
    q, r = map(np.asarray, traxla.jit(lambda a: tnp.linalg.qr(a, mode=mode))(a))
    _close(q @ r, a)
    _close(q.T @ q, np.eye(q.shape[1]))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_tpu_eigh(dtype, uplo):
    a = _matrix(8, 8, dtype=dtype)
    h = a + a.conj().T
    w, v = traxla.jit(lambda x: tnp.linalg.eigh(x, UPLO=uplo))(h)
    w_ref = np.linalg.eigvalsh(h.astype(np.complex128))
    _close(w, w_ref)
    v = np.asarray(v)
    _close(h @ v, v * np.asarray(w))


def test_tpu_eigh_subset_and_batched():
    a = _matrix(3, 6, 6)
    h = a + np.swapaxes(a, -1, -2)
    v, w = traxla.jit(lambda x: tla.eigh(x, subset_by_index=(1, 4)))(h)
    assert v.shape == (3, 6, 3)
    _close(w, np.linalg.eigvalsh(h)[:, 1:4])


def test_tpu_eigh_beyond_the_jacobi_size():
    # n > 256: JAX's QDWH spectral divide-and-conquer around the Jacobi kernel
    a = _matrix(300, 300)
    h = a + a.T
    w, v = traxla.jit(tnp.linalg.eigh)(h)
    w, v = np.asarray(w), np.asarray(v)
    _close(w, np.linalg.eigvalsh(h))
    _close(h @ v, v * w)
    _close(v.T @ v, np.eye(300))


@pytest.mark.parametrize("shape,full_matrices", [((8, 5), False), ((8, 5), True),
                                                 ((5, 8), True), ((6, 6), False),
                                                 ((30, 4), False)])
def test_tpu_svd(shape, full_matrices):
    a = _matrix(*shape)
    u, s, vh = map(np.asarray, traxla.jit(
        lambda a: tnp.linalg.svd(a, full_matrices=full_matrices))(a))
    _close(s, np.linalg.svd(a, compute_uv=False))
    k = min(shape)
    _close((u[:, :k] * s) @ vh[:k], a)
    _close(u.T @ u, np.eye(u.shape[1]))
    s_only = traxla.jit(lambda a: tnp.linalg.svd(a, compute_uv=False))(a)
    _close(s_only, s)


def test_tpu_solve_inv_det_slogdet():
    a = _matrix(6, 6) + 6 * np.eye(6, dtype=np.float32)
    b = _matrix(6, 2)
    _close(traxla.jit(tnp.linalg.solve)(a, b), np.linalg.solve(a, b))
    _close(traxla.jit(tnp.linalg.inv)(a), np.linalg.inv(a))
    _close(traxla.jit(tnp.linalg.det)(a), np.linalg.det(a), tol=5e-3)
    sign, logdet = traxla.jit(tnp.linalg.slogdet)(a)
    want_sign, want_logdet = np.linalg.slogdet(a)
    _close(sign, want_sign)
    _close(logdet, want_logdet)


def test_tpu_lstsq_pinv_matrix_rank():
    a = _matrix(8, 4)
    b = _matrix(8, 2)
    _close(traxla.jit(lambda a, b: tnp.linalg.lstsq(a, b)[0])(a, b),
           np.linalg.lstsq(a, b, rcond=None)[0])
    _close(traxla.jit(tnp.linalg.pinv)(a), np.linalg.pinv(a))
    assert int(traxla.jit(tnp.linalg.matrix_rank)(a @ np.diag([1, 1, 1, 0]).astype(np.float32))) == 3


def test_tpu_expm_and_scipy_linalg():
    a = 0.3 * _matrix(5, 5)
    w, v = np.linalg.eig(a.astype(np.float64))
    _close(traxla.jit(tsl.expm)(a), (v * np.exp(w)) @ np.linalg.inv(v))
    m = _matrix(5, 5) + 5 * np.eye(5, dtype=np.float32)
    b = _matrix(5, 2)
    _close(traxla.jit(lambda m, b: tsl.lu_solve(tsl.lu_factor(m), b))(m, b), np.linalg.solve(m, b))
    spd = _spd(5)
    _close(traxla.jit(lambda s, b: tsl.cho_solve(tsl.cho_factor(s), b))(spd, b),
           np.linalg.solve(spd, b))
    tri = np.triu(m)
    _close(traxla.jit(tsl.solve_triangular)(tri, b), np.linalg.solve(tri, b))


def test_tpu_ormqr_and_tridiagonal_solve():
    a = _matrix(6, 4)
    h, taus = tla.geqrf(a)
    q = np.asarray(tla.householder_product(h, taus))
    c = _matrix(6, 6)
    full_q = np.asarray(traxla.jit(lambda h, t, c: tla.ormqr(h, t, c))(h, taus, np.eye(6, dtype=np.float32)))
    _close(full_q[:, :4], q)
    _close(traxla.jit(lambda h, t, c: tla.ormqr(h, t, c, transpose=True))(h, taus, c), full_q.T @ c)
    dl = np.r_[0, _matrix(4)].astype(np.float32)
    d = (4 + _rng.random(5)).astype(np.float32)
    du = np.r_[_matrix(4), 0].astype(np.float32)
    rhs = _matrix(5, 2)
    x = traxla.jit(tla.tridiagonal_solve)(dl, d, du, rhs)
    m = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    _close(m @ np.asarray(x), rhs)


def test_tpu_logistic_mixed_dot_and_approx_top_k():
    x = np.linspace(-20, 20, 33, dtype=np.float32)
    _close(traxla.jit(traxla.nn.sigmoid)(x), 1 / (1 + np.exp(-x.astype(np.float64))), tol=1e-5)
    a, b = _matrix(4, 3), np.arange(6, dtype=np.int32).reshape(3, 2)
    with traxla.default_matmul_precision("highest"):
        _close(traxla.jit(lambda a, b: a @ b)(a, b), a @ b, tol=1e-5)
    v = _matrix(2, 64)
    values, idx = traxla.jit(lambda v: traxla.lax.approx_max_k(v, 4, recall_target=1.0))(v)
    _close(values, -np.sort(-v, axis=1)[:, :4])


def test_tpu_callbacks_run_in_order(capsys):
    seen = []

    def f(x):
        traxla.debug.print("first {}", x[0], ordered=True)
        y = traxla.pure_callback(lambda v: v * 2, traxla.ShapeDtypeStruct((3,), np.float32), x)
        traxla.experimental.io_callback(lambda v: seen.append(np.asarray(v)), None, y,
                                        ordered=True)
        traxla.debug.print("no operands", ordered=True)
        return y + 1

    out = traxla.jit(f)(np.arange(3, dtype=np.float32))
    traxla.effects_barrier()
    np.testing.assert_array_equal(np.asarray(out), [1, 3, 5])
    np.testing.assert_array_equal(seen[0], [0, 2, 4])
    assert capsys.readouterr().out.splitlines() == ["first 0.0", "no operands"]


def test_tpu_callback_error_is_a_python_exception():
    def bad(v):
        raise ValueError("boom")

    with pytest.raises(Exception, match="boom"):
        traxla.jit(lambda x: traxla.pure_callback(
            bad, traxla.ShapeDtypeStruct((3,), np.float32), x))(np.ones(3, np.float32))

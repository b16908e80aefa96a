"""The linear algebra JAX 0.10.2 lowers on TPU through Python implementations
(``mlir.lower_fun``), written as JAX writes them (``jax/_src/tpu/linalg/{eigh,svd}.py`` and
``jax/_src/lax/linalg.py``, with ``jax.numpy``) so that the StableHLO has the same op
structure. Registered as the TPU decompositions of ``lowering/rules/linalg_tpu.py``:

* ``eigh`` (default algorithm, QDWH): JAX's ``_eigh_qdwh_impl``. Matrices up to the
  termination size (256) go to the ``Eigh`` (Jacobi) custom call, with the triangle that
  ``lower`` names reflected into the other and, for ``subset_by_index``, sorted and sliced;
  larger ones to JAX's QDWH spectral divide-and-conquer (``_tpu_eigh.py``);
* ``svd``: QDWH polar decomposition, then ``eigh`` of the Hermitian factor (JAX's
  ``jax._src.tpu.linalg.svd``), with the QR pre-reduction of tall matrices, the rank
  deficiency correction and NaNs for non-finite input;
* ``ormqr``: the Householder reflections applied in a ``fori_loop``;
* ``tridiagonal_solve``: Thomas' algorithm in two scans.

The functions are ordinary traxla code: ``svd_tpu``, ``eigh_tpu`` etc. run on any backend
(the tests run them on CPU against NumPy, where ``eigh`` is LAPACK's in place of ``Eigh``).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from traxla import lax
from traxla.api import jit
from traxla.api.config_contexts import default_matmul_precision
from traxla.batching import vmap
from traxla.ir import dtypes
from traxla.ir.rules import linalg as L
from traxla.lax import linalg as lax_linalg
from traxla.lax._qdwh import qdwh as _qdwh
from traxla.lax.control_flow import fori_loop, scan, while_loop
from traxla.lowering.rules import linalg as _lowering
from traxla.numpy._tpu_eigh import eigh_divide_and_conquer

TERMINATION_SIZE = 256  # JAX's: blocks up to this size go to the Jacobi kernel


def _jnp():
    import traxla.numpy as jnp  # the package, bound once its modules are loaded
    return jnp


def _T(x):
    return lax.transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _tri(dtype, shape, offset):
    """JAX's ``lax_internal._tri``: ``row + offset >= col``."""
    rows = lax.add(lax.broadcasted_iota(np.int32, shape, 0), lax._const(np.int32(0), offset))
    return lax._convert_element_type(lax.ge(rows, lax.broadcasted_iota(np.int32, shape, 1)),
                                     np.dtype(dtype), False)


# -- eigh ----------------------------------------------------------------------------------

def _eigh(H, *, sort_eigenvalues, subset_by_index, termination_size):
    """JAX's TPU ``eigh`` of one Hermitian matrix: the Jacobi kernel up to
    ``termination_size``, QDWH spectral divide-and-conquer above."""
    M, N = H.shape
    if M != N:
        raise TypeError(f"Input H of shape {H.shape} must be square.")
    compute_slice = False
    if subset_by_index is not None:
        compute_slice = subset_by_index != (0, None)
        if len(subset_by_index) != 2:
            raise ValueError('subset_by_index must be a tuple of size 2.')
        if subset_by_index[0] >= subset_by_index[1]:
            raise ValueError('Got empty index range in subset_by_index.')
        if subset_by_index[0] < 0:
            raise ValueError('Indices in subset_by_index must be non-negative.')
        if subset_by_index[1] > N:
            raise ValueError('Index in subset_by_index[1] exceeds matrix size.')
    if N > termination_size:
        return eigh_divide_and_conquer(
            H, termination_size=termination_size, sort_eigenvalues=sort_eigenvalues,
            subset_by_index=subset_by_index, compute_slice=compute_slice)
    eig_vecs, eig_vals = lax_linalg.eigh(
        H, lower=True, sort_eigenvalues=(sort_eigenvalues or compute_slice),
        subset_by_index=None, symmetrize_input=False,
        implementation=lax_linalg.EighImplementation.JACOBI)
    if subset_by_index is not None and compute_slice:
        eig_vals = eig_vals[subset_by_index[0]:subset_by_index[1]]
        eig_vecs = eig_vecs[:, subset_by_index[0]:subset_by_index[1]]
    return eig_vals, eig_vecs


def eigh_tpu(x, *, lower, sort_eigenvalues, subset_by_index,
             termination_size=TERMINATION_SIZE):
    """JAX's ``_eigh_qdwh_impl``: ``[eigenvectors, eigenvalues]``."""
    *_, m, n = x.shape
    if m <= termination_size and (subset_by_index is None or subset_by_index == (0, n)):
        return list(lax_linalg.eigh(x, lower=lower, sort_eigenvalues=sort_eigenvalues,
                                    symmetrize_input=False,
                                    implementation=lax_linalg.EighImplementation.JACOBI))

    def eigh_qdwh(x):
        if len(x.shape) > 2:
            return lax.map(eigh_qdwh, x)
        # only the triangle ``lower`` names is read: reflect it into the other
        if lower:
            mask = _tri(bool, (n, n), 0)
        else:
            mask = lax.bitwise_not(_tri(bool, (n, n), -1))
        if dtypes.is_complex(x.dtype):
            re = lax.select(mask, lax.real(x), _T(lax.real(x)))
            if lower:
                im_mask = _tri(bool, (n, n), -1)
            else:
                im_mask = lax.bitwise_not(_tri(bool, (n, n), 0))
            im = lax.imag(x)
            im = lax.select(im_mask, im, lax.full_like(im, 0))
            im = lax.select(mask, im, lax.neg(_T(im)))
            x = lax.complex(re, im)
        else:
            x = lax.select(mask, x, _T(x))
        return _eigh(x, sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index,
                     termination_size=termination_size)

    eig_vals, eig_vecs = eigh_qdwh(x)
    return [eig_vecs, eig_vals]


# -- svd -----------------------------------------------------------------------------------

@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _svd_tall_and_square_input(a, hermitian, compute_uv, max_iterations, subset_by_index=None):
    jnp = _jnp()
    u_p, h, _, _ = _qdwh(a, is_hermitian=hermitian, max_iterations=max_iterations)
    v, s = lax_linalg.eigh(h, subset_by_index=subset_by_index, sort_eigenvalues=False)
    s = jnp.maximum(s, 0.0)
    sort_idx = jnp.argsort(s, descending=True)
    s_out = s[sort_idx]
    if not compute_uv:
        return s_out
    v_out = v[:, sort_idx]
    u_out = u_p @ v_out

    def correct_rank_deficiency(u_out):
        u_out, r = lax_linalg.qr(u_out, full_matrices=False)
        return u_out @ jnp.diag(jnp.where(jnp.diag(r) >= 0, 1, -1))

    eps = float(dtypes.finfo(a.dtype).eps)
    do_correction = s_out[-1] <= a.shape[1] * eps * s_out[0]
    u_out, _ = while_loop(lambda args: args[1],
                          lambda args: (correct_rank_deficiency(args[0]), False),
                          (u_out, do_correction))
    return (u_out, s_out, v_out)


@functools.partial(jit, static_argnums=(1, 2, 3, 4, 5))
def svd(a, full_matrices, compute_uv=True, hermitian=False, max_iterations=10,
        subset_by_index=None):
    """JAX's TPU SVD of one ``m x n`` matrix: ``(u, s, vh)``, or ``s``."""
    jnp = _jnp()
    if subset_by_index is not None:
        if len(subset_by_index) != 2:
            raise ValueError('subset_by_index must be a tuple of size 2.')
        subset_by_index = (operator.index(subset_by_index[0]),
                           operator.index(subset_by_index[1]))
        if subset_by_index[0] >= subset_by_index[1]:
            raise ValueError('Got empty index range in subset_by_index.')
        if subset_by_index[0] < 0:
            raise ValueError('Indices in subset_by_index must be non-negative.')
        m, n = a.shape
        rank = n if n < m else m
        if subset_by_index[1] > rank:
            raise ValueError('Index in subset_by_index[1] exceeds matrix size.')
        if full_matrices and subset_by_index != (0, rank):
            raise ValueError('full_matrices and subset_by_index cannot be both be set.')
        subset_by_index = (rank - subset_by_index[1], rank - subset_by_index[0])

    m, n = a.shape
    is_flip = False
    if m < n:
        a = a.T.conj()
        m, n = a.shape
        is_flip = True

    if full_matrices and m > n:
        q_full, a_full = lax_linalg.qr(a, pivoting=False, full_matrices=True)
        q = q_full[:, :n]
        u_out_null = q_full[:, n:]
        a = a_full[:n, :]
    elif m > 1.15 * n:
        q, a = lax_linalg.qr(a, pivoting=False, full_matrices=False)
        u_out_null = None
    else:
        q = None
        u_out_null = None

    if not compute_uv:
        with default_matmul_precision('float32'):
            return _svd_tall_and_square_input(a, hermitian, compute_uv, max_iterations,
                                              subset_by_index)

    with default_matmul_precision('float32'):
        u_out, s_out, v_out = _svd_tall_and_square_input(a, hermitian, compute_uv,
                                                         max_iterations, subset_by_index)
        if q is not None:
            u_out = q @ u_out

    if u_out_null is not None:
        u_out = jnp.hstack((u_out, u_out_null))

    is_finite = jnp.all(jnp.isfinite(a))
    _, u_out, s_out, v_out = while_loop(
        lambda args: jnp.logical_not(args[0]),
        lambda args: (jnp.array(True), jnp.full_like(u_out, np.nan),
                      jnp.full_like(s_out, np.nan), jnp.full_like(v_out, np.nan)),
        (is_finite, u_out, s_out, v_out))

    if is_flip:
        return (v_out, s_out, u_out.T.conj())
    return (u_out, s_out, v_out.T.conj())


def svd_tpu(a, *, full_matrices, compute_uv, subset_by_index):
    """JAX's ``_svd_tpu``: ``[s, u, vh]`` (or ``[s]``) over any batch dims."""
    fn = functools.partial(svd, full_matrices=full_matrices, compute_uv=compute_uv,
                           subset_by_index=subset_by_index)
    for _ in range(len(a.shape) - 2):
        fn = vmap(fn)
    if compute_uv:
        u, s, vh = fn(a)
        return [s, u, vh]
    return [fn(a)]


# -- ormqr, tridiagonal_solve ----------------------------------------------------------------

def ormqr_tpu(a, taus, c, *, left, transpose):
    """JAX's ``_ormqr_lowering``: ``c`` times the Householder reflectors of ``(a, taus)``."""
    with default_matmul_precision("highest"):
        return _ormqr(a, taus, c, left=left, transpose=transpose)


def _ormqr(a, taus, c, *, left, transpose):
    *batch_dims, m, n = a.shape
    k = taus.shape[-1]
    is_complex = dtypes.is_complex(a.dtype)
    eye = lax_linalg._eye(a.dtype, (m, k))
    if batch_dims:
        eye = lax.broadcast(eye, tuple(batch_dims))
    V = lax.add(lax_linalg._tril(a[..., :, :k], -1), eye)
    effective_taus = lax.conj(taus) if (transpose and is_complex) else taus
    use_reverse = (left != transpose)
    batch_contract = tuple(range(len(batch_dims)))

    def body(i, c):
        idx = (k - 1 - i) if use_reverse else i
        tau = effective_taus[..., idx]
        v = V[..., :, idx]
        tau_bc = lax.expand_dims(tau, (-1, -2))
        if left:
            v_h = lax.conj(v) if is_complex else v
            vHc = lax.dot_general(v_h, c, (((v_h.ndim - 1,), (c.ndim - 2,)),
                                           (batch_contract, batch_contract)))
            update = lax.expand_dims(v, (-1,)) * lax.expand_dims(vHc, (-2,))
        else:
            cv = lax.dot_general(c, v, (((c.ndim - 1,), (v.ndim - 1,)),
                                        (batch_contract, batch_contract)))
            v_h = lax.conj(v) if is_complex else v
            update = lax.expand_dims(cv, (-1,)) * lax.expand_dims(v_h, (-2,))
        return c - tau_bc * update

    return fori_loop(0, k, body, c)


def _tridiagonal_solve_impl(dl, d, du, b):
    def fwd(carry, args):
        cp, dp = carry
        a, b, c, d = args
        cp_next = c / (b - a * cp)
        dp_next = (d - a * dp) / (b - a * cp)
        return (cp_next, dp_next), (cp, dp)

    (_, final), (cp, dp) = scan(fwd, (du[0] / d[0], b[0] / d[0]),
                                (dl[1:], d[1:], du[1:], b[1:, :]), unroll=32)

    def bwd(xn, args):
        cp, dp = args
        x = dp - cp * xn
        return x, xn

    end, ans = scan(bwd, final, (cp, dp), unroll=32, reverse=True)
    return lax.concatenate((end[None], ans), 0)


def tridiagonal_solve_tpu(dl, d, du, b, *, perturb_singular):
    """JAX's ``_tridiagonal_solve_jax``: Thomas' algorithm, no pivoting."""
    if perturb_singular:
        raise NotImplementedError("perturb_singular=True is not supported on this platform.")
    impl = _tridiagonal_solve_impl
    for _ in range(dl.ndim - 1):
        impl = vmap(impl)
    return impl(dl, d, du, b)


_trace = lax_linalg._trace_closed
_lowering.add_decomposition((L.eigh_p, "tpu"), eigh_tpu, _trace)
_lowering.add_decomposition((L.svd_p, "tpu"), svd_tpu, _trace)
_lowering.add_decomposition((L.ormqr_p, "tpu"), ormqr_tpu, _trace)
_lowering.add_decomposition((L.tridiagonal_solve_p, "tpu"), tridiagonal_solve_tpu, _trace)

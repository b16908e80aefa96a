"""JAX's TPU ``eigh`` beyond the Jacobi kernel's size: the QDWH-based spectral
divide-and-conquer of Nakatsukasa and Higham (SIAM J. Sci. Comput. 35(3), 2013), as
``jax/_src/tpu/linalg/eigh.py`` writes it. Each step splits a Hermitian block at the median
of its diagonal: the polar factor of the shifted block (QDWH) gives the projector onto the
eigenspace below the split, whose subspace (a few QR iterations) splits the block into two
smaller ones. Blocks live, left-aligned, in one workspace; a stack of (offset, size)
subproblems replaces recursion, and each size is computed in a padded "bucket" so that the
program has a few static shapes. Blocks up to ``termination_size`` go to the ``Eigh``
(Jacobi) kernel, which keeps the order of a block-diagonal matrix's eigenvalues: that lets
the padded blocks be decomposed whole (with sorting LAPACK in its place, only
``termination_size=1`` is right: the CPU tests use that)."""
from __future__ import annotations

import functools

import numpy as np

from traxla import lax
from traxla.api import jit
from traxla.api.config_contexts import default_matmul_precision
from traxla.ir import dtypes
from traxla.lax import linalg as lax_linalg
from traxla.lax._qdwh import qdwh as _qdwh
from traxla.tree_util import register_pytree_node
from traxla.tree_util import tree_map


def _jnp():
    import traxla.numpy as jnp  # the package, bound once its modules are loaded
    return jnp


def _round_up(i, n):
    return ((i + n - 1) // n) * n


def _mask(x, dims, alternative=0):
    """``x`` inside the (dynamic) dims, ``alternative`` outside."""
    jnp = _jnp()
    mask = None
    for i, d in enumerate(dims):
        if d is not None:
            mask_dim_i = lax.broadcasted_iota(np.int32, x.shape, i) < d
            mask = mask_dim_i if mask is None else (mask & mask_dim_i)
    return x if mask is None else jnp.where(mask, x, alternative)


def _slice(operand, start_indices, dynamic_slice_sizes, static_slice_sizes, fill_value=0):
    """A dynamic slice of static size, ``fill_value`` past the (dynamic) true size."""
    jnp = _jnp()
    padded = lax.pad(operand, jnp.array(0, operand.dtype),
                     [(0, d, 0) for d in static_slice_sizes])
    out = lax.dynamic_slice(padded, tuple(jnp.array(i, np.int32) for i in start_indices),
                            static_slice_sizes)
    return _mask(out, dynamic_slice_sizes, fill_value)


def _update_slice(operand, update, start_indices, update_dims):
    """``dynamic_update_slice`` writing only the (dynamic) true part of a padded update."""
    jnp = _jnp()
    operand_shape = operand.shape
    operand = lax.pad(operand, jnp.array(0, operand.dtype), [(0, d, 0) for d in update.shape])
    start_indices = tuple(jnp.array(i, np.int32) for i in start_indices)
    t = lax.dynamic_slice(operand, start_indices, update.shape)
    t = _mask(update, update_dims, t)
    operand = lax.dynamic_update_slice(operand, t, start_indices)
    return lax.slice(operand, [0] * operand.ndim, operand_shape)


def _projector_subspace(P, H, n, rank, maxiter=2, swap=False):
    """Isometries onto the range of the rank-``rank`` projector ``P`` and its complement,
    by subspace iteration from ``P``'s largest columns."""
    jnp = _jnp()
    N, _ = P.shape
    negative_column_norms = -jnp.linalg.norm(P, axis=1)
    negative_column_norms = _mask(negative_column_norms, (n,), np.nan)  # NaNs sort last
    sort_idxs = jnp.argsort(negative_column_norms)
    X = P[:, sort_idxs]
    X = _mask(X, (n, rank))
    H_norm = jnp.linalg.norm(H)
    thresh = 10.0 * float(dtypes.finfo(X.dtype).eps) * H_norm

    def body_f_after_matmul(X):
        Q, _ = jnp.linalg.qr(X, mode="complete")
        V1 = _mask(Q, (n, rank))
        V2 = _slice(Q, (0, rank), (n, n - rank), (N, N))
        error_matrix = jnp.dot(V2.conj().T, H)
        error_matrix = jnp.dot(error_matrix, V1)
        return V1, V2, jnp.linalg.norm(error_matrix)

    def cond_f(args):
        _, _, j, error = args
        return jnp.logical_and(j < maxiter, error > thresh)[0]

    def body_f(args):
        V1, _, j, _ = args
        V1, V2, error = body_f_after_matmul(jnp.dot(P, V1))
        return V1, V2, j + 1, error

    V1, V2, error = body_f_after_matmul(X)
    one = jnp.ones(1, dtype=np.int32)
    V1, V2, _, error = lax.while_loop(cond_f, body_f, (V1, V2, one, error))
    return (V2, V1) if swap else (V1, V2)


def split_spectrum(H, n, split_point, V0=None):
    """``H`` split at ``split_point`` into the blocks below and above it, with the
    isometries onto them (composed with ``V0``) and the size of the lower one."""
    jnp = _jnp()
    N, _ = H.shape
    H_shift = H - (split_point * jnp.eye(N, dtype=split_point.dtype)).astype(H.dtype)
    U, _, _, _ = _qdwh(H_shift, is_hermitian=True, dynamic_shape=(n, n))
    I = _mask(jnp.eye(N, dtype=H.dtype), (n, n))  # noqa: E741
    P_minus = -0.5 * (U - I)
    rank_minus = jnp.round(jnp.trace(jnp.real(P_minus))).astype(np.int32)
    P_plus = 0.5 * (U + I)
    rank_plus = n - rank_minus
    # subspace iteration on the projector of smaller rank
    swap = rank_plus < rank_minus
    V_minus, V_plus = lax.cond(
        swap,
        lambda: _projector_subspace(P_plus, H, n, rank_plus, swap=True),
        lambda: _projector_subspace(P_minus, H, n, rank_minus, swap=False))
    H_minus = (V_minus.conj().T @ H) @ V_minus
    H_plus = (V_plus.conj().T @ H) @ V_plus
    if V0 is not None:
        V_minus = jnp.dot(V0, V_minus)
        V_plus = jnp.dot(V0, V_plus)
    return H_minus, V_minus, H_plus, V_plus, rank_minus


class Stack:
    """A bounded functional stack of pytrees (JAX's ``jax._src.tpu.linalg.stack``)."""

    def __init__(self, size, data):
        self._size = size
        self._data = data

    @staticmethod
    def create(capacity, prototype):
        jnp = _jnp()
        return Stack(jnp.array(0, "int32"),
                     tree_map(lambda x: jnp.zeros((capacity,) + tuple(x.shape), x.dtype),
                              prototype))

    def empty(self):
        return self._size == 0

    def push(self, elem):
        return Stack(self._size + 1, tree_map(
            lambda x, y: lax.dynamic_update_index_in_dim(x, y, self._size, 0),
            self._data, elem))

    def pop(self):
        elem = tree_map(lambda x: lax.dynamic_index_in_dim(x, self._size - 1, 0,
                                                           keepdims=False), self._data)
        return elem, Stack(self._size - 1, self._data)


register_pytree_node(Stack, lambda s: ((s._size, s._data), None),
                     lambda _, leaves: Stack(*leaves))


@functools.partial(jit, static_argnames=("termination_size", "subset_by_index"))
def _eigh_work(H, n, termination_size, subset_by_index):
    jnp = _jnp()
    N, _ = H.shape
    n = jnp.asarray(n, np.int32)
    agenda = Stack.create(N + 1, (jnp.array(0, np.int32), jnp.array(0, np.int32)))
    agenda = agenda.push((jnp.array(0, np.int32), n))
    eigenvectors = jnp.eye(N, dtype=H.dtype)
    H0_norm = jnp.linalg.norm(_mask(H, (n, n)))
    blocks = H

    def base_case(B, offset, b, agenda, blocks, eigenvectors):
        H = _slice(blocks, (offset, 0), (b, b), (B, B))
        V = _slice(eigenvectors, (0, offset), (n, b), (N, B))
        H = _mask(H, (b, b))
        eig_vecs, eig_vals = lax_linalg.eigh(H, sort_eigenvalues=False)
        eig_vecs = _mask(eig_vecs, (b, b))
        eig_vals = _mask(eig_vals, (b,))
        eig_vecs = jnp.dot(V, eig_vecs)
        eig_vals = eig_vals.astype(eig_vecs.dtype)
        blocks = _update_slice(blocks, eig_vals[:, None], (offset, 0), (b, 1))
        eigenvectors = _update_slice(eigenvectors, eig_vecs, (0, offset), (n, b))
        return agenda, blocks, eigenvectors

    def recursive_case(B, offset, b, agenda, blocks, eigenvectors):
        H = _slice(blocks, (offset, 0), (b, b), (B, B))

        def nearly_diagonal_case(agenda, blocks, eigenvectors):
            blocks = _update_slice(blocks, jnp.diag(H)[:, None], (offset, 0), (b, 1))
            return agenda, blocks, eigenvectors

        def should_update_range(start, end):
            if subset_by_index is None:
                return True
            return (start < subset_by_index[1]) & (end > subset_by_index[0])

        def default_case(agenda, blocks, eigenvectors):
            V = _slice(eigenvectors, (0, offset), (n, b), (N, B))
            split_point = jnp.nanmedian(_mask(jnp.diag(jnp.real(H)), (b,), np.nan))
            H_minus, V_minus, H_plus, V_plus, rank = split_spectrum(H, b, split_point, V0=V)
            updated_minus_state = (
                _update_slice(blocks, H_minus, (offset, 0), (rank, rank)),
                _update_slice(eigenvectors, V_minus, (0, offset), (n, rank)),
                agenda.push((offset, rank)))
            blocks, eigenvectors, agenda = lax.cond(
                should_update_range(offset, offset + rank),
                lambda: updated_minus_state, lambda: (blocks, eigenvectors, agenda))
            updated_plus_state = (
                _update_slice(blocks, H_plus, (offset + rank, 0), (b - rank, b - rank)),
                _update_slice(eigenvectors, V_plus, (0, offset + rank), (n, b - rank)),
                agenda.push((offset + rank, (b - rank))))
            blocks, eigenvectors, agenda = lax.cond(
                should_update_range(offset + rank, offset + b),
                lambda: updated_plus_state, lambda: (blocks, eigenvectors, agenda))
            return agenda, blocks, eigenvectors

        # a nearly diagonal block, or one that is noise next to the input, is done
        norm = jnp.linalg.norm(H)
        eps = jnp.asarray(dtypes.finfo(H.dtype).eps, dtype=norm.dtype)
        off_diag_norm = jnp.linalg.norm(H - jnp.diag(jnp.diag(jnp.real(H)).astype(H.dtype)))
        nearly_diagonal = off_diag_norm <= 5 * eps * norm
        tiny = norm < eps * H0_norm
        return lax.cond(nearly_diagonal | tiny, nearly_diagonal_case, default_case,
                        agenda, blocks, eigenvectors)

    def loop_cond(state):
        agenda, _, _ = state
        return ~agenda.empty()

    # padded sizes: N, then about halves rounded up to 32, then the Jacobi size
    cutoff = min(N, termination_size)
    buckets = [cutoff]
    branches = [functools.partial(base_case, cutoff)]
    if N > termination_size:
        buckets.append(N)
        branches.append(functools.partial(recursive_case, N))
        i = int(N / 1.98)
        while i > cutoff:
            bucket_size = _round_up(i, 32)
            buckets.append(bucket_size)
            branches.append(functools.partial(recursive_case, bucket_size))
            i = i // 2
    buckets_arr = jnp.array(buckets, dtype=np.int32)

    def loop_body(state):
        agenda, blocks, eigenvectors = state
        (offset, b), agenda = agenda.pop()
        which = jnp.where(buckets_arr < b, dtypes.iinfo(np.int32).max, buckets_arr)
        choice = jnp.argmin(which)
        return lax.switch(choice, branches, offset, b, agenda, blocks, eigenvectors)

    _, blocks, eigenvectors = lax.while_loop(loop_cond, loop_body,
                                             (agenda, blocks, eigenvectors))
    return blocks[:, 0], eigenvectors


def eigh_divide_and_conquer(H, *, termination_size, sort_eigenvalues, subset_by_index,
                            compute_slice, precision="float32"):
    """JAX's TPU ``eigh`` for ``N > termination_size``: ``(eigenvalues, eigenvectors)``."""
    jnp = _jnp()
    N = H.shape[0]
    with default_matmul_precision(precision):
        eig_vals, eig_vecs = _eigh_work(H, N, termination_size=termination_size,
                                        subset_by_index=subset_by_index)
    eig_vals = _mask(jnp.real(eig_vals), (N,), np.nan)
    if sort_eigenvalues or compute_slice:
        sort_idxs = jnp.argsort(eig_vals)
        if compute_slice:
            sort_idxs = sort_idxs[subset_by_index[0]:subset_by_index[1]]
        eig_vals = eig_vals[sort_idxs]
        eig_vecs = eig_vecs[:, sort_idxs]
    return eig_vals, eig_vecs

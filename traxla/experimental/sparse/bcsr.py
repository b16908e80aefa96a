"""BCSR (batched compressed sparse row) arrays, as JAX's ``jax.experimental.sparse.bcsr``:
two sparse dimensions stored as column ``indices`` and row pointers ``indptr`` per batch.
Each operation goes through the equivalent BCOO indices (as JAX's implementations do)."""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from traxla import dtypes, numpy as jnp
from traxla.api import jit
from traxla.experimental.sparse import bcoo
from traxla.experimental.sparse._base import JAXSparse, _BufferedSparse, _register_vmappable
from traxla.experimental.sparse.bcoo_dot import _bcoo_dot_general
from traxla.experimental.sparse.bcoo_shape import bcoo_broadcast_in_dim, bcoo_concatenate
from traxla.experimental.sparse.util import _count_stored_elements, nfold_vmap
from traxla.tree_util import register_pytree_node_class


class BCSRProperties(NamedTuple):
    n_batch: int
    n_dense: int
    nse: int


def _compatible(shape1, shape2):
    return all(s1 in (1, s2) for s1, s2 in zip(shape1, shape2))


def _validate_bcsr_indices(indices, indptr, shape):
    for name, arr in (("indices", indices), ("indptr", indptr)):
        if not dtypes.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"BCSR {name} must have an integer dtype, got {arr.dtype}")
    shape = tuple(shape)
    nse = indices.shape[-1]
    n_batch = indices.ndim - 1
    n_dense = len(shape) - n_batch - 2
    if n_dense < 0:
        raise ValueError(f"Invalid {indices.shape=} for {shape=}: BCSR needs 2 sparse "
                         "dimensions after the batch dimensions")
    if not _compatible(indices.shape[:n_batch], shape[:n_batch]):
        raise ValueError(f"indices batch dimensions not compatible for {indices.shape=}, {shape=}")
    if not _compatible(indptr.shape[:n_batch], shape[:n_batch]):
        raise ValueError(f"indptr batch dimensions not compatible for {indptr.shape=}, {shape=}")
    if tuple(indptr.shape[n_batch:]) != (shape[n_batch] + 1,):
        raise ValueError("indptr shape must match the matrix shape plus 1.")
    return BCSRProperties(n_batch=n_batch, n_dense=n_dense, nse=nse)


def _validate_bcsr(data, indices, indptr, shape):
    props = _validate_bcsr_indices(indices, indptr, shape)
    shape = tuple(shape)
    n_batch, n_dense, nse = props
    n_sparse = len(shape) - n_batch - n_dense
    if n_sparse != 2:
        raise ValueError(f"BCSR array must have 2 sparse dimensions; {n_sparse} is given.")
    if not _compatible(data.shape[:n_batch], shape[:n_batch]):
        raise ValueError(f"data batch dimensions not compatible for {data.shape=}, {shape=}")
    if tuple(data.shape[-(n_dense + 1):]) != (nse,) + shape[n_batch + 2:]:
        raise ValueError(f"Invalid {data.shape=} for {nse=}, {n_batch=}, {n_dense=}")
    return props


def _csr_to_coo(indices, indptr):
    return jnp.cumsum(jnp.zeros_like(indices).at[indptr].add(1)) - 1, indices


def _bcsr_to_bcoo(indices, indptr, *, shape):
    """BCOO indices of BCSR (indices, indptr)."""
    n_batch, _, _ = _validate_bcsr_indices(indices, indptr, shape)
    return jnp.stack(nfold_vmap(_csr_to_coo, n_batch)(indices, indptr), axis=indices.ndim)


def _bcoo_to_bcsr(indices, *, shape, index_dtype):
    """BCSR (indices, indptr) of lexicographically sorted BCOO indices."""
    n_batch, n_sparse, _, _ = bcoo._validate_bcoo_indices(indices, shape)
    if n_sparse != 2:
        raise ValueError("Must have 2 sparse dimensions to be converted to BCSR.")
    n_rows = shape[n_batch]

    @partial(nfold_vmap, N=n_batch, broadcasted=False)
    def get_ptr(i):
        indptr = jnp.zeros(n_rows + 1, index_dtype)
        return indptr.at[1:].set(jnp.cumsum(jnp.bincount(i, length=n_rows).astype(index_dtype)))
    return indices[..., 1], get_ptr(indices[..., 0])


# JAX's words, with the format's names
_TRACED_NSE_ERROR = bcoo._TRACED_NSE_ERROR.replace("bcoo", "bcsr").replace("BCOO", "BCSR")


def bcsr_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32):
    """Create BCSR-format sparse matrix from a dense matrix."""
    mat = jnp.asarray(mat)
    nse_arr = _count_stored_elements(mat, n_batch, n_dense) if nse is None else nse
    nse = bcoo._concrete_int(nse_arr, _TRACED_NSE_ERROR)
    if mat.ndim - n_dense - n_batch != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    return BCSR(_bcsr_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                index_dtype=np.dtype(index_dtype)), shape=mat.shape)


@partial(jit, static_argnames=("nse", "n_batch", "n_dense", "index_dtype"))
def _bcsr_fromdense(mat, *, nse, n_batch, n_dense, index_dtype):
    m = bcoo.bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                            n_batch=n_batch)
    indices, indptr = _bcoo_to_bcsr(m.indices, shape=mat.shape, index_dtype=index_dtype)
    return m.data, indices, indptr


def bcsr_todense(mat):
    """Convert batched sparse matrix to a dense matrix."""
    return _bcsr_todense(mat.data, mat.indices, mat.indptr, spinfo=mat._info)


@partial(jit, static_argnames=("spinfo",))
def _bcsr_todense(data, indices, indptr, *, spinfo):
    coo_indices = _bcsr_to_bcoo(indices, indptr, shape=spinfo.shape)
    return bcoo.BCOO((data, coo_indices), shape=spinfo.shape).todense()


def bcsr_extract(indices, indptr, mat):
    """Extract values from a dense matrix at given BCSR (indices, indptr)."""
    mat = jnp.asarray(mat)
    return bcoo._bcoo_extract(_bcsr_to_bcoo(jnp.asarray(indices), jnp.asarray(indptr),
                                            shape=mat.shape), mat)


def bcsr_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """A general contraction of a BCSR lhs with a dense rhs."""
    del precision, out_sharding  # unused, as in JAX
    if not isinstance(rhs, JAXSparse):
        if not isinstance(lhs, JAXSparse):
            from traxla import lax
            return lax.dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                                   preferred_element_type=preferred_element_type)
        if isinstance(lhs, BCSR):
            (lhs_contracting, _), (lhs_batch, _) = dimension_numbers
            if lhs_batch and max(lhs_batch) >= lhs.n_batch:
                raise NotImplementedError(
                    "bcsr_dot_general batch dimensions must be among the batch dimensions in "
                    f"the sparse representtaion.\ngot lhs_batch={tuple(lhs_batch)}, "
                    f"props.n_batch={lhs.n_batch}")
            return _bcoo_dot_general(lhs.data, _bcsr_to_bcoo(lhs.indices, lhs.indptr,
                                                             shape=lhs.shape),
                                     rhs, dimension_numbers=dimension_numbers,
                                     preferred_element_type=preferred_element_type,
                                     lhs_spinfo=lhs._info)
    raise NotImplementedError("bcsr_dot_general currently implemented for BCSR "
                              "lhs and ndarray rhs.")


def bcsr_sum_duplicates(mat, nse=None):
    """Sums duplicate indices within a BCSR array, returning sorted indices."""
    return BCSR.from_bcoo(bcoo.bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    return BCSR.from_bcoo(bcoo_broadcast_in_dim(mat.to_bcoo(), shape=shape,
                                                broadcast_dimensions=broadcast_dimensions))


def bcsr_concatenate(operands, *, dimension):
    """Sparse implementation of ``lax.concatenate`` for BCSR arrays."""
    return BCSR.from_bcoo(bcoo_concatenate([m.to_bcoo() for m in operands],
                                           dimension=dimension))


@register_pytree_node_class
class BCSR(_BufferedSparse):
    """Experimental batched CSR matrix: ``data`` of shape ``[*batch, nse, *dense]``,
    column ``indices`` of shape ``[*batch, nse]`` and row pointers ``indptr`` of shape
    ``[*batch, n_rows + 1]``."""
    _buffer_names = ("data", "indices", "indptr")
    _index_tail = 1  # indices: [*batch, nse]

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        self._set_buffers(args, shape, indices_sorted, unique_indices)
        _validate_bcsr(self.data, self.indices, self.indptr, self.shape)

    n_sparse = 2

    @property
    def _sparse_shape(self):
        return tuple(self.shape[self.n_batch:self.n_batch + 2])

    def transpose(self, *args, **kwargs):
        raise NotImplementedError("Transpose is not implemented.")

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        shape = tuple(shape)
        if n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: {shape=}, {n_dense=}, {n_batch=}, {nse=}")
        if len(shape) - n_dense - n_batch != 2:
            raise ValueError("BCSR sparse.empty: must have 2 sparse dimensions.")
        batch_shape, sparse_shape = shape[:n_batch], shape[n_batch:n_batch + 2]
        data = jnp.zeros((*batch_shape, nse, *shape[n_batch + 2:]), dtype)
        indices = jnp.full((*batch_shape, nse), jnp.array(sparse_shape[1]), index_dtype)
        indptr = jnp.zeros((*batch_shape, sparse_shape[0] + 1), index_dtype)
        return cls((data, indices, indptr), shape=shape)

    def sum_duplicates(self, nse=None, remove_zeros=True):
        """A copy with duplicate indices summed (and explicit zeros removed when
        ``remove_zeros``), indices sorted."""
        if remove_zeros:
            return BCSR.from_bcoo(bcoo.bcoo_eliminate_zeros(self.to_bcoo(), nse=nse))
        return bcsr_sum_duplicates(self, nse=nse)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        """Create a BCSR array from a (dense) Array."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    def todense(self):
        """Create a dense version of the array."""
        return bcsr_todense(self)

    def to_bcoo(self):
        coo_indices = _bcsr_to_bcoo(self.indices, self.indptr, shape=self.shape)
        return bcoo.BCOO((self.data, coo_indices), shape=self.shape)

    @classmethod
    def from_bcoo(cls, arr):
        if arr.n_sparse != 2:
            raise NotImplementedError(f"BSCR.from_bcoo requires n_sparse=2; got "
                                      f"arr.n_sparse={arr.n_sparse}")
        if not arr.indices_sorted:
            arr = arr.sort_indices()
        indices, indptr = _bcoo_to_bcsr(arr.indices, shape=arr.shape,
                                        index_dtype=arr.indices.dtype)
        return cls((arr.data, indices, indptr), shape=arr.shape)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCSR from_scipy_sparse with nonzero n_dense/n_batch.")
        if mat.ndim != 2:
            raise ValueError(f"BCSR from_scipy_sparse requires 2D array; {mat.ndim}D is given.")
        mat = mat.tocsr()
        return cls((jnp.asarray(mat.data),
                    jnp.asarray(mat.indices).astype(index_dtype or jnp.int32),
                    jnp.asarray(mat.indptr).astype(index_dtype or jnp.int32)), shape=mat.shape)

    def __matmul__(self, other):
        if isinstance(other, JAXSparse):
            raise NotImplementedError("bcsr_dot_general currently implemented for BCSR "
                                      "lhs and ndarray rhs.")
        # JAX sparsifies jnp.matmul with BCSR's dot_general rule, which computes on the
        # BCOO indices: the same values as the BCOO product
        return self.to_bcoo() @ other

    def __rmatmul__(self, other):
        raise NotImplementedError("bcsr_dot_general currently implemented for BCSR "
                                  "lhs and ndarray rhs.")


_register_vmappable(BCSR, "batched", keep_flags=False)


# The other names of JAX's module (mostly its imports), as JAX's
from collections.abc import Sequence
from traxla import Array
from traxla.base.sequences import safe_zip
from traxla.base.sequences import split_list
from traxla.experimental.sparse.util import CuSparseEfficiencyWarning
from traxla.experimental.sparse.util import SparseEfficiencyWarning
from traxla.lax import DotDimensionNumbers
from traxla.typing import ArrayLike
from traxla.typing import DTypeLike
from typing import Any
import operator
import traxla as jax
import traxla._src.api_util as api_util
import traxla._src.config as config
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.interpreters.ad as ad
import traxla.interpreters.batching as batching
import traxla.interpreters.mlir as mlir
import traxla.lax as lax
import traxla.tree_util as tree_util
import warnings
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's sparse internals (its sparse primitives and their rules; traxla's sparse operations are compositions of lax operations)",
      functions='Shape bcsr_eliminate_zeros',
      classes='SparseInfo',
      constants='bcsr_dot_general_p bcsr_extract_p bcsr_fromdense_p bcsr_todense_p',
      modules='hlo')

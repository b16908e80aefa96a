"""``sparse.todense``, ``sparse.empty`` and ``sparse.eye``, as JAX's
``jax.experimental.sparse.api``."""
from __future__ import annotations


from traxla.api import jit
from traxla.experimental.sparse._base import JAXSparse
from traxla.experimental.sparse.bcoo import BCOO, _concrete_int
from traxla.experimental.sparse.bcsr import BCSR


@jit
def _sparse_todense(x):
    # A dense operand passes through. Under sparsify this call is where a sparse value
    # becomes dense: the transform's rule for a jit named ``_sparse_todense`` densifies
    # (JAX binds a ``todense`` primitive with a sparse rule instead).
    return x


def todense(arr):
    """Convert input to a dense matrix. If input is already dense, pass through."""
    if isinstance(arr, JAXSparse):
        return arr.todense()
    return _sparse_todense(arr)


def empty(shape, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """Create an empty sparse array."""
    formats = {"bcsr": BCSR, "bcoo": BCOO}
    if sparse_format not in formats:
        raise ValueError(f"sparse_format={sparse_format!r} not recognized; "
                         f"must be one of {list(formats.keys())}")
    return formats[sparse_format]._empty(tuple(shape), dtype=dtype, index_dtype=index_dtype,
                                         **kwds)


def eye(N, M=None, k=0, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """Create 2D sparse identity matrix with ones along the k-th diagonal."""
    formats = {"bcoo": BCOO}
    if M is None:
        M = N
    N, M, k = (_concrete_int(v, "") for v in (N, M, k))
    if sparse_format not in formats:
        raise KeyError(sparse_format)
    return formats[sparse_format]._eye(M=M, N=N, k=k, dtype=dtype, index_dtype=index_dtype,
                                       **kwds)


# The other names of JAX's module (mostly its imports), as JAX's
from collections.abc import Sequence
from functools import partial
from traxla import Array
from traxla.typing import DTypeLike
import operator
import traxla as jax
import traxla._src.core as core
import traxla._src.dtypes as dtypes
import traxla._src.interpreters.ad as ad
import traxla.interpreters.batching as batching
import traxla.interpreters.mlir as mlir
import traxla.tree_util as tree_util
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's sparse internals (its sparse primitives and their rules; traxla's sparse operations are compositions of lax operations)",
      constants='todense_p')
from traxla.experimental.sparse.coo import COO  # noqa: E402
from traxla.experimental.sparse.csr import CSC, CSR  # noqa: E402

"""``traxla.experimental.sparse``: JAX's experimental sparse arrays (``jax.experimental.sparse``).

The batched-coordinate ``BCOO`` array (a pytree: ``jit`` and ``grad`` with respect to its
``data`` work on it), its operations (``bcoo_todense``, ``bcoo_fromdense``,
``bcoo_dot_general``, ``bcoo_transpose``, ``bcoo_reduce_sum``, ``bcoo_sum_duplicates``,
``bcoo_sort_indices``, ``bcoo_multiply_sparse``/``_dense``, ``bcoo_extract``), ``empty``,
``eye``, ``todense`` and the ``sparsify`` transform. Each operation is a composition of
traxla's lax operations with JAX's values (see ``bcoo.py``)."""
from traxla.experimental.sparse._base import JAXSparse
from traxla.experimental.sparse.util import (CuSparseEfficiencyWarning, SparseEfficiencyError,
                                             SparseEfficiencyWarning)
from traxla.experimental.sparse.bcoo import (
    BCOO, bcoo_extract, bcoo_fromdense, bcoo_multiply_dense,
    bcoo_multiply_sparse, bcoo_reduce_sum, bcoo_sort_indices, bcoo_sum_duplicates,
    bcoo_todense, bcoo_transpose)
from traxla.experimental.sparse.bcoo_dot import bcoo_dot_general, bcoo_dot_general_sampled
from traxla.experimental.sparse.bcoo_index import bcoo_dynamic_slice, bcoo_gather, bcoo_slice
from traxla.experimental.sparse.bcoo_shape import (
    bcoo_broadcast_in_dim, bcoo_concatenate, bcoo_reshape, bcoo_rev, bcoo_squeeze,
    bcoo_update_layout)
from traxla.experimental.sparse.bcsr import (
    BCSR, bcsr_broadcast_in_dim, bcsr_concatenate, bcsr_dot_general, bcsr_extract,
    bcsr_fromdense, bcsr_sum_duplicates, bcsr_todense)
from traxla.experimental.sparse import bcoo, bcsr  # noqa: F401  (JAX's submodules)
from traxla.experimental.sparse.api import empty, eye, todense
from traxla.experimental.sparse.transform import sparsify
from traxla.experimental.sparse.ad import grad, jacfwd, jacobian, jacrev, value_and_grad
# JAX's other names here: the COO/CSR/CSC formats and JAX's sparse primitives, which traxla
# does not have (using one raises NotImplementedError), and the sparsify tracer's class.
from traxla.experimental.sparse import coo, csr  # noqa: E402,F401
from traxla.experimental.sparse.coo import (  # noqa: E402,F401
    COO, coo_fromdense, coo_fromdense_p, coo_matmat, coo_matmat_p, coo_matvec, coo_matvec_p,
    coo_todense, coo_todense_p)
from traxla.experimental.sparse.csr import (  # noqa: E402,F401
    CSC, CSR, csr_fromdense, csr_fromdense_p, csr_matmat, csr_matmat_p, csr_matvec,
    csr_matvec_p, csr_todense, csr_todense_p)
from traxla.experimental.sparse.bcoo import (  # noqa: E402,F401
    bcoo_conv_general_dilated, bcoo_dot_general_p, bcoo_dot_general_sampled_p, bcoo_extract_p,
    bcoo_fromdense_p, bcoo_sort_indices_p, bcoo_spdot_general_p, bcoo_sum_duplicates_p,
    bcoo_todense_p, bcoo_transpose_p)
from traxla.experimental.sparse.bcsr import (  # noqa: E402,F401
    bcsr_dot_general_p, bcsr_extract_p, bcsr_fromdense_p, bcsr_todense_p)
from traxla.experimental.sparse.api import todense_p  # noqa: E402,F401
from traxla.experimental.sparse.random import random_bcoo  # noqa: E402,F401
from traxla.experimental.sparse.transform import SparseTracer  # noqa: E402,F401

__all__ = [
    "JAXSparse", "BCOO", "CuSparseEfficiencyWarning", "SparseEfficiencyError",
    "SparseEfficiencyWarning", "bcoo_dot_general", "bcoo_extract", "bcoo_fromdense",
    "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_sort_indices",
    "bcoo_sum_duplicates", "bcoo_todense", "bcoo_transpose", "empty", "eye", "todense",
    "sparsify", "bcoo_dot_general_sampled", "BCSR", "bcsr_broadcast_in_dim", "bcsr_concatenate", "bcsr_dot_general",
    "bcsr_extract", "bcsr_fromdense", "bcsr_sum_duplicates", "bcsr_todense", "bcoo", "bcsr",
    "bcoo_dynamic_slice", "bcoo_gather", "bcoo_slice", "bcoo_broadcast_in_dim", "bcoo_concatenate", "bcoo_reshape", "bcoo_rev",
    "bcoo_squeeze", "bcoo_update_layout", "grad", "jacfwd", "jacobian", "jacrev", "value_and_grad"]

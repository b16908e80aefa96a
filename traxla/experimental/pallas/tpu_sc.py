"""``traxla.experimental.pallas.tpu_sc`` (``jax.experimental.pallas.tpu_sc``): TPU SparseCore
extensions to Pallas.

traxla does not implement TPU SparseCore Pallas kernels: every name exists (JAX 0.10.2's
public names, as the kind JAX has: classes, functions, constants) and raises
``NotImplementedError`` naming the capability when called or instantiated, never at import."""
from traxla.experimental.pallas.unsupported import unsupported_class as _c, unsupported_function as _f

_P = "pallas.tpu_sc."
_CAP = 'TPU SparseCore Pallas kernels'

Indices = _c(_P + "Indices", _CAP)
PackFormat = _c(_P + "PackFormat", _CAP)
ScalarSubcoreMesh = _c(_P + "ScalarSubcoreMesh", _CAP)
VectorSubcoreMesh = _c(_P + "VectorSubcoreMesh", _CAP)
addupdate = _f(_P + "addupdate", _CAP)
addupdate_compressed = _f(_P + "addupdate_compressed", _CAP)
addupdate_scatter = _f(_P + "addupdate_scatter", _CAP)
all_reduce_ffs = _f(_P + "all_reduce_ffs", _CAP)
all_reduce_population_count = _f(_P + "all_reduce_population_count", _CAP)
bitcast = _f(_P + "bitcast", _CAP)
cummax = _f(_P + "cummax", _CAP)
cumsum = _f(_P + "cumsum", _CAP)
fetch_and_add = _f(_P + "fetch_and_add", _CAP)
get_sparse_core_info = _f(_P + "get_sparse_core_info", _CAP)
load_expanded = _f(_P + "load_expanded", _CAP)
load_gather = _f(_P + "load_gather", _CAP)
pack = _f(_P + "pack", _CAP)
parallel_loop = _f(_P + "parallel_loop", _CAP)
scan_count = _f(_P + "scan_count", _CAP)
sort_key_val = _f(_P + "sort_key_val", _CAP)
store_compressed = _f(_P + "store_compressed", _CAP)
store_scatter = _f(_P + "store_scatter", _CAP)
subcore_barrier = _f(_P + "subcore_barrier", _CAP)
unpack = _f(_P + "unpack", _CAP)

__all__ = ['Indices', 'PackFormat', 'ScalarSubcoreMesh', 'VectorSubcoreMesh',
           'addupdate', 'addupdate_compressed', 'addupdate_scatter', 'all_reduce_ffs',
           'all_reduce_population_count', 'bitcast', 'cummax', 'cumsum',
           'fetch_and_add', 'get_sparse_core_info', 'load_expanded', 'load_gather',
           'pack', 'parallel_loop', 'scan_count', 'sort_key_val', 'store_compressed',
           'store_scatter', 'subcore_barrier', 'unpack']

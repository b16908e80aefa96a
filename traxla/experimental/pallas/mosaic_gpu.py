"""``traxla.experimental.pallas.mosaic_gpu`` (``jax.experimental.pallas.mosaic_gpu``): Mosaic
GPU-specific Pallas APIs.

traxla does not implement Pallas GPU kernels (Mosaic GPU): every name exists (JAX 0.10.2's
public names, as the kind JAX has: classes, functions, constants) and raises
``NotImplementedError`` naming the capability when called or instantiated, never at import."""
from traxla.experimental.pallas.unsupported import unsupported_class as _c, unsupported_function as _f

_P = "pallas.mosaic_gpu."
_CAP = 'Pallas GPU kernels (Mosaic GPU)'

ACC = _c(_P + "ACC", _CAP)
Barrier = _c(_P + "Barrier", _CAP)
BlockSpec = _c(_P + "BlockSpec", _CAP)
ClusterBarrier = _c(_P + "ClusterBarrier", _CAP)
CompilerParams = _c(_P + "CompilerParams", _CAP)
CopyPartition = _c(_P + "CopyPartition", _CAP)
GMEM = _f(_P + "GMEM", _CAP)
Layout = _c(_P + "Layout", _CAP)
LoweringSemantics = _c(_P + "LoweringSemantics", _CAP)
MemorySpace = _c(_P + "MemorySpace", _CAP)
Mesh = _c(_P + "Mesh", _CAP)
NDLoopInfo = _c(_P + "NDLoopInfo", _CAP)
OOBFillMode = _c(_P + "OOBFillMode", _CAP)
PeerMemRef = _c(_P + "PeerMemRef", _CAP)
PipelinePipeline = _c(_P + "PipelinePipeline", _CAP)
REGS = _f(_P + "REGS", _CAP)
RefType = _c(_P + "RefType", _CAP)
RefUnion = _c(_P + "RefUnion", _CAP)
Replicated = _c(_P + "Replicated", _CAP)
SMEM = _f(_P + "SMEM", _CAP)
SemaphoreSignal = _c(_P + "SemaphoreSignal", _CAP)
SemaphoreType = _c(_P + "SemaphoreType", _CAP)
ShapeDtypeStruct = _c(_P + "ShapeDtypeStruct", _CAP)
SwizzleTransform = _c(_P + "SwizzleTransform", _CAP)
TMEM = _f(_P + "TMEM", _CAP)
TMEMLayout = _c(_P + "TMEMLayout", _CAP)
Tiling = _c(_P + "Tiling", _CAP)
TilingTransform = _c(_P + "TilingTransform", _CAP)
TraceScope = _c(_P + "TraceScope", _CAP)
Transform = _c(_P + "Transform", _CAP)
TryClusterCancelResult = _f(_P + "TryClusterCancelResult", _CAP)
WGMMAAccumulatorRef = _c(_P + "WGMMAAccumulatorRef", _CAP)
WarpMesh = _c(_P + "WarpMesh", _CAP)
as_torch_kernel = _f(_P + "as_torch_kernel", _CAP)
async_copy_scales_to_tmem = _f(_P + "async_copy_scales_to_tmem", _CAP)
async_copy_smem_to_tmem = _f(_P + "async_copy_smem_to_tmem", _CAP)
async_copy_sparse_metadata_to_tmem = _f(_P + "async_copy_sparse_metadata_to_tmem", _CAP)
async_load_tmem = _f(_P + "async_load_tmem", _CAP)
async_prefetch = _f(_P + "async_prefetch", _CAP)
async_store_smem = _f(_P + "async_store_smem", _CAP)
async_store_tmem = _f(_P + "async_store_tmem", _CAP)
atomic_add = _f(_P + "atomic_add", _CAP)
atomic_and = _f(_P + "atomic_and", _CAP)
atomic_max = _f(_P + "atomic_max", _CAP)
atomic_min = _f(_P + "atomic_min", _CAP)
atomic_or = _f(_P + "atomic_or", _CAP)
atomic_xor = _f(_P + "atomic_xor", _CAP)
barrier_arrive = _f(_P + "barrier_arrive", _CAP)
barrier_test = _f(_P + "barrier_test", _CAP)
barrier_wait = _f(_P + "barrier_wait", _CAP)
broadcasted_iota = _f(_P + "broadcasted_iota", _CAP)
cluster_ref = _f(_P + "cluster_ref", _CAP)
commit_smem = _f(_P + "commit_smem", _CAP)
commit_smem_to_gmem_group = _f(_P + "commit_smem_to_gmem_group", _CAP)
commit_tmem = _f(_P + "commit_tmem", _CAP)
copy_gmem_to_smem = _f(_P + "copy_gmem_to_smem", _CAP)
copy_smem_to_gmem = _f(_P + "copy_smem_to_gmem", _CAP)
dynamic_scheduling_loop = _f(_P + "dynamic_scheduling_loop", _CAP)
emit_pipeline = _f(_P + "emit_pipeline", _CAP)
emit_pipeline_warp_specialized = _f(_P + "emit_pipeline_warp_specialized", _CAP)
find_swizzle = _f(_P + "find_swizzle", _CAP)
format_tcgen05_sparse_metadata = _f(_P + "format_tcgen05_sparse_metadata", _CAP)
griddepcontrol_launch_dependents = _f(_P + "griddepcontrol_launch_dependents", _CAP)
griddepcontrol_wait = _f(_P + "griddepcontrol_wait", _CAP)
inline_mgpu = _f(_P + "inline_mgpu", _CAP)
kernel = _f(_P + "kernel", _CAP)
layout_cast = _f(_P + "layout_cast", _CAP)
load = _f(_P + "load", _CAP)
multicast_ref = _f(_P + "multicast_ref", _CAP)
multimem_load_reduce = _f(_P + "multimem_load_reduce", _CAP)
multimem_store = _f(_P + "multimem_store", _CAP)
nd_loop = _f(_P + "nd_loop", _CAP)
planar_snake = _f(_P + "planar_snake", _CAP)
print_layout = _f(_P + "print_layout", _CAP)
query_cluster_cancel = _f(_P + "query_cluster_cancel", _CAP)
remote_ref = _f(_P + "remote_ref", _CAP)
semaphore_signal = _f(_P + "semaphore_signal", _CAP)
semaphore_signal_multicast = _f(_P + "semaphore_signal_multicast", _CAP)
semaphore_signal_parallel = _f(_P + "semaphore_signal_parallel", _CAP)
semaphore_wait = _f(_P + "semaphore_wait", _CAP)
set_max_registers = _f(_P + "set_max_registers", _CAP)
tcgen05_commit_arrive = _f(_P + "tcgen05_commit_arrive", _CAP)
tcgen05_mma = _f(_P + "tcgen05_mma", _CAP)
transform_ref = _f(_P + "transform_ref", _CAP)
transpose_ref = _f(_P + "transpose_ref", _CAP)
try_cluster_cancel = _f(_P + "try_cluster_cancel", _CAP)
wait_load_tmem = _f(_P + "wait_load_tmem", _CAP)
wait_smem_to_gmem = _f(_P + "wait_smem_to_gmem", _CAP)
warp_map = _f(_P + "warp_map", _CAP)
wgmma = _f(_P + "wgmma", _CAP)
wgmma_accumulator_load = _f(_P + "wgmma_accumulator_load", _CAP)
wgmma_wait = _f(_P + "wgmma_wait", _CAP)

__all__ = ['ACC', 'Barrier', 'BlockSpec', 'ClusterBarrier', 'CompilerParams',
           'CopyPartition', 'GMEM', 'Layout', 'LoweringSemantics', 'MemorySpace',
           'Mesh', 'NDLoopInfo', 'OOBFillMode', 'PeerMemRef', 'PipelinePipeline',
           'REGS', 'RefType', 'RefUnion', 'Replicated', 'SMEM', 'SemaphoreSignal',
           'SemaphoreType', 'ShapeDtypeStruct', 'SwizzleTransform', 'TMEM',
           'TMEMLayout', 'Tiling', 'TilingTransform', 'TraceScope', 'Transform',
           'TryClusterCancelResult', 'WGMMAAccumulatorRef', 'WarpMesh',
           'as_torch_kernel', 'async_copy_scales_to_tmem', 'async_copy_smem_to_tmem',
           'async_copy_sparse_metadata_to_tmem', 'async_load_tmem', 'async_prefetch',
           'async_store_smem', 'async_store_tmem', 'atomic_add', 'atomic_and',
           'atomic_max', 'atomic_min', 'atomic_or', 'atomic_xor', 'barrier_arrive',
           'barrier_test', 'barrier_wait', 'broadcasted_iota', 'cluster_ref',
           'commit_smem', 'commit_smem_to_gmem_group', 'commit_tmem',
           'copy_gmem_to_smem', 'copy_smem_to_gmem', 'dynamic_scheduling_loop',
           'emit_pipeline', 'emit_pipeline_warp_specialized', 'find_swizzle',
           'format_tcgen05_sparse_metadata', 'griddepcontrol_launch_dependents',
           'griddepcontrol_wait', 'inline_mgpu', 'kernel', 'layout_cast', 'load',
           'multicast_ref', 'multimem_load_reduce', 'multimem_store', 'nd_loop',
           'planar_snake', 'print_layout', 'query_cluster_cancel', 'remote_ref',
           'semaphore_signal', 'semaphore_signal_multicast',
           'semaphore_signal_parallel', 'semaphore_wait', 'set_max_registers',
           'tcgen05_commit_arrive', 'tcgen05_mma', 'transform_ref', 'transpose_ref',
           'try_cluster_cancel', 'wait_load_tmem', 'wait_smem_to_gmem', 'warp_map',
           'wgmma', 'wgmma_accumulator_load', 'wgmma_wait']

"""``jax.experimental.mosaic.gpu``: not supported by traxla, which does not have Mosaic GPU
(JAX's CUDA kernel language). The module imports and its names exist with JAX's kinds; using
one raises NotImplementedError naming the capability."""

from traxla import ShapeDtypeStruct

from traxla.base.unsupported import fill as _fill

from traxla.experimental.mosaic.gpu.mma import mma  # noqa: E402
from traxla.experimental.mosaic.gpu.wgmma import wgmma  # noqa: E402

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('MultimemReductionOp TMAReductionOp as_gpu_kernel as_torch_gpu_kernel bitwidth '
      'bytewidth c commit_shared copy_tiled debug_print fori get_cluster_ref infer_layout '
      'is_known_divisible is_nvshmem_available lower_mgpu_dialect memref_fold '
      'memref_reshape memref_slice memref_transpose memref_unfold memref_unsqueeze mma '
      'nanosleep optimization_barrier query_cluster_cancel single_thread '
      'single_thread_predicate thread_idx tile_shape tmem_native_layout to_layout_attr '
      'try_cluster_cancel warp_idx warpgroup_barrier warpgroup_idx wgmma when'),
    classes=('AsyncCopyImplementation Barrier BarrierRef ClusterBarrier CollectiveBarrierRef '
      'CopyPartition DialectBarrierRef DynamicSlice FragmentedArray LaunchContext '
      'LoweringSemantics MMALayouts MemRefTransform OOBFillMode Partition Partition1D '
      'Rounding SemaphoreRef TMABarrier TMEM ThreadSubset TileTransform TiledLayout '
      'TransposeTransform Union WGMMAAccumulator WGSplatFragLayout WGStridedFragLayout ds'),
    constants=('FragmentedLayout GLOBAL_BROADCAST TCGEN05_COL_LAYOUT TCGEN05_LAYOUT '
      'TCGEN05_ROW_LAYOUT TCGEN05_TRANSPOSED_LAYOUT TMA_INDICES_4_LAYOUT TMA_INDICES_LAYOUT '
      'TMEM_NATIVE_LAYOUT WGMMA_COL_LAYOUT WGMMA_LAYOUT WGMMA_LAYOUT_8BIT '
      'WGMMA_LAYOUT_UPCAST_2X WGMMA_LAYOUT_UPCAST_4X WGMMA_ROW_LAYOUT '
      'WGMMA_TRANSPOSED_LAYOUT'),
    modules='dialect')

from traxla.experimental.mosaic.gpu import constraints, core, dialect_lowering, fragmented_array, inference_utils, launch_context, layout_inference, layouts, mma_utils, profiler, tcgen05, utils  # noqa: E402,F401

"""Pallas TPU kernels that move memory themselves: refs left in HBM (``memory_space=pl.ANY``
or ``pltpu.HBM``), DMAs (``make_async_copy``/``async_copy``/``sync_copy``) and semaphores
(DMA and regular, alone and in arrays, in scratch and ``pl.run_scoped``), written against a
JAX-like namespace (JAX itself, or traxla): ``dma_kernels(jax, jnp, pl, pltpu,
interpret=False)`` -> ``{name: (fn, args)}``, shared by the Mosaic comparison
(tests/test_pallas_mosaic_dma.py) and the chip run (tests/test_tpu_pallas.py)."""
import functools

import numpy as np


def dma_kernels(jax, jnp, pl, pltpu, interpret=False):
    K = {}
    call = functools.partial(pl.pallas_call, interpret=interpret)
    S = jax.ShapeDtypeStruct
    ANY = pl.BlockSpec(memory_space=pl.ANY)
    x16 = np.arange(16 * 128, dtype=np.float32).reshape(16, 128)

    # HBM -> VMEM scratch, wait, compute, store into the VMEM output
    def hbm_in_kernel(x_hbm, o_ref, buf, sem):
        copy = pltpu.make_async_copy(x_hbm, buf, sem)
        copy.start()
        copy.wait()
        o_ref[...] = buf[...] * 2.0
    def hbm_in(x):
        return call(hbm_in_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY],
                    scratch_shapes=[pltpu.VMEM(x.shape, jnp.float32),
                                    pltpu.SemaphoreType.DMA])(x)
    K["dma_hbm_in"] = (hbm_in, (x16,))

    # both sides in HBM: row halves copied with two semaphores of an array
    def hbm_to_hbm_kernel(x_hbm, o_hbm, sems):
        for k in range(2):
            pltpu.make_async_copy(x_hbm.at[pl.ds(8 * k, 8)], o_hbm.at[pl.ds(8 * (1 - k), 8)],
                                  sems.at[k]).start()
        for k in range(2):
            pltpu.make_async_copy(x_hbm.at[pl.ds(8 * k, 8)], o_hbm.at[pl.ds(8 * (1 - k), 8)],
                                  sems.at[k]).wait()
    def hbm_to_hbm(x):
        return call(hbm_to_hbm_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY],
                    out_specs=ANY, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x)
    K["dma_hbm_to_hbm"] = (hbm_to_hbm, (x16,))

    # manual double buffering over a grid-less loop: slot = i % 2, traced slices
    def double_buffer_kernel(x_hbm, o_ref, buf, sems):
        def copy(i, slot):
            return pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 8)], buf.at[slot],
                                         sems.at[slot])
        copy(0, 0).start()
        def body(i, acc):
            slot = jax.lax.rem(i, 2)
            @pl.when(i + 1 < 4)
            def _():
                copy(i + 1, 1 - slot).start()
            copy(i, slot).wait()
            return acc + buf[slot]
        o_ref[...] = jax.lax.fori_loop(0, 4, body, jnp.zeros((8, 128), jnp.float32))
    def double_buffer(x):
        return call(double_buffer_kernel, out_shape=S((8, 128), x.dtype), in_specs=[ANY],
                    scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32),
                                    pltpu.SemaphoreType.DMA((2,))])(x)
    K["dma_double_buffer"] = (double_buffer, (np.ones((32, 128), np.float32),))

    # VMEM output block written back to an HBM output with async_copy, in a grid
    def writeback_kernel(x_ref, o_hbm, buf, sem):
        i = pl.program_id(0)
        buf[...] = x_ref[...] + 1.0
        pltpu.async_copy(buf, o_hbm.at[pl.ds(pl.multiple_of(i * 8, 8), 8), :], sem).wait()
    def writeback(x):
        return call(writeback_kernel, out_shape=S(x.shape, x.dtype), grid=(2,),
                    in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))], out_specs=ANY,
                    scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32),
                                    pltpu.SemaphoreType.DMA])(x)
    K["dma_writeback_grid"] = (writeback, (x16,))

    # run_scoped: a VMEM buffer and a DMA semaphore allocated inside the kernel
    def scoped_kernel(x_hbm, o_ref):
        def body(buf, sem):
            pltpu.async_copy(x_hbm, buf, sem).wait()
            o_ref[...] = buf[...] - 1.0
        pl.run_scoped(body, pltpu.VMEM((16, 128), jnp.float32), pltpu.SemaphoreType.DMA)
    def scoped(x):
        return call(scoped_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY])(x)
    K["dma_run_scoped"] = (scoped, (x16,))

    # sync_copy (a scoped DMA semaphore), and a value out of run_scoped
    def sync_kernel(x_hbm, o_ref):
        def body(buf):
            pltpu.sync_copy(x_hbm, buf)
            return buf[...] * 3.0
        o_ref[...] = pl.run_scoped(body, pltpu.VMEM((16, 128), jnp.float32))
    def sync(x):
        return call(sync_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY])(x)
    K["dma_sync_copy"] = (sync, (x16,))

    # regular semaphores: signal, read, wait
    def sem_kernel(x_ref, o_ref, sem):
        pltpu.semaphore_signal(sem, 2)
        n = pltpu.semaphore_read(sem)
        pltpu.semaphore_wait(sem, 2)
        o_ref[...] = x_ref[...] + n.astype(jnp.float32)
    def sem(x):
        return call(sem_kernel, out_shape=S(x.shape, x.dtype),
                    scratch_shapes=[pltpu.SemaphoreType.REGULAR])(x)
    K["semaphore_regular"] = (sem, (np.ones((8, 128), np.float32),))

    # an array of regular semaphores indexed by a traced index; pl.semaphore_* spellings
    def sems_kernel(x_ref, o_ref, sems):
        i = pl.program_id(0)
        pl.semaphore_signal(sems.at[i], 1)
        pl.semaphore_wait(sems.at[i])
        o_ref[...] = x_ref[...] * 2.0
    def sems(x):
        return call(sems_kernel, out_shape=S(x.shape, x.dtype), grid=(2,),
                    in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                    out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                    scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))])(x)
    K["semaphore_array"] = (sems, (x16,))

    # HBM input (pltpu.HBM) gathered row-block by scalar-prefetched indices
    def gather_kernel(idx_ref, x_hbm, o_ref, sem):
        i = pl.program_id(0)
        pltpu.async_copy(x_hbm.at[pl.ds(idx_ref[i] * 8, 8)], o_ref, sem).wait()
    def gather(idx, x):
        spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(2,),
            in_specs=[pl.BlockSpec(memory_space=pltpu.HBM)],
            out_specs=pl.BlockSpec((8, 128), lambda i, idx: (i, 0)),
            scratch_shapes=[pltpu.SemaphoreType.DMA])
        return call(gather_kernel, out_shape=S(x.shape, x.dtype), grid_spec=spec)(idx, x)
    K["dma_gather_prefetch"] = (gather, (np.array([1, 0], np.int32), x16))

    # (not a DMA: a block shape that does not divide the array; the edge block is partial)
    def partial_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0
    def partial(x):
        spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
        return call(partial_kernel, out_shape=S(x.shape, x.dtype), grid=(3,), in_specs=[spec],
                    out_specs=spec)(x)
    K["block_not_dividing"] = (partial, (np.ones((20, 128), np.float32),))
    return K


def doc_kernels(jax, jnp, pl, pltpu, interpret=False):
    """The kernels of JAX's Pallas TPU pages that one chip runs (issue #42, item 4), as the
    pages write them, at smaller sizes: docs/pallas/tpu/pipelining.md (an HBM ref copied
    with ``sync_copy``; the megacore add) and docs/pallas/tpu/sparse.md (scalar-prefetch
    block indexing: the dynamic slice, the block-sparse DSD matmul, the sparse-mask matmul).
    """
    K = {}
    call = functools.partial(pl.pallas_call, interpret=interpret)
    S = jax.ShapeDtypeStruct

    # pipelining.md: "copies a slice of an HBM buffer into a scratch VMEM buffer"
    def hbm_vmem_kernel(x_hbm_ref, out_vmem_ref, scratch_vmem_ref):
        pltpu.sync_copy(x_hbm_ref.at[0:1], scratch_vmem_ref)
        out_vmem_ref[...] = scratch_vmem_ref[...] + 1
    def hbm_vmem(x):
        return call(hbm_vmem_kernel, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                    out_shape=S((1, 128), jnp.float32),
                    scratch_shapes=(pltpu.VMEM(shape=(1, 128), dtype=jnp.float32),))(x)
    K["doc_pipelining_hbm_vmem"] = (hbm_vmem, (np.ones((8, 128), np.float32),))

    # pipelining.md: megacore ("parallel") add
    def add_matrices_kernel(x_vmem_ref, y_vmem_ref, z_vmem_ref):
        x_vregs = x_vmem_ref[:, :]
        y_vregs = y_vmem_ref[:, :]
        z_vregs = x_vregs + y_vregs
        z_vmem_ref[:, :] = z_vregs
    def add_megacore(x, y):
        block_spec = pl.BlockSpec((256, 512), lambda i: (i, 0))
        return call(add_matrices_kernel, out_shape=S(x.shape, x.dtype),
                    in_specs=[block_spec, block_spec], out_specs=block_spec, grid=(2,),
                    compiler_params=pltpu.CompilerParams(
                        dimension_semantics=("parallel",)))(x, y)
    ones = np.ones((512, 512), np.float32)
    K["doc_pipelining_megacore"] = (add_megacore, (ones, ones))

    # sparse.md: block dynamic slice through a scalar-prefetched block index
    def dynamic_slice_kernel(indices, x_ref, o_ref):
        del indices
        o_ref[...] = x_ref[...]
    def block_dynamic_slice(block_idx, x):
        sizes = (128, 128)
        grid_spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(1, 1),
            in_specs=[pl.BlockSpec(sizes, lambda i, j, block_idx: (block_idx[0],
                                                                   block_idx[1]))],
            out_specs=pl.BlockSpec(sizes, lambda *_: (0, 0)))
        return call(dynamic_slice_kernel, grid_spec=grid_spec,
                    out_shape=S(shape=sizes, dtype=x.dtype))(block_idx, x)
    K["doc_sparse_dynamic_slice"] = (block_dynamic_slice, (
        np.array([1, 2], np.int32), np.arange(512 * 512, dtype=np.int32).reshape(512, 512)))

    # sparse.md: DSD (dense = sparse @ dense) matmul over the non-zero blocks
    blk = 128
    num_blocks = 3
    def dsd_kernel(idxs_i_ref, idxs_k_ref, x_ref, y_ref, _, o_ref, accum_scratch):
        del idxs_k_ref
        blk_idx = pl.program_id(1)
        is_start = blk_idx == 0
        changed_blocks = (idxs_i_ref[blk_idx] != idxs_i_ref[jnp.maximum(blk_idx - 1, 0)])
        @pl.when(is_start | changed_blocks)
        def _():
            accum_scratch[...] = jnp.zeros_like(accum_scratch)
        accum_scratch[...] += jnp.dot(x_ref[0, :, :], y_ref[...],
                                      preferred_element_type=jnp.float32)
        next_block_change = (idxs_i_ref[blk_idx]
                             != idxs_i_ref[jnp.minimum(blk_idx + 1, num_blocks)])
        is_end = blk_idx == (num_blocks - 1)
        @pl.when(is_end | next_block_change)
        def _():
            o_ref[...] = accum_scratch[...].astype(o_ref.dtype)
    def x_map(j, blk_idx, blk_idxs_i, blk_idxs_k):
        return (blk_idx, 0, 0)
    def y_map(j, blk_idx, blk_idxs_i, blk_idxs_k):
        return (blk_idxs_k[blk_idx], j)
    def o_map(j, blk_idx, blk_idxs_i, blk_idxs_k):
        return (blk_idxs_i[blk_idx], j)
    def dsd(indices_i, indices_k, x_blocks, y, zeros):
        grid_spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=2, grid=(y.shape[1] // blk, num_blocks),
            in_specs=[pl.BlockSpec((1, blk, blk), x_map), pl.BlockSpec((blk, blk), y_map),
                      pl.BlockSpec((blk, blk), o_map)],
            out_specs=pl.BlockSpec((blk, blk), o_map),
            scratch_shapes=[pltpu.VMEM((blk, blk), dtype=jnp.float32)])
        return call(dsd_kernel, grid_spec=grid_spec, out_shape=S(zeros.shape, zeros.dtype),
                    input_output_aliases={4: 0})(indices_i, indices_k, x_blocks, y, zeros)
    bf16 = jnp.bfloat16
    K["doc_sparse_dsd"] = (dsd, (np.array([0, 0, 1], np.int32), np.array([0, 1, 1], np.int32),
                                 np.ones((num_blocks, blk, blk), bf16),
                                 np.ones((2 * blk, 2 * blk), bf16),
                                 np.zeros((2 * blk, 2 * blk), bf16)))

    # sparse.md: matmul under a block-sparse mask (blocks of zeros skipped)
    def sparse_mask_matmul(block_mask_ref, prefetch_mask, prefetch_i, prefetch_j,
                           x_ref, y_ref, mask_ref, o_ref, accum_scratch):
        del prefetch_mask, prefetch_i, prefetch_j
        i, j, k = pl.program_id(0), pl.program_id(1), pl.program_id(2)
        should_compute = block_mask_ref[i, j] != 0
        @pl.when(k == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)
            accum_scratch[...] = jnp.zeros_like(accum_scratch[...])
        @pl.when(should_compute)
        def _():
            result = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)
            accum_scratch[...] += result
            @pl.when(k == pl.num_programs(2) - 1)
            def _():
                o_ref[...] = (mask_ref[0, ...] * accum_scratch[...]).astype(o_ref.dtype)
    def mx_map(i, j, k, block_mask, prefetch_mask, prefetch_i, prefetch_j):
        k_fetch = (block_mask[i, j] != 0) * k
        return (prefetch_i[i, j], k_fetch)
    def my_map(i, j, k, block_mask, prefetch_mask, prefetch_i, prefetch_j):
        k_fetch = (block_mask[i, j] != 0) * k
        return (k_fetch, prefetch_j[i, j])
    def mask_map(i, j, k, block_mask, prefetch_mask, *_):
        return (prefetch_mask[i, j], 0, 0)
    def mo_map(i, j, k, *_):
        return (i, j)
    def masked(block_mask, prefetch_mask, prefetch_i, prefetch_j, x, y, mask_data):
        grid_spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=4, grid=(2, 2, 2),
            in_specs=[pl.BlockSpec((blk, blk), mx_map), pl.BlockSpec((blk, blk), my_map),
                      pl.BlockSpec((1, blk, blk), mask_map)],
            out_specs=pl.BlockSpec((blk, blk), mo_map),
            scratch_shapes=[pltpu.VMEM((blk, blk), dtype=jnp.float32)])
        return call(sparse_mask_matmul, grid_spec=grid_spec,
                    out_shape=S((2 * blk, 2 * blk), bf16))(
            block_mask, prefetch_mask, prefetch_i, prefetch_j, x, y, mask_data)
    tri = np.array([[1, 0], [1, 1]], np.int32)
    K["doc_sparse_mask_matmul"] = (masked, (
        tri, np.array([[0, 0], [1, 0]], np.int32), np.array([[0, 1], [1, 1]], np.int32),
        np.array([[0, 1], [0, 1]], np.int32), np.ones((2 * blk, 2 * blk), bf16),
        np.ones((2 * blk, 2 * blk), bf16),
        np.stack([np.tril(np.ones((blk, blk), np.int32)), np.ones((blk, blk), np.int32)])))
    return K

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

    # run_scoped with keyword allocations: SMEM, an array of regular semaphores; a DMA
    # of priority 1 into SMEM, a scalar read back
    def scoped_smem_kernel(s_hbm, x_ref, o_ref):
        def body(s_smem, sems, dsem):
            pltpu.async_copy(s_hbm, s_smem, dsem, priority=1).wait()
            pl.semaphore_signal(sems.at[1], s_smem[0, 0])
            n = pl.semaphore_read(sems.at[1])
            pl.semaphore_wait(sems.at[1], n)
            o_ref[...] = x_ref[...] * s_smem[0, 1].astype(jnp.float32)
        pl.run_scoped(body, s_smem=pltpu.SMEM((8, 128), jnp.int32),
                      sems=pltpu.SemaphoreType.REGULAR((2,)), dsem=pltpu.SemaphoreType.DMA)
    def scoped_smem(s, x):
        return call(scoped_smem_kernel, out_shape=S(x.shape, x.dtype),
                    in_specs=[ANY, pl.BlockSpec(memory_space=pltpu.VMEM)])(s, x)
    K["dma_scoped_smem"] = (scoped_smem, (np.arange(8 * 128, dtype=np.int32).reshape(8, 128) + 3,
                                          np.ones((8, 128), np.float32)))

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


def distributed_kernels(jax, jnp, pl, pltpu, interpret=False):
    """docs/pallas/tpu/distributed.md's right permute and all-gather kernels (remote DMAs
    to the mesh neighbour, ``lax.axis_index`` in the kernel) on a mesh of one device, the
    most one chip holds (so each DMA reaches the device itself)."""
    K = {}
    lax = jax.lax
    P = jax.sharding.PartitionSpec
    num_devices = 1
    mesh = jax.make_mesh((num_devices,), ("x",))
    partition = P()  # (one device: the page's P(None, 'x') shards over it alike)

    def right_permute_kernel(input_ref, output_ref, send_sem, recv_sem):
        my_id = lax.axis_index("x")
        right_neighbor = lax.rem(my_id + 1, num_devices)
        remote_copy_op = pltpu.make_async_remote_copy(
            src_ref=input_ref, dst_ref=output_ref, send_sem=send_sem, recv_sem=recv_sem,
            device_id=(right_neighbor,), device_id_type=pl.DeviceIdType.MESH)
        remote_copy_op.start()
        remote_copy_op.wait()
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=([pltpu.SemaphoreType.DMA] * 2))
    right_permute = pl.pallas_call(right_permute_kernel,
                                   out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                                   grid_spec=grid_spec, interpret=interpret)
    K["doc_distributed_right_permute"] = (jax.shard_map(
        right_permute, mesh=mesh, in_specs=partition, out_specs=partition, check_vma=False),
        (np.arange(8 * 128, dtype=np.float32).reshape(8, 128),))

    def all_gather_kernel(input_ref, output_ref, local_copy_sem, send_sem, recv_sems):
        outer_step = pl.program_id(0)
        my_id = lax.axis_index("x")
        right_neighbor = lax.rem(my_id + 1, num_devices)
        copy_slot = my_id - outer_step
        copy_slot = lax.rem(copy_slot + num_devices, num_devices)

        @pl.when(outer_step == 0)
        def _():
            local_copy_op = pltpu.make_async_copy(
                src_ref=input_ref, dst_ref=output_ref.at[my_id], sem=local_copy_sem)
            local_copy_op.start()
            local_copy_op.wait()

        remote_copy_op = pltpu.make_async_remote_copy(
            src_ref=output_ref.at[copy_slot], dst_ref=output_ref.at[copy_slot],
            send_sem=send_sem, recv_sem=recv_sems.at[outer_step],
            device_id=(right_neighbor,), device_id_type=pl.DeviceIdType.MESH)
        remote_copy_op.start()
        remote_copy_op.wait()
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=([pltpu.SemaphoreType.DMA] * 2
                        + [pltpu.SemaphoreType.DMA((num_devices,))]),
        grid=(num_devices,))  # (the page's num_devices - 1 steps: one, to run at all)
    all_gather = pl.pallas_call(
        all_gather_kernel, out_shape=jax.ShapeDtypeStruct((num_devices, 8, 128), jnp.float32),
        grid_spec=grid_spec, interpret=interpret)
    K["doc_distributed_all_gather"] = (jax.shard_map(
        all_gather, mesh=mesh, in_specs=partition, out_specs=partition, check_vma=False),
        (np.arange(8 * 128, dtype=np.float32).reshape(8, 128),))

    def local_barrier(left_neighbor, right_neighbor, double_barrier=True):
        barrier_sem = pltpu.get_barrier_semaphore()
        for neighbor in [left_neighbor, right_neighbor]:
            pl.semaphore_signal(barrier_sem, inc=1, device_id=(neighbor,),
                                device_id_type=pl.DeviceIdType.MESH)
        pl.semaphore_wait(barrier_sem, 2)
        if double_barrier:
            @functools.partial(pl.run_scoped, second_barrier=pltpu.SemaphoreType.REGULAR)
            def _(second_barrier):
                for neighbor in [left_neighbor, right_neighbor]:
                    pl.semaphore_signal(second_barrier, inc=1, device_id=(neighbor,),
                                        device_id_type=pl.DeviceIdType.MESH)
                pl.semaphore_wait(second_barrier, 2)

    def all_reduce_kernel(x_ref, o_ref, hbm_scratch, copy_sem, remote_recv_sem,
                          remote_send_sem, capacity_sem, receive_scratch):
        outer_step = pl.program_id(0)
        working_slot = lax.rem(outer_step, 2)
        receiving_slot = 1 - working_slot
        my_id = lax.axis_index("x")
        right_neighbor = lax.rem(my_id + 1, num_devices)
        left_neighbor = lax.rem(my_id - 1 + num_devices, num_devices)

        @pl.when(outer_step == 0)
        def _():
            local_barrier(left_neighbor, right_neighbor)
            o_ref[...] = jnp.zeros_like(o_ref)
            receive_scratch[...] = jnp.zeros_like(receive_scratch)
            initial_copy = pltpu.make_async_remote_copy(
                src_ref=x_ref, dst_ref=hbm_scratch.at[working_slot],
                send_sem=remote_send_sem, recv_sem=remote_recv_sem,
                device_id=(right_neighbor,), device_id_type=pl.DeviceIdType.MESH)
            initial_copy.start()
            initial_copy.wait()

        pl.semaphore_signal(capacity_sem, inc=1, device_id=(left_neighbor,),
                            device_id_type=pl.DeviceIdType.MESH)
        local_copy = pltpu.make_async_copy(src_ref=hbm_scratch.at[working_slot],
                                           dst_ref=receive_scratch, sem=copy_sem)
        local_copy.start()
        pl.semaphore_wait(capacity_sem, 1)
        remote_copy = pltpu.make_async_remote_copy(
            src_ref=hbm_scratch.at[working_slot], dst_ref=hbm_scratch.at[receiving_slot],
            send_sem=remote_send_sem, recv_sem=remote_recv_sem, device_id=(right_neighbor,),
            device_id_type=pl.DeviceIdType.MESH)
        remote_copy.start()
        local_copy.wait()
        o_ref[...] += receive_scratch[...]
        remote_copy.wait()
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0, in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=[pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pl.ANY)],
        grid=(num_devices,),
        scratch_shapes=([pltpu.SemaphoreType.DMA] * 3 + [pltpu.SemaphoreType.REGULAR]
                        + [pltpu.VMEM((8, 128), jnp.float32)]))
    all_reduce = pl.pallas_call(
        all_reduce_kernel, out_shape=(jax.ShapeDtypeStruct((8, 128), jnp.float32),
                                      jax.ShapeDtypeStruct((2, 8, 128), jnp.float32)),
        grid_spec=grid_spec, compiler_params=pltpu.CompilerParams(collective_id=0),
        interpret=interpret)
    K["doc_distributed_all_reduce"] = (jax.shard_map(
        all_reduce, mesh=mesh, in_specs=partition, out_specs=partition, check_vma=False),
        (np.arange(8 * 128, dtype=np.float32).reshape(8, 128),))
    K["doc_distributed_reduce_scatter"] = _reduce_scatter(jax, jnp, pl, pltpu, interpret,
                                                          mesh, partition, local_barrier)
    return K


def _reduce_scatter(jax, jnp, pl, pltpu, interpret, mesh, partition, local_barrier):
    """distributed.md's bidirectional reduce-scatter (its first version), one device."""
    lax = jax.lax
    num_devices = 1
    block_size = (16, 128)
    LEFT, RIGHT = 0, 1

    def mod(x, n):
        return lax.rem(x + n, n)

    def signal(left_or_right, semaphore):
        my_id = lax.axis_index("x")
        neighbor = mod(my_id - 1 if left_or_right == LEFT else my_id + 1, num_devices)
        pl.semaphore_signal(semaphore, inc=1, device_id=(neighbor,),
                            device_id_type=pl.DeviceIdType.MESH)

    def reduce_scatter_kernel(x_ref, o_ref, hbm_scratch, local_copy_sem, left_recv_sem,
                              left_send_sem, right_recv_sem, right_send_sem,
                              left_capacity_sem, right_capacity_sem, accum_scratch):
        outer_step = pl.program_id(0)
        phase = pl.program_id(1)
        is_start = jnp.logical_and(outer_step == 0, phase == 0)
        last_iteration = outer_step == pl.num_programs(0) - 1
        working_slot = lax.rem(outer_step, 2)
        receiving_slot = 1 - working_slot
        my_id = lax.axis_index("x")
        right_neighbor = mod(my_id + 1, num_devices)
        left_neighbor = mod(my_id - 1, num_devices)
        left_copy_device = mod(my_id + outer_step + 1, num_devices)
        right_copy_device = mod(my_id - outer_step - 1, num_devices)
        left_copy_slice = pl.ds(0, block_size[0] // 2)
        right_copy_slice = pl.ds(block_size[0] // 2, block_size[0] // 2)
        current_phase_slice = pl.ds(phase * (block_size[0] // 2), block_size[0] // 2)
        initial_left_copy = pltpu.make_async_remote_copy(
            src_ref=x_ref.at[my_id, left_copy_slice],
            dst_ref=hbm_scratch.at[working_slot, left_copy_slice], send_sem=left_send_sem,
            recv_sem=left_recv_sem, device_id=(left_neighbor,),
            device_id_type=pl.DeviceIdType.MESH)
        initial_right_copy = pltpu.make_async_remote_copy(
            src_ref=x_ref.at[my_id, right_copy_slice],
            dst_ref=hbm_scratch.at[working_slot, right_copy_slice], send_sem=right_send_sem,
            recv_sem=right_recv_sem, device_id=(right_neighbor,),
            device_id_type=pl.DeviceIdType.MESH)
        left_copy = pltpu.make_async_remote_copy(
            src_ref=hbm_scratch.at[working_slot, left_copy_slice],
            dst_ref=hbm_scratch.at[receiving_slot, left_copy_slice], send_sem=left_send_sem,
            recv_sem=left_recv_sem, device_id=(left_neighbor,),
            device_id_type=pl.DeviceIdType.MESH)
        right_copy = pltpu.make_async_remote_copy(
            src_ref=hbm_scratch.at[receiving_slot, right_copy_slice],
            dst_ref=hbm_scratch.at[working_slot, right_copy_slice], send_sem=right_send_sem,
            recv_sem=right_recv_sem, device_id=(right_neighbor,),
            device_id_type=pl.DeviceIdType.MESH)

        @pl.when(is_start)
        def _():
            local_barrier(left_neighbor, right_neighbor)
            o_ref[...] = jnp.zeros_like(o_ref[...])
            accum_scratch[...] = jnp.zeros_like(accum_scratch[...])
            initial_left_copy.start()
            initial_left_copy.wait()
            initial_right_copy.start()
            signal(LEFT, right_capacity_sem)
            signal(RIGHT, left_capacity_sem)

        @pl.when(~is_start)
        def _():
            @pl.when(phase == LEFT)
            def _():
                pl.semaphore_wait(right_capacity_sem, 1)
                right_copy.start()

            @pl.when(phase == RIGHT)
            def _():
                pl.semaphore_wait(left_capacity_sem, 1)
                left_copy.start()

        local_copy = pltpu.make_async_copy(
            src_ref=hbm_scratch.at[working_slot, current_phase_slice], dst_ref=accum_scratch,
            sem=local_copy_sem)
        local_copy.start()
        local_copy.wait()

        @pl.when(~last_iteration)
        def _():
            @pl.when(phase == LEFT)
            def _():
                accum_scratch[...] += x_ref[left_copy_device, left_copy_slice]

            @pl.when(phase == RIGHT)
            def _():
                accum_scratch[...] += x_ref[right_copy_device, right_copy_slice]

        local_copy = pltpu.make_async_copy(
            src_ref=accum_scratch, dst_ref=hbm_scratch.at[working_slot, current_phase_slice],
            sem=local_copy_sem)
        local_copy.start()
        local_copy.wait()

        @pl.when(is_start)
        def _():
            initial_right_copy.wait()

        @pl.when(~is_start)
        def _():
            @pl.when(phase == LEFT)
            def _():
                right_copy.wait()
                signal(LEFT, right_capacity_sem)

            @pl.when(phase == RIGHT)
            def _():
                left_copy.wait()
                signal(RIGHT, left_capacity_sem)

        @pl.when(last_iteration)
        def _():
            @pl.when(phase == LEFT)
            def _():
                o_ref[left_copy_slice, ...] = accum_scratch[...]
                pl.semaphore_wait(right_capacity_sem, 1)

            @pl.when(phase == RIGHT)
            def _():
                o_ref[right_copy_slice, ...] = accum_scratch[...]
                pl.semaphore_wait(left_capacity_sem, 1)

    out_shape = (jax.ShapeDtypeStruct((block_size[0], block_size[1]), jnp.float32),
                 jax.ShapeDtypeStruct((2, block_size[0], block_size[1]), jnp.float32))
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0, in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=[pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pl.ANY)],
        grid=(num_devices, 2),
        scratch_shapes=([pltpu.SemaphoreType.DMA] * 5 + [pltpu.SemaphoreType.REGULAR] * 2
                        + [pltpu.VMEM((block_size[0] // 2, block_size[1]), jnp.float32)]))

    def pallas_reduce_scatter(input_arr):
        input_arr = input_arr.reshape(num_devices, block_size[0], block_size[1])
        return pl.pallas_call(reduce_scatter_kernel, out_shape=out_shape, grid_spec=grid_spec,
                              compiler_params=pltpu.CompilerParams(collective_id=0),
                              interpret=interpret)(input_arr)[0]
    return (jax.shard_map(pallas_reduce_scatter, mesh=mesh, in_specs=partition,
                          out_specs=partition, check_vma=False),
            (np.arange(16 * 128, dtype=np.float32).reshape(16, 128),))

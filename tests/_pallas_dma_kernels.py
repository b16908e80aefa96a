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
    return K

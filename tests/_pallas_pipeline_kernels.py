"""Pallas TPU kernels that pipeline their own DMAs with ``pltpu.emit_pipeline`` (issue #42:
JAX's jax/_src/pallas/mosaic/pipeline.py), written against a JAX-like namespace (JAX
itself, or traxla): ``pipeline_kernels(jax, jnp, pl, pltpu, interpret=False)`` ->
``{name: (fn, args)}``, shared by the Mosaic comparison and the interpret-mode run
(tests/test_pallas_pipeline.py) and the chip run (tests/test_tpu_pallas.py).
``reference(name, *args)`` is what each computes (NumPy)."""
import functools
import numpy as np


def pipeline_kernels(jax, jnp, pl, pltpu, interpret=False):
    K = {}
    call = functools.partial(pl.pallas_call, interpret=interpret)
    S = jax.ShapeDtypeStruct
    ANY = pl.BlockSpec(memory_space=pl.ANY)
    rows = lambda n: pl.BlockSpec((n, 128), lambda i: (i, 0))  # noqa: E731

    # the pipelining page's HBM -> VMEM add: two inputs, one output, grid (4,)
    def add_kernel(x_hbm, y_hbm, o_hbm):
        def body(x, y, o):
            o[...] = x[...] + y[...]
        pltpu.emit_pipeline(body, grid=(4,), in_specs=[rows(8)] * 2,
                            out_specs=rows(8))(x_hbm, y_hbm, o_hbm)
    def add(x, y):
        return call(add_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY, ANY],
                    out_specs=ANY)(x, y)
    x32 = np.arange(32 * 128, dtype=np.float32).reshape(32, 128)
    K["pipeline_add"] = (add, (x32, x32 + 1))

    # a block matmul: grid (i, j, k), the output block accumulated over k
    def matmul_kernel(x_hbm, y_hbm, o_hbm):
        def body(x, y, o):
            @pl.when(pl.program_id(2) == 0)
            def _():
                o[...] = jnp.zeros_like(o)
            o[...] += jnp.dot(x[...], y[...], preferred_element_type=jnp.float32)
        pltpu.emit_pipeline(
            body, grid=(2, 2, 2),
            in_specs=[pl.BlockSpec((128, 128), lambda i, j, k: (i, k)),
                      pl.BlockSpec((128, 128), lambda i, j, k: (k, j))],
            out_specs=pl.BlockSpec((128, 128), lambda i, j, k: (i, j)))(x_hbm, y_hbm, o_hbm)
    def matmul(x, y):
        return call(matmul_kernel, out_shape=S((x.shape[0], y.shape[1]), jnp.float32),
                    in_specs=[ANY, ANY], out_specs=ANY)(x, y)
    # small integers: exact in bfloat16, so the MXU's default-precision f32 product (bf16
    # passes) equals NumPy's exactly; linspace values differed by 2e-3 on the chip
    m = (np.arange(256 * 256) % 7 - 3).astype(np.float32).reshape(256, 256)
    K["pipeline_matmul"] = (matmul, (m, m.T.copy()))

    # the page's dynamic block shapes: BoundedSlice blocks whose starts and sizes an
    # SMEM table gives
    def dynamic_block_kernel(x_hbm, slices_hbm, o_hbm, slices_smem):
        pltpu.sync_copy(slices_hbm, slices_smem)
        def body(x_vmem, o_vmem):
            o_vmem[...] = x_vmem[...]
        def index_map(i):
            start = slices_smem[i, 0]
            return (pl.ds(start, slices_smem[i, 1] - start), 0)
        spec = pl.BlockSpec(block_shape=(pl.BoundedSlice(8), 128), index_map=index_map)
        pltpu.emit_pipeline(body, grid=(slices_smem.shape[0],), in_specs=[spec],
                            out_specs=spec)(x_hbm, o_hbm)
    def dynamic_block(x, slices):
        return call(dynamic_block_kernel, in_specs=[ANY, ANY], out_specs=ANY,
                    out_shape=S((8, 128), jnp.float32),
                    scratch_shapes=(pltpu.SMEM(slices.shape, jnp.int32),))(x, slices)
    K["pipeline_dynamic_block"] = (dynamic_block, (
        x32[:8], np.array([[0, 2], [2, 3], [3, 5], [5, 8]], np.int32)))

    # buffers allocated once (emit_pipeline_with_allocations) and used by two pipelines;
    # three input buffers; an input already in VMEM (the whole array, not copied)
    def alloc_kernel(x_hbm, s_ref, o_hbm):
        def body(x, s, o):
            o[...] = x[...] * s[...]
        pipeline, make_allocations = pltpu.emit_pipeline_with_allocations(
            body, grid=(4,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0),
                                   pipeline_mode=pl.Buffered(3)),
                      pl.BlockSpec((8, 128), lambda i: (0, 0))],
            out_specs=rows(8))
        def scoped(allocations):
            pipeline(x_hbm, s_ref, o_hbm, allocations=allocations)
            pipeline(o_hbm, s_ref, o_hbm, allocations=allocations)
        pl.run_scoped(scoped, make_allocations(x_hbm, s_ref, o_hbm))
    def allocs(x, s):
        return call(alloc_kernel, out_shape=S(x.shape, x.dtype),
                    in_specs=[ANY, pl.BlockSpec(memory_space=pltpu.VMEM)],
                    out_specs=ANY)(x, s)
    K["pipeline_allocations"] = (allocs, (x32, np.full((8, 128), 0.5, np.float32)))

    # lookahead prefetch over repeated block indices, and a nested pipeline: the outer
    # one moves (16, 128) blocks into VMEM, the inner one works on (8, 128) views of them
    def nested_kernel(x_hbm, o_hbm):
        def inner(x, o):
            o[...] = x[...] + 1.0
        def outer(x_vmem, o_vmem):
            pltpu.emit_pipeline(inner, grid=(2,), in_specs=[rows(8)],
                                out_specs=rows(8))(x_vmem, o_vmem)
        pltpu.emit_pipeline(
            outer, grid=(4,),
            in_specs=[pl.BlockSpec((16, 128), lambda i: (i // 2, 0),
                                   pipeline_mode=pl.Buffered(2, use_lookahead=True))],
            out_specs=pl.BlockSpec((16, 128), lambda i: (i // 2, 0)))(x_hbm, o_hbm)
    def nested(x):
        return call(nested_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY],
                    out_specs=ANY)(x)
    K["pipeline_nested_lookahead"] = (nested, (x32,))

    # a block that does not divide the array (its last block cut to whole tiles), and
    # no_pipelining (synchronous copies)
    def ragged_kernel(x_hbm, o_hbm):
        def body(x, o):
            o[...] = x[...] * 2.0
        pltpu.emit_pipeline(body, grid=(3,), in_specs=[rows(16)], out_specs=rows(16))(
            x_hbm, o_hbm)
        pltpu.emit_pipeline(body, grid=(3,), in_specs=[rows(16)], out_specs=rows(16),
                            no_pipelining=True)(o_hbm, o_hbm)
    def ragged(x):
        return call(ragged_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY],
                    out_specs=ANY)(x)
    K["pipeline_ragged_sync"] = (ragged, (np.ones((40, 128), np.float32),))
    # a whole-array (trivially windowed) HBM input and output: copied once, around the loop
    def trivial_kernel(x_hbm, b_hbm, o_hbm, s_hbm):
        def body(x, b, o, s):
            o[...] = x[...] + b[...]
            s[...] = x[...] * 2.0
        whole = pl.BlockSpec((8, 128), lambda i: (0, 0))
        pltpu.emit_pipeline(body, grid=(4,), in_specs=[rows(8), whole],
                            out_specs=[rows(8), whole])(x_hbm, b_hbm, o_hbm, s_hbm)
    def trivial(x, b):
        return call(trivial_kernel, out_shape=(S(x.shape, x.dtype), S(b.shape, b.dtype)),
                    in_specs=[ANY, ANY], out_specs=(ANY, ANY))(x, b)
    K["pipeline_trivial"] = (trivial, (x32, x32[:8]))
    # the grid split among the kernel's grid axis 0 (core_axis), a parallel dimension
    def cores_kernel(x_hbm, o_hbm):
        def body(x, o):
            o[...] = x[...] * 3.0
        pltpu.emit_pipeline(body, grid=(4,), in_specs=[rows(8)], out_specs=rows(8),
                            core_axis=0, dimension_semantics=(pltpu.PARALLEL,))(x_hbm, o_hbm)
    def cores(x):
        return call(cores_kernel, out_shape=S(x.shape, x.dtype), grid=(2,), in_specs=[ANY],
                    out_specs=ANY,
                    compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)))(x)
    K["pipeline_cores"] = (cores, (x32,))
    # blocks in SMEM (scalar reads and writes of a slot)
    def smem_kernel(x_hbm, o_hbm):
        def body(x, o):
            for k in range(8):
                o[0, k] = x[0, k] + k
        spec = pl.BlockSpec((1, 8), lambda i: (i, 0), memory_space=pltpu.SMEM)
        pltpu.emit_pipeline(body, grid=(4,), in_specs=[spec], out_specs=spec)(x_hbm, o_hbm)
    def smem(x):
        return call(smem_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY],
                    out_specs=ANY)(x)
    K["pipeline_smem"] = (smem, (np.arange(32, dtype=np.int32).reshape(4, 8),))
    # an Element block dimension (the index map gives element offsets), and a squeezed one
    def element_kernel(x_hbm, o_hbm):
        def body(x, o):
            o[...] = x[...] - 1.0
        pltpu.emit_pipeline(
            body, grid=(4,), in_specs=[pl.BlockSpec((pl.Element(8), 128), lambda i: (i * 8, 0))],
            out_specs=rows(8))(x_hbm, o_hbm)
    def element(x):
        return call(element_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY],
                    out_specs=ANY)(x)
    K["pipeline_element"] = (element, (x32,))
    def squeezed_kernel(x_hbm, o_hbm):
        def body(x, o):
            o[...] = x[...] * 2.0
        spec = pl.BlockSpec((None, 8, 128), lambda i, j: (i, j, 0))
        pltpu.emit_pipeline(body, grid=(2, 2), in_specs=[spec], out_specs=spec)(x_hbm, o_hbm)
    def squeezed(x):
        return call(squeezed_kernel, out_shape=S(x.shape, x.dtype), in_specs=[ANY],
                    out_specs=ANY)(x)
    K["pipeline_squeezed"] = (squeezed, (x32.reshape(2, 16, 128),))
    return K


def reference(name, *args):
    if name == "pipeline_add":
        return args[0] + args[1]
    if name == "pipeline_matmul":
        return args[0] @ args[1]
    if name == "pipeline_dynamic_block":
        return args[0]
    if name == "pipeline_allocations":
        x, s = args
        return x * np.tile(s, (4, 1)) * np.tile(s, (4, 1))
    if name == "pipeline_nested_lookahead":
        return args[0] + 1.0
    if name == "pipeline_ragged_sync":
        return args[0] * 4.0
    if name == "pipeline_trivial":
        x, b = args
        return x + np.tile(b, (4, 1)), x[24:] * 2.0
    if name == "pipeline_cores":
        return args[0] * 3.0
    if name == "pipeline_element":
        return args[0] - 1.0
    if name == "pipeline_squeezed":
        return args[0] * 2.0
    if name == "pipeline_smem":
        return args[0] + np.arange(8, dtype=np.int32)
    raise KeyError(name)

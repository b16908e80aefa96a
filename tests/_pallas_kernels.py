"""Pallas kernels written against a JAX-like namespace (JAX itself, or traxla), shared by
the Mosaic lowering comparison (tests/test_pallas_mosaic.py) and the chip run
(tests/test_tpu_pallas.py): ``kernels(jax, jnp, pl, pltpu, interpret=False)`` ->
``{name: (fn, args)}``."""
import functools

import numpy as np


def kernels(jax, jnp, pl, pltpu, interpret=False):
    K = {}
    call = functools.partial(pl.pallas_call, interpret=interpret)
    S = jax.ShapeDtypeStruct
    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]
    def add(x, y):
        return call(add_kernel, out_shape=S(x.shape, x.dtype))(x, y)
    x = np.ones((8, 128), np.float32)
    K["add"] = (add, (x, x))

    def ew_kernel(x_ref, o_ref):
        v = x_ref[...]
        o_ref[...] = jnp.exp(v) * 2.0 - jnp.maximum(v, 0.0)
    def ew(x):
        return call(ew_kernel, out_shape=S(x.shape, x.dtype),
                    grid=(2, 2), in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j))],
                    out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, j)))(x)
    K["elementwise_grid"] = (ew, (np.ones((16, 256), np.float32),))

    def mm_kernel(x_ref, y_ref, o_ref, acc_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)
        acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)
        @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
        def _():
            o_ref[...] = acc_ref[...].astype(o_ref.dtype)
    def matmul(x, y):
        bm, bk, bn = 128, 128, 128
        m, k = x.shape
        n = y.shape[1]
        return call(
            mm_kernel, out_shape=S((m, n), x.dtype),
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=0, grid=(m // bm, n // bn, k // bk),
                in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                          pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
                out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
                scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)]),
            compiler_params=pltpu.CompilerParams(
                dimension_semantics=("parallel", "parallel", "arbitrary")))(x, y)
    K["matmul"] = (matmul, (np.ones((256, 256), np.float32), np.ones((256, 256), np.float32)))
    return _more(jax, jnp, pl, pltpu, K, interpret)



def _more(jax, jnp, pl, pltpu, K, interpret):
    call = functools.partial(pl.pallas_call, interpret=interpret)
    S = jax.ShapeDtypeStruct
    def red_kernel(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = jnp.broadcast_to(jnp.sum(x, axis=1, keepdims=True), x.shape) + \
            jnp.max(x, axis=0, keepdims=True)
    def red(x):
        return call(red_kernel, out_shape=S(x.shape, x.dtype))(x)
    K["reduction"] = (red, (np.ones((8, 128), np.float32),))

    def cast_kernel(x_ref, b_ref, o_ref):
        x = x_ref[...].astype(jnp.float32)
        y = jnp.where(x > 0, x, 0.5 * x) + b_ref[...]
        o_ref[...] = y.astype(o_ref.dtype)
    def cast(x, b):
        return call(cast_kernel, out_shape=S(x.shape, jnp.bfloat16),
                    compiler_params=pltpu.CompilerParams(vmem_limit_bytes=32 * 1024 * 1024))(x, b)
    K["broadcast_cast"] = (cast, (np.ones((16, 128), jnp.bfloat16), np.ones((1, 128), np.float32)))

    def pf_kernel(s_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] * s_ref[pl.program_id(0)].astype(jnp.float32)
    def pf(s, x):
        spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i, s: (s[i], 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i, s: (i, 0)))
        return call(pf_kernel, out_shape=S(x.shape, x.dtype),
                    grid_spec=spec)(s, x)
    K["scalar_prefetch"] = (pf, (np.array([1, 0], np.int32), np.ones((16, 128), np.float32)))

    def iota_kernel(o_ref):
        r = jax.lax.broadcasted_iota(jnp.int32, o_ref.shape, 0)
        c = jax.lax.broadcasted_iota(jnp.int32, o_ref.shape, 1)
        o_ref[...] = jnp.where(r >= c, 1.0, 0.0).astype(o_ref.dtype) * jnp.exp(-1.0)
    def iota():
        return call(iota_kernel, out_shape=S((8, 128), jnp.float32))()
    K["iota_mask"] = (iota, ())

    def alias_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0
    def alias(x):
        return call(alias_kernel, out_shape=S(x.shape, x.dtype),
                    input_output_aliases={0: 0})(x)
    K["aliases"] = (alias, (np.ones((8, 128), np.float32),))

    def fori_kernel(x_ref, o_ref):
        def body(i, acc):
            return acc + x_ref[...] * 2.0
        o_ref[...] = jax.lax.fori_loop(0, 4, body, jnp.zeros(o_ref.shape, jnp.float32))
    def fori(x):
        return call(fori_kernel, out_shape=S(x.shape, x.dtype))(x)
    K["fori_loop"] = (fori, (np.ones((8, 128), np.float32),))
    def sq_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0
    def sq(x):
        return call(sq_kernel, out_shape=S(x.shape, x.dtype), grid=(2, 2),
                    in_specs=[pl.BlockSpec((None, 8, 128), lambda b, i: (b, i, 0))],
                    out_specs=pl.BlockSpec((None, 8, 128), lambda b, i: (b, i, 0)))(x)
    K["squeezed"] = (sq, (np.ones((2, 16, 128), np.float32),))

    def attn_kernel(q_ref, k_ref, v_ref, o_ref):
        q, k, v = q_ref[...], k_ref[...], v_ref[...]
        s = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)
        m = jnp.max(s, axis=-1, keepdims=True)
        p = jnp.exp(s - m)
        l = jnp.sum(p, axis=-1, keepdims=True)
        o = jnp.dot(p.astype(v.dtype), v, preferred_element_type=jnp.float32)
        o_ref[...] = (o / l).astype(o_ref.dtype)
    def attn(q, k, v):
        return call(attn_kernel, out_shape=S(q.shape, q.dtype))(q, k, v)
    qs = np.ones((128, 128), jnp.bfloat16)
    K["attention"] = (attn, (qs, qs, qs))

    def wl_kernel(n_ref, x_ref, o_ref):
        def body(i, acc):
            return acc + x_ref[...]
        o_ref[...] = jax.lax.fori_loop(0, n_ref[0], body, jnp.zeros(o_ref.shape, jnp.float32))
    def wl(n, x):
        return call(wl_kernel, out_shape=S(x.shape, x.dtype),
                    in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM),
                    pl.BlockSpec(memory_space=pltpu.VMEM)])(n, x)
    K["dynamic_fori"] = (wl, (np.array([3], np.int32), np.ones((8, 128), np.float32)))
    def misc_kernel(x_ref, o_ref):
        x = x_ref[...]
        y = jax.nn.relu(x) + x ** 3 + jnp.clip(x, 0, 1) + jax.lax.stop_gradient(x) * x ** -2
        o_ref[...] = jnp.concatenate([y, jnp.tanh(y)], axis=1)
    def misc(x):
        return call(misc_kernel, out_shape=S((8, 256), x.dtype))(x)
    K["misc"] = (misc, (np.ones((8, 128), np.float32),))
    def two_kernel(x_ref, y_ref, o1_ref, o2_ref):
        x, y = x_ref[...], y_ref[...]
        o1_ref[...] = jax.nn.softmax(x, axis=-1)
        o2_ref[...] = (y * 3 + 1) - jnp.abs(y) + jnp.minimum(y, 5)
    def two(x, y):
        return call(two_kernel, out_shape=(S(x.shape, x.dtype),
                                           S(y.shape, y.dtype)))(x, y)
    K["two_outputs_int"] = (two, (np.ones((8, 128), np.float32), np.ones((8, 128), np.int32)))

    def smem_kernel(x_ref, o_ref, s_ref):
        s_ref[0] = 0.0
        def body(i, c):
            s_ref[0] = s_ref[0] + x_ref[i]
            return c
        jax.lax.fori_loop(0, 4, body, 0)
        o_ref[0] = s_ref[0] * 2.0
    def smem(x):
        return call(smem_kernel, out_shape=S((1,), x.dtype),
                    in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                    out_specs=pl.BlockSpec(memory_space=pltpu.SMEM),
                    scratch_shapes=[pltpu.SMEM((1,), jnp.float32)])(x)
    K["smem_scalar"] = (smem, (np.ones((4,), np.float32),))

    def mask_kernel(x_ref, o_ref):
        x = x_ref[...]
        row = jax.lax.broadcasted_iota(jnp.int32, x.shape, 0) + pl.program_id(0) * 8
        o_ref[...] = (jnp.where(row < 12, x, -jnp.inf).astype(o_ref.dtype)
                      - jnp.mean(x, axis=0, keepdims=True))
    def mask(x):
        return call(mask_kernel, out_shape=S(x.shape, x.dtype), grid=(2,),
                    in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                    out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    K["mask_mean"] = (mask, (np.ones((16, 128), np.float32),))

    def rows_kernel(x_ref, o_ref):
        for r in range(2):
            o_ref[r] = x_ref[r] * 2.0
        o_ref[2:8] = x_ref[2:8] + x_ref[0:6]
    def rows(x):
        return call(rows_kernel, out_shape=S(x.shape, x.dtype))(x)
    K["row_indexing"] = (rows, (np.ones((8, 128), np.float32),))
    matmul = K["matmul"][0]  # batched: a grid axis of its own
    K["vmap_matmul"] = (jax.vmap(matmul, in_axes=(0, None)),
                        (np.ones((3, 256, 256), np.float32), np.ones((256, 256), np.float32)))
    def ew2_kernel(x_ref, y_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = jnp.exp(x) * y_ref[...] + jnp.sin(x)
    def ew2(x, y):
        return call(ew2_kernel, out_shape=S(x.shape, x.dtype), grid=(2,),
                    in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))] * 2,
                    out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x, y)
    x = np.ones((16, 128), np.float32)  # jvp: primals and tangents in one kernel
    K["jvp_both"] = (lambda x, y, tx, ty: jax.jvp(ew2, (x, y), (tx, ty)), (x, x, x, x))
    def bits_kernel(x_ref, f_ref, o_ref, p_ref):
        x = x_ref[...]
        y = (x << 2) ^ (x >> 1) ^ jax.lax.shift_right_logical(x, 3)
        o_ref[...] = ~y & 0xFF
        f = f_ref[...]
        p_ref[...] = jax.lax.clamp(-0.5, f, 0.5) + jnp.concatenate([f[:, 64:], f[:, :64]], axis=1)
    def bits(x, f):
        return call(bits_kernel, out_shape=(S(x.shape, x.dtype),
                                            S(f.shape, f.dtype)))(x, f)
    K["bits_slices"] = (bits, (np.ones((8, 128), np.int32), np.ones((8, 128), np.float32)))
    def total_kernel(x_ref, o_ref):
        o_ref[0] = jnp.sum(x_ref[...]) + jnp.max(x_ref[...])
    def total(x):
        return call(total_kernel, out_shape=S((1,), x.dtype),
                    out_specs=pl.BlockSpec(memory_space=pltpu.SMEM))(x)
    K["reduce_to_scalar"] = (total, (np.ones((8, 128), np.float32),))

    def bmm_kernel(q_ref, k_ref, o_ref):
        o_ref[...] = jnp.einsum("bqd,bkd->bqk", q_ref[...], k_ref[...],
                                preferred_element_type=jnp.float32)
    def bmm(q, k):
        return call(bmm_kernel, out_shape=S((2, 8, 128), jnp.float32))(q, k)
    K["batched_matmul"] = (bmm, (np.ones((2, 8, 128), np.float32),
                                 np.ones((2, 128, 128), np.float32)))

    def am_kernel(x_ref, o_ref, b_ref):
        x = x_ref[...]
        am = jnp.argmax(x, axis=1, keepdims=True).astype(jnp.int32)
        o_ref[...] = jnp.broadcast_to(am, x.shape)
        b_ref[...] = jax.lax.bitcast_convert_type(x, jnp.int32) >> 23
    def am(x):
        return call(am_kernel, out_shape=(S(x.shape, jnp.int32), S(x.shape, jnp.int32)))(x)
    K["argmax_bitcast"] = (am, (np.ones((8, 128), np.float32),))

    def any_kernel(x_ref, o_ref):
        x = x_ref[...]
        m = x > 0.5
        a = jnp.any(m, axis=1, keepdims=True)
        b = jnp.all(m, axis=0, keepdims=True)
        o_ref[...] = jnp.where(a & b, x, 0.0)
    def anyall(x):
        return call(any_kernel, out_shape=S(x.shape, x.dtype))(x)
    K["any_all"] = (anyall, (np.ones((8, 128), np.float32),))

    def sw_kernel(x_ref, o_ref):
        i = pl.program_id(0)
        x = x_ref[...]
        o_ref[...] = jax.lax.switch(i, [lambda v: v + 1.0, lambda v: v * 2.0, jnp.tanh], x)
    def sw(x):
        return call(sw_kernel, out_shape=S(x.shape, x.dtype), grid=(3,),
                    in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                    out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    K["switch"] = (sw, (np.ones((24, 128), np.float32),))
    return _refs(jax, jnp, pl, pltpu, K, interpret)


def _refs(jax, jnp, pl, pltpu, K, interpret):
    """Ref indexing: pl.ds with traced starts, strides."""
    call = functools.partial(pl.pallas_call, interpret=interpret)
    S = jax.ShapeDtypeStruct
    def ds_kernel(x_ref, o_ref):
        def body(j, c):
            rows = pl.ds(j * 8, 8)
            o_ref[rows, pl.ds(128, 128)] = (x_ref[rows, pl.ds(0, 128)] * 2.0
                                            + x_ref[pl.ds(0, 8), pl.ds(128, 128)])
            return c
        jax.lax.fori_loop(0, 3, body, 0)
        o_ref[:, pl.ds(pl.program_id(0) * 128, 128)] = x_ref[:, pl.ds(128, 128)]
    def ds(x):
        return call(ds_kernel, out_shape=S((24, 256), x.dtype), grid=(1,))(x)
    K["dynamic_slices"] = (ds, (np.ones((24, 256), np.float32),))

    def st_kernel(x_ref, o_ref):
        even = x_ref[pl.ds(0, 8, stride=2), :]
        o_ref[pl.ds(1, 8, stride=2), :] = even * 3.0
        o_ref[pl.ds(0, 8, stride=2), :] = x_ref[pl.ds(pl.program_id(0), 8, stride=2), :]
    def st(x):
        return call(st_kernel, out_shape=S(x.shape, x.dtype), grid=(1,))(x)
    K["strided"] = (st, (np.ones((16, 128), np.float32),))

    def unroll_kernel(x_ref, o_ref):
        def body(i, acc):
            return acc * 0.5 + x_ref[pl.ds(i * 8, 8), :]
        acc = jax.lax.fori_loop(0, 3, body, jnp.zeros((8, 128), jnp.float32), unroll=2)
        o_ref[...] = jax.lax.fori_loop(0, 2, body, acc, unroll=True)
    def unrolled(x):
        return call(unroll_kernel, out_shape=S((8, 128), x.dtype))(x)
    K["unrolled_loops"] = (unrolled, (np.ones((24, 128), np.float32),))

    def roll_kernel(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = (pltpu.roll(x, 3, 1) + pltpu.roll(x, pl.program_id(0) + 1, 0)
                      + pltpu.roll(x, 1, 1, stride=1, stride_axis=0))
    def rolled(x):
        return call(roll_kernel, out_shape=S(x.shape, x.dtype), grid=(1,))(x)
    K["roll"] = (rolled, (np.ones((8, 128), np.float32),))

    def bc_kernel(x_ref, o_ref, p_ref):
        x = x_ref[...]
        o_ref[...] = pltpu.bitcast(x, jnp.int32) & 0xFFFF
        p_ref[...] = pltpu.bitcast(pltpu.bitcast(x, jnp.int32), jnp.bfloat16) * 2
    def bc(x):
        return call(bc_kernel, out_shape=(S((16, 128), jnp.int32),
                                          S((32, 128), jnp.bfloat16)))(x)
    K["tpu_bitcast"] = (bc, (np.ones((32, 128), jnp.bfloat16),))

    def dc_kernel(x_ref, o_ref, acc_ref):
        @pl.when(pl.program_id(0) == 0)
        def _():  # (the kernel DCE drops the read only for a shape, and the dead where)
            acc_ref[...] = jnp.zeros_like(acc_ref[...])
            jnp.where(x_ref[...] > 0.0, 1.0, 2.0)
        v = x_ref[...]
        i = v.astype(jnp.int32)
        acc_ref[...] += (jnp.tile(v[:64, :], (2, 1)) + v.T + jnp.round(v)
                         + jnp.arctan2(v, 2.0) + jnp.where(jnp.isfinite(v), 1.0, 0.0)
                         + (jax.lax.population_count(i) + jax.lax.clz(i)).astype(jnp.float32))
        o_ref[...] = acc_ref[...]
    def dc(x):
        return call(dc_kernel, out_shape=S((256, 128), jnp.float32), grid=(2,),
                    in_specs=[pl.BlockSpec((128, 128), lambda i: (i, 0))],
                    out_specs=pl.BlockSpec((128, 128), lambda i: (i, 0)),
                    scratch_shapes=[pltpu.VMEM((128, 128), jnp.float32)])(x)
    K["dead_code_tile_math"] = (dc, (np.ones((256, 128), np.float32),))

    def bool_kernel(m_ref, x_ref, o_ref, n_ref):  # (booleans are int32 in the kernel's refs)
        m = m_ref[...]
        o_ref[...] = jnp.where(m, x_ref[...], 0.0)
        n_ref[...] = jnp.logical_not(m)
    def bools(m, x):
        return call(bool_kernel, out_shape=(S((8, 128), jnp.float32), S((8, 128), jnp.bool_)))(
            m, x)
    K["bool_refs"] = (bools, (np.arange(8 * 128).reshape(8, 128) % 3 == 0,
                              np.ones((8, 128), np.float32)))
    return K


def views(jax, pl, interpret=False):
    """A kernel reading through ``ref.at[...]`` views with traced starts, indexed further
    (JAX lowers these to tpu.memref_slice; traxla composes the starts into one load, so it
    is outside the text comparison): ``(fn, args)``."""
    def kernel(x_ref, o_ref):
        i = pl.program_id(0)
        v = x_ref.at[pl.ds(i * 8, 16)]
        o_ref[...] = (v.at[pl.ds(8, 8)][...] + v[pl.ds(0, 8), :] * 2.0
                      + x_ref.at[pl.ds(i + 16, 8)][3])
    def fn(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype),
                              grid=(2,), interpret=interpret)(x)
    return fn, (np.ones((32, 128), np.float32),)

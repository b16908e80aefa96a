"""JAX's own TPU kernels (jax.experimental.pallas.ops.tpu) compiled by traxla: each is
exported for ``("tpu",)`` on the CPU by JAX (in this process, stored) and by traxla under
the drop-in (one subprocess for all), and each ``tpu_custom_call``'s Mosaic module has
the same operations (as a multiset, and in fact the same text without locations), with the
same backend config (cost estimate included) and the same custom-call op around it.
Kernels: ops.tpu.matmul, flash attention forward and its custom_vjp backward kernels
under grad (dK/dV and dQ), megablox gmm and tgmm (grids of traced size), splash attention
forward and backward (causal; local and full masks, whose boolean partial-mask blocks are
int32 in the kernel, with a soft cap) (issue #42, item 2); vmap of a compiled call (a new grid axis, the
cost estimate scaled; tgmm's grid of traced size too), the JVP kernel of a compiled call,
vmap of flash attention (item 3); a kernel's matmul at precision HIGHEST, a
matrix-vector product, sign and erf_inv (JAX lowers them as functions of other
operations), a grid of traced size with an aliased input. Paged and ragged paged
attention need DMAs and semaphores (not here)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run by JAX (in this process) and by traxla (a drop-in subprocess): each entry is a
# function and the shapes it is exported at; small shapes, two grid steps where it matters.
EXPORTS = '''
import base64, collections, hashlib, importlib, json, re
import numpy as np
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def cases():
    f32 = lambda *s: jax.ShapeDtypeStruct(s, np.float32)  # noqa: E731
    i32 = lambda *s: jax.ShapeDtypeStruct(s, np.int32)  # noqa: E731
    out = {}
    from jax.experimental.pallas.ops.tpu import matmul
    out["matmul"] = (lambda x, y: matmul.matmul(x, y, block_shape=(128, 128), block_k=128),
                     (f32(256, 256), f32(256, 128)))
    from jax.experimental.pallas.ops.tpu import flash_attention as fa
    bs = fa.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1,
                       block_q_major_dkv=128, block_k_major_dkv=128, block_k_dkv=128,
                       block_q_dkv=128, block_k_major_dq=128, block_k_dq=128, block_q_dq=128)
    flash = lambda q, k, v: fa.flash_attention(q, k, v, causal=True, sm_scale=0.5,  # noqa
                                               block_sizes=bs)
    qkv = (f32(1, 1, 256, 128),) * 3
    out["flash"] = (flash, qkv)
    out["flash_grad"] = (lambda q, k, v: jax.grad(lambda q, k, v: (flash(q, k, v) ** 2).sum(),
                                                  argnums=(0, 1, 2))(q, k, v), qkv)
    out["vmap_flash"] = (jax.vmap(flash), (f32(2, 1, 1, 256, 128),) * 3)
    gmm = importlib.import_module("jax.experimental.pallas.ops.tpu.megablox.gmm")
    out["gmm"] = (lambda lhs, rhs, g: gmm.gmm(lhs, rhs, g, tiling=(128, 128, 128)),
                  (f32(256, 128), f32(2, 128, 128), i32(2)))
    out["tgmm"] = (lambda lhs, rhs, g: gmm.tgmm(lhs, rhs, g, tiling=(128, 128, 128)),
                   (f32(128, 256), f32(256, 128), i32(2)))
    tgmm = lambda lhs, rhs, g: gmm.tgmm(lhs, rhs, g, tiling=(128, 128, 128))  # noqa: E731
    out["vmap_tgmm"] = (jax.vmap(tgmm, in_axes=(0, None, None)),  # (num_programs: axis + 1)
                        (f32(2, 128, 256), f32(256, 128), i32(2)))
    from jax.experimental.pallas.ops.tpu.splash_attention import (
        splash_attention_kernel as sk, splash_attention_mask as sm)
    sbs = sk.BlockSizes(block_q=128, block_kv=128, block_kv_compute=128, block_q_dkv=128,
                        block_kv_dkv=128, block_kv_dkv_compute=128, block_q_dq=128,
                        block_kv_dq=128)
    splash = sk.make_splash_mha(sm.MultiHeadMask([sm.CausalMask((256, 256))] * 2),
                                head_shards=1, q_seq_shards=1, block_sizes=sbs)
    sqkv = (f32(2, 256, 128),) * 3
    out["splash"] = (lambda q, k, v: splash(q, k, v), sqkv)
    local = sk.make_splash_mha(  # (boolean partial-mask blocks: int32 in the kernel)
        sm.MultiHeadMask([sm.LocalMask((256, 256), window_size=(64, 0), offset=0),
                          sm.FullMask((256, 256))]), head_shards=1, q_seq_shards=1,
        block_sizes=sbs, attn_logits_soft_cap=20.0)
    out["splash_local_grad"] = (lambda q, k, v: jax.grad(
        lambda q, k, v: (local(q, k, v) ** 2).sum(), argnums=(0, 1, 2))(q, k, v), sqkv)
    out["splash_grad"] = (lambda q, k, v: jax.grad(
        lambda q, k, v: (splash(q, k, v) ** 2).sum(), argnums=(0, 1, 2))(q, k, v), sqkv)

    def twice_plus_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0 + 1.0

    call = lambda x: pl.pallas_call(  # noqa: E731
        twice_plus_one, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    out["vmap_call"] = (jax.vmap(call), (f32(3, 16, 128),))
    bf16 = lambda *s: jax.ShapeDtypeStruct(s, jax.numpy.bfloat16)  # noqa: E731
    jnp = jax.numpy
    out["jvp_call"] = (lambda x, t: jax.jvp(call, (x,), (t,)), (f32(16, 128), f32(16, 128)))

    def f32_matmul(x, y):  # (precision HIGHEST in the kernel: contract_precision<fp32>)
        with jax.default_matmul_precision("float32"):
            return matmul.matmul(x, y, block_shape=(128, 128), block_k=128)

    out["matmul_f32"] = (f32_matmul, (f32(256, 256), f32(256, 128)))

    def matvec(x_ref, v_ref, o_ref):  # (a matrix-vector product: multiply, row sum)
        o_ref[...] = jax.lax.dot_general(x_ref[...], v_ref[...], (((1,), (1,)), ((), ())),
                                         preferred_element_type=np.float32)

    out["matvec"] = (lambda x, v: pl.pallas_call(
        matvec, out_shape=jax.ShapeDtypeStruct((1, 1), np.float32))(x, v),
        (bf16(1, 128), bf16(1, 128)))

    def sign_erf_inv(x_ref, b_ref, i_ref, o_ref, ob_ref, oi_ref):  # (JAX: lower_fun rules)
        o_ref[...] = jnp.sign(x_ref[...]) + jax.lax.erf_inv(x_ref[...] * 0.5)
        ob_ref[...] = jnp.sign(b_ref[...])
        oi_ref[...] = jnp.sign(i_ref[...])

    def count_up(x_ref, y_ref, o_ref):  # (a grid of traced size, its size read, aliasing)
        o_ref[...] = x_ref[...] + y_ref[...] * pl.num_programs(0).astype(np.float32)

    out["traced_grid_alias"] = (lambda n, x, y: pl.pallas_call(
        count_up, out_shape=jax.ShapeDtypeStruct(y.shape, y.dtype), grid=(n,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))] * 2,
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        input_output_aliases={1: 0})(x, y), (i32(), f32(32, 128), f32(32, 128)))
    out["sign_erf_inv"] = (lambda x, b, i: pl.pallas_call(sign_erf_inv, out_shape=(
        f32(8, 128), bf16(16, 128), i32(8, 128)))(x, b, i),
        (f32(8, 128), bf16(16, 128), i32(8, 128)))
    return out


def _custom_calls(text):
    """Per tpu_custom_call: (backend config without the body, the Mosaic op multiset,
    a hash of the Mosaic module's text without locations, the op without its config)."""
    from traxla.lowering.mosaic import dialects
    found = []
    for line in text.splitlines():
        if "@tpu_custom_call" not in line:
            continue
        (config,) = re.findall(r'backend_config = "(.*?)"', line)
        config = json.loads(re.sub(r"\\\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)),
                                   config))
        body = base64.b64decode(config["custom_call_config"].pop("body"))
        with dialects.context():
            module = dialects.deserialize(body)
            ops = dict(collections.Counter(dialects.op_names(module)))
            asm = module.operation.get_asm(enable_debug_info=False)
        op = re.sub(r"%[\\w#]+", "%", re.sub(r'backend_config = "[^"]*"', "", line))
        found.append([json.dumps(config, sort_keys=True), ops,
                      hashlib.sha256(asm.encode()).hexdigest(),
                      re.sub(r" loc\\(.*$", "", op).strip()])
    return found


def export_all():
    out = {}
    for name, (fn, args) in cases().items():
        text = jax.export.export(jax.jit(fn), platforms=("tpu",))(*args).mlir_module()
        out[name] = _custom_calls(text)
    return out
'''

NAMES = ["matmul", "flash", "flash_grad", "vmap_flash", "gmm", "tgmm", "splash", "splash_grad",
         "vmap_call", "jvp_call", "matmul_f32", "matvec", "sign_erf_inv",
         "traced_grid_alias", "vmap_tgmm", "splash_local_grad"]


def _jax_exports():
    # (JAX's rule for sign asks the TPU's generation, from the devices: on the CPU, a v5e)
    from jax._src.pallas.mosaic import tpu_info
    tpu_info.registry["cpu"] = lambda: tpu_info.get_tpu_info_for_chip(
        tpu_info.ChipVersion.TPU_V5E, 1)
    try:
        namespace = {}
        exec(compile(EXPORTS, "<exports>", "exec"), namespace)
        return namespace["export_all"]()
    finally:
        del tpu_info.registry["cpu"]
        tpu_info.get_tpu_info.cache_clear()


_ours: dict = {}


def _traxla_exports(tmp_path_factory):
    if not _ours:
        folder = tmp_path_factory.mktemp("ops_mosaic")
        script = folder / "exports.py"
        script.write_text(EXPORTS + "\njson.dump(export_all(), open(%r, 'w'))\n"
                          % str(folder / "out.json"))
        env = dict(os.environ, JAX_PLATFORMS="cpu",
                   PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.run([sys.executable, "-m", "traxla.as_jax", str(script)], env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        _ours.update(json.loads((folder / "out.json").read_text()))
    return _ours


def test_jax_tpu_kernels_compile_to_jax_mosaic_modules(tmp_path_factory, jax_side):
    theirs = jax_side(_jax_exports)
    ours = _traxla_exports(tmp_path_factory)
    assert sorted(theirs) == sorted(ours) == sorted(NAMES)
    for name in NAMES:
        assert len(ours[name]) == len(theirs[name]), name  # the same number of kernels
        for i, (our, their) in enumerate(zip(ours[name], theirs[name])):
            where = f"{name}, kernel {i}"
            our_config, our_ops, our_asm, our_op = our
            their_config, their_ops, their_asm, their_op = their
            assert our_ops == their_ops, (where, {k: (our_ops.get(k), their_ops.get(k))
                                                  for k in {*our_ops, *their_ops}
                                                  if our_ops.get(k) != their_ops.get(k)})
            assert our_config == their_config, where
            assert our_op == their_op, where
            assert our_asm == their_asm, where  # (the same operations in the same order)

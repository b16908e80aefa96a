"""Pallas kernels compiled for the TPU (Mosaic), checked without a chip: each kernel of
tests/_pallas_kernels.py is exported for ``("tpu",)`` by JAX and by traxla, and the Mosaic
module in the ``tpu_custom_call`` (deserialized from its backend config) has the same
operations, as a multiset (in fact the same module text, locations aside), with the same
backend config and custom-call op around it. Then the errors a bad kernel raises (issue
#42, items 1, 6, 8)."""
import base64
import collections
import json
import re

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import export as texport
from traxla.experimental import pallas as tpl
from traxla.experimental.pallas import tpu as tpltpu
from traxla.lowering.mosaic import dialects

from _pallas_kernels import kernels, views

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

TRAXLA = kernels(traxla, tnp, tpl, tpltpu)
JAX = kernels(jax, jjnp, jpl, jpltpu)


def _custom_call(text):
    """(backend config without the body, the Mosaic op multiset, the call's attributes and
    those of each Mosaic function, the Mosaic module's text without locations)."""
    (config, _), = re.findall(r'stablehlo\.custom_call @tpu_custom_call\(.*?\) \{backend_config '
                                  r'= "(.*?)", (.*?)\} :', text)
    config = json.loads(re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)),
                               config))
    body = base64.b64decode(config["custom_call_config"].pop("body"))
    with dialects.context():
        module = dialects.deserialize(body)
        ops = collections.Counter(dialects.op_names(module))
        asm = module.operation.get_asm(enable_debug_info=False)
        # each function's attributes: grid, dimension semantics, windows, signature...
        funcs = sorted(sorted((name, str(op.attributes[name])) for name in op.attributes)
                       for op in module.body.operations)
    (line,) = [ln for ln in text.splitlines() if "@tpu_custom_call" in ln]
    # the whole op but the body: operands, kernel_name, layouts, aliases, result types
    attrs = {"op": re.sub(r" loc\(.*$", "", re.sub(r'backend_config = "[^"]*"', "", line)).strip()}
    attrs["functions"] = funcs
    return config, ops, attrs, asm


@pytest.mark.parametrize("name", sorted(TRAXLA))
def test_mosaic_module_matches_jax(name):
    fn, args = TRAXLA[name]
    ours = texport.export(traxla.jit(fn), platforms=("tpu",))(*args).mlir_module()
    jfn, _ = JAX[name]
    theirs = jax.export.export(jax.jit(jfn), platforms=("tpu",))(*args).mlir_module()
    our_config, our_ops, our_attrs, our_asm = _custom_call(ours)
    their_config, their_ops, their_attrs, their_asm = _custom_call(theirs)
    assert our_ops == their_ops, (our_ops - their_ops, their_ops - our_ops)
    assert our_config == their_config
    assert our_attrs == their_attrs
    assert our_asm == their_asm  # (the same operations in the same order, too)


def test_on_the_cpu_only_interpret_mode_runs():
    fn, args = TRAXLA["add"]
    with pytest.raises(ValueError, match="Only interpret mode is supported on CPU backend."):
        traxla.jit(fn)(*args)


def test_vmap_of_a_compiled_kernel_lowers_for_the_tpu():
    fn, (x, y) = TRAXLA["add"]
    xs = np.stack([x, x, x])
    exp = texport.export(traxla.jit(traxla.vmap(fn)), platforms=("tpu",))(xs, xs)
    assert exp.out_avals[0].shape == (3, 8, 128)
    assert exp.mlir_module().count("tpu_custom_call") == 1


def test_jvp_with_a_zero_tangent_lowers():
    # (JAX 0.10.2's own rule fails here: safe_zip() of 5 and 6 refs)
    _, (x, y, tx, _) = TRAXLA["jvp_both"]
    jvp_one = traxla.jit(lambda x, y, tx: traxla.jvp(lambda x: _scale(x, y), (x,), (tx,)))
    exp = texport.export(jvp_one, platforms=("tpu",))(x, y, tx)
    assert [a.shape for a in exp.out_avals] == [(16, 128), (16, 128)]


def _scale_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] * y_ref[...]


def _scale(x, y):
    return tpl.pallas_call(_scale_kernel, out_shape=traxla.ShapeDtypeStruct(x.shape, x.dtype))(x, y)


def _export(fn, *args):
    return texport.export(traxla.jit(fn), platforms=("tpu",))(*args)


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def test_block_shape_not_tile_aligned_names_kernel_and_call():
    x = np.ones((16, 200), np.float32)
    f = tpl.pallas_call(_copy, out_shape=traxla.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
                        in_specs=[tpl.BlockSpec((8, 100), lambda i: (i, 0))],
                        out_specs=tpl.BlockSpec((8, 100), lambda i: (i, 0)))
    with pytest.raises(ValueError, match=r"divisible by 8 and 128(.|\n)*inputs\[0\] in "
                       r"pallas_call of `_copy` at .*test_pallas_mosaic.py:\d+"):
        _export(f, x)


def test_index_map_of_wrong_arity():
    x = np.ones((16, 128), np.float32)
    f = tpl.pallas_call(_copy, out_shape=traxla.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
                        in_specs=[tpl.BlockSpec((8, 128), lambda i: i)],
                        out_specs=tpl.BlockSpec((8, 128), lambda i: (i, 0)))
    with pytest.raises(ValueError, match=r"`_copy`: the index map .*inputs\[0\] returned 1 "
                                         r"indices for an array of rank 2"):
        _export(f, x)


def test_vmem_over_the_budget():
    x = np.ones((64, 128), np.float32)
    f = tpl.pallas_call(_copy, out_shape=traxla.ShapeDtypeStruct(x.shape, x.dtype),
                        compiler_params=tpltpu.CompilerParams(vmem_limit_bytes=4096))
    with pytest.raises(ValueError, match=r"`_copy` at .* need 131072 bytes of VMEM, over the "
                                         r"budget of 4096 bytes"):
        _export(f, x)


def test_operation_mosaic_cannot_lower_names_it_and_the_line():
    def sort_kernel(x_ref, o_ref):
        o_ref[...] = tnp.sort(x_ref[...], axis=-1)

    x = np.ones((8, 128), np.float32)
    f = tpl.pallas_call(sort_kernel, out_shape=traxla.ShapeDtypeStruct(x.shape, x.dtype))
    with pytest.raises(NotImplementedError, match=r"Pallas kernel `sort_kernel`: Mosaic cannot "
                       r"lower the operation `sort` .*test_pallas_mosaic.py:\d+"):
        _export(f, x)


def test_program_id_without_a_grid():
    def kernel(o_ref):
        o_ref[...] = tnp.full(o_ref.shape, tpl.program_id(0), tnp.float32)

    f = tpl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((8, 128), tnp.float32))
    with pytest.raises(ValueError, match="program id: 0 was passed, but user did not provide "
                                         "a grid.") as info:
        _export(f)
    assert any("Pallas kernel `kernel`" in n for n in getattr(info.value, "__notes__", []))


def test_wrong_ref_dtype_names_the_kernel():
    def bad(x_ref, o_ref):
        o_ref[...] = x_ref[...]  # f32 into a bf16 ref

    x = np.ones((8, 128), np.float32)
    f = tpl.pallas_call(bad, out_shape=traxla.ShapeDtypeStruct(x.shape, tnp.bfloat16))
    with pytest.raises(ValueError, match="Invalid dtype for `swap`") as info:
        _export(f, x)
    assert any("Pallas kernel `bad`" in n for n in getattr(info.value, "__notes__", []))


def test_a_refusing_rule_keeps_jax_error_class():
    # JAX's pallas quickstart on a TPU: a scalar stored into a VMEM block raises ValueError
    # (not a subclass: the class is what a user and the docs see), located in the kernel.
    def iota_kernel(o_ref):
        i = tpl.program_id(0)
        o_ref[i] = i

    f = tpl.pallas_call(iota_kernel, out_shape=traxla.ShapeDtypeStruct((8,), tnp.int32),
                        grid=(8,))
    with pytest.raises(ValueError, match=r"Pallas kernel `iota_kernel`: .* `swap` at "
                       r".*test_pallas_mosaic.py:\d+.*Cannot store scalars to VMEM") as info:
        _export(f)
    assert type(info.value) is ValueError


def test_views_with_traced_starts_lower():
    fn, args = views(traxla, tpl)
    _, ops, _, _ = _custom_call(_export(fn, *args).mlir_module())
    assert ops["vector.load"] == 4 and ops["tpu.vector_store"] == 1

"""``Exported`` <-> bytes in JAX's flatbuffer format (``jax/_src/export/serialization.fbs``),
so that JAX 0.10.2's ``jax.export.deserialize`` reads what traxla writes and traxla reads
what JAX writes. Single-device exports only: shardings are written as "unspecified"."""
from __future__ import annotations


import numpy as np
import ml_dtypes
from flatbuffers import number_types as N

import struct

from traxla import tree_util
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.shape_poly import SymbolicScope, symbolic_shape
from traxla.export import _flatbuf as fb
import traxla.export._exported as _export__exported

# The schema version JAX 0.10.2 writes in the header (it may only store 3 for the sake of
# older readers); newer fields are read when present.
SERIALIZATION_VERSION_FIELD = 3

from traxla.export._registry import deserialization_registry, serialization_registry


# -- writing ------------------------------------------------------------------------------

def serialize(exp, vjp_order: int = 0) -> bytearray:
    b = fb.new_builder()
    b.Finish(_write_exported(b, exp, vjp_order))
    return b.Output()


def _write_exported(b, exp, vjp_order: int) -> int:
    unique_avals, aval_index = [], {}
    for a in (*exp.in_avals, *exp.out_avals):
        if a not in aval_index:
            aval_index[a] = len(unique_avals)
            unique_avals.append(a)
    fun_name = b.CreateString(exp.fun_name)
    in_tree = _write_tree(b, exp.in_tree)
    in_avals = fb.offsets_vector(b, [_write_aval(b, a) for a in exp.in_avals])
    out_tree = _write_tree(b, exp.out_tree)
    out_avals = fb.offsets_vector(b, [_write_aval(b, a) for a in exp.out_avals])
    in_shardings = fb.offsets_vector(b, [_write_no_sharding(b) for _ in exp.in_avals])
    out_shardings = fb.offsets_vector(b, [_write_no_sharding(b) for _ in exp.out_avals])
    ordered = fb.offsets_vector(b, [_write_effect(b, e) for e in exp.ordered_effects])
    unordered = fb.offsets_vector(b, [_write_effect(b, e) for e in exp.unordered_effects])
    checks = fb.offsets_vector(b, [_write_check(b, c) for c in exp.disabled_safety_checks])
    platforms = fb.strings_vector(b, exp.platforms)
    module = b.CreateByteVector(bytes(exp.mlir_module_serialized))
    kept = fb.uint_vector(b, exp.module_kept_var_idx, 2)
    vjp = None
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError("serialization of an Exported that does not have vjps of "
                             "high-enough order")
        vjp = _write_exported(b, exp.vjp(), vjp_order - 1)
    uniques = fb.offsets_vector(b, [_write_aval(b, a) for a in unique_avals])
    no_meshes = fb.offsets_vector(b, [])
    no_named = fb.offsets_vector(b, [])
    in_idx = fb.uint_vector(b, [aval_index[a] for a in exp.in_avals], 4)
    out_idx = fb.uint_vector(b, [aval_index[a] for a in exp.out_avals], 4)
    in_sh_idx = fb.uint_vector(b, [0] * len(exp.in_avals), 4)
    out_sh_idx = fb.uint_vector(b, [0] * len(exp.out_avals), 4)

    offset, u16, u32 = b.PrependUOffsetTRelativeSlot, b.PrependUint16Slot, b.PrependUint32Slot
    return fb.table(b, fb.EXPORTED, fb.EXPORTED_FIELDS, [
        (u16, "serialization_version", SERIALIZATION_VERSION_FIELD),
        (offset, "function_name", fun_name),
        (offset, "in_tree", in_tree),
        (offset, "in_avals", in_avals),
        (offset, "out_tree", out_tree),
        (offset, "out_avals", out_avals),
        (u32, "nr_devices", exp.nr_devices),
        (offset, "in_shardings", in_shardings),
        (offset, "out_shardings", out_shardings),
        (offset, "platforms", platforms),
        (offset, "ordered_effects", ordered),
        (offset, "unordered_effects", unordered),
        (offset, "disabled_checks", checks),
        (offset, "mlir_module_serialized", module),
        (u16, "calling_convention_version", exp.calling_convention_version),
        (offset, "module_kept_var_idx", kept),
        (b.PrependBoolSlot, "uses_global_constants", exp.uses_global_constants),
        (offset, "vjp", vjp),
        (offset, "unique_avals", uniques),
        (offset, "unique_abstract_meshes", no_meshes),
        (offset, "unique_named_shardings", no_named),
        (offset, "in_avals_idxs", in_idx),
        (offset, "out_avals_idxs", out_idx),
        (offset, "in_shardings_idxs", in_sh_idx),
        (offset, "out_shardings_idxs", out_sh_idx)])


def _write_tree(b, tree) -> int:
    node = tree.node_data()
    children = tree.children()
    child_vec = fb.offsets_vector(b, [_write_tree(b, c) for c in children]) if children else None
    names_vec = custom_name = custom_aux = None
    if node is None:
        kind = fb.TREE_LEAF
    elif node[0] is type(None):
        kind = fb.TREE_NONE
    elif node[0] is tuple:
        kind = fb.TREE_TUPLE
    elif node[0] is list:
        kind = fb.TREE_LIST
    elif node[0] is dict:
        kind = fb.TREE_DICT
        for k in node[1]:
            if not isinstance(k, str):
                raise TypeError("Serialization is supported only for dictionaries with string "
                                f"keys. Found key {k} of type {type(k)}.")
        names_vec = fb.strings_vector(b, node[1])
    elif node[0] in serialization_registry:
        kind = fb.TREE_CUSTOM
        name, ser_aux = serialization_registry[node[0]]
        aux = ser_aux(node[1])
        if not isinstance(aux, (bytes, bytearray)):
            raise ValueError("The custom serialization function for `node_type` must return a "
                             f"`bytes` object. It returned a {type(aux)}.")
        custom_name = b.CreateString(name)
        custom_aux = b.CreateByteVector(bytes(aux))
    else:
        raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type "
                         f"`{node[0]}`. Use `export.register_pytree_node_serialization` or "
                         "`export.register_namedtuple_serialization`.")
    offset = b.PrependUOffsetTRelativeSlot
    return fb.table(b, fb.PYTREE, fb.PYTREE_FIELDS, [
        (b.PrependInt8Slot, "kind", kind), (offset, "children", child_vec),
        (offset, "children_names", names_vec), (offset, "custom_name", custom_name),
        (offset, "custom_auxdata", custom_aux)])


def _dtype_code(dtype) -> int:
    name = "float0" if dtype == dtypes.float0 else np.dtype(dtype).name
    if name not in fb.DTYPE_CODES:
        raise NotImplementedError(f"serializing an Exported with an argument or result of "
                                  f"dtype {dtype}: JAX's format has no code for it")
    return fb.DTYPE_CODES[name]


def _write_aval(b, aval) -> int:
    if isinstance(aval.dtype, dtypes.ExtendedDType):
        raise NotImplementedError("serializing an Exported whose arguments or results are "
                                  f"typed PRNG keys ({aval.str_short()}) is not supported")
    dims = [b.CreateString(str(d)) for d in aval.shape]
    shape = fb.offsets_vector(b, dims)
    memory_space = fb.MEM_HOST if aval.memory_space == "host" else fb.MEM_DEVICE
    int8 = b.PrependInt8Slot
    return fb.table(b, fb.AVAL, fb.AVAL_FIELDS, [
        (int8, "kind", fb.SHAPED_ARRAY), (b.PrependUOffsetTRelativeSlot, "shape", shape),
        (int8, "dtype", _dtype_code(aval.dtype)), (int8, "memory_space", memory_space)])


def _write_no_sharding(b) -> int:
    b.StartObject(fb.SHARDING_FIELDS)
    return b.EndObject()


def _write_effect(b, effect) -> int:
    name = b.CreateString(str(type(effect)))
    return fb.table(b, fb.EFFECT, fb.EFFECT_FIELDS,
                    [(b.PrependUOffsetTRelativeSlot, "type_name", name)])


def _write_check(b, check) -> int:
    target = check.is_custom_call()
    target_off = b.CreateString(target) if target is not None else None
    kind = fb.CHECK_CUSTOM_CALL if target is not None else fb.CHECK_PLATFORM
    return fb.table(b, fb.CHECK, fb.CHECK_FIELDS, [
        (b.PrependInt8Slot, "kind", kind),
        (b.PrependUOffsetTRelativeSlot, "custom_call_target", target_off)])


# -- reading ------------------------------------------------------------------------------

def deserialize(blob):
    """An ``Exported`` from the bytes ``serialize`` (or JAX's) wrote. Trusted input only:
    running it runs whatever custom calls the module names."""
    try:
        return _read_exported(fb.Reader.root(blob))
    except (IndexError, struct.error, UnicodeDecodeError, OverflowError) as e:
        raise ValueError(f"the bytes are not a valid serialized Exported ({len(blob)} bytes; "
                         f"{type(e).__name__}: {e}); was it truncated?") from None


def _read_exported(r: "fb.Reader"):
    F = fb.EXPORTED
    scope = SymbolicScope()  # one scope for every aval (JAX serializes no constraints)
    unique = [_read_aval(t, scope) for t in r.tables(F["unique_avals"])]
    if r.length(F["in_avals_idxs"]) or r.length(F["out_avals_idxs"]) or unique:
        in_avals = tuple(unique[i] for i in r.numbers(F["in_avals_idxs"], N.Uint32Flags))
        out_avals = tuple(unique[i] for i in r.numbers(F["out_avals_idxs"], N.Uint32Flags))
    else:
        in_avals = tuple(_read_aval(t, scope) for t in r.tables(F["in_avals"]))
        out_avals = tuple(_read_aval(t, scope) for t in r.tables(F["out_avals"]))
    in_tree = _read_tree(r.table(F["in_tree"]))
    out_tree = _read_tree(r.table(F["out_tree"]))
    nr_devices = r.uint32(F["nr_devices"]) or r.int16(F["nr_devices_short"])
    checks = []
    for t in r.tables(F["disabled_checks"]):
        kind = t.int8(fb.CHECK["kind"])
        if kind == fb.CHECK_CUSTOM_CALL:
            checks.append(_export__exported.DisabledSafetyCheck.custom_call(t.string(fb.CHECK["custom_call_target"])))
        elif kind == fb.CHECK_PLATFORM:
            checks.append(_export__exported.DisabledSafetyCheck.platform())
        else:
            raise ValueError(f"Cannot deserialize DisabledSafetyCheck with unknown kind: {kind}")
    ordered = tuple(_read_effect(t) for t in r.tables(F["ordered_effects"]))
    unordered = tuple(_read_effect(t) for t in r.tables(F["unordered_effects"]))
    vjp_table = r.table(F["vjp"])
    get_vjp = None if vjp_table is None else (lambda _: _read_exported(vjp_table))
    return _export__exported.Exported(
        fun_name=r.string(F["function_name"]) or "",
        in_tree=in_tree, in_avals=in_avals, out_tree=out_tree, out_avals=out_avals,
        in_shardings_hlo=(None,) * len(in_avals), out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=nr_devices, platforms=tuple(r.strings(F["platforms"])),
        ordered_effects=ordered, unordered_effects=unordered,
        disabled_safety_checks=tuple(checks),
        mlir_module_serialized=r.bytes(F["mlir_module_serialized"]),
        calling_convention_version=r.uint16(F["calling_convention_version"]),
        module_kept_var_idx=tuple(r.numbers(F["module_kept_var_idx"], N.Uint16Flags)),
        uses_global_constants=r.bool(F["uses_global_constants"]),
        _get_vjp=get_vjp)


def _read_aval(t, scope) -> ShapedArray:
    S = fb.AVAL
    if t.int8(S["kind"]) != fb.SHAPED_ARRAY:
        raise NotImplementedError("deserializing an Exported with token arguments")
    code = t.int8(S["dtype"])
    if code not in fb.DTYPE_NAMES:
        raise NotImplementedError(f"deserializing an Exported with dtype code {code} (a JAX "
                                  "extended dtype such as a PRNG key type)")
    name = fb.DTYPE_NAMES[code]
    dtype = dtypes.float0 if name == "float0" else _np_dtype(name)
    shape = symbolic_shape(",".join(t.strings(S["shape"])), scope=scope)
    memory = t.int8(S["memory_space"])
    return ShapedArray(shape, dtype, memory_space="host" if memory == fb.MEM_HOST else None)


def _np_dtype(name: str):
    try:
        return np.dtype(name)
    except TypeError:
        return np.dtype(getattr(ml_dtypes, name))


def _read_effect(t):
    name = t.string(fb.EFFECT["type_name"])
    raise NotImplementedError(f"deserializing an Exported with effect {name}: traxla does not "
                              "call exported functions with effects")


def _read_tree(t):
    leaves = _read_tree_node(t)
    return tree_util.tree_structure(leaves)


def _read_tree_node(t):
    S = fb.PYTREE
    kind = t.int8(S["kind"])
    children = [_read_tree_node(c) for c in t.tables(S["children"])]
    if kind == fb.TREE_LEAF:
        return 0.0
    if kind == fb.TREE_NONE:
        return None
    if kind == fb.TREE_TUPLE:
        return tuple(children)
    if kind == fb.TREE_LIST:
        return list(children)
    if kind == fb.TREE_DICT:
        return dict(zip(t.strings(S["children_names"]), children))
    if kind == fb.TREE_CUSTOM:
        name = t.string(S["custom_name"])
        if name not in deserialization_registry:
            raise ValueError(f"Cannot deserialize a PyTreeDef containing an unregistered type "
                             f"`{name}`. Use `export.register_pytree_node_serialization` or "
                             "`export.register_namedtuple_serialization`.")
        _, de_aux, from_children = deserialization_registry[name]
        return from_children(de_aux(t.bytes(S["custom_auxdata"])), children)
    raise ValueError(f"Cannot deserialize PyTreeDef with unknown kind: {kind}")

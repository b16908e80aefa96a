"""The flatbuffer layout of JAX's ``Exported`` (``jax/_src/export/serialization.fbs``), read
and written with the ``flatbuffers`` runtime: field slots, enums and small table helpers.

Only the layout lives here; what each field means is ``_serialization.py``'s business.
"""
from __future__ import annotations
import numpy as np

try:
    import flatbuffers
    from flatbuffers import number_types as N
    from flatbuffers.table import Table
except ImportError as e:  # a declared dependency, but say what to do if it is missing
    raise ImportError("Please install 'flatbuffers' in order to use Exported serialization "
                      "(pip install flatbuffers)") from e

# enum PyTreeDefKind
TREE_LEAF, TREE_NONE, TREE_TUPLE, TREE_LIST, TREE_DICT, TREE_CUSTOM = range(6)
# enum AbstractValueKind
SHAPED_ARRAY, ABSTRACT_TOKEN = 0, 1
# enum MemorySpace
MEM_MISSING, MEM_DEVICE, MEM_HOST, MEM_ANY = range(4)
# enum DisabledSafetyCheckKind
CHECK_PLATFORM, CHECK_CUSTOM_CALL, CHECK_SHAPE_ASSERTIONS = range(3)

# enum DType, by NumPy/ml_dtypes name (key types are JAX's extended dtypes)
DTYPE_CODES = {
    "bool": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint8": 5, "uint16": 6,
    "uint32": 7, "uint64": 8, "float16": 9, "float32": 10, "float64": 11, "complex64": 12,
    "complex128": 13, "bfloat16": 14, "int4": 15, "uint4": 16, "float8_e4m3b11fnuz": 17,
    "float8_e4m3fn": 18, "float8_e4m3fnuz": 19, "float8_e5m2": 20, "float8_e5m2fnuz": 21,
    "float0": 22, "float8_e4m3": 23, "float8_e3m4": 24, "float8_e8m0fnu": 25,
    "float4_e2m1fn": 26,
}
DTYPE_NAMES = {v: k for k, v in DTYPE_CODES.items()}

# table slots (field ids in declaration order)
PYTREE = dict(kind=0, children=1, children_names=2, custom_name=3, custom_auxdata=4)
PYTREE_FIELDS = 5
AVAL = dict(kind=0, shape=1, dtype=2, memory_space=3)
AVAL_FIELDS = 4
SHARDING = dict(kind=0, hlo_sharding_proto=1, named_sharding=2)
SHARDING_FIELDS = 3
EFFECT = dict(type_name=0)
EFFECT_FIELDS = 1
CHECK = dict(kind=0, custom_call_target=1)
CHECK_FIELDS = 2
EXPORTED = dict(
    serialization_version=0, function_name=1, in_tree=2, in_avals=3, out_tree=4, out_avals=5,
    nr_devices_short=6, in_shardings=7, out_shardings=8, platforms=9, ordered_effects=10,
    unordered_effects=11, disabled_checks=12, mlir_module_serialized=13,
    calling_convention_version=14, module_kept_var_idx=15, uses_global_constants=16, vjp=17,
    nr_devices=18, unique_avals=19, unique_abstract_meshes=20, unique_named_shardings=21,
    in_avals_idxs=22, out_avals_idxs=23, in_shardings_idxs=24, out_shardings_idxs=25)
EXPORTED_FIELDS = 26


# -- writing ------------------------------------------------------------------------------

def new_builder() -> flatbuffers.Builder:
    return flatbuffers.Builder(65536)


def offsets_vector(b: flatbuffers.Builder, offsets) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def strings_vector(b: flatbuffers.Builder, strings) -> int:
    return offsets_vector(b, [b.CreateString(s) for s in strings])


def uint_vector(b: flatbuffers.Builder, values, width: int) -> int:
    return b.CreateNumpyVector(np.asarray(list(values), dtype={2: np.uint16, 4: np.uint32}[width]))


def table(b: flatbuffers.Builder, layout: dict, num_fields: int, fields) -> int:
    """Writes one table: ``fields`` are (a ``b.Prepend*Slot`` method, field name in ``layout``,
    value) in the order written; a None value leaves the field absent (read as its default)."""
    b.StartObject(num_fields)
    for prepend, name, value in fields:
        if value is not None:
            prepend(layout[name], value, 0)
    return b.EndObject()


# -- reading ------------------------------------------------------------------------------

class Reader:
    """One table of a flatbuffer: fields by slot, with the schema's defaults."""

    __slots__ = ("tab",)

    def __init__(self, buf, pos: int):
        self.tab = Table(buf, pos)

    @classmethod
    def root(cls, buf) -> "Reader":
        buf = bytearray(buf) if not isinstance(buf, (bytearray, memoryview)) else buf
        if len(buf) < 8:
            raise ValueError(f"the serialized Exported is {len(buf)} bytes long: too short to "
                             "be a flatbuffer")
        n = flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0)
        if not 0 < n < len(buf):
            raise ValueError("the bytes are not a serialized Exported (bad root offset)")
        return cls(buf, n)

    def _off(self, slot: int) -> int:
        return self.tab.Offset(4 + 2 * slot)

    def has(self, slot: int) -> bool:
        return self._off(slot) != 0

    def scalar(self, slot: int, flags, default=0):
        o = self._off(slot)
        return self.tab.Get(flags, o + self.tab.Pos) if o else default

    def int8(self, slot, default=0):
        return self.scalar(slot, N.Int8Flags, default)

    def uint16(self, slot, default=0):
        return self.scalar(slot, N.Uint16Flags, default)

    def int16(self, slot, default=0):
        return self.scalar(slot, N.Int16Flags, default)

    def uint32(self, slot, default=0):
        return self.scalar(slot, N.Uint32Flags, default)

    def bool(self, slot, default=False):
        return bool(self.scalar(slot, N.BoolFlags, default))

    def string(self, slot):
        o = self._off(slot)
        return self.tab.String(o + self.tab.Pos).decode("utf-8") if o else None

    def table(self, slot):
        o = self._off(slot)
        return Reader(self.tab.Bytes, self.tab.Indirect(o + self.tab.Pos)) if o else None

    def length(self, slot) -> int:
        o = self._off(slot)
        return self.tab.VectorLen(o) if o else 0

    def tables(self, slot) -> list:
        o = self._off(slot)
        if not o:
            return []
        start, n = self.tab.Vector(o), self.tab.VectorLen(o)
        return [Reader(self.tab.Bytes, self.tab.Indirect(start + 4 * i)) for i in range(n)]

    def strings(self, slot) -> list:
        o = self._off(slot)
        if not o:
            return []
        start, n = self.tab.Vector(o), self.tab.VectorLen(o)
        return [self.tab.String(start + 4 * i).decode("utf-8") for i in range(n)]

    def numbers(self, slot, flags) -> list:
        o = self._off(slot)
        if not o:
            return []
        start, n = self.tab.Vector(o), self.tab.VectorLen(o)
        return [self.tab.Get(flags, start + flags.bytewidth * i) for i in range(n)]

    def bytes(self, slot) -> bytes:
        o = self._off(slot)
        if not o:
            return b""
        start, n = self.tab.Vector(o), self.tab.VectorLen(o)
        if start + n > len(self.tab.Bytes):  # slicing would silently return fewer bytes
            raise IndexError(f"a byte vector of {n} bytes runs past the end of the buffer")
        return bytes(self.tab.Bytes[start:start + n])

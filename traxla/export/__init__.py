"""``traxla.export``: lower a jitted function once to a portable StableHLO artifact that
runs again later, elsewhere, or in JAX (the same flatbuffer format as ``jax.export``).

    exp = traxla.export.export(traxla.jit(f))(traxla.ShapeDtypeStruct((3, 4), np.float32))
    blob = exp.serialize()                 # jax.export.deserialize(blob) reads it too
    traxla.export.deserialize(blob).call(x)

Shape-polymorphic exports take ``symbolic_shape("b, 4")`` dimensions.
"""
from traxla.ir.shape_poly import (  # noqa: F401
    InconclusiveDimensionOperation, SymbolicScope, symbolic_shape)
from traxla.ir.shape_poly import is_symbolic as is_symbolic_dim  # noqa: F401
from traxla.export._exported import (  # noqa: F401
    DisabledSafetyCheck, Exported, call_exported, default_export_platform, deserialize, export,
    maximum_supported_calling_convention_version, minimum_supported_calling_convention_version)
from traxla.export._registry import (  # noqa: F401
    register_namedtuple_serialization, register_pytree_node_serialization)
from traxla.export._specs import symbolic_args_specs  # noqa: F401

call = call_exported
default_lowering_platform = default_export_platform

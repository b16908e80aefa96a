"""``jax.extend.mlir``: the MLIR Python bindings jaxlib ships, for code that builds
StableHLO itself (autodidax's ``xla_callable``): ``ir``, ``dialects``, ``passmanager``;
jaxlib's StableHLO helpers (portable artifacts, shape refinement, HLO to StableHLO); and
``lower_with_sharding_in_types`` for lowering rules."""
from traxla.extend.mlir import dialects, ir  # noqa: F401
from traxla.lowering.rules.sharding_constraint import lower_with_sharding_in_types  # noqa: F401
from jaxlib import _jax

_mlir = _jax.mlir
deserialize_portable_artifact = _mlir.deserialize_portable_artifact
serialize_portable_artifact = _mlir.serialize_portable_artifact
refine_polymorphic_shapes = _mlir.refine_polymorphic_shapes
hlo_to_stablehlo = _mlir.hlo_to_stablehlo
del _mlir, _jax

__all__ = ["deserialize_portable_artifact", "dialects", "hlo_to_stablehlo", "ir",
           "lower_with_sharding_in_types", "refine_polymorphic_shapes",
           "serialize_portable_artifact"]

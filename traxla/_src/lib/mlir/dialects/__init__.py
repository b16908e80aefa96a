"""``jax._src.lib.mlir.dialects``: jaxlib's MLIR dialect modules, with StableHLO also as
``hlo`` (what JAX's lowering rules and the primitives page write)."""
from traxla.extend.mlir.dialects import (arith, builtin, chlo, func, math,  # noqa: F401
                                         memref, scf, sdy, sparse_tensor, stablehlo, vector)

hlo = stablehlo

"""``jax.extend.mlir.dialects``: jaxlib's MLIR dialect modules. Each is jaxlib's module
itself, entered in ``sys.modules`` under this package too, so that both ``from
jax.extend.mlir.dialects import func`` and ``import jax.extend.mlir.dialects.stablehlo``
find it."""
import sys

from jaxlib.mlir.dialects import (arith, builtin, chlo, func, math, memref, mpmd,  # noqa: F401
                                  scf, sdy, sparse_tensor, stablehlo, vector)

for _name in ("arith", "builtin", "chlo", "func", "math", "memref", "mpmd", "scf", "sdy",
              "sparse_tensor", "stablehlo", "vector"):
    sys.modules.setdefault(f"{__name__}.{_name}", globals()[_name])
del _name

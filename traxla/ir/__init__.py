"""The typed IR: dtypes and avals, jaxpr data structures, primitives with their
typing rules, the printer and the checker. Imports nothing else of traxla."""
from . import dtypes
from .avals import ShapedArray
from .config import config
from .core import ClosedJaxpr, DebugInfo, DropVar, Jaxpr, JaxprEqn, Literal, SourceInfo, Var
from .primitive import ALL_PRIMITIVES, Primitive, typing_rules
from . import rules  # noqa: F401  (defines the primitives)
from .rules.elementwise import P as _ELEMENTWISE
from .rules.reduction import P as _REDUCTIONS
from .rules.shape import (broadcast_in_dim_p, concatenate_p, dynamic_slice_p,
                          dynamic_update_slice_p, iota_p, pad_p, reshape_p, rev_p, slice_p,
                          squeeze_p, transpose_p)
from .rules.call import jit_p
from . import sharding_rules  # noqa: F401  (registers the sharding rules)
from .checker import check_jaxpr

__all__ = ["dtypes", "ShapedArray", "config", "ClosedJaxpr", "DebugInfo", "DropVar", "Jaxpr",
           "JaxprEqn", "Literal", "SourceInfo", "Var", "Primitive", "typing_rules",
           "ALL_PRIMITIVES", "check_jaxpr", "jit_p"]

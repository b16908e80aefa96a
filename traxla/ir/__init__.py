"""The typed IR: dtypes and avals, jaxpr data structures, primitives with their
typing rules, the printer and the checker. Imports nothing else of traxla."""
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.config import config
from traxla.ir.jaxpr import ClosedJaxpr, DebugInfo, DropVar, Jaxpr, JaxprEqn, Literal, SourceInfo, Var
from traxla.ir.primitive import ALL_PRIMITIVES, Primitive, typing_rules
from traxla.ir import rules  # noqa: F401  (defines the primitives)
from traxla.ir.rules.elementwise import P as _ELEMENTWISE
from traxla.ir.rules.reduction import P as _REDUCTIONS
from traxla.ir.rules.shape import (broadcast_in_dim_p, concatenate_p, dynamic_slice_p,
                          dynamic_update_slice_p, iota_p, pad_p, reshape_p, rev_p, slice_p,
                          squeeze_p, transpose_p)
from traxla.ir.rules.call import jit_p
from traxla.ir import sharding_rules  # noqa: F401  (registers the sharding rules)
from traxla.ir.checker import check_jaxpr

__all__ = ["dtypes", "ShapedArray", "config", "ClosedJaxpr", "DebugInfo", "DropVar", "Jaxpr",
           "JaxprEqn", "Literal", "SourceInfo", "Var", "Primitive", "typing_rules",
           "ALL_PRIMITIVES", "check_jaxpr", "jit_p"]

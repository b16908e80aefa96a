"""``jax._src.core``: ``jax.core`` and ``jax.extend.core`` in one, plus ``get_aval`` (which
``jax._src.core`` still has)."""
from traxla.core import *  # noqa: F401,F403
from traxla.core import (AbstractValue, Atom, ParamDict, Value, eval_context,  # noqa: F401
                         is_constant_dim, is_constant_shape, is_concrete)
from traxla.extend.core import *  # noqa: F401,F403
from traxla.extend.core import OpaqueTraceState, take_current_trace  # noqa: F401
from traxla.ir.rules.call import ClosedCallPrimitive, call_p, closed_call_p  # noqa: F401
from traxla.api_util import shaped_abstractify as get_aval  # noqa: F401
from traxla.api_util import shaped_abstractify  # noqa: F401
from traxla.ir.pytype_registry import pytype_aval_mappings  # noqa: F401
from traxla.ir.avals import physical_aval  # noqa: F401  (flax's fp8 ops)

from traxla.tracer import traces as _traces  # noqa: E402


def trace_state_clean() -> bool:
    """Whether the calling thread is at the top level: no trace (jit, vmap, grad, ...) active
    (numpyro asks before caching functions, to avoid leaking tracers)."""
    return _traces.current_trace() is _traces._bottom[0]


def reset_trace_state() -> bool:
    """Resets the calling thread's trace state to the top level; True if already clean."""
    if trace_state_clean():
        return True
    _traces._state.trace = _traces._bottom[0]
    return False


# -- shapes, as JAX's jax._src.core spells them (torchax's image-resize reimplementation)
import operator as _operator  # noqa: E402
from typing import Any as _Any, Sequence as _Sequence, Union as _Union  # noqa: E402

import numpy as _np  # noqa: E402

from traxla.ir.shape_poly import DimExpr as _DimExpr  # noqa: E402
from traxla.tracer import Tracer as _Tracer  # noqa: E402

DimSize = _Union[int, _Any]  # an int, or a symbolic dimension
Shape = _Sequence[DimSize]


def _canonicalize_dimension(dim):
    try:
        return _operator.index(dim)
    except TypeError as e:
        if isinstance(dim, _DimExpr):
            return dim
        raise e


def canonicalize_shape(shape, context: str = "") -> tuple:
    """A user's shape as a tuple of dimensions (ints, or symbolic ones); anything else is
    JAX's TypeError."""
    if isinstance(shape, int):
        shape = shape,
    try:
        return tuple(map(_canonicalize_dimension, shape))
    except TypeError:
        pass
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    if context:
        msg += f" {context}."
    if any(isinstance(x, _Tracer) for x in shape):
        msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                "subfunctions.")
    raise TypeError(msg)


def dimension_as_value(d):
    """A dimension as a value: a constant one as it is, a symbolic one as a traced int."""
    if isinstance(d, (int, _Tracer, _np.int32, _np.int64)):
        return d
    m = getattr(d, "dimension_as_value", None)
    if m is not None:
        return m()
    return _operator.index(d)

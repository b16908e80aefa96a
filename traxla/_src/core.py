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

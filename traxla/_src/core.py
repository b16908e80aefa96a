"""``jax._src.core``: ``jax.core`` and ``jax.extend.core`` in one, plus ``get_aval`` (which
``jax._src.core`` still has)."""
from traxla.core import *  # noqa: F401,F403
from traxla.core import (AbstractValue, Atom, ParamDict, Value, eval_context,  # noqa: F401
                         is_constant_dim, is_constant_shape, is_concrete)
from traxla.extend.core import *  # noqa: F401,F403
from traxla.extend.core import OpaqueTraceState, take_current_trace  # noqa: F401
from traxla.ir.rules.call import ClosedCallPrimitive, call_p, closed_call_p  # noqa: F401
from traxla.api_util import shaped_abstractify as get_aval  # noqa: F401

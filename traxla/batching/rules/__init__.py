"""Batching rules, one module per family of primitives (mirroring ``ir/rules/`` and
``lowering/rules/``). Each rule receives the batch size, the operand values (in the
enclosing trace) and their batch dims (None: unbatched) and returns the outputs and their
batch dims, choosing dims as JAX does so that vmapped jaxprs print the same. Importing the
package registers every rule."""
from . import elementwise, shape, reduction, call, control_flow, indexing  # noqa: F401
from . import collectives, special, random  # noqa: F401
from .elementwise import _broadcasting, _vectorized, add_any_batched  # noqa: F401
from . import ffi  # noqa: F401,E402

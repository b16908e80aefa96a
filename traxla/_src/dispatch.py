"""``jax._src.dispatch``: ``wait_for_tokens``, which JAX registers with ``atexit`` to wait
for the side effects of dispatched programs before the interpreter exits (libraries
unregister it and register their own wrapper, so it is the same function object here)."""
from __future__ import annotations

import atexit

from traxla.api.callback import effects_barrier


@atexit.register
def wait_for_tokens():
    """Waits for the effects of every program dispatched so far (traxla runs a program with
    host callbacks to completion before its call returns, so this only raises a callback
    failure not yet reported)."""
    effects_barrier()

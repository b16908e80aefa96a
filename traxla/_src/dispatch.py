"""``jax._src.dispatch``: ``wait_for_tokens``, which JAX registers with ``atexit`` to wait
for the runtime tokens of dispatched programs with effects before the interpreter exits
(libraries unregister it and register their own wrapper, so it is registered here too)."""
from __future__ import annotations

import atexit


@atexit.register
def wait_for_tokens():
    """Waits for the effects of every program dispatched so far. traxla runs a program to
    completion, its host callbacks included, before the call returns (and raises a
    callback's failure from that call), so no runtime token is ever outstanding."""


from traxla.interpreters.xla import apply_primitive  # noqa: E402,F401  (JAX's)

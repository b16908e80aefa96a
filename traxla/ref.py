"""``traxla.ref``: array refs, JAX 0.10's mutable arrays (``jax.ref``); the
implementation lives in ``traxla/state/``."""
from traxla.state.ref import (AbstractRef, Ref, addupdate, empty_ref, free_ref, freeze, get,  # noqa: F401
                              new_ref, set, swap)
from traxla.state.ref import __all__  # noqa: F401

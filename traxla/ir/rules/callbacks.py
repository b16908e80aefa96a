"""Host-callback primitives, typed as JAX types them (``jax/_src/callback.py`` and
``debugging.py``): ``debug_callback`` and ``debug_print`` (no results, a ``Debug`` or
``OrderedDebug`` effect), ``pure_callback`` (results, no effect) and ``io_callback``
(results, an ``IO`` or ``OrderedIO`` effect). ``inspect_sharding`` reports an operand's
placement to a Python function at trace time and has a ``Debug`` effect so that it is kept.

The ``callback`` param is a plain Python callable on flat NumPy arguments; the lowering
hands it to the runtime, which checks its results before they reach XLA."""
from __future__ import annotations

from traxla.ir.effects import (NO_EFFECTS, Effect, debug_effect, def_effects, io_effect, ordered_debug_effect,
                       ordered_io_effect)
from traxla.ir.primitive import Primitive, def_printing, def_typing
from traxla.ir import dtypes
from traxla.ir.sharding_rules import register_sharding

debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_print_p = Primitive("debug_print", multiple_results=True)
pure_callback_p = Primitive("pure_callback", multiple_results=True)
io_callback_p = Primitive("io_callback", multiple_results=True)

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


def _host_avals(name, avals):
    """Operands and results cross to the host as NumPy arrays: no extended dtypes."""
    for aval in avals:
        if dtypes.is_extended(aval.dtype):
            raise TypeError(f"{name}: a value of type {aval.str_short()} (an extended dtype such "
                            "as a PRNG key) cannot be passed to or returned from a host callback; "
                            "pass random.key_data(key) instead.")


def _no_results(*avals, **params):
    """Debug callbacks see a PRNG key array as its key data, as JAX shows it under jit."""
    return []


def _declared_results(*avals, result_avals, **params):
    _host_avals("callback", list(avals) + list(result_avals))
    return list(result_avals)


def_typing(debug_callback_p, _no_results)
def_typing(debug_print_p, _no_results)
def_typing(pure_callback_p, _declared_results)
def_typing(io_callback_p, _declared_results)

def_effects(debug_callback_p, lambda params: frozenset({params["effect"]}))
def_effects(debug_print_p, lambda params: frozenset(
    {ordered_debug_effect if params["ordered"] else debug_effect}))
def_effects(pure_callback_p, lambda params: NO_EFFECTS)
def_effects(io_callback_p, lambda params: frozenset(
    {ordered_io_effect if params["ordered"] else io_effect}))

# debug_print's params print in JAX's (sorted) order, all of them; the others likewise.
for _prim in (debug_callback_p, debug_print_p, pure_callback_p, io_callback_p):
    def_printing(_prim)


def callback_name(callback) -> str:
    """A readable name for error messages: the user's function behind any wrapper."""
    if hasattr(callback, "fmt"):  # debug.print's formatter
        return repr(callback)
    inner = getattr(callback, "callback_func", None) or getattr(callback, "user_callback", None)
    target = inner if inner is not None else callback
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    return name if name is not None else repr(target)




# -- checkify.check: a predicate that must be functionalized by checkify before staging ----

class ErrorEffect(Effect):
    """The effect of an unfunctionalized ``checkify.check`` (keeps it from being DCE'd)."""

    name = "ErrorEffect(FailedCheckError)"


error_effect = ErrorEffect()
check_p = Primitive("check", multiple_results=True)
def_typing(check_p, _no_results)
def_effects(check_p, lambda params: frozenset({error_effect}))
def_printing(check_p)

__all__ = ["debug_callback_p", "debug_print_p", "pure_callback_p", "io_callback_p", "check_p",
           "VMAP_METHODS", "callback_name", "error_effect"]


def _replicated_results(in_avals, outs, **params):
    """Callbacks take whole (gathered) operands of any placement; their results are
    replicated (no sharding in the type), as JAX types them without a ``sharding``."""
    return [None] * len(outs)


def _register_sharding_rules():
    for prim in (debug_callback_p, debug_print_p, pure_callback_p, io_callback_p, check_p):
        register_sharding(prim, _replicated_results)


_register_sharding_rules()

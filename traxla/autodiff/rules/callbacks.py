"""JVP and transpose rules of the host callbacks, as JAX's: a debug print or callback runs
on the primal values only (once, on the forward pass) and has no tangent; transposing it
drops it. ``pure_callback`` and ``io_callback`` cannot be differentiated (wrap a
``pure_callback`` in ``custom_jvp``/``custom_vjp``)."""
from __future__ import annotations

from traxla.ir.rules.callbacks import debug_callback_p, debug_print_p, io_callback_p, pure_callback_p
from traxla.autodiff.ad import jvp_rules, transpose_rules


def _debug_jvp(prim):
    def rule(primals, tangents, **params):
        return prim.bind(*primals, **params), []
    return rule


def _debug_transpose(ct, *args, **params):
    return [None for _ in args]


def _pure_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. "
                     "Please use `jax.custom_jvp` to use callbacks while taking gradients.")


def _pure_transpose(ct, *args, **params):
    raise ValueError("Pure callbacks do not support transpose. "
                     "Please use `jax.custom_vjp` to use callbacks while taking gradients.")


def _io_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_transpose(ct, *args, **params):
    raise ValueError("IO callbacks do not support transpose.")


for _prim in (debug_print_p, debug_callback_p):
    jvp_rules[_prim] = _debug_jvp(_prim)
    transpose_rules[_prim] = _debug_transpose
jvp_rules[pure_callback_p] = _pure_jvp
transpose_rules[pure_callback_p] = _pure_transpose
jvp_rules[io_callback_p] = _io_jvp
transpose_rules[io_callback_p] = _io_transpose

from traxla.ir.rules.callbacks import check_p  # noqa: E402

jvp_rules[check_p] = _debug_jvp(check_p)
transpose_rules[check_p] = _debug_transpose

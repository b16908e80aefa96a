"""What the custom-rule decorators (``custom_jvp``, ``custom_vjp``, ``custom_vmap``) do
with a call's arguments: resolve keywords to positions as JAX's ``resolve_kwargs``, and
split off the non-differentiable ones."""
from __future__ import annotations

import functools
import inspect


def _name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _resolve_kwargs(fun, args, kwargs):
    """Arguments by position, defaults applied (as JAX's ``resolve_kwargs``: a defaulted
    nondiff argument is still an argument)."""
    if isinstance(fun, functools.partial):  # opaque signature, as in JAX
        if kwargs:
            raise TypeError("keyword arguments could not be resolved to positions")
        return tuple(args)
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"The function {_name(fun)} was called with arguments that do not match "
                        f"its signature: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError("keyword arguments could not be resolved to positions")
    return tuple(ba.args)


def _split_nondiff(args, nondiff_argnums):
    n = len(args)
    nums = sorted({i % n if -n <= i < 0 else i for i in nondiff_argnums})
    for i in nums:
        if i >= n:
            raise TypeError(f"nondiff_argnums={tuple(nondiff_argnums)} refers to argument {i}, "
                            f"but the function was called with {n} positional arguments.")
    static = [args[i] for i in nums]
    dyn = [a for i, a in enumerate(args) if i not in nums]

    def merge(dyn_vals, static_vals=None):
        full, it_s, it_d = [], iter(static if static_vals is None else static_vals), iter(dyn_vals)
        for i in range(n):
            full.append(next(it_s) if i in nums else next(it_d))
        return full

    return static, dyn, merge


class CustomVJPException(Exception):
    """JAX's: differentiating a custom_vjp function with respect to a closed-over value."""

    def __init__(self):
        super().__init__(
            "Detected differentiation of a custom_vjp function with respect to a closed-over "
            "value. That isn't supported because the custom VJP rule only specifies how to "
            "differentiate the custom_vjp function with respect to explicit input parameters. "
            "Try passing the closed-over value into the custom_vjp function as an argument, "
            "and adapting the custom_vjp fwd and bwd rules.")


def _closure_error(kind):
    return NotImplementedError(
        f"a {kind} function closes over a value that is being transformed (differentiated or "
        "batched) by an enclosing transformation; pass it to the function as an explicit "
        "argument instead.")

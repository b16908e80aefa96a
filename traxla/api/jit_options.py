"""``jit``'s options read once, when it wraps a function: the placement of
``device=``/``backend=``, and donation completed through the function's signature."""
from __future__ import annotations

import inspect

from traxla.runtime.backend import get_backend
from traxla.runtime.placement import device_placement


def _device_and_backend_placement(device, backend):
    """``device=``/``backend=`` (deprecated in JAX, still honoured): the one-device
    placement programs run on (None: the default device)."""
    if device is not None and backend is not None:
        raise ValueError("can't specify both a device and a backend for jit, got "
                         f"{device=} and {backend=}")
    if backend is not None:
        return device_placement(get_backend(backend).platform)
    if device is not None:
        if not hasattr(device, "_device"):
            raise TypeError(f"jit(device=...) expects a Device, got {device!r}")
        return device_placement(device)
    return None


def _donation_spec(fun, donate_argnums, donate_argnames, static_argnums, static_argnames):
    """``(donate_argnums, donate_argnames)`` each completed from the other through
    ``fun``'s signature, as JAX does; donating a static argument is an error."""
    if isinstance(donate_argnums, int):
        donate_argnums = (donate_argnums,)
    if isinstance(donate_argnames, str):
        donate_argnames = (donate_argnames,)
    nums, names = tuple(donate_argnums), tuple(donate_argnames)
    if not nums and not names:
        return (), ()
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = None
    if params is not None:
        positional = [p.name for p in params if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        named = {p.name for p in params if p.kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
        has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
        for name in names:
            if name not in named and not has_var_kw:
                raise ValueError(f"Jitted function has invalid argnames {{'{name}'}} in "
                                 "donate_argnames. Function does not take these args.")
        nums = tuple(sorted(set(nums) | {positional.index(n) for n in names
                                         if n in positional}))
        names = tuple(sorted(set(names) | {positional[i] for i in nums
                                           if -len(positional) <= i < len(positional)}))
    clash = set(nums) & set(static_argnums)
    if clash:
        raise ValueError(f"static_argnums and donate_argnums cannot intersect, got "
                         f"static_argnums={tuple(static_argnums)}, donate_argnums={nums}")
    clash = set(names) & set(static_argnames)
    if clash:
        raise ValueError(f"static_argnames and donate_argnames cannot intersect. Argument names "
                         f"{clash} appear in both static_argnames and donate_argnames")
    return nums, names


def _hashable_static(value):
    try:
        hash(value)
    except TypeError as e:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying to "
            f"hash an object of type {type(value)}, {value!r}. The error was:\n"
            f"{type(e).__name__}: {e}\n") from None
    return value

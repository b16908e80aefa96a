"""``JitFunction``'s argument handling: static arguments split off and merged back,
donated leaves, leaf names for error messages, and JAX's error for an argument that is not
an array."""
from __future__ import annotations

import inspect

from traxla.base.arg_names import leaf_names, memo_hit, plain_binding
from traxla import api_util, tree_util
from traxla.api.jit_options import _hashable_static
from traxla.runtime import to_array
from traxla.tracer import Tracer


class JitArguments:
    """``JitFunction``'s argument handling (a base class of it; ``jit_function.py``)."""

    # -- donation: shared by calls and the AOT stages ----------------------------
    def _donated_leaves(self, args, kwargs, in_tree) -> list[bool]:
        """Per flat argument leaf, whether its buffer is donated."""
        if not self.donate_argnums and not self.donate_argnames:
            return [False] * in_tree.num_leaves
        n = len(args)
        static = api_util.static_positions(self.static_argnums, n)
        donated = {i % n if -n <= i < n else i for i in self.donate_argnums}
        flags = []
        for i, a in enumerate(args):
            if i not in static:
                flags += [i in donated] * tree_util.tree_structure(a).num_leaves
        for k in sorted(kwargs):
            if k not in self.static_argnames:
                flags += [k in self.donate_argnames] * tree_util.tree_structure(
                    kwargs[k]).num_leaves
        return flags

    # -- static arguments and names -------------------------------------------
    def _split_static(self, args, kwargs):
        if self._plain:
            return args, kwargs, ()
        nums = api_util.static_positions(self.static_argnums, len(args))
        static = tuple((i, _hashable_static(args[i])) for i in sorted(nums))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        static_kw = tuple(sorted((k, _hashable_static(v)) for k, v in kwargs.items()
                                 if k in self.static_argnames))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return dyn_args, dyn_kwargs, (static, static_kw)

    def _merge_static(self, args, kwargs, dyn_args, dyn_kwargs):
        if self._plain:
            return dyn_args, dyn_kwargs
        n = len(args)
        nums = api_util.static_positions(self.static_argnums, n)
        it = iter(dyn_args)
        full_args = [args[i] if i in nums else next(it) for i in range(n)]
        full_kwargs = dict(dyn_kwargs)
        full_kwargs.update({k: v for k, v in kwargs.items() if k in self.static_argnames})
        return full_args, full_kwargs

    def _argument_error(self, error, args, kwargs, leaves):
        """JAX's error for a leaf that is not an array (a string, an object array, an int
        too large for int32...), naming the argument's path."""
        for i, x in enumerate(leaves):
            try:
                to_array(x) if not isinstance(x, Tracer) else None
            except (TypeError, OverflowError) as leaf_error:
                names = self._arg_names(args, kwargs)
                path = names[i] if i < len(names) else f"args[{i}]"
                if isinstance(leaf_error, OverflowError):
                    return OverflowError(
                        "An overflow was encountered while parsing an argument to a jitted "
                        f"computation, whose argument path is {path}. Got {type(x)} with value {x}")
                return TypeError(
                    f"Error interpreting argument to {self.fun} as an abstract array. The "
                    f"problematic value is of type {type(x)} and was passed to the function at "
                    f"path {path}.\nThis typically means that a jit-wrapped function was called "
                    "with a non-array argument, and this argument was not marked as static using "
                    "the static_argnums or static_argnames parameters of jax.jit.")
        return error

    def _qualname(self) -> str:
        return getattr(self.fun, "__qualname__", getattr(self.fun, "__name__", str(self.fun)))

    def _arg_names(self, args, kwargs):
        """Leaf names like ``x`` or ``params['w']`` for error messages."""
        if (names := memo_hit(self, args, kwargs)) is not None:  # (a trace in progress)
            return names
        try:
            sig = self._signature or inspect.signature(self.fun)
            self._signature = sig
            items = plain_binding(sig, args, kwargs)
            if items is None:
                items = sig.bind(*args, **kwargs).arguments.items()
        except (TypeError, ValueError):
            return ()
        names = []
        n = len(args)
        static_nums = api_util.static_positions(self.static_argnums, n)
        position = 0
        for name, value in items:
            kind = sig.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                for j, v in enumerate(value):
                    if position not in static_nums:
                        names += leaf_names(f"{name}[{j}]", v)
                    position += 1
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                for k, v in value.items():
                    if k not in self.static_argnames:
                        names += leaf_names(f"{name}['{k}']", v)
                continue
            is_static = (position in static_nums if position < n else False) or name in self.static_argnames
            if position < n:
                position += 1
            if not is_static:
                names += leaf_names(name, value)
        return names

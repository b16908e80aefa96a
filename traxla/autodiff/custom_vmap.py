"""``custom_vmap``: a function with a user-supplied batching rule (JAX's
``jax.custom_batching.custom_vmap``). Called, it traces the function into a
``custom_vmap_call`` equation carrying the rule; ``vmap`` applies the rule, every other
interpretation the function (the primitive's rules are in each stage's
``rules/custom_batching.py``)."""
from __future__ import annotations

import functools

from traxla import primitives as prims, tree_util
from traxla.autodiff.custom_args import _resolve_kwargs
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.custom_batching import custom_vmap_p
from traxla.ir.traceback_util import api_boundary
from traxla.batching.rules_support import call_rule
from traxla.tracer import make_debug_info, trace_to_jaxpr


class custom_vmap:
    """Customizes how ``vmap`` batches ``fun``: ``@f.def_vmap`` gives the rule
    ``rule(axis_size, in_batched, *args) -> (out, out_batched)``."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def __getattr__(self, name):  # JAX's forward_attr: a wrapped custom function's def*
        if name.startswith("def") and "fun" in self.__dict__:
            return getattr(self.fun, name)
        raise AttributeError(name)

    def def_vmap(self, vmap_rule):
        """Defines the vmap rule; returns ``vmap_rule`` unchanged."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    @api_boundary
    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", type(self.fun).__name__)
        try:
            args = _resolve_kwargs(self.fun, args, kwargs)
        except TypeError as e:
            raise TypeError(
                "The input arguments to the custom_vmap-decorated function "
                f"{name} could not be resolved to positional-only arguments. Binding failed "
                f"with the error:\n{e}") from e
        if not self.vmap_rule:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        args_flat, in_tree = tree_util.tree_flatten(args)
        store = {}

        def flat_fun(*xs):
            outs, store["tree"] = tree_util.tree_flatten(
                self.fun(*tree_util.tree_unflatten(in_tree, list(xs))))
            return outs

        avals = [prims.aval_of(x) for x in args_flat]
        closed = trace_to_jaxpr(flat_fun, avals, make_debug_info(self.fun, "custom_vmap fun",
                                                                 args))
        j = closed.jaxpr
        call = ClosedJaxpr(Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns,
                                 j.debug_info), [])
        consts = list(closed.consts)
        out_flat = custom_vmap_p.bind(
            *consts, *args_flat, call=call, rule=ClosedRule(self.vmap_rule),
            in_tree=tree_util.treedef_tuple((tree_util.tree_structure(consts), in_tree)),
            out_tree=store["tree"])
        return tree_util.tree_unflatten(store["tree"], out_flat)


class ClosedRule:
    """The user's rule, called with the traced constants split off (never batched);
    printed as the rule itself."""

    def __init__(self, rule):
        functools.update_wrapper(self, rule)
        self.rule = rule

    def __call__(self, axis_size, all_in_batched, *all_args):
        _, args = all_args
        _, in_batched = all_in_batched
        return call_rule(self.rule, axis_size, in_batched, args)

    def __str__(self):
        return str(self.rule)

    __repr__ = __str__

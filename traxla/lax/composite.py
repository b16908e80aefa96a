"""``composite``: a function traced once and bound as one named ``composite`` operation
(lowered to ``stablehlo.composite``, its decomposition kept as the body)."""
from __future__ import annotations

import functools

import numpy as np

from traxla import tree_util
from traxla.errors import UnexpectedTracerError
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.composite import composite_p
from traxla.primitives.values import aval_of
from traxla.tracer import Tracer, make_debug_info, trace_to_jaxpr


def composite(decomposition, name, version=0):
    """``decomposition`` as one named ``composite`` operation (keyword arguments become its
    static attributes), lowered to ``stablehlo.composite``."""

    @functools.wraps(decomposition)
    def _decorator(*args, **kwargs):
        if any(isinstance(v, Tracer) for v in kwargs.values()):
            raise UnexpectedTracerError(
                "Found a JAX Tracer as an attribute in the decomposition for the composite op "
                f"'{name}'. This means that the decomposition function closes over a value that "
                "is involved in a JAX transformation. Any values that aren't explicitly known at "
                "compile time must be explicitly passed as arguments to the composite.\n\nNote: "
                "If you are passing jax arrays as attributes, use numpy arrays instead.")
        flat_args, in_tree = tree_util.tree_flatten(args)
        avals = [aval_of(x) for x in flat_args]
        out_store = []

        def flat_fun(*xs):
            out = decomposition(*tree_util.tree_unflatten(in_tree, xs), **kwargs)
            leaves, tree = tree_util.tree_flatten(out)
            out_store.append(tree)
            return leaves

        closed = trace_to_jaxpr(flat_fun, avals, make_debug_info(decomposition, "composite", ()))
        tracer_consts = [c for c in closed.consts if isinstance(c, Tracer)]
        if tracer_consts:  # closed-over tracers become leading operands
            j = closed.jaxpr
            moved = [v for v, c in zip(j.constvars, closed.consts) if isinstance(c, Tracer)]
            kept = [(v, c) for v, c in zip(j.constvars, closed.consts) if not isinstance(c, Tracer)]
            closed = ClosedJaxpr(Jaxpr([v for v, _ in kept], moved + j.invars, j.outvars, j.eqns,
                                       j.debug_info), [c for _, c in kept])
        attributes = []
        for k, v in kwargs.items():
            leaves, treedef = tree_util.tree_flatten(v)
            attributes.append((k, tuple(_Hashable(x) if isinstance(x, np.ndarray) else x
                                        for x in leaves), treedef))
        outs = composite_p.bind(*tracer_consts, *flat_args, name=name,
                                attributes=tuple(attributes), version=version, jaxpr=closed)
        return tree_util.tree_unflatten(out_store[0], outs)

    return _decorator


class _Hashable:
    """A NumPy array attribute, hashable by value (JAX's ``HashableArray``)."""

    def __init__(self, val):
        self.val = val

    def __repr__(self):
        return f"HashableArray({self.val!r})"

    def __hash__(self):
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other):
        return isinstance(other, _Hashable) and np.array_equal(self.val, other.val)

"""``traxla.extend.core``: jaxprs and primitives as ``jax.extend.core`` exposes them.

A ``Primitive`` made here is an ordinary traxla primitive: ``def_impl`` gives its eager
evaluation, ``def_abstract_eval`` its typing rule; lowering, JVP, transpose and batching
rules are registered through ``traxla.interpreters``."""
from __future__ import annotations

from traxla.ir import primitive as _primitive
from traxla.ir.avals import ShapedArray  # noqa: F401  (what abstract-eval rules return)
from traxla.ir.checker import check_jaxpr  # noqa: F401
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var  # noqa: F401
from traxla.ir.primitive import ALL_PRIMITIVES, typing_rules
from traxla.tracer.interpret import eval_jaxpr, jaxpr_as_fun  # noqa: F401
from traxla.tracer.traces import current_trace

array_types = {ShapedArray}


USER_PRIMITIVES: dict = {}


class Primitive(_primitive.Primitive):
    """A primitive defined from user code: ``p = Primitive('name')``, then
    ``p.def_impl(fn)``, ``p.def_abstract_eval(fn)`` and ``p.bind(*args, **params)``."""

    __slots__ = ("impl", "_abstract_eval")

    def __init__(self, name: str, multiple_results: bool = False):
        super().__init__(name, multiple_results)
        USER_PRIMITIVES[name] = self  # kept apart from traxla's own (coverage, name lookups)
        self.impl = None
        self._abstract_eval = None

    def def_impl(self, impl):
        """``impl(*args, **params)``: how ``bind`` evaluates outside any transformation."""
        self.impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        """``abstract_eval(*avals, **params)`` returns the output aval(s) (ShapedArray)."""
        self._abstract_eval = abstract_eval
        name = self.name

        def rule(*avals, **params):
            out = abstract_eval(*avals, **params)
            outs = out if self.multiple_results else [out]
            for o in outs:
                if not (hasattr(o, "shape") and hasattr(o, "dtype")):
                    raise TypeError(f"The abstract evaluation rule of primitive '{name}' returned "
                                    f"{o!r}; it must return a ShapedArray (or a list of them "
                                    "for multiple_results=True).")
            outs = [ShapedArray(o.shape, o.dtype, getattr(o, "weak_type", False)) for o in outs]
            return outs if self.multiple_results else outs[0]
        typing_rules[self] = rule
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        """JAX's form returning ``(avals, effects)``; only effect-free rules are accepted."""
        def abstract_eval(*avals, **params):
            out, effects = effectful_abstract_eval(*avals, **params)
            if effects:
                raise NotImplementedError(f"primitive '{self.name}' declares effects {effects}; "
                                          "user primitives with effects are not supported.")
            return out
        return self.def_abstract_eval(abstract_eval)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=None, source_info=None):
    return JaxprEqn(list(invars), list(outvars), primitive, dict(params), source_info)


def find_top_trace(_):
    """The innermost active trace (JAX's ``core.find_top_trace``: traces are per thread,
    and the current one is the top whatever the arguments)."""
    return current_trace()


unsafe_get_current_trace = current_trace


def primitives():
    """Every primitive defined so far, by name: traxla's and then the user's."""
    return {**ALL_PRIMITIVES, **USER_PRIMITIVES}


__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "ShapedArray", "Var",
           "array_types", "check_jaxpr", "eval_jaxpr", "find_top_trace", "jaxpr_as_fun",
           "new_jaxpr_eqn", "unsafe_get_current_trace",
           "primitives"]

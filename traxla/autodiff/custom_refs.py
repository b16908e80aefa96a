"""What ``custom_vjp`` does with array-ref arguments: JAX's error for one ref passed twice,
and the refs a fwd rule shares with bwd as residuals (kept out of the linear equation)."""
from __future__ import annotations

import inspect

from traxla import primitives as prims
from traxla.base.arg_names import bound_leaf_names, leaf_names
from traxla.tracer import Tracer


def _is_ref(x) -> bool:
    """A ``Ref`` object or a ref-typed tracer."""
    return getattr(x, "is_array_ref", False) or (
        isinstance(x, Tracer) and type(getattr(x, "aval", None)).__name__ == "AbstractRef")


def _check_no_aliased_refs(fun, dyn, leaves, is_ref):
    """JAX's error for one Ref passed twice to a custom_vjp function."""
    seen = {}
    for i, (x, r) in enumerate(zip(leaves, is_ref)):
        if r and seen.setdefault(id(x), i) != i:
            try:
                sig = inspect.signature(fun)
                names = bound_leaf_names(sig, sig.bind(*dyn))
            except (TypeError, ValueError):
                names = leaf_names("args", tuple(dyn))
            name = getattr(fun, "__name__", None) or type(fun).__name__
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but custom_vjp function {name} got the same mutable array "
                f"reference of type {prims.aval_of(x)} at {names[seen[id(x)]]} and {names[i]}.")


def _refs_kept_by_bwd(res, bwd):
    """Ref residuals (a fwd rule sharing a ref argument with bwd) kept out of custom_lin."""
    is_ref = [_is_ref(r) for r in res]
    refs = [r for r, m in zip(res, is_ref) if m]

    def bwd_with_refs(arrays, cts):
        it_arrays, it_refs = iter(arrays), iter(refs)
        return bwd([next(it_refs) if m else next(it_arrays) for m in is_ref], cts)
    return [r for r, m in zip(res, is_ref) if not m], type(bwd)(bwd_with_refs, str(bwd))

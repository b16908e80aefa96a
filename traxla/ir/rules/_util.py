"""Helpers shared by the typing rules."""
from __future__ import annotations

from traxla.ir import dtypes

# Category name (as JAX's messages spell it) -> membership test.
CATEGORIES = {
    "floating": dtypes.is_float,
    "complexfloating": dtypes.is_complex,
    "integer": dtypes.is_int,
    "signedinteger": dtypes.is_signed_int,
    "unsignedinteger": dtypes.is_unsigned_int,
    "bool": dtypes.is_bool,
}

FLOAT = ("floating",)
FLOAT_COMPLEX = ("floating", "complexfloating")
NUM = ("integer", "floating", "complexfloating")
ANY = ("integer", "floating", "complexfloating", "bool")
INT = ("integer",)
INT_BOOL = ("integer", "bool")
INT_FLOAT = ("integer", "floating")
# (in the order JAX's messages print them: its sets' iteration order)
FLOAT_COMPLEX_SIGNED = ("floating", "complexfloating", "signedinteger")
ANY_BOOL_SECOND = ("integer", "bool", "floating", "complexfloating")
ORDERED = ("integer", "floating", "bool")


def accepts(categories, dtype) -> bool:
    return any(CATEGORIES[c](dtype) for c in categories)


def check_dtype(name: str, categories, dtype, position: int | None = None):
    if accepts(categories, dtype):
        return
    where = "" if position is None else f" at position {position}"
    raise TypeError(f"{name} does not accept dtype {dtype}{where}. "
                    f"Accepted dtypes{where} are subtypes of {', '.join(categories)}.")


def check_same_dtypes(name: str, avals, tip: str | None = None):
    first = avals[0].dtype
    if all(a.dtype == first for a in avals[1:]):
        return
    names = ", ".join(str(a.dtype) for a in avals)
    hint = f" (Tip: {tip} is a similar function that does automatic type promotion on inputs)." if tip else ""
    raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {names}.{hint}")


def broadcast_shapes(name: str, shapes):
    """lax's implicit broadcasting: scalars, and size-1 dims of equal-rank arrays."""
    arrays = [s for s in shapes if s]
    if not arrays:
        return ()
    ranks = {len(s) for s in arrays}
    if len(ranks) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
    out = []
    for dims in zip(*arrays):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, shapes))}.")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def check_call_operands(avals, expected, called: str, takes: str, name: str = ""):
    """A TypeError naming ``called`` (a template for ``name``, formatted only on error: the
    typing rules run once per traced equation) and what it ``takes`` unless ``avals`` match
    the ``expected`` input avals of a called jaxpr in shape and dtype."""
    if len(avals) != len(expected) or any(
            (a != e) if getattr(e, "is_high", False) is True  # a high-level (hijax) type
            else (a.shape != e.shape or a.dtype != e.dtype) for a, e in zip(avals, expected)):
        raise TypeError(f"{called.format(name)} called with {[a.str_short() for a in avals]} but its "
                        f"{takes} takes {[e.str_short() for e in expected]}.")

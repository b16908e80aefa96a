"""XLA tokens (JAX's ``lax.create_token`` and ``lax.after_all``): values of the type
``AbstractToken`` (printed ``Tok``) that carry no data, only an order between side effects.
``create_token`` makes one without preconditions; ``after_all`` merges several."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing


class AbstractToken:
    """The type of an XLA token: no shape, no dtype, no data."""

    __slots__ = ()
    shape = ()
    ndim = 0
    size = 0
    dtype = None
    sharding = sharding_type = None
    memory_space = None
    vma = ()
    weak_type = False

    def str_short(self, short_dtypes: bool = True, mesh_axis_types: bool = False) -> str:
        return "Tok"

    def strip_weak_type(self):
        return self

    def update(self, **_):
        return self

    def __repr__(self):
        return "AbstractToken()"

    __str__ = __repr__

    def __reduce__(self):
        return _abstract_token, ()


def _abstract_token():
    return abstract_token


abstract_token = AbstractToken()

create_token_p = Primitive("create_token")
after_all_p = Primitive("after_all")


def _after_all_rule(*operands):
    if any(x is not abstract_token for x in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


def_typing(create_token_p, lambda *_: abstract_token)
def_typing(after_all_p, _after_all_rule)
P = {"create_token": create_token_p, "after_all": after_all_p}

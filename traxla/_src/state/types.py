"""``jax._src.state.types``: the abstract type of array references."""
from traxla.ir.rules.refs import AbstractRef  # noqa: F401
from traxla.state.ref import Ref  # noqa: F401

__all__ = ["AbstractRef", "Ref"]

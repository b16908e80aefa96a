"""``jax._src.lib._jax``: jaxlib's extension module as JAX sees it. Libraries test values
against its classes: ``PjitFunction`` (what ``jit`` returns; qwix intercepts jitted
functions by it) and ``ArrayImpl`` (the concrete Array class) are traxla's."""
from traxla.api.jit_function import PjitFunction  # noqa: F401
from traxla.runtime.array import ArrayImpl  # noqa: F401

__all__ = ["ArrayImpl", "PjitFunction"]

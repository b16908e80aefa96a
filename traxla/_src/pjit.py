"""``jax._src.pjit``: ``jit_p``, the primitive of a ``jit`` call in a jaxpr (``pjit_p`` is its
older name, still imported by libraries), and ``pjit`` (``jax.jit``)."""
from traxla.api.jit_function import jit as pjit  # noqa: F401
from traxla.ir.rules.call import jit_p

pjit_p = jit_p

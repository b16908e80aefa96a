"""``traxla.scipy.sparse``: as ``jax.scipy.sparse`` (the iterative solvers of ``linalg``)."""
from . import linalg as linalg  # noqa: F401

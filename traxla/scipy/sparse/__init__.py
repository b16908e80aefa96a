"""``traxla.scipy.sparse``: as ``jax.scipy.sparse`` (the iterative solvers of ``linalg``)."""
from traxla.scipy.sparse import linalg as linalg  # noqa: F401

"""``traxla.scipy.optimize``: ``minimize`` (BFGS; JAX's experimental L-BFGS) with JAX's
line search and result type."""
from traxla.scipy.optimize.minimize import OptimizeResults, minimize  # noqa: F401

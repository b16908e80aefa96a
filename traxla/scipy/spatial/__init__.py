"""``traxla.scipy.spatial``: as ``jax.scipy.spatial`` (its ``transform`` submodule holds
``Rotation`` and ``Slerp``)."""
from . import transform  # noqa: F401

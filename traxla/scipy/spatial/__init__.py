"""``traxla.scipy.spatial``: as ``jax.scipy.spatial`` (its ``transform`` submodule holds
``Rotation`` and ``Slerp``)."""
from traxla.scipy.spatial import transform  # noqa: F401

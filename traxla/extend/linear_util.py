"""``traxla.extend.linear_util``: wrapped functions (``jax.extend.linear_util``)."""
from traxla.tracer.linear_util import (Store, StoreException, WrappedFun,  # noqa: F401
                                       transformation2, transformation_with_aux2, wrap_init)

__all__ = ["Store", "StoreException", "WrappedFun", "transformation2",
           "transformation_with_aux2", "wrap_init"]

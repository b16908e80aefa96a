"""``jax._src.numpy.lax_numpy``: every name of ``jax.numpy``, and the promotion helpers
libraries import from here."""
from traxla.numpy import *  # noqa: F401,F403
from traxla.numpy import ndarray  # noqa: F401
from traxla.numpy._promotion import (check_arraylike, promote_dtypes,  # noqa: F401
                                     promote_dtypes_inexact, promote_dtypes_numeric,
                                     promote_shapes)
from traxla.numpy._promotion import promote_dtypes as _promote_dtypes  # noqa: F401
from traxla.numpy._promotion import promote_dtypes_inexact as _promote_dtypes_inexact  # noqa: F401
from traxla.numpy._promotion import promote_shapes as _promote_shapes  # noqa: F401

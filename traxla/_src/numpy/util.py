"""``jax._src.numpy.util``: argument checks and dtype/shape promotion of ``jax.numpy``."""
from traxla.numpy import ndim, shape, size  # noqa: F401
from traxla.numpy._promotion import (check_arraylike, check_for_prngkeys,  # noqa: F401
                                     ensure_arraylike, promote_args, promote_args_inexact,
                                     promote_args_numeric, promote_dtypes,
                                     promote_dtypes_inexact, promote_dtypes_numeric,
                                     promote_shapes)

"""``jax._src.numpy.reductions``: the reductions of ``jax.numpy``."""
from traxla.numpy import (all, amax, amin, any, argmax, argmin, count_nonzero,  # noqa: F401
                          cumprod, cumsum, max, mean, median, min, nanmax, nanmean, nanmin,
                          nanprod, nanstd, nansum, nanvar, prod, ptp, std, sum, var)

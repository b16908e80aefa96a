"""jax-datetime quick start: Datetime/Timedelta arithmetic under jit, interp over times."""
import jax
import jax.numpy as jnp
import numpy as np
import jax_datetime as jdt
from _out import emit

t0 = jdt.to_datetime(np.datetime64("2024-01-01T00:00:00"))
dt = jdt.to_timedelta(np.timedelta64(90, "m"))


@jax.jit
def later(t, d, n):
    return t + d * n


t1 = later(t0, dt, 3)
span = t1 - t0
emit({"t1": str(t1.to_datetime64()), "span_s": span.total_seconds() if hasattr(span, "total_seconds") else str(span.to_timedelta64()),
      "days": span.days, "seconds": span.seconds})

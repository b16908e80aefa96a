"""``jax.experimental.jax2tf``: not supported by traxla, which does not have jax2tf
(conversion to TensorFlow, which needs tensorflow). The module imports and its names exist
with JAX's kinds; using one raises NotImplementedError naming the capability."""

from traxla.experimental.jax2tf import jax2tf  # noqa: F401
from traxla.experimental.jax2tf.call_tf import call_tf  # noqa: F401
from traxla.experimental.jax2tf.jax2tf import (DisabledSafetyCheck, PolyShape,  # noqa: F401
                                               convert, dtype_of_val, eval_polymorphic_shape,
                                               split_to_logical_devices)

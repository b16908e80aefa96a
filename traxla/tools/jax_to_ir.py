"""``jax.tools.jax_to_ir``: not supported by traxla, which does not have JAX's command-line
tools (jax.tools). The module imports and its names exist with JAX's kinds; using one raises
NotImplementedError naming the capability."""

from ast import literal_eval
import functools
import importlib
import re
import traxla as jax
import traxla.numpy as jnp

from traxla.base.unsupported import fill as _fill

jax2tf = None
tf = None

_CAPABILITY = "JAX's command-line tools (jax.tools)"
_fill(globals(), _CAPABILITY,
    functions=('jax_to_hlo jax_to_ir jax_to_tf main parse_shape_str set_up_flags '
      'tf_wrap_with_input_names'),
    modules='app flags')

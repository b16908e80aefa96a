"""``jax.experimental.transfer``: not supported by traxla, which does not have cross-host
transfer servers (jax.experimental.transfer). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""

from typing import Any
import traxla as jax

from traxla.base.unsupported import fill as _fill

TYPE_CHECKING = False

_CAPABILITY = 'cross-host transfer servers (jax.experimental.transfer)'
_fill(globals(), _CAPABILITY,
    functions='make_error_array start_transfer_server use_cpp_class use_cpp_method',
    classes='TransferConnection TransferServer')

"""``jax.experimental.fused``: not supported by traxla, which does not have fused computations
(jax.experimental.fused). The module imports and its names exist with JAX's kinds; using one
raises NotImplementedError naming the capability."""

from builtins import map as unsafe_map
from builtins import zip as unsafe_zip
from traxla import typeof
from traxla.api_util import debug_info
from traxla.api_util import safe_map
from traxla.api_util import safe_map as map
from traxla.tree_util import tree_flatten
from traxla.tree_util import tree_unflatten
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.interpreters.ad as ad

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'fused computations (jax.experimental.fused)'
_fill(globals(), _CAPABILITY,
    functions='flatten_fun_nokwargs fused safe_zip unzip2 weakref_lru_cache zip',
    constants='fused_p',
    modules='batching ir lu mlir pe')

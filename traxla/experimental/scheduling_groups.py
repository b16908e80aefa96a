"""``jax.experimental.scheduling_groups``: not supported by traxla, which does not have XLA
scheduling groups (jax.experimental.scheduling_groups). The module imports and its names exist
with JAX's kinds; using one raises NotImplementedError naming the capability."""

from builtins import map as unsafe_map
from builtins import zip as unsafe_zip
from functools import partial
from traxla.api_util import debug_info
from traxla.api_util import safe_map
from traxla.api_util import safe_map as map
from traxla.tree_util import tree_flatten
from traxla.tree_util import tree_unflatten
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.interpreters.ad as ad

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'XLA scheduling groups (jax.experimental.scheduling_groups)'
_fill(globals(), _CAPABILITY,
    functions=('attr_get dce_jaxpr_xla_metadata_rule safe_zip scheduling_group split_list subs_list '
      'unzip2 weakref_lru_cache xla_metadata_call zip'),
    classes='FlatTree',
    constants='xla_metadata_call_p',
    modules='batching func_dialect ir lu mlir pe')

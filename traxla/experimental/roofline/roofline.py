"""``jax.experimental.roofline.roofline``: not supported by traxla, which does not have
roofline analysis of jaxprs (jax.experimental.roofline). The module imports and its names
exist with JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from traxla import NamedSharding
from traxla import make_jaxpr
from traxla import shard_map
from traxla.api_util import safe_map as map
from traxla.interpreters.partial_eval import dce_jaxpr
from traxla.sharding import AbstractMesh
from traxla.sharding import Mesh
from traxla.tree_util import tree_flatten
from traxla.tree_util import tree_map
from traxla.tree_util import tree_unflatten
from typing import Any
from typing import Any as ShapeDtypeStructTree
from typing import Any as Specs
from typing import Protocol
import numpy as np
import traxla._src.api as api
import traxla._src.core as core
import traxla._src.traceback_util as traceback_util
import traxla._src.util as util
import traxla.numpy as jnp

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'roofline analysis of jaxprs (jax.experimental.roofline)'
_fill(globals(), _CAPABILITY,
    functions=('broadcast_prefix foreach register_roofline register_standard_roofline roofline '
      'roofline_and_grad'),
    classes='RooflineResult RooflineRuleContext RooflineShape',
    constants='ValidRooflineDtype shard_map_p',
    modules='logging prng source_info_util')

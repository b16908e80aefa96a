"""``jax.experimental.roofline.rooflines``: not supported by traxla, which does not have
roofline analysis of jaxprs (jax.experimental.roofline). The module imports and its names
exist with JAX's kinds; using one raises NotImplementedError naming the capability."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
import itertools as it
import numpy as np
import traxla._src.ad_util as ad_util
import traxla._src.api as api
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.lax.lax as lax
import traxla._src.pjit as pjit
import traxla._src.util as util
import traxla.experimental.roofline as roofline

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'roofline analysis of jaxprs (jax.experimental.roofline)'
_fill(globals(), _CAPABILITY,
    constants='prim',
    modules=('ad_checkpoint ann callback control_flow convolution debugging fft lax_parallel '
      'linalg ops prng random shard_map slicing special windowed_reductions'))

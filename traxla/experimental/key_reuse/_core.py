"""``jax.experimental.key_reuse._core``: not supported by traxla, which does not have key-
reuse checking of PRNG keys (jax.experimental.key_reuse). The module imports and its names
exist with JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from _functools import reduce
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterator
from functools import partial
from functools import total_ordering
from traxla.errors import KeyReuseError
from typing import Any
from typing import NamedTuple
import numpy as np
import traxla as jax
import traxla._src.api_util as api_util
import traxla._src.core as core
import traxla._src.pjit as pjit
import traxla._src.traceback_util as traceback_util
import traxla._src.util as util
import traxla.interpreters.batching as batching
import traxla.interpreters.mlir as mlir
import traxla.lax as lax
import traxla.tree_util as tree_util

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'key-reuse checking of PRNG keys (jax.experimental.key_reuse)'
_fill(globals(), _CAPABILITY,
    functions=('assert_consumed assert_unconsumed call_impl_with_key_reuse_checks check_key_reuse '
      'check_key_reuse_jaxpr consume dynamic_key_reuse_signature function_type_signature '
      'jaxpr_type_signature key_reuse_error_with_source_traceback '
      'key_reuse_signature_from_eqn key_reuse_signature_from_primitive unknown_signature '
      'weakref_lru_cache'),
    classes='DynamicKeyReuseSignature Effect Forward HashableArray KeyReuseSignature Sink Source',
    constants=('assert_consumed_value_p assert_effect consume_effect consume_p debug_callback_p '
      'key_reuse_signatures remat_p shard_map_p'),
    modules='lu pe prng random source_info_util')

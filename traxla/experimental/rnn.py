"""``jax.experimental.rnn``: not supported by traxla, which does not have cuDNN RNN kernels
(jax.experimental.rnn). The module imports and its names exist with JAX's kinds; using one
raises NotImplementedError naming the capability."""

from functools import partial
from traxla import Array
from traxla import custom_vjp
from traxla.nn import sigmoid
from traxla.numpy import tanh
from typing import Any
from typing import Any as PRNGKeyArray
import math
import numpy as np
import traxla as jax
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.lax.lax as lax
import traxla.interpreters.mlir as mlir
import traxla.numpy as jnp

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'cuDNN RNN kernels (jax.experimental.rnn)'
_fill(globals(), _CAPABILITY,
    functions=('Shape get_num_params_in_lstm init_lstm_weight lstm lstm_bwd lstm_fwd lstm_ref '
      'rnn_abstract_eval rnn_bwd_abstract_eval swap_lstm_gates unpack_lstm_weights'),
    constants='rnn_bwd_p rnn_fwd_p',
    modules='gpu_rnn')

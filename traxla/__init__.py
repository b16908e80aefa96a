"""traxla: a JAX-compatible front-end compiler for Python numerical code.

Trace a pure function into a jaxpr, lower it to StableHLO, compile and run it
through XLA's PJRT runtime (jaxlib), without importing ``jax``.
"""
from .ir.config import config
from . import errors, tree_util
from . import numpy  # noqa: F401  (installs array operators)
from . import lax
from .batching import vmap
from .autodiff import (custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jvp, linearize,
                       value_and_grad, vjp)
from .api import (Compiled, JitFunction, Lowered, Traced, block_until_ready, device_put, jit,
                  make_jaxpr, typeof)
from .runtime import Array, Device, devices
from . import sharding
from .sharding import NamedSharding, make_mesh
from .shard_map import shard_map
from . import distributed
from .runtime.backend import default_backend, local_devices
from .runtime.cache import clear_caches
from .ir.avals import ShapedArray
from . import random  # noqa: F401,E402  (typed PRNG keys and samplers)
from . import nn, scipy  # noqa: F401,E402  (activations; scipy.special, scipy.stats.norm)

__version__ = "0.1.0"

__all__ = ["config", "errors", "tree_util", "numpy", "lax", "jit", "make_jaxpr", "device_put",
           "typeof", "block_until_ready", "devices", "Array", "Device", "ShapedArray", "Lowered",
           "Compiled", "Traced", "JitFunction"]

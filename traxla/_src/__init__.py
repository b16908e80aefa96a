"""``traxla._src``: what ``jax._src.X`` resolves to under the drop-in (``traxla.as_jax``).

JAX's private modules are not an API, yet libraries import a few of them (flax reads the
pytree registry, chex the initialized backends, ...). Each module here re-exports traxla's
own equivalent of the names those libraries use, with JAX's meaning; a private path with no
module here raises ModuleNotFoundError naming it, and a missing name AttributeError."""
# As ``import jax`` loads ``jax._src.xla_bridge`` and the rest, these are attributes of the
# package from the start (chex reads ``jax._src.xla_bridge._backends`` without importing it).
from traxla._src import (ad_util, api_util, checkify, compiler, config, core, dispatch,  # noqa: E402,F401
                         distributed, dtypes, interpreters, traceback_util, tree_util,
                         xla_bridge)
from traxla._src.state import types as _state_types  # noqa: E402,F401

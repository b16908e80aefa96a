"""``jax._src.checkify``: checkify's internals flax uses (``checkify``, ``Error``,
``JaxException``, ``user_checks``, ...), traxla's ``experimental.checkify``."""
from typing import Any

from traxla.experimental.checkify import *  # noqa: F401,F403
from traxla.experimental.checkify import JaxException, __all__ as _all  # noqa: F401

Out = Any  # the type of a checkified function's outputs, in annotations

__all__ = list(_all) + ["JaxException", "Out"]

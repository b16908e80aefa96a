"""``jax._src.config``: the ``config`` object and the flags' context managers."""
from traxla.ir.config import Config, config  # noqa: F401
from traxla.api.config_contexts import *  # noqa: F401,F403

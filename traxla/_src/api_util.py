"""``jax._src.api_util``: traxla's ``api_util`` (``debug_info``, ``flatten_fun``, ...)."""
from traxla.api_util import *  # noqa: F401,F403
from traxla.api_util import (debug_info, flatten_fun, flatten_fun_nokwargs,  # noqa: F401
                             fun_signature, shaped_abstractify)

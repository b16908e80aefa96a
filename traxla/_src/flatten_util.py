"""``jax._src.flatten_util``: ``ravel_pytree`` and its helpers (``jax.flatten_util``)."""
from traxla.flatten_util import (HashablePartial, _ravel_list, _unravel_list,  # noqa: F401
                                 ravel_pytree, unravel_pytree)

"""``jax._src.interpreters.pxla``: the names of ``jax.interpreters.pxla`` (most raise an
error that says traxla does not implement them when used; the result handlers are JAX's)."""
from traxla.interpreters.pxla import __getattr__  # noqa: F401
from traxla.interpreters.pxla import ResultsHandler  # noqa: F401
from traxla.interpreters.pxla import _global_result_handlers as global_result_handlers  # noqa: F401
from traxla.interpreters.pxla import (  # noqa: F401
    _global_aval_to_result_handler as global_aval_to_result_handler,
    _global_avals_to_results_handler as global_avals_to_results_handler)

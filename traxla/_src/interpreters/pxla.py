"""``jax._src.interpreters.pxla``: the names of ``jax.interpreters.pxla`` (each raises an
error that says traxla does not implement it when used)."""
from traxla.interpreters.pxla import __getattr__  # noqa: F401

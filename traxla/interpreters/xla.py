"""``jax.interpreters.xla``: what JAX 0.10.2 keeps of its legacy XLA interpreter.
``canonicalize_dtype_handlers`` is JAX's registry of canonicalization handlers for array-like
types of a user's own (tensorflow-probability registers its variable proxy): reading any
type's entry gives the canonicalization through ``np.asarray``; setting one registers a
handler that traxla uses wherever it transfers such a value (see
``traxla/ir/pytype_registry.py``). ``apply_primitive`` runs one primitive outside any trace.
``Backend`` (JAX's PJRT client class) is not traxla's: using it raises NotImplementedError."""

from traxla.base.unsupported import fill as _fill
from traxla.ir.pytype_registry import canonicalize_value_handlers as canonicalize_dtype_handlers
from traxla.runtime.dispatch import apply_primitive as _apply_primitive


def apply_primitive(prim, *args, **params):
    """JAX's ``dispatch.apply_primitive``: ``prim`` applied to concrete ``args`` (its
    one-equation program, compiled once and cached)."""
    return _apply_primitive(prim, args, params)


_fill(globals(), "JAX's PJRT client class (jax.interpreters.xla.Backend)", classes='Backend')

__all__ = ["apply_primitive", "canonicalize_dtype_handlers", "Backend"]

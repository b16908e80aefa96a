"""``traxla.ad_checkpoint``: the names of ``jax.ad_checkpoint`` (``checkpoint`` and
``remat`` live at the top level, as in JAX 0.10.2, which removed them here)."""
from traxla.autodiff.checkpoint import checkpoint_name, print_saved_residuals  # noqa: F401
from traxla.autodiff.remat_policies import (Offloadable, Recompute, Saveable,  # noqa: F401
                                      checkpoint_policies)

_REMOVED = {
    "checkpoint": ("jax.ad_checkpoint.checkpoint was deprecated in JAX v0.8.2 and removed in "
                   "JAX v0.10.0; use jax.checkpoint instead."),
    "remat": ("jax.ad_checkpoint.remat was deprecated in JAX v0.8.2 and removed in JAX v0.10.0; "
              "use jax.remat instead."),
}


def __getattr__(name):
    if name in _REMOVED:
        raise AttributeError(_REMOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["checkpoint_policies", "checkpoint_name", "print_saved_residuals", "Recompute",
           "Saveable", "Offloadable"]

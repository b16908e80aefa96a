"""``jax.cloud_tpu_init``: deprecated in JAX 0.8.1 and empty since 0.10 (JAX sets Cloud TPUs
up by itself); importing it warns, as JAX's, and reading ``cloud_tpu_init`` from it raises
AttributeError with JAX's message."""
import warnings

warnings.warn("jax.cloud_tpu_init was deprecated in JAX v0.8.1. You should remove imports"
              " of this module.", DeprecationWarning, stacklevel=2)

_REMOVED = ("jax.cloud_tpu_init was deprecated in JAX v0.8.1. You do not need to call this "
            "function explicitly; JAX calls this function automatically.")


def __getattr__(name):
    if name == "cloud_tpu_init":
        raise AttributeError(_REMOVED)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""``traxla.dlpack`` (``jax.dlpack``): arrays from any DLPack producer."""
from traxla.runtime.dlpack import SUPPORTED_DTYPES, from_dlpack, is_supported_dtype  # noqa: F401

__all__ = ["from_dlpack", "is_supported_dtype"]

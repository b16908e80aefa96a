"""``jax._src.image.scale``: ``traxla.image``'s resizing under JAX's private path
(``ResizeMethod`` and the ``_kernels`` table: method -> (radius, kernel), which torchax's
resize reimplementation reads)."""
from traxla.image import (ResizeMethod, _kernels, resize, scale_and_translate)  # noqa: F401

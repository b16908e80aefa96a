"""``traxla.scipy.cluster``: as ``jax.scipy.cluster`` (vector quantization, ``vq``)."""
from traxla.scipy.cluster import vq  # noqa: F401

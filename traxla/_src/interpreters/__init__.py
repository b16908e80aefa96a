"""``jax._src.interpreters``: JAX's private interpreter modules that libraries import
(diffrax's and jaxopt's tests catch ``jax._src.interpreters.ad.CustomVJPException``)."""
from traxla._src.interpreters import ad  # noqa: F401

"""``jax._src.interpreters``: the private modules libraries reach for (diffrax's and
jaxopt's tests catch ``jax._src.interpreters.ad.CustomVJPException``)."""
from traxla._src.interpreters import ad  # noqa: F401

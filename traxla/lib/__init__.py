"""``jax.lib``: the version of the jaxlib in use (``jax.lib.__version__``)."""
from traxla._src.lib import version_str as __version__  # noqa: F401

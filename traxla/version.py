"""``traxla.version``: the package version (as ``jax.version``)."""
__version__ = "0.1.0"
_version = __version__

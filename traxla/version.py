"""``traxla.version``: the package version (as ``jax.version``)."""
from __future__ import annotations

# The standard modules JAX's version module imports (its public names, as JAX's).
import datetime  # noqa: F401
import os  # noqa: F401
import pathlib  # noqa: F401
import subprocess  # noqa: F401

__version__ = "0.1.0"
_version = __version__

"""What the example libraries take from JAX's internals, from traxla's."""
from __future__ import annotations

from traxla.base.sequences import safe_map, safe_zip, unzip2  # noqa: F401

"""Loading an example twice: as written (traxla) and with its imports switched to JAX, the
only difference between the two versions of a ported program."""
from __future__ import annotations

import pathlib
import types

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(path, source, name):
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102
    return module


def jax_source(source, jax_imports):
    """``source`` with each traxla import replaced by its JAX counterpart (each exactly once)."""
    for old, new in jax_imports.items():
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    assert "traxla" not in source.split('"""', 2)[2]
    return source

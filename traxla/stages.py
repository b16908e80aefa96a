"""``traxla.stages``: the ahead-of-time stages of ``jit``, as ``jax.stages``.

``jit(f).trace(*args)`` gives a ``Traced`` (the jaxpr), ``.lower()`` a ``Lowered``
(the StableHLO module), ``.compile()`` a ``Compiled`` (XLA's executable, callable).
They are implemented in ``traxla/api/stages.py``.
"""
from __future__ import annotations

from traxla.api.stages import ArgInfo, Compiled, CompilerOptions, Lowered, Traced, Wrapped

# Read by ``traxla.export`` (result names) and ``traxla.state.ref`` (lowering a program).
from traxla.api.stages import lower_program, result_names  # noqa: F401

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

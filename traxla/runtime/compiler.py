"""The one place every XLA compilation goes through: ``backend_compile_and_load(backend,
compile_fn)``. Looked up on this module at each compilation, so a wrapper set here sees
every compile (what ``jax._src.compiler.backend_compile_and_load`` is to JAX: chex's
``restrict_backends`` wraps it to forbid compiling for a platform)."""
from __future__ import annotations


def backend_compile_and_load(backend, compile_fn, *args, **kwargs):
    """Runs ``compile_fn()`` (the compilation, or the persistent cache's load) for
    ``backend`` (``.platform``: ``'cpu'``, ``'cuda'``)."""
    return compile_fn()

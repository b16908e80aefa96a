"""The user-facing transformations: ``jit``, ``make_jaxpr``, ``device_put``, ``typeof``.

``jit_function`` holds ``JitFunction`` (its hit paths and AOT ``trace``), with the call's
other stages in its base classes: ``jit_args`` (argument handling), ``jit_slow_path``
(tracing, lowering, compiling; calls inside another trace), ``jit_placement`` (programs on a
mesh, committed and pinned results); ``jit_caches`` what its caches are keyed by and when they are dropped, ``jit_sharding``
how a program is placed on a mesh, ``jit_hooks`` the hooks of its slow path (installed by
``traxla.diagnostics``), ``stages`` the AOT stages (``jax.stages``), ``device_arrays``
``device_put``, ``typeof`` and ``block_until_ready``.
"""
from __future__ import annotations

from traxla.api.device_arrays import block_until_ready, device_put, typeof
from traxla.api.jit_function import JitFunction, jit, make_jaxpr
from traxla.api.jit_sharding import broadcast_prefix_leaves  # noqa: F401
from traxla.api.stages import (Compiled, Lowered, ProgramInfo, Traced, Wrapped,  # noqa: F401
                               lower_program)

# A private name another layer reads: the configuration epoch (``numpy._eager``'s caches).
from traxla.api.jit_caches import _config_epoch  # noqa: F401


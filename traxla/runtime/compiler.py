"""The one place every XLA compilation goes through: ``backend_compile_and_load(backend,
compile_fn)``. Looked up on this module at each compilation, so a wrapper set here sees
every compile (what ``jax._src.compiler.backend_compile_and_load`` is to JAX: chex's
``restrict_backends`` wraps it to forbid compiling for a platform)."""
from __future__ import annotations

import numpy as np
from traxla.runtime.xla_adapter.clients import xla_client as _xc


def backend_compile_and_load(backend, compile_fn, *args, **kwargs):
    """Runs ``compile_fn()`` (the compilation, or the persistent cache's load) for
    ``backend`` (``.platform``: ``'cpu'``, ``'cuda'``)."""
    return compile_fn()


def get_compile_options(num_replicas: int, num_partitions: int, device_assignment=None,
                        env_options_overrides=None, fdo_profile=None):
    """XLA compile options as JAX's ``compiler.get_compile_options`` makes them at its
    default flags; ``device_assignment``: an array (replicas x partitions) of devices or
    device ids."""
    opts = _xc.CompileOptions()
    opts.num_replicas, opts.num_partitions = num_replicas, num_partitions
    build = opts.executable_build_options
    build.use_spmd_partitioning = build.use_shardy_partitioner = True
    if fdo_profile is not None:
        build.fdo_profile = fdo_profile
    if device_assignment is not None:
        assignment = np.array(device_assignment)
        if assignment.ndim == 1 and num_partitions == 1:
            assignment = assignment[:, None]
        if num_replicas != assignment.shape[0]:
            raise ValueError(f"device_assignment does not match num_replicas: {assignment} "
                             f"vs {num_replicas}.")
        if num_partitions != assignment.shape[1]:
            raise ValueError(f"device_assignment does not match num_partitions: {assignment} "
                             f"vs {num_partitions}.")
        if assignment.dtype == object:
            assignment = np.vectorize(lambda d: d.id, otypes=[int])(assignment)
        opts.device_assignment = _xc.DeviceAssignment.create(assignment)
    build.memory_fitting_level = 29  # (JAX's default EffortLevel O2)
    if env_options_overrides is not None:
        overrides = dict(env_options_overrides)
        for name in ("exec_time_optimization_effort", "memory_fitting_effort",
                     "optimization_level", "memory_fitting_level"):
            if name in overrides:
                setattr(build, name, overrides.pop(name))
        opts.env_option_overrides = list(overrides.items())
    return opts

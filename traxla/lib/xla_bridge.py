"""``jax.lib.xla_bridge``: the backends (an older path of ``jax._src.xla_bridge``, gone from
JAX 0.10.2, that libraries still import)."""
from traxla._src.xla_bridge import *  # noqa: F401,F403
from traxla._src.xla_bridge import (_backends, backends, backends_are_initialized,  # noqa: F401
                                    default_backend, device_count, devices, get_backend,
                                    local_device_count, local_devices, process_count,
                                    process_index)

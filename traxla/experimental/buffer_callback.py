"""``jax.experimental.buffer_callback``: not supported by traxla, which does not have buffer
callbacks (jax.experimental.buffer_callback). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'buffer callbacks (jax.experimental.buffer_callback)'
_fill(globals(), _CAPABILITY,
    functions='buffer_callback',
    classes='Buffer ExecutionContext ExecutionStage')

"""``jax.experimental.jax2tf.call_tf``: not supported by traxla, which does not have jax2tf
(conversion to TensorFlow, which needs tensorflow). The module imports and its names exist
with JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'jax2tf (conversion to TensorFlow, which needs tensorflow)'
_fill(globals(), _CAPABILITY,
    functions=('call_tf check_tf_result emit_tf_embedded_graph_custom_call '
      'add_to_call_tf_concrete_function_list'),
    classes='UnspecifiedOutputShapeDtype CallTfEffect CallTfOrderedEffect')

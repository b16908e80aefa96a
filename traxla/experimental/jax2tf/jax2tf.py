"""``jax.experimental.jax2tf.jax2tf``: not supported by traxla, which does not have jax2tf
(conversion to TensorFlow, which needs tensorflow). The module imports and its names exist
with JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'jax2tf (conversion to TensorFlow, which needs tensorflow)'
_fill(globals(), _CAPABILITY,
    functions=('inside_call_tf get_thread_local_state_call_tf_concrete_function_list convert '
      'dtype_of_val eval_polymorphic_shape preprocess_arg_tf split_to_logical_devices'),
    classes='DisabledSafetyCheck NativeSerializationImpl PolyShape',
    constants='DEFAULT_NATIVE_SERIALIZATION')

"""``jax.experimental.array_serialization.tensorstore_impl``: not supported by traxla, which
does not have tensorstore array serialization (needs tensorstore). The module imports and its
names exist with JAX's kinds; using one raises NotImplementedError naming the capability."""


from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'tensorstore array serialization (needs tensorstore)'
_fill(globals(), _CAPABILITY,
    functions=('is_tensorstore_spec_leaf merge_nested_ts_specs verify_tensorstore_spec '
      'get_tensorstore_spec combine_kvstores async_serialize estimate_read_memory_footprint '
      'async_deserialize'))

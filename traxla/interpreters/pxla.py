"""``jax.interpreters.pxla``: JAX's sharded-computation internals (``create_compile_options``
and names deprecated since JAX 0.8.2: ``MeshExecutable``, result handlers, ...). traxla
compiles and runs sharded programs its own way and provides none of them; the module
exists so that code importing it (orbax) loads, and each name raises an error that says
so when used."""
from __future__ import annotations

_JAX_NAMES = frozenset({
    "create_compile_options", "Index", "MeshAxisName", "MeshComputation", "MeshExecutable",
    "global_aval_to_result_handler", "global_avals_to_results_handler",
    "global_result_handlers", "mesh_sharding_specs", "shard_args", "spec_to_indices",
    "thread_resources", "Mesh", "ArrayMapping", "array_mapping_to_axis_resources",
    "PartitionSpec", "NamedSharding", "op_sharding_to_indices"})


def __getattr__(name):
    if name in _JAX_NAMES:
        raise AttributeError(f"traxla does not implement jax.interpreters.pxla.{name} "
                             "(JAX's internal sharded-execution machinery)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

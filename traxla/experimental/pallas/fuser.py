"""``traxla.experimental.pallas.fuser`` (``jax.experimental.pallas.fuser``): Pallas kernel
fusion.

traxla does not implement Pallas kernel fusion (fuser): every name exists (JAX 0.10.2's
public names, as the kind JAX has: classes, functions, constants) and raises
``NotImplementedError`` naming the capability when called or instantiated, never at import."""
from traxla.experimental.pallas.unsupported import unsupported_class as _c, unsupported_function as _f

_P = "pallas.fuser."
_CAP = 'Pallas kernel fusion (fuser)'

BlockIndexTransform = _c(_P + "BlockIndexTransform", _CAP)
Fusion = _c(_P + "Fusion", _CAP)
custom_fusion = _c(_P + "custom_fusion", _CAP)
evaluate = _f(_P + "evaluate", _CAP)
fuse = _f(_P + "fuse", _CAP)
fusible = _f(_P + "fusible", _CAP)
get_fusion_values = _f(_P + "get_fusion_values", _CAP)
get_stateful_input_fusion_values = _f(_P + "get_stateful_input_fusion_values", _CAP)
get_stateful_output_fusion_values = _f(_P + "get_stateful_output_fusion_values", _CAP)
make_scalar_prefetch_handler = _f(_P + "make_scalar_prefetch_handler", _CAP)
pull_block_spec = _f(_P + "pull_block_spec", _CAP)
push_block_spec = _f(_P + "push_block_spec", _CAP)

__all__ = ['BlockIndexTransform', 'Fusion', 'custom_fusion', 'evaluate', 'fuse',
           'fusible', 'get_fusion_values', 'get_stateful_input_fusion_values',
           'get_stateful_output_fusion_values', 'make_scalar_prefetch_handler',
           'pull_block_spec', 'push_block_spec']

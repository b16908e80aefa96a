"""Batching rules, one module per family of primitives (mirroring ``ir/rules/`` and
``lowering/rules/``). Each rule receives the batch size, the operand values (in the
enclosing trace) and their batch dims (None: unbatched) and returns the outputs and their
batch dims, choosing dims as JAX does so that vmapped jaxprs print the same. Importing the
package registers every rule."""
from traxla.batching.rules import elementwise, shape, reduction, call, control_flow, indexing  # noqa: F401
from traxla.batching.rules import collectives, special, random  # noqa: F401  (collectives: also all_to_all)
from traxla.batching.rules import linalg  # noqa: F401,E402  (cholesky, lu, qr, eigh, svd, ...)
from traxla.batching.rules.elementwise import _broadcasting, _vectorized, add_any_batched  # noqa: F401
from traxla.batching.rules import conv  # noqa: F401,E402  (conv_general_dilated)
from traxla.batching.rules import windowed  # noqa: F401,E402  (reduce_window family, reduce, select_and_*)
from traxla.batching.rules import fft  # noqa: F401,E402  (fft)
from traxla.batching.rules import topk  # noqa: F401,E402  (top_k, approx_top_k)
from traxla.batching.rules import callbacks  # noqa: F401,E402  (debug_print, pure_callback's vmap methods, io_callback)
from traxla.batching.rules import ad_checkpoint, optimization  # noqa: F401,E402  (remat2, name; reduce_precision, optimization_barrier)
from traxla.batching.rules import ffi  # noqa: F401,E402
from traxla.batching.rules import integer_ops, rng, platform  # noqa: F401,E402  (mulhi, reduce_xor; XLA's generators; platform_index)
from traxla.batching.rules import composite  # noqa: F401,E402  (stablehlo.composite)
from traxla.batching.rules import sharding_constraint  # noqa: F401,E402  (with_sharding_constraint)
from traxla.batching.rules import linear_call  # noqa: F401,E402  (custom_derivatives.linear_call)
from traxla.batching.rules import custom_batching  # noqa: F401,E402  (jax.custom_batching.custom_vmap)
from traxla.batching.rules import export  # noqa: F401,E402  (call_exported, one lane at a time)
from traxla.batching.rules import scaled_matmul  # noqa: F401,E402  (scaled_matmul_wrapper: block-scaled matmul)
from traxla.batching.rules import device_put  # noqa: F401,E402  (device_put of traced values)
from traxla.batching.rules import ragged_dot  # noqa: F401,E402  (ragged_dot_general)
from traxla.batching.rules import tokens  # noqa: F401,E402  (create_token, after_all)
from traxla.batching.rules import multihost  # noqa: F401,E402  (multihost_utils' local <-> global conversions)
from traxla.batching.rules import scaled_dot  # noqa: F401,E402  (scaled_dot)
from traxla.batching.rules import pallas  # noqa: F401,E402  (pallas_call: a kernel call per lane)

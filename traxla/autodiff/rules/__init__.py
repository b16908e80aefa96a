"""JVP and transpose rules, one module per family of primitives (mirroring ``ir/rules/``
and ``lowering/rules/``), written to bind the same equations in the same order (and with
the same parameter values, down to NumPy integer types) as JAX's rules, so that
differentiated jaxprs print the same. Importing the package registers every rule."""
from traxla.autodiff.rules import _util, elementwise, shape, reduction, indexing, special  # noqa: F401
from traxla.autodiff.rules import call, control_flow, collectives, random  # noqa: F401  (call before control_flow)
from traxla.autodiff.rules import linalg  # noqa: F401,E402  (cholesky, triangular_solve, lu, eigh, svd, qr, ...)
from traxla.autodiff.rules import optimization, ad_checkpoint  # noqa: F401  (after control_flow: remat2's DCE rule)
from traxla.autodiff.rules._util import (defjvp, defjvp2, defjvp_zero, deflinear, deflinear2, linear_jvp,  # noqa: F401
                    maybe_broadcast, unbroadcast)
from traxla.autodiff.rules import conv  # noqa: F401,E402  (conv_general_dilated)
from traxla.autodiff.rules import windowed  # noqa: F401,E402  (reduce_window family, reduce, select_and_*)
from traxla.autodiff.rules import fft  # noqa: F401,E402  (fft)
from traxla.autodiff.rules import topk  # noqa: F401,E402  (top_k, approx_top_k)
from traxla.autodiff.rules import callbacks  # noqa: F401,E402  (debug prints on the primal; callbacks refuse JVP)
from traxla.autodiff.rules import ffi  # noqa: F401,E402
from traxla.autodiff.rules import integer_ops  # noqa: F401,E402  (mulhi)
from traxla.autodiff.rules import composite  # noqa: F401,E402  (composite: JAX's errors)
from traxla.autodiff.rules import all_to_all  # noqa: F401,E402  (all_to_all, pswapaxes)
from traxla.autodiff.rules import shard_map  # noqa: F401,E402  (shard_map, and so pmap)
from traxla.autodiff.rules import sharding_constraint  # noqa: F401,E402  (with_sharding_constraint)
from traxla.autodiff.rules import linear_call  # noqa: F401,E402  (custom_derivatives.linear_call)
from traxla.autodiff.rules import custom_batching  # noqa: F401,E402  (jax.custom_batching.custom_vmap)
from traxla.autodiff.rules import device_put  # noqa: F401,E402  (device_put of traced values)
from traxla.autodiff.rules import refs  # noqa: F401,E402  (get, swap, addupdate of differentiated refs)
from traxla.autodiff.rules import ragged_dot  # noqa: F401,E402  (ragged_dot_general)
from traxla.autodiff.rules import multihost  # noqa: F401,E402  (multihost_utils' local <-> global conversions)
from traxla.autodiff.rules import pallas  # noqa: F401,E402  (pallas_call: the JVP kernel)

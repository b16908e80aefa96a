"""Lowering rules, one module per primitive family (mirrors ir/rules)."""
from . import elementwise, shape, reduction, call, control_flow, ad, indexing, collectives  # noqa: F401
from . import random  # noqa: F401,E402  (threefry and the key primitives)
from . import special  # noqa: F401,E402  (lgamma, digamma, erfc, square, complex numbers, tile)
from . import conv  # noqa: F401,E402  (conv_general_dilated)
from . import windowed  # noqa: F401,E402  (reduce_window family, reduce, select_and_*)
from . import fft  # noqa: F401,E402  (fft)
from . import linalg  # noqa: F401,E402  (LAPACK typed-FFI custom calls)
from . import topk  # noqa: F401,E402  (top_k, approx_top_k)
from . import callbacks  # noqa: F401,E402  (host callbacks: debug_print, pure_callback, io_callback)
from . import ad_checkpoint, optimization  # noqa: F401,E402  (remat2, name; reduce_precision, optimization_barrier)
from . import ffi  # noqa: F401,E402  (ffi_call to stablehlo.custom_call)
from . import export  # noqa: F401,E402  (call_exported: the exported module merged and called)

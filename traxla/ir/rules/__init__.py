"""Primitive definitions and typing rules, one module per family."""
from . import elementwise, shape, reduction, call, control_flow, ad, indexing, collectives  # noqa: F401  (registers the primitives)
from . import random  # noqa: F401,E402  (typed PRNG keys and the random primitives)
from . import special  # noqa: F401,E402  (lgamma, digamma, erfc, square, complex numbers, tile)
from . import conv  # noqa: F401,E402  (conv_general_dilated)
from . import windowed  # noqa: F401,E402  (reduce_window family, reduce, select_and_*)
from . import fft  # noqa: F401,E402  (fft)
from . import linalg  # noqa: F401,E402  (cholesky, lu, qr, eigh, svd, ... on LAPACK)
from . import topk  # noqa: F401,E402  (top_k, approx_top_k)

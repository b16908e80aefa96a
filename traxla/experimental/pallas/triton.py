"""``traxla.experimental.pallas.triton`` (``jax.experimental.pallas.triton``): Triton-specific
Pallas APIs.

traxla does not implement Pallas GPU kernels (Triton): every name exists (JAX 0.10.2's
public names, as the kind JAX has: classes, functions, constants) and raises
``NotImplementedError`` naming the capability when called or instantiated, never at import."""
from traxla.experimental.pallas.unsupported import unsupported_class as _c, unsupported_function as _f

_P = "pallas.triton."
_CAP = 'Pallas GPU kernels (Triton)'

CompilerParams = _c(_P + "CompilerParams", _CAP)
approx_tanh = _f(_P + "approx_tanh", _CAP)
atomic_add = _f(_P + "atomic_add", _CAP)
atomic_and = _f(_P + "atomic_and", _CAP)
atomic_cas = _f(_P + "atomic_cas", _CAP)
atomic_max = _f(_P + "atomic_max", _CAP)
atomic_min = _f(_P + "atomic_min", _CAP)
atomic_or = _f(_P + "atomic_or", _CAP)
atomic_xchg = _f(_P + "atomic_xchg", _CAP)
atomic_xor = _f(_P + "atomic_xor", _CAP)
debug_barrier = _f(_P + "debug_barrier", _CAP)
dot = _f(_P + "dot", _CAP)
elementwise_inline_asm = _f(_P + "elementwise_inline_asm", _CAP)
load = _f(_P + "load", _CAP)
max_contiguous = _f(_P + "max_contiguous", _CAP)
store = _f(_P + "store", _CAP)

__all__ = ['CompilerParams', 'approx_tanh', 'atomic_add', 'atomic_and', 'atomic_cas',
           'atomic_max', 'atomic_min', 'atomic_or', 'atomic_xchg', 'atomic_xor',
           'debug_barrier', 'dot', 'elementwise_inline_asm', 'load', 'max_contiguous',
           'store']

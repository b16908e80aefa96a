"""JVP and transpose rules of special functions, complex parts, tile and scatter-sub
(JAX's special.py and lax.py)."""
from __future__ import annotations

import numpy as np

from ... import lax
from ...ir import dtypes
from ...ir.rules.elementwise import P as E
from ..core import Zero, is_undefined, jvp_rules, transpose_rules
from ._util import _const, _square, defjvp, deflinear2, unbroadcast
from .indexing import _scatter_add_transpose, _scatter_addsub_jvp


# -- special functions, complex parts, tile, scatter-sub (JAX's special.py / lax.py) ----------------

from ...ir import ALL_PRIMITIVES as _ALL  # noqa: E402

if "erfc" in E:
    defjvp(E["erfc"], lambda g, x: lax.mul(_const(x, -2. / np.sqrt(np.pi)),
                                           lax.mul(g, lax.exp(lax.neg(_square(x))))))
if "lgamma" in E and "digamma" in E:
    defjvp(E["lgamma"], lambda g, x: lax.mul(g, lax.digamma(x)))
# digamma's derivative is polygamma(1, x), a primitive traxla does not have: no JVP rule

if "real" in E and "complex" in E:
    deflinear2(E["real"], lambda t, x: [lax.complex(t, np.zeros((), lax.dtype_of(t)))])
    deflinear2(E["imag"], lambda t, x: [lax.complex(np.zeros((), lax.dtype_of(t)), lax.neg(t))])

    def _complex_transpose(t, x, y):
        return [unbroadcast(x.aval, lax.real(t)) if is_undefined(x) else None,
                unbroadcast(y.aval, lax.imag(lax.neg(t))) if is_undefined(y) else None]

    deflinear2(E["complex"], _complex_transpose)

if "conj" in E:
    def _conj_transpose(t, x, *, input_dtype):
        if dtypes.is_complex(input_dtype):
            return [lax.conj(t)]
        return [lax.real(t)]

    deflinear2(E["conj"], _conj_transpose)

if "tile" in _ALL:
    def _tile_transpose(ct, x, *, reps):
        if not is_undefined(x):
            return [None]
        shape = tuple(k for pair in zip(reps, x.aval.shape) for k in pair)
        return [lax.reduce_sum(lax.reshape(ct, shape), tuple(2 * i for i in range(len(reps))))]

    deflinear2(_ALL["tile"], _tile_transpose)

if "scatter-sub" in _ALL:
    _scatter_sub_p = _ALL["scatter-sub"]

    def _scatter_sub_transpose(t, operand, indices, updates, **params):
        ct_operand, _, ct_updates = _scatter_add_transpose(t, operand, indices, updates, **params)
        if ct_updates is not None and type(ct_updates) is not Zero:
            ct_updates = lax.neg(ct_updates)
        return [ct_operand, None, ct_updates]

    jvp_rules[_scatter_sub_p] = _scatter_addsub_jvp(_scatter_sub_p)
    transpose_rules[_scatter_sub_p] = _scatter_sub_transpose

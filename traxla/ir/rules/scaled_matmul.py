"""``scaled_matmul_wrapper``: block-scaled batched matmul ``(B,M,K) x (B,N,K) -> (B,M,N)``
with per-block scales ``(B,M,K/bs)``, ``(B,N,K/bs)`` (JAX's primitive behind
``jax.nn.scaled_matmul``). Like JAX's, the typing rule only computes the output type: the
user-facing function checks the shapes."""
from __future__ import annotations

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing


def _scaled_matmul_rule(lhs, rhs, lhs_scales, rhs_scales, *, preferred_element_type):
    for name, aval in (("lhs", lhs), ("rhs", rhs), ("lhs_scales", lhs_scales),
                       ("rhs_scales", rhs_scales)):
        if len(aval.shape) != 3:
            raise TypeError(f"scaled_matmul_wrapper: {name} must be 3-dimensional, got shape "
                            f"{aval.shape}")
    batch, non_contracting_lhs, _ = lhs.shape
    _, non_contracting_rhs, _ = rhs.shape
    return [ShapedArray((batch, non_contracting_lhs, non_contracting_rhs),
                        np.dtype(preferred_element_type), False)]


scaled_matmul_wrapper_p = def_typing(
    Primitive("scaled_matmul_wrapper", multiple_results=True), _scaled_matmul_rule)
P = {"scaled_matmul_wrapper": scaled_matmul_wrapper_p}

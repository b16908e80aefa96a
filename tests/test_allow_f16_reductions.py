"""``jax.allow_f16_reductions`` / ``jax_allow_f16_reductions`` against JAX 0.10.2: when
False, reduce_sum of a float16 or bfloat16 operand over a dimension longer than one raises
JAX's ValueError (jnp.sum, which accumulates in float32, is unaffected); jit retraces when
the flag changes."""
from __future__ import annotations

import jax
import numpy as np

import traxla


def _outcomes(lib):
    jnp = lib.numpy
    x = jnp.ones(3, jnp.bfloat16)
    out = []

    def attempt(f):
        try:
            out.append(("ok", str(f())))
        except Exception as e:  # noqa: BLE001  (the outcome is compared)
            out.append((type(e).__name__, str(e)))
    summed = lib.jit(lambda a: lib.lax.reduce_sum(a, (0,)))
    attempt(lambda: lib.lax.reduce_sum(x, (0,)))
    attempt(lambda: summed(x))
    with lib.allow_f16_reductions(False):
        out.append(lib.allow_f16_reductions.value)
        for f in [lambda: x.sum(), lambda: lib.lax.reduce_sum(x, (0,)),
                  lambda: jnp.ones(3, jnp.float16).sum(), lambda: summed(x),
                  lambda: lib.lax.reduce_sum(jnp.ones((1, 3), jnp.float16), (0,)),
                  lambda: lib.make_jaxpr(lambda a: lib.lax.reduce_sum(a, (0,)))(x)]:
            attempt(f)
    attempt(lambda: summed(x))
    try:
        lib.config.update("jax_allow_f16_reductions", False)
        out.append(lib.config.jax_allow_f16_reductions)
        attempt(lambda: summed(x))
        attempt(lambda: lib.lax.reduce_sum(np.ones(2, np.float16), (0,)))
    finally:
        lib.config.update("jax_allow_f16_reductions", True)
    attempt(lambda: summed(x))
    return out


def test_allow_f16_reductions_matches_jax():
    theirs = _outcomes(jax)
    assert ("ValueError", "reduce_sum on operand bf16[3] is not allowed when "
                          "jax_allow_f16_reductions=False.") in theirs
    assert _outcomes(traxla) == theirs

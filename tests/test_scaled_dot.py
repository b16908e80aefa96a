"""``lax.scaled_dot`` against JAX 0.10.2: values (bfloat16 and float32 accumulation, with
and without scales), the jaxpr, the lowering (a ``stablehlo.composite "xla.scaled_dot"``
and its decomposition), vmap, and JAX's errors."""
from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import traxla

E4M3, E8M0 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu
LHS = (np.arange(16, dtype=np.float32).reshape(2, 8) / 4).astype(E4M3)
RHS = (np.arange(24, dtype=np.float32).reshape(8, 3) / 8).astype(E4M3)
LS = np.full((2, 2), 2.0, np.float32).astype(E8M0)
RS = np.full((2, 3), 0.5, np.float32).astype(E8M0)


def _f(lib):
    return lambda a, b, c, d: lib.lax.scaled_dot(a, b, lhs_scale=c, rhs_scale=d)


def _value(x):
    return np.asarray(x).astype(np.float32).tolist(), str(x.dtype)


@pytest.mark.parametrize("case", ["scaled", "float32", "no scales", "vmap"])
def test_values_match_jax(case):
    def run(lib):
        sd = lib.lax.scaled_dot
        if case == "scaled":
            return _value(_f(lib)(LHS, RHS, LS, RS))
        if case == "float32":
            return _value(sd(LHS, RHS, lhs_scale=LS, rhs_scale=RS,
                             preferred_element_type=np.float32))
        if case == "no scales":
            return _value(sd(LHS, RHS))
        return _value(lib.vmap(_f(lib))(*[np.stack([v, v]) for v in (LHS, RHS, LS, RS)]))
    assert run(traxla) == run(jax)


def test_jaxprs_and_lowering_match_jax():
    def run(lib):
        f = _f(lib)
        batched = [np.stack([v, v]) for v in (LHS, RHS, LS, RS)]
        return (str(lib.make_jaxpr(f)(LHS, RHS, LS, RS)),
                str(lib.make_jaxpr(lambda a, b: lib.lax.scaled_dot(a, b))(LHS, RHS)),
                str(lib.make_jaxpr(lib.vmap(f))(*batched)),
                lib.jit(f).lower(LHS, RHS, LS, RS).as_text())
    ours, theirs = run(traxla), run(jax)
    assert ours == theirs
    assert 'stablehlo.composite "xla.scaled_dot"' in theirs[3]


@pytest.mark.parametrize("call", [
    lambda sd: sd(LHS[0], RHS[:, 0]),
    lambda sd: sd(LHS, RHS, lhs_scale=LS[0]),
    lambda sd: sd(LHS, RHS[:4]),
    lambda sd: sd(LHS, RHS, lhs_scale=np.ones((2, 8), E8M0)),
    lambda sd: sd(LHS, RHS, lhs_scale=np.ones((2, 3), E8M0)),
    lambda sd: sd(LHS, RHS, lhs_scale=np.ones((3, 2), E8M0)),
    lambda sd: sd(LHS, RHS, preferred_element_type="foo"),
    lambda sd: sd(LHS, RHS, dimension_numbers=(((1,), (0,)), ((0,), ()))),
])
def test_errors_match_jax(call):
    def run(lib):
        try:
            call(lib.lax.scaled_dot)
        except TypeError as e:
            return str(e)
        return None
    theirs = run(jax)
    assert theirs is not None and run(traxla) == theirs


def test_not_differentiable_as_jax():
    f = lambda lib: lib.grad(lambda a: lib.lax.scaled_dot(  # noqa: E731
        a, RHS.astype(np.float32), preferred_element_type=np.float32).sum())(
        LHS.astype(np.float32))
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'scaled_dot' not "
                                                  "implemented"):
        f(jax)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'scaled_dot' not "
                                                  "implemented"):
        f(traxla)

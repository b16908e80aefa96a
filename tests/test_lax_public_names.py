"""lax names JAX exports beyond the operations: its primitives by name, and the small
functions built from other lax operations (batch_matmul, collapse, broadcast_like)."""
import numpy as np
import pytest

import traxla
import traxla.lax as tl

jax = pytest.importorskip("jax")
jl = jax.lax

PRIMITIVE_NAMES = (
    "all_gather_p all_to_all_p axis_index_p cond_p cumlogsumexp_p cummax_p cummin_p "
    "cumprod_p cumsum_p device_put_p gather_p igamma_grad_a_p igamma_p igammac_p "
    "linear_solve_p mulhi_p optimization_barrier_p pmax_p pmin_p polygamma_p ppermute_p "
    "psum_p reduce_precision_p reduce_xor_p regularized_incomplete_beta_p "
    "rng_bit_generator_p rng_uniform_p scan_p scatter_add_p scatter_max_p scatter_min_p "
    "scatter_mul_p scatter_p scatter_sub_p sharding_constraint_p split_p stack_p tile_p "
    "unstack_p while_p zeta_p").split()


@pytest.mark.parametrize("name", PRIMITIVE_NAMES)
def test_primitive_exported_under_jax_name(name):
    assert getattr(tl, name).name == getattr(jl, name).name


@pytest.mark.parametrize("fn, prim", [
    (lambda x: tl.cumsum(x), "cumsum_p"),
    (lambda x: tl.cummax(x), "cummax_p"),
    (lambda x: tl.scan(lambda c, v: (c + v, v), 0.0, x), "scan_p"),
    (lambda x: tl.cond(True, lambda v: v, lambda v: -v, x), "cond_p"),
    (lambda x: tl.while_loop(lambda v: v[0] < 1, lambda v: v + 1, x), "while_p"),
    (lambda x: x.at[0].add(1.0), "scatter_add_p"),
    (lambda x: x[traxla.numpy.array([0, 1])], "gather_p"),
])
def test_exported_primitive_is_the_one_traced_jaxprs_hold(fn, prim):
    x = np.arange(3, dtype=np.float32)
    eqns = traxla.make_jaxpr(fn)(x).jaxpr.eqns
    assert any(e.primitive is getattr(tl, prim) for e in eqns)


A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
B = np.linspace(-1, 1, 40, dtype=np.float32).reshape(2, 4, 5)


@pytest.mark.parametrize("fn", [
    lambda m, x, y: m.batch_matmul(x, y),
    lambda m, x, y: m.batch_matmul(x, y, precision=m.Precision.HIGHEST),
    lambda m, x, y: m.collapse(x, 0, 2),
    lambda m, x, y: m.collapse(x, 1),
    lambda m, x, y: m.collapse(x, -2, None),
    lambda m, x, y: m.broadcast_like(np.float32(1.5), x),
    lambda m, x, y: m.broadcast_like(x[0, 0], y[..., :4, :].transpose(0, 2, 1)),
])
def test_composed_functions_match_jax(fn):
    ours, theirs = fn(tl, A, B), fn(jl, A, B)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    assert (str(traxla.make_jaxpr(lambda x, y: fn(tl, x, y))(A, B))
            == str(jax.make_jaxpr(lambda x, y: fn(jl, x, y))(A, B)))


@pytest.mark.parametrize("bad", [
    lambda m: m.batch_matmul(np.ones(3), np.ones((3, 3))),
    lambda m: m.batch_matmul(np.ones((2, 3, 3)), np.ones((3, 3))),
    lambda m: m.collapse(A, 2, 1),
])
def test_composed_function_errors_match_jax(bad):
    with pytest.raises(ValueError) as ours:
        bad(tl)
    with pytest.raises(ValueError) as theirs:
        bad(jl)
    assert str(ours.value) == str(theirs.value)

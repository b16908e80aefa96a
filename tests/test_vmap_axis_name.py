"""``vmap(..., axis_name=...)``: the collectives over a vmapped axis (JAX's batching rules
for collectives), nested vmaps with two names and ``axis_name`` tuples, compared with JAX
0.10.2 (values, printed jaxprs and errors), on one device."""
from __future__ import annotations

import inspect

import jax
import numpy as np
import pytest

import traxla

X = np.arange(12.0, dtype=np.float32).reshape(4, 3)
X3 = np.arange(24.0, dtype=np.float32).reshape(2, 4, 3)
RING = [(0, 1), (1, 2), (2, 3), (3, 0)]

# name -> (builder of the vmapped function from a namespace (jax or traxla), arguments).
# Every case's jaxpr prints the same in traxla as in JAX.
CASES = {
    "psum": (lambda ns: ns.vmap(lambda x: ns.lax.psum(x, "i"), axis_name="i"), (X,)),
    "pmean": (lambda ns: ns.vmap(lambda x: ns.lax.pmean(x, "i"), axis_name="i"), (X,)),
    "pmax": (lambda ns: ns.vmap(lambda x: ns.lax.pmax(x, "i"), axis_name="i"), (X,)),
    "pmin": (lambda ns: ns.vmap(lambda x: ns.lax.pmin(x, "i"), axis_name="i"), (X,)),
    "psum_bool": (lambda ns: ns.vmap(lambda x: ns.lax.psum(x > 4, "i"), axis_name="i"), (X,)),
    "psum_positional_axis": (lambda ns: ns.vmap(lambda x: ns.lax.psum(x, 0), axis_name="i"),
                             (X,)),
    "all_gather": (lambda ns: ns.vmap(lambda x: ns.lax.all_gather(x, "i"), axis_name="i"),
                   (X,)),
    "all_gather_axis1": (lambda ns: ns.vmap(lambda x: ns.lax.all_gather(x, "i", axis=1),
                                            axis_name="i"), (X,)),
    "all_gather_tiled": (lambda ns: ns.vmap(lambda x: ns.lax.all_gather(x, "i", tiled=True),
                                            axis_name="i"), (X,)),
    "axis_index": (lambda ns: ns.vmap(lambda x: x + ns.lax.axis_index("i"), axis_name="i"),
                   (X,)),
    "ppermute": (lambda ns: ns.vmap(lambda x: ns.lax.ppermute(x, "i", RING), axis_name="i"),
                 (X,)),
    "psum_scatter": (lambda ns: ns.vmap(
        lambda x: ns.lax.psum_scatter(ns.numpy.ones((4, 3)) * x[0], "i"), axis_name="i"), (X,)),
    "psum_scatter_tiled": (lambda ns: ns.vmap(
        lambda x: ns.lax.psum_scatter(ns.numpy.ones((8, 3)) * x[0], "i", tiled=True),
        axis_name="i"), (X,)),
    "psum_scatter_in_axes1": (lambda ns: ns.vmap(
        lambda x: ns.lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True), in_axes=1,
        axis_name="i"), (np.ones((3, 4, 8), np.float32),)),
    "all_to_all": (lambda ns: ns.vmap(
        lambda x: ns.lax.all_to_all(ns.numpy.ones((4, 3)) * x[0], "i", 0, 1), axis_name="i"),
        (X,)),
    "all_to_all_tiled": (lambda ns: ns.vmap(
        lambda x: ns.lax.all_to_all(x, "i", 0, 0, tiled=True), axis_name="i"),
        (np.arange(32.0, dtype=np.float32).reshape(4, 8),)),
    # a value that does not vary over the axis: psum is size * x, folded to a constant
    "psum_constant": (lambda ns: ns.vmap(lambda x: ns.lax.psum(1.0, "i") * x, axis_name="i"),
                      (X,)),
    "axis_size": (lambda ns: ns.vmap(lambda x: ns.lax.axis_size("i") * x, axis_name="i"),
                  (X,)),
    "psum_unbatched_operand": (lambda ns: ns.vmap(lambda x, y: ns.lax.psum(y, "i") + x,
                                                  in_axes=(0, None), axis_name="i"),
                               (X, X[0])),
    "pmax_unbatched_operand": (lambda ns: ns.vmap(lambda x, y: ns.lax.pmax(y, "i") + x,
                                                  in_axes=(0, None), axis_name="i"),
                               (X, X[0])),
    # the name reaches into jit, scan and grad bodies
    "jit_inside": (lambda ns: ns.vmap(ns.jit(lambda x: ns.lax.psum(x, "i")), axis_name="i"),
                   (X,)),
    "scan_inside": (lambda ns: ns.vmap(lambda x: ns.lax.scan(
        lambda c, y: (c + ns.lax.psum(y, "i"), None), 0.0, x)[0], axis_name="i"), (X,)),
    "grad_inside": (lambda ns: ns.vmap(ns.grad(lambda x: ns.lax.psum(x, "i") * x),
                                       axis_name="i"), (X[:, 0],)),
    # two names: the inner vmap passes the outer's collectives through
    "nested_outer_name": (lambda ns: ns.vmap(ns.vmap(lambda x: ns.lax.psum(x, "i"),
                                                     axis_name="j"), axis_name="i"), (X3,)),
    "nested_name_tuple": (lambda ns: ns.vmap(ns.vmap(lambda x: ns.lax.psum(x, ("i", "j")),
                                                     axis_name="j"), axis_name="i"), (X3,)),
    "nested_pmean_tuple": (lambda ns: ns.vmap(ns.vmap(lambda x: ns.lax.pmean(x, ("i", "j")),
                                                      axis_name="j"), axis_name="i"), (X3,)),
    "nested_axis_index_tuple": (lambda ns: ns.vmap(ns.vmap(
        lambda x: x + ns.lax.axis_index(("i", "j")), axis_name="j"), axis_name="i"), (X3,)),
    "nested_all_gather_outer": (lambda ns: ns.vmap(ns.vmap(
        lambda x: ns.lax.all_gather(x, "i"), axis_name="j"), axis_name="i"), (X3,)),
    "nested_axis_size_tuple": (lambda ns: ns.vmap(ns.vmap(
        lambda x: x * ns.lax.axis_size(("i", "j")), axis_name="j"), axis_name="i"), (X3,)),
    "out_axes_none_sum_match": (lambda ns: ns.vmap(lambda x: x, axis_name="i", out_axes=None,
                                                   sum_match=True), (X,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_over_vmapped_axis_matches_jax(name, jax_side):
    build, args = CASES[name]
    want, want_jaxpr = jax_side(lambda: (build(jax)(*args),
                                         str(jax.make_jaxpr(build(jax))(*args))))
    got = build(traxla)(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert str(traxla.make_jaxpr(build(traxla))(*args)) == want_jaxpr


def _sum_sin(ns, f):
    return lambda x: ns.numpy.sum(ns.numpy.sin(f(x)))


# Differentiating through the batched collectives (psum over a positional axis transposes
# to a broadcast): values against JAX.
GRAD_CASES = {
    "grad_vmap_psum": lambda ns: ns.grad(_sum_sin(ns, ns.vmap(
        lambda r: ns.lax.psum(r, "i") * r, axis_name="i"))),
    "grad_vmap_pmean": lambda ns: ns.grad(_sum_sin(ns, ns.vmap(
        lambda r: ns.lax.pmean(r, "i") * r, axis_name="i"))),
    "grad_vmap_all_gather": lambda ns: ns.grad(_sum_sin(ns, ns.vmap(
        lambda r: ns.lax.all_gather(r, "i") * 2.0, axis_name="i"))),
    "grad_vmap_psum_scatter": lambda ns: ns.grad(_sum_sin(ns, ns.vmap(
        lambda r: ns.lax.psum_scatter(ns.numpy.outer(ns.numpy.arange(4.0), r), "i"),
        axis_name="i"))),
    "grad_vmap_ppermute": lambda ns: ns.grad(_sum_sin(ns, ns.vmap(
        lambda r: ns.lax.ppermute(r, "i", RING) * r, axis_name="i"))),
    "jvp_vmap_psum": lambda ns: lambda x: ns.jvp(ns.vmap(
        lambda r: ns.lax.psum(r, "i") * r, axis_name="i"), (x,), (ns.numpy.ones_like(x),))[1],
    "vmap_grad_vmap_two_names": lambda ns: ns.vmap(ns.grad(lambda r: ns.numpy.sum(ns.vmap(
        lambda s: ns.lax.psum(s, ("i", "j")) * s, axis_name="j")(r))), axis_name="i"),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_derivative_through_vmapped_collective_matches_jax(name, jax_side):
    build = GRAD_CASES[name]
    want = jax_side(lambda: build(jax)(X))
    np.testing.assert_allclose(np.asarray(build(traxla)(X)), np.asarray(want),
                               rtol=1e-5, atol=1e-5)


def test_grad_of_pmax_over_vmapped_axis():
    # JAX has no JVP for pmax; traxla's sends the tangent to the lane holding the maximum:
    # d/dx sum_i max_k(x_k) * x_i = max + [lane of the max] * sum_i x_i
    g = traxla.grad(lambda x: traxla.numpy.sum(traxla.vmap(
        lambda r: traxla.lax.pmax(r, "i") * r, axis_name="i")(x)))(X)
    want = np.tile(X[3], (4, 1))
    want[3] += X.sum(0)
    np.testing.assert_allclose(np.asarray(g), want)


ERRORS = {
    "unbound_psum": (lambda ns: ns.vmap(lambda x: ns.lax.psum(x, "k"), axis_name="i"), (X,)),
    "unbound_axis_index": (lambda ns: ns.vmap(lambda x: x + ns.lax.axis_index("k"),
                                              axis_name="i"), (X,)),
    "unbound_all_gather": (lambda ns: ns.vmap(lambda x: ns.lax.all_gather(x, "k"),
                                              axis_name="i"), (X,)),
    "unbound_outside_vmap": (lambda ns: lambda x: ns.lax.psum(x, "k"), (X,)),
    "unbound_after_vmap": (lambda ns: lambda x: ns.lax.axis_size("i"), (X,)),
    "mapped_output_with_out_axes_none": (lambda ns: ns.vmap(lambda x: x, axis_name="i",
                                                            out_axes=None), (X,)),
    "axis_index_groups": (lambda ns: ns.vmap(lambda x: ns.lax.psum(
        x, "i", axis_index_groups=[[0, 1], [2, 3]]), axis_name="i"), (X,)),
    "all_to_all_wrong_size": (lambda ns: ns.vmap(lambda x: ns.lax.all_to_all(
        ns.numpy.ones(3), "i", 0, 0), axis_name="i"), (X,)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_collective_errors_match_jax(name):
    build, args = ERRORS[name]
    with pytest.raises(Exception) as want:
        jax.make_jaxpr(build(jax))(*args)
    with pytest.raises(Exception) as got:
        traxla.make_jaxpr(build(traxla))(*args)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


def test_vmap_signature_matches_jax():
    ours = inspect.signature(traxla.vmap)
    theirs = inspect.signature(jax.vmap)
    assert list(ours.parameters) == list(theirs.parameters)
    assert [p.default for p in ours.parameters.values()] == [
        p.default for p in theirs.parameters.values()]


def test_partial_ppermute_fills_zeros():
    # JAX's vmap batcher asserts on a permutation that is not total; ppermute's documented
    # meaning (indices no source sends to receive zeros) is what traxla computes
    f = traxla.vmap(lambda x: traxla.lax.ppermute(x, "i", [(0, 1), (2, 3)]), axis_name="i")
    np.testing.assert_array_equal(np.asarray(f(X)), [[0, 0, 0], X[0], [0, 0, 0], X[2]])


def test_name_is_unbound_once_vmap_returns():
    f = traxla.vmap(lambda x: x * traxla.lax.axis_size("i"), axis_name="i")
    np.testing.assert_array_equal(np.asarray(f(X)), X * 4)
    with pytest.raises(NameError, match="unbound axis name: i"):
        traxla.lax.axis_size("i")


def test_spmd_axis_name_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="spmd_axis_name"):
        traxla.vmap(lambda x: x, spmd_axis_name="d")

"""traxla.experimental.sparse against jax.experimental.sparse 0.10.2: BCOO's buffers (data,
indices with JAX's order and padding), conversions, products, reductions, sparsify, jit,
grad, vmap, and the errors JAX raises. Small shapes only."""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jjnp
from jax.experimental import sparse as jsparse

import traxla
import traxla.numpy as jnp
from traxla.errors import ConcretizationTypeError
from traxla.experimental import sparse

M = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)
X3 = (np.arange(24.).reshape(2, 3, 4) * (np.arange(24).reshape(2, 3, 4) % 3 == 0)).astype(np.float32)
V3 = np.array([3., 6., 5.], np.float32)
V4 = np.array([1., -2., 0.5, 4.], np.float32)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def same_bcoo(a, b):
    assert isinstance(a, sparse.BCOO) and isinstance(b, jsparse.BCOO)
    assert a.shape == b.shape and (a.n_batch, a.n_sparse, a.n_dense, a.nse) == \
        (b.n_batch, b.n_sparse, b.n_dense, b.nse)
    assert (a.indices_sorted, a.unique_indices) == (b.indices_sorted, b.unique_indices)
    same(a.data, b.data)
    same(a.indices, b.indices)


@pytest.mark.parametrize("x,kw", [
    (M, {}), (M, {"nse": 6}), (M, {"nse": 2}), (M, {"index_dtype": np.int8}),
    (X3, {"n_batch": 1}), (X3, {"n_dense": 1}), (X3, {"n_batch": 1, "n_dense": 1, "nse": 3}),
    (X3, {"n_batch": 2}), (np.zeros((2, 3), np.float32), {}),
    (np.array([[1, 0], [0, 2]], np.int32), {"nse": 3}),
])
def test_fromdense_todense_match_jax(x, kw):
    a = sparse.BCOO.fromdense(x, **kw)
    # JAX's side under jax.jit (its eager sparse ops run op by op, seconds each), with the
    # nse JAX's fromdense would count
    nse = kw.get("nse", int(jsparse.util._count_stored_elements(
        x, kw.get("n_batch", 0), kw.get("n_dense", 0))))
    jkw = {**kw, "nse": nse}
    b = jax.jit(lambda x: jsparse.BCOO.fromdense(x, **jkw))(x)
    same_bcoo(a, b)  # row-major order, padding indices = shape, padding data = 0
    same(a.todense(), jax.jit(lambda m: m.todense())(b))
    same(sparse.bcoo_todense(a), a.todense())
    same_bcoo(sparse.bcoo_fromdense(x, **kw), b)
    assert repr(a) == repr(b)


def test_attributes_match_jax():
    a, b = sparse.BCOO.fromdense(X3, n_batch=1), jsparse.BCOO.fromdense(X3, n_batch=1)
    for name in ("shape", "dtype", "nse", "n_batch", "n_sparse", "n_dense", "ndim", "size",
                 "indices_sorted", "unique_indices"):
        assert getattr(a, name) == getattr(b, name), name
    assert len(a) == len(b) and isinstance(a, sparse.JAXSparse)
    same_bcoo(a.transpose((0, 2, 1)), b.transpose((0, 2, 1)))
    m, jm = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    same_bcoo(m.T, jm.T)
    same_bcoo(sparse.bcoo_transpose(m, permutation=(1, 0)),
              jsparse.bcoo_transpose(jm, permutation=(1, 0)))


def test_constructor_from_buffers_and_duplicates():
    data = np.array([1., 2., 3.], np.float32)
    idx = np.array([[1, 1], [0, 0], [1, 1]], np.int32)
    a = sparse.BCOO((data, idx), shape=(2, 2))
    b = jsparse.BCOO((data, idx), shape=(2, 2))
    same(a.todense(), b.todense())  # duplicates add up
    same_bcoo(sparse.bcoo_sum_duplicates(a), jsparse.bcoo_sum_duplicates(b))
    same_bcoo(sparse.bcoo_sum_duplicates(a, nse=4), jsparse.bcoo_sum_duplicates(b, nse=4))
    same_bcoo(a.sum_duplicates(), b.sum_duplicates())
    same_bcoo(sparse.bcoo_sort_indices(a), jsparse.bcoo_sort_indices(b))
    same_bcoo(a.sort_indices(), b.sort_indices())


@pytest.mark.parametrize("bad", [
    lambda S: S.BCOO((np.ones(3, np.float32), np.zeros((4, 2), np.int32)), shape=(3, 4)),
    lambda S: S.BCOO((np.ones((2, 3), np.float32), np.zeros((3, 3, 2), np.int32)), shape=(2, 3, 4)),
    lambda S: S.bcoo_transpose(S.BCOO.fromdense(M), permutation=(0, 0)),
    lambda S: S.bcoo_transpose(S.BCOO.fromdense(X3, n_batch=1), permutation=(1, 0, 2)),
    lambda S: S.bcoo_extract(np.ones(3), np.ones(3)),
    lambda S: S.bcoo_extract(S.BCOO.fromdense(M), np.ones((4, 3))),
    lambda S: S.bcoo_dot_general(S.BCOO.fromdense(M), np.ones(3, np.float32),
                                 dimension_numbers=(([1], [0]), ([], []))),
    lambda S: S.BCOO.fromdense(X3, n_dense=1) @ np.ones((4, 2), np.float32),
    lambda S: S.bcoo_multiply_sparse(S.BCOO.fromdense(M), S.BCOO.fromdense(M[0])),
    lambda S: S.BCOO.fromdense(M) + np.ones(4, np.float32),
    lambda S: S.BCOO.fromdense(M) - np.ones((3, 4), np.float32),
    lambda S: 1.0 / S.BCOO.fromdense(M),
    lambda S: S.empty((3, 4), n_batch=3),
])
def test_errors_match_jax(bad):
    with pytest.raises(Exception) as theirs:
        bad(jsparse)
    with pytest.raises(type(theirs.value)) as ours:
        bad(sparse)
    assert str(ours.value) == str(theirs.value)


def test_unknown_sparse_format():
    # JAX lists its five formats; traxla has BCSR and BCOO.
    with pytest.raises(ValueError, match="sparse_format='nope' not recognized; must be one of "
                       r"\['bcsr', 'bcoo'\]"):
        sparse.empty((3, 4), sparse_format="nope")


def test_fromdense_under_jit_needs_a_concrete_nse():
    with pytest.raises(jax.errors.ConcretizationTypeError, match="nse"):
        jax.jit(lambda x: jsparse.BCOO.fromdense(x).data)(M)
    with pytest.raises(ConcretizationTypeError, match="you must pass a concrete\nvalue to "
                       "the nse"):
        traxla.jit(lambda x: sparse.BCOO.fromdense(x).data)(M)
    same(traxla.jit(lambda x: sparse.BCOO.fromdense(x, nse=4).todense())(M), M)


def test_matmuls_match_jax_and_numpy():
    a, b = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    same(a @ V4, b @ V4)
    same(a.T @ V3, b.T @ V3)
    same(a.T @ V3, M.T @ V3)
    same(jnp.asarray(V3) @ a, jjnp.asarray(V3) @ b)
    rhs = np.arange(8, dtype=np.float32).reshape(4, 2)
    same(a @ rhs, M @ rhs)
    same(a @ a.T.todense(), b @ b.T.todense())
    dn = (([1], [0]), ([], []))
    same(sparse.bcoo_dot_general(a, rhs, dimension_numbers=dn),
         jsparse.bcoo_dot_general(b, rhs, dimension_numbers=dn))
    same(sparse.bcoo_dot_general(rhs.T, a.T, dimension_numbers=dn),
         jsparse.bcoo_dot_general(rhs.T, b.T, dimension_numbers=dn))


def test_dot_general_sampled_matches_jax():
    A, B = np.arange(12., dtype=np.float32).reshape(3, 4), np.arange(8., dtype=np.float32).reshape(4, 2)
    idx = sparse.BCOO.fromdense(M[:, :2]).indices
    dn = (([1], [0]), ([], []))
    same(sparse.bcoo_dot_general_sampled(A, B, idx, dimension_numbers=dn),
         jsparse.bcoo_dot_general_sampled(A, B, np.asarray(idx), dimension_numbers=dn))
    g = traxla.grad(lambda a: sparse.bcoo_dot_general_sampled(a, B, idx, dimension_numbers=dn).sum())(A)
    jg = jax.grad(lambda a: jsparse.bcoo_dot_general_sampled(a, B, np.asarray(idx), dimension_numbers=dn).sum())(A)
    same(g, jg)


def test_batched_and_sparse_sparse_dot_general_match_jax():
    a, b = sparse.BCOO.fromdense(X3, n_batch=1), jsparse.BCOO.fromdense(X3, n_batch=1)
    Y = np.arange(8., dtype=np.float32).reshape(2, 4)
    dn, dn2 = (([2], [1]), ([0], [0])), (([2], [2]), ([0], [0]))
    # JAX's side under jax.jit: its eager sparse ops run op by op (seconds each).
    same(sparse.bcoo_dot_general(a, Y, dimension_numbers=dn),
         jax.jit(lambda b, y: jsparse.bcoo_dot_general(b, y, dimension_numbers=dn))(b, Y))
    same_bcoo(sparse.bcoo_dot_general(a, a, dimension_numbers=dn2),
              jax.jit(lambda b: jsparse.bcoo_dot_general(b, b, dimension_numbers=dn2))(b))
    m, jm = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    same_bcoo(m @ m.T, jax.jit(lambda m: m @ m.T)(jm))


def test_elementwise_and_reductions_match_jax():
    a, b = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    ops = [lambda m, S: m * 2.0, lambda m, S: 2.0 * m, lambda m, S: m * M,
           lambda m, S: m * V4, lambda m, S: -m, lambda m, S: abs(-m), lambda m, S: m / 2.0,
           lambda m, S: m ** 2, lambda m, S: m + m, lambda m, S: m.sum(0),
           lambda m, S: S.bcoo_multiply_sparse(m, m),
           lambda m, S: S.bcoo_reduce_sum(m, axes=(1,)), lambda m, S: m.astype(np.int32),
           lambda m, S: S.bcoo_extract(m, M + 1)]
    for op in ops:
        same_bcoo(op(a, sparse), jax.jit(lambda m: op(m, jsparse))(b))
    same(a + M, b + M)
    same(sparse.bcoo_multiply_dense(a, M), jsparse.bcoo_multiply_dense(b, M))
    same(a.sum(), b.sum())
    x, jx = sparse.BCOO.fromdense(X3, n_batch=1, n_dense=1), jsparse.BCOO.fromdense(X3, n_batch=1, n_dense=1)
    for axes in [(0,), (2,), (0, 1)]:
        same_bcoo(sparse.bcoo_reduce_sum(x, axes=axes),
                  jax.jit(lambda m: jsparse.bcoo_reduce_sum(m, axes=axes))(jx))


def test_empty_eye_todense_match_jax():
    for kw in [{}, {"nse": 2}, {"n_batch": 1}, {"n_dense": 1, "dtype": np.int32}]:
        same_bcoo(sparse.empty((3, 4), **kw), jsparse.empty((3, 4), **kw))
    for args, kw in [((3,), {}), ((3, 4, 1), {}), ((4, 3, -2), {}), ((3, 3, 5), {}),
                     ((3,), {"n_batch": 1}), ((3, 4, 1), {"n_batch": 1}),
                     ((3,), {"n_dense": 1})]:
        same_bcoo(sparse.eye(*args, **kw), jsparse.eye(*args, **kw))
    same(sparse.todense(sparse.eye(3)), jsparse.todense(jsparse.eye(3)))
    same(sparse.todense(M), jsparse.todense(M))


def test_sparsify_matches_jax():
    def f(lib):
        return lambda m, v: 2 * lib.dot(lib.log1p(m.T), v) + 1

    a, b = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    same(sparse.sparsify(f(jnp))(a, V3), jsparse.sparsify(f(jjnp))(b, V3))
    same(traxla.jit(sparse.sparsify(f(jnp)))(a, V3), jax.jit(jsparse.sparsify(f(jjnp)))(b, V3))
    same(traxla.grad(lambda v: sparse.sparsify(f(jnp))(a, v).sum())(V3),
         jax.grad(lambda v: jsparse.sparsify(f(jjnp))(b, v).sum())(V3))

    def g(lib, S):
        return lambda m: (S.todense(lib.sin(m) * 3 - m) + 1).sum(1)
    same(sparse.sparsify(g(jnp, sparse))(a), jsparse.sparsify(g(jjnp, jsparse))(b))
    same_bcoo(sparse.sparsify(lambda m: (m * m).sum(0))(a),
              jsparse.sparsify(lambda m: (m * m).sum(0))(b))
    with pytest.raises(NotImplementedError) as theirs:
        jsparse.sparsify(jjnp.cos)(b)
    with pytest.raises(NotImplementedError) as ours:
        sparse.sparsify(jnp.cos)(a)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(NotImplementedError, match="sparse rule for cumsum is not implemented."):
        sparse.sparsify(lambda m: jnp.cumsum(m, axis=0))(a)


def test_jit_grad_vmap_match_jax():
    a, b = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    same(traxla.jit(lambda m, y: (m.T @ y).sum())(a, V3), jax.jit(lambda m, y: (m.T @ y).sum())(b, V3))
    out = traxla.jit(lambda m: m * 2.0)(a)
    assert isinstance(out, sparse.BCOO)
    same_bcoo(out, jax.jit(lambda m: m * 2.0)(b))
    same(traxla.jit(traxla.grad(lambda y: (a.T @ y).sum()))(V3),
         jax.jit(jax.grad(lambda y: (b.T @ y).sum()))(V3))

    def loss(S, idx):
        return lambda d, y: jnp_sum(S.BCOO((d, idx), shape=M.shape) @ y)
    jnp_sum = lambda x: x.sum() if hasattr(x, "sum") else x  # noqa: E731
    same(traxla.grad(loss(sparse, a.indices), argnums=(0, 1))(a.data, V4)[0],
         jax.grad(loss(jsparse, b.indices), argnums=(0, 1))(b.data, V4)[0])
    same(traxla.grad(lambda d: sparse.BCOO((d, a.indices), shape=M.shape).todense().sum())(a.data),
         jax.grad(lambda d: jsparse.BCOO((d, b.indices), shape=M.shape).todense().sum())(b.data))
    ys = np.arange(20., dtype=np.float32).reshape(5, 4)
    same(traxla.vmap(lambda y: a @ y)(ys), jax.vmap(lambda y: b @ y)(ys))
    same(traxla.vmap(lambda x: sparse.BCOO.fromdense(x, nse=3).todense())(X3),
         jax.vmap(lambda x: jsparse.BCOO.fromdense(x, nse=3).todense())(X3))


def test_vmap_maps_bcoo_arguments_and_results_like_jax():
    a, b = sparse.BCOO.fromdense(X3, n_batch=1), jsparse.BCOO.fromdense(X3, n_batch=1)
    same(traxla.vmap(lambda m: m.todense())(a), jax.vmap(lambda m: m.todense())(b))
    ys = np.ones((2, 4), np.float32)
    same(traxla.vmap(lambda m, y: m @ y)(a, ys), jax.vmap(lambda m, y: m @ y)(b, ys))
    same(traxla.vmap(lambda m: m @ V4)(a), jax.vmap(lambda m: m @ V4)(b))
    same_bcoo(traxla.vmap(lambda m: m * 2.0)(a), jax.vmap(lambda m: m * 2.0)(b))
    same_bcoo(traxla.vmap(lambda x: sparse.BCOO.fromdense(x, nse=3))(X3),
              jax.vmap(lambda x: jsparse.BCOO.fromdense(x, nse=3))(X3))
    same(traxla.jit(traxla.vmap(lambda m: m.sum(1).todense()))(a),
         jax.jit(jax.vmap(lambda m: m.sum(1).todense()))(b))
    for bad in (lambda S, vm, m: vm(lambda m: m.todense(), in_axes=1)(m),
                lambda S, vm, m: vm(lambda x: S.BCOO.fromdense(x, nse=3), out_axes=2)(X3)):
        with pytest.raises(ValueError) as theirs:
            bad(jsparse, jax.vmap, b)
        with pytest.raises(ValueError) as ours:
            bad(sparse, traxla.vmap, a)
        assert str(ours.value) == str(theirs.value)


def test_sparse_grad_value_and_grad_jacobians_match_jax():
    a, b = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    f = lambda X, y: ((X @ y) ** 2).sum()  # noqa: E731
    same_bcoo(sparse.grad(f)(a, V4), jsparse.grad(f)(b, V4))
    (gx, gy), (jgx, jgy) = sparse.grad(f, argnums=(0, 1))(a, V4), jsparse.grad(f, argnums=(0, 1))(b, V4)
    same_bcoo(gx, jgx)
    same(gy, jgy)
    (v, g), (jv, jg) = sparse.value_and_grad(f)(a, V4), jsparse.value_and_grad(f)(b, V4)
    same(v, jv)
    same_bcoo(g, jg)
    g, aux = sparse.grad(lambda X, y: (f(X, y), 7), has_aux=True)(a, V4)
    same_bcoo(g, jsparse.grad(f)(b, V4))
    assert aux == 7
    h = lambda X, y: X @ y  # noqa: E731
    same_bcoo(sparse.jacrev(h)(a, V4), jsparse.jacrev(h)(b, V4))
    same_bcoo(sparse.jacfwd(h)(a, V4), jsparse.jacfwd(h)(b, V4))
    assert sparse.jacobian is sparse.jacrev


def test_layout_and_shape_operations_match_jax():
    x, jx = sparse.BCOO.fromdense(X3), jsparse.BCOO.fromdense(X3)
    for nb, nd in [(1, 0), (2, 0), (0, 1), (1, 1), (0, 2)]:
        same_bcoo(sparse.bcoo_update_layout(x, n_batch=nb, n_dense=nd, on_inefficient=None),
                  jax.jit(lambda m: jsparse.bcoo_update_layout(
                      m, n_batch=nb, n_dense=nd, on_inefficient=None))(jx))
    xb, jxb = sparse.BCOO.fromdense(X3, n_batch=1, n_dense=1), jsparse.BCOO.fromdense(X3, n_batch=1, n_dense=1)
    same_bcoo(xb.update_layout(n_batch=0, n_dense=0), jxb.update_layout(n_batch=0, n_dense=0))
    m, jm = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    ops = [lambda a, S: a.reshape(-1), lambda a, S: a.reshape(2, 6), lambda a, S: a.reshape(4, 3),
           lambda a, S: S.bcoo_rev(a, (1,)), lambda a, S: S.sparsify(lambda t: t[None])(a),
           lambda a, S: S.sparsify(lambda t: t[None].squeeze(0))(a),
           lambda a, S: S.bcoo_concatenate([a, a], dimension=1),
           lambda a, S: S.bcoo_squeeze(S.bcoo_broadcast_in_dim(a, shape=(3, 1, 4),
                                                               broadcast_dimensions=(0, 2)),
                                       dimensions=(1,))]
    for op in ops:
        same_bcoo(op(m, sparse), jax.jit(lambda a: op(a, jsparse))(jm))
    lib = {sparse: jnp, jsparse: jjnp}
    for f in [lambda S, a: S.sparsify(lambda t: lib[S].stack([t, t]))(a),
              lambda S, a: S.sparsify(lambda t: lib[S].concatenate([t, t], axis=1))(a),
              lambda S, a: S.bcoo_multiply_sparse(a, S.BCOO.fromdense(X3))]:
        same_bcoo(f(sparse, xb.update_layout(n_dense=0)), f(jsparse, jxb.update_layout(n_dense=0)))


def test_reshape_with_batch_and_dense_dimensions():
    # JAX 0.10.2 splits the new sizes wrongly here and fails to lower; the values are numpy's
    x = sparse.BCOO.fromdense(X3, n_batch=1, n_dense=1)
    for shape in [(2, 3, 4), (2, 3, 2, 2)]:
        same(sparse.bcoo_reshape(x, new_sizes=shape).todense(), X3.reshape(shape))


@pytest.mark.parametrize("bad", [
    lambda S: S.bcoo_update_layout(S.BCOO.fromdense(X3), n_batch=1),
    lambda S: S.bcoo_update_layout(S.BCOO.fromdense(X3), n_batch=2, n_dense=2),
    lambda S: S.bcoo_reshape(S.BCOO.fromdense(X3, n_batch=1), new_sizes=(4, 6)),
    lambda S: S.bcoo_concatenate([S.BCOO.fromdense(X3, n_dense=1)] * 2, dimension=2),
    lambda S: S.bcoo_squeeze(S.BCOO.fromdense(M), dimensions=(0,)),
])
def test_layout_errors_match_jax(bad):
    with pytest.raises(Exception) as theirs:
        bad(jsparse)
    with pytest.raises(Exception) as ours:
        bad(sparse)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


def test_slicing_and_indexing_match_jax():
    cases = [(M, {}, [-1, (slice(1, 3),), (slice(None), 2), (0, 1), (slice(0, 3, 2),)]),
             (X3, {"n_batch": 1}, [0, (slice(None), 2)]), (X3, {"n_dense": 1}, [(0, 1)])]
    for x, kw, indices in cases:
        a, b = sparse.BCOO.fromdense(x, **kw), jsparse.BCOO.fromdense(x, **kw)
        for idx in indices:
            same_bcoo(a[idx], jax.jit(lambda m: m[idx])(b))
        lim = x.shape[:-1] + (2,)
        same_bcoo(sparse.bcoo_slice(a, start_indices=(0,) * x.ndim, limit_indices=lim),
                  jax.jit(lambda m: jsparse.bcoo_slice(m, start_indices=(0,) * x.ndim,
                                                       limit_indices=lim))(b))
        same_bcoo(sparse.bcoo_dynamic_slice(a, (1,) * x.ndim, (1,) * x.ndim),
                  jax.jit(lambda m: jsparse.bcoo_dynamic_slice(m, (1,) * x.ndim,
                                                               (1,) * x.ndim))(b))
        same_bcoo(traxla.jit(lambda m, i: m[i])(a, 1), jax.jit(lambda m, i: m[i])(b, 1))
    a, b = sparse.BCOO.fromdense(M), jsparse.BCOO.fromdense(M)
    same_bcoo(a[np.array([0, 2])], jax.jit(lambda m: m[np.array([0, 2])])(b))
    for r1, r2 in zip(a, jax.jit(lambda m: list(m))(b)):
        same_bcoo(r1, r2)
    # JAX 0.10.2 fails to lower this one (a reshape verifier error); traxla gives the values
    x = sparse.BCOO.fromdense(X3, n_dense=1)
    same(x[np.array([0, 1])].todense(), X3[[0, 1]])
    with pytest.raises(ValueError, match="bcoo_slice: invalid indices"):
        sparse.bcoo_slice(a, start_indices=(0, 0), limit_indices=(4, 4))


def same_bcsr(a, b):
    assert isinstance(a, sparse.BCSR) and isinstance(b, jsparse.BCSR)
    assert a.shape == b.shape and repr(a) == repr(b)
    for name in ("data", "indices", "indptr"):
        same(getattr(a, name), getattr(b, name))


def test_bcsr_matches_jax():
    for x, kw in [(M, {}), (M, {"nse": 6}), (X3, {"n_batch": 1}),
                  (X3[..., None], {"n_batch": 1, "n_dense": 1})]:
        a = sparse.BCSR.fromdense(x, **kw)
        nse = kw.get("nse", a.nse)
        b = jax.jit(lambda x: jsparse.BCSR.fromdense(x, **{**kw, "nse": nse}))(x)
        same_bcsr(a, b)
        same(a.todense(), x if "nse" not in kw else b.todense())
        same(sparse.bcsr_todense(a), x)
        same(sparse.bcsr_extract(a.indices, a.indptr, x), b.data)
        same(a.to_bcoo().indices, sparse.BCOO.fromdense(x, **kw).indices)
        same_bcsr(sparse.BCSR.from_bcoo(sparse.BCOO.fromdense(x, **kw)), b)
    a, b = sparse.BCSR.fromdense(M), jsparse.BCSR.fromdense(M)
    same(a @ V4, b @ V4)
    rhs = np.ones((4, 2), np.float32)
    dn = (([1], [0]), ([], []))
    same(sparse.bcsr_dot_general(a, rhs, dimension_numbers=dn), M @ rhs)
    same(traxla.jit(lambda m, v: m @ v)(a, V4), M @ V4)
    same(traxla.grad(lambda d: (sparse.BCSR((d, a.indices, a.indptr), shape=M.shape) @ V4).sum())(a.data),
         jax.grad(lambda d: (jsparse.BCSR((d, b.indices, b.indptr), shape=M.shape) @ V4).sum())(b.data))
    same_bcsr(sparse.empty((3, 4), sparse_format="bcsr", nse=2),
              jsparse.empty((3, 4), sparse_format="bcsr", nse=2))
    same_bcsr(a.sum_duplicates(nse=5), jax.jit(lambda m: m.sum_duplicates(nse=5))(b))
    xb = sparse.BCSR.fromdense(X3, n_batch=1)
    same(traxla.vmap(lambda m: m.todense())(xb), X3)
    with pytest.raises(ValueError) as theirs:
        jax.vmap(lambda m: m.todense(), in_axes=1)(jsparse.BCSR.fromdense(X3, n_batch=1))
    with pytest.raises(ValueError) as ours:
        traxla.vmap(lambda m: m.todense(), in_axes=1)(xb)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(NotImplementedError, match="currently implemented for BCSR lhs"):
        jnp.ones(3) @ a
    with pytest.raises(ValueError, match="indptr shape must match the matrix shape plus 1."):
        sparse.BCSR((np.ones(3), np.zeros(3, np.int32), np.zeros(3, np.int32)), shape=(3, 4))
    with pytest.raises(NotImplementedError, match="sparsify of BCSR arrays"):
        sparse.sparsify(jnp.sin)(a)

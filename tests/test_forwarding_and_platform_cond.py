"""Three JAX mechanisms that shape printed jaxprs, against JAX 0.10.2: an identity
``broadcast_in_dim`` is bound, dropped by staging (its forwarding rule) but kept by
``linear_transpose``'s trace (so it transposes to ``reduce_sum[axes=()]``); a
``platform_dependent`` cond carries ``branches_platforms`` through every transformation
and lowers only its platform's branch (``jnp.diagonal`` of a square matrix uses one); a
jaxpr batched twice the same way is one object (printed once)."""
from __future__ import annotations

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import lax as tlax

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

M3 = np.arange(9, dtype=np.float32).reshape(3, 3) / 4
B23 = np.arange(6, dtype=np.float32).reshape(2, 3)
V3 = np.arange(3, dtype=np.float32)


def _identity_bcast(lax):
    return lambda x: lax.broadcast_in_dim(x, x.shape, (0, 1)) * 2.0


def _transposed(api, lax):
    f = _identity_bcast(lax)
    return lambda ct: api.linear_transpose(f, M3)(ct)


def _diag_grad(api, np_):
    return api.grad(lambda a: np_.sum(np_.diagonal(a) ** 2))


def _diag_vmap(api, np_):
    return api.vmap(np_.diagonal)


def _pd_jvp(api, lax, np_):
    def f(x):
        return lax.platform_dependent(x, cpu=np_.sin, default=np_.cos)
    return lambda x, t: api.jvp(f, (x,), (t,))


def _pd_vmap_index(api, lax, np_):
    # a batched branch operand; the index (platform_index) stays unbatched
    return api.vmap(lambda x: lax.platform_dependent(x, cuda=np_.sin, default=np_.cos))


def _shared_jit(api, lax, np_):
    inner = api.jit(lambda x: np_.sin(x) * 2.0)
    return api.vmap(lambda x: lax.cond(x[0] > 0, inner, inner, x))


CASES = {
    "identity broadcast staged": (lambda api, lax, np_: _identity_bcast(lax), (M3,)),
    "identity broadcast linear_transpose": (lambda api, lax, np_: _transposed(api, lax), (M3,)),
    # JAX's batching rule moves the batch axis first even for an identity broadcast
    "identity broadcast vmap": (lambda api, lax, np_: api.vmap(
        lambda x: lax.broadcast_in_dim(x, x.shape, (0,)) + 1.0, in_axes=1), (B23.T,)),
    "identity broadcast grad of remat": (lambda api, lax, np_: api.grad(api.checkpoint(
        lambda x: np_.sum(np_.cos(lax.broadcast_in_dim(np_.sin(x), x.shape, (0,)))))), (V3,)),
    "diagonal": (lambda api, lax, np_: np_.diagonal, (M3,)),
    "diagonal grad": (lambda api, lax, np_: _diag_grad(api, np_), (M3,)),
    "diagonal vmap": (lambda api, lax, np_: _diag_vmap(api, np_), (np.stack([M3, M3 + 1]),)),
    "diagonal jvp": (lambda api, lax, np_: lambda a, t: api.jvp(np_.diagonal, (a,), (t,)),
                     (M3, M3)),
    "platform_dependent jvp": (_pd_jvp, (V3, V3)),
    "platform_dependent vmap": (_pd_vmap_index, (B23,)),
    "jit batched twice": (_shared_jit, (B23,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_jaxpr_text_matches_jax(name):
    build, args = CASES[name]
    want = str(jax.make_jaxpr(build(jax, jlax, jnp))(*args))
    got = str(traxla.make_jaxpr(build(traxla, tlax, tnp))(*args))
    assert got == want


def test_values_match_jax_under_jit():
    """The jitted programs compute JAX's values (the platform cond lowers its CPU branch)."""
    for name in ("diagonal", "diagonal grad", "diagonal vmap", "platform_dependent jvp",
                 "platform_dependent vmap", "identity broadcast linear_transpose"):
        build, args = CASES[name]
        got = jax.tree_util.tree_leaves(traxla.jit(build(traxla, tlax, tnp))(*args))
        want = jax.tree_util.tree_leaves(jax.jit(build(jax, jlax, jnp))(*args))
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, err_msg=name)


def test_platform_cond_lowers_only_its_platform_branch():
    text = traxla.jit(lambda x: tlax.platform_dependent(
        x, cuda=tnp.sin, default=tnp.cos)).lower(V3).as_text()
    assert "cosine" in text and "sine" not in text.replace("cosine", "")


def test_platform_cond_without_a_matching_branch_raises():
    f = traxla.jit(lambda x: tlax.platform_dependent(x, cuda=tnp.sin, tpu=tnp.cos))
    with pytest.raises(NotImplementedError, match="not among the platforms"):
        f.lower(V3)


def test_cond_rejects_branches_platforms_of_the_wrong_length():
    from traxla.ir.rules.control_flow import cond_p
    branch = traxla.make_jaxpr(lambda x: x + 1.0)(V3)
    with pytest.raises(TypeError, match="2 branches but 1 branches_platforms"):
        traxla.make_jaxpr(lambda i, x: cond_p.bind(i, x, branches=(branch, branch),
                                                   branches_platforms=(None,)))(np.int32(0), V3)


def test_identity_broadcast_of_a_concrete_array_is_that_array():
    x = traxla.numpy.asarray(M3)
    assert tlax.broadcast_in_dim(x, (3, 3), (0, 1)) is x

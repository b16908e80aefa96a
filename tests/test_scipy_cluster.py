"""``traxla.scipy.cluster.vq.vq`` against SciPy (values) and JAX 0.10.2 (jaxprs)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.cluster.vq as scipy_vq

import jax
import jax.scipy.cluster.vq as jax_vq

import traxla
from traxla.scipy.cluster import vq as traxla_vq

OBS = np.array([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2], [0., 0., 0.]], np.float32)
CODE_BOOK = np.array([[1., 2., 3.], [2., 3., 4.], [3., 4., 5.], [4., 5., 6.]], np.float32)


@pytest.mark.parametrize("rank", [1, 2])
def test_vq_matches_scipy_and_jax(rank):
    obs, code_book = (OBS, CODE_BOOK) if rank == 2 else (OBS[:, 0], CODE_BOOK[:, 1])
    code, dist = traxla.jit(traxla_vq.vq)(obs, code_book)
    want_code, want_dist = scipy_vq.vq(obs, code_book)
    np.testing.assert_array_equal(code, want_code)
    np.testing.assert_allclose(dist, want_dist, rtol=1e-6)
    assert (str(traxla.make_jaxpr(traxla_vq.vq)(obs, code_book))
            == str(jax.make_jaxpr(jax_vq.vq)(obs, code_book)))


def test_vq_errors_as_jax():
    with pytest.raises(ValueError, match="same rank"):
        traxla_vq.vq(OBS, CODE_BOOK[:, 0])
    with pytest.raises(ValueError, match="ndim different than 1 or 2"):
        traxla_vq.vq(OBS[None], CODE_BOOK[None])
    with pytest.raises(TypeError):
        traxla_vq.vq([[1.0]], CODE_BOOK)  # lists are not arrays, as in JAX

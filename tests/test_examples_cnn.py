"""examples/cnn.py (issue #14): a small CNN (conv -> relu -> max-pool -> conv -> avg-pool ->
dense) written for JAX and ported by changing imports gives JAX's losses over a few
jit-compiled SGD steps, and its jaxprs print as JAX's."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import _examples

_PATH = _examples.EXAMPLES / "cnn.py"
_SOURCE = _PATH.read_text()

_JAX_IMPORTS = {
    "import traxla as jax  # noqa: F401": "import jax  # noqa: F401",
    "import traxla.numpy as jnp": "import jax.numpy as jnp",
    "from traxla import grad, jit, lax": "from jax import grad, jit, lax",
    "from traxla.scipy.special import logsumexp": "from jax.scipy.special import logsumexp",
}


def _load(source, name):
    return _examples.load(_PATH, source, name)


def jax_source():
    return _examples.jax_source(_SOURCE, _JAX_IMPORTS)


@pytest.fixture(scope="module")
def programs():
    pytest.importorskip("jax")
    return _load(_SOURCE, "cnn_traxla"), _load(jax_source(), "cnn_jax")


def test_cnn_training_gives_jax_losses(programs, jax_side):
    ours, theirs = programs
    _, got = ours.main(num_steps=4, batch_size=16, num=64, verbose=False)
    # JAX's side stored, keyed also by the example's source and the port's helpers
    want = jax_side(lambda: theirs.main(num_steps=4, batch_size=16, num=64, verbose=False)[1],
                    key=_SOURCE + inspect.getsource(_examples))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    assert got[-1] < got[0]


def test_cnn_loss_and_gradient_jaxprs_match_jax(programs):
    import jax
    import traxla
    ours, theirs = programs
    images, labels = ours.synthetic_mnist(8)
    batch = (images, labels)
    for top, module in ((traxla, ours), (jax, theirs)):
        module.text = str(top.make_jaxpr(top.grad(module.loss))(module.init_params(), batch))
    assert ours.text == theirs.text

"""stax's shape functions take -1 for an unknown batch size, as JAX's do (JAX's
differentially_private_sgd example initializes its CNN at ``(-1, 28, 28, 1)``)."""
import pytest

import traxla
from traxla import lax
from traxla.example_libraries import stax

SHAPE_CASES = [
    ((-1, 28, 28, 16), (1, 2, 2, 1), (1, 2, 2, 1), [(0, 0)] * 4, None, None),
    ((-1, 28, 28, 16), (1, 3, 3, 1), (1, 2, 2, 1), [(0, 0), (0, 1), (0, 1), (0, 0)],
     (1, 2, 2, 1), (1, 1, 2, 1)),
    ((5, 7), (3, 3), (2, 1), [(1, 1), (0, 2)], None, None),
    ((2, 2), (3, 3), (1, 1), [(0, 0), (0, 0)], None, None),  # window larger: 0, no error
]


def _dp_sgd_network(stax):
    return stax.serial(
        stax.Conv(16, (8, 8), padding="SAME", strides=(2, 2)), stax.Relu,
        stax.MaxPool((2, 2), (1, 1)),
        stax.Conv(32, (4, 4), padding="VALID", strides=(2, 2)), stax.Relu,
        stax.AvgPool((2, 2), (1, 1)), stax.SumPool((2, 2), (1, 1), padding="SAME"),
        stax.Flatten, stax.Dense(32), stax.Relu, stax.Dense(10), stax.LogSoftmax)


def test_the_dp_sgd_network_initializes_with_an_unknown_batch():
    init, predict = _dp_sgd_network(stax)
    out_shape, params = init(traxla.random.key(0), (-1, 28, 28, 1))
    assert out_shape == (0, 10)  # JAX's answer too (0 for the -1 batch)
    assert params[8][0].shape == (512, 32)
    assert traxla.jit(predict)(params, traxla.numpy.ones((2, 28, 28, 1))).shape == (2, 10)


def test_reduce_window_shape_tuple_known_values():
    assert lax.reduce_window_shape_tuple(*SHAPE_CASES[0]) == (0, 14, 14, 16)
    assert lax.reduce_window_shape_tuple(*SHAPE_CASES[1]) == (0, 27, 26, 16)
    with pytest.raises(TypeError, match="All dilations must be positive"):
        lax.reduce_window_shape_tuple((4,), (2,), (1,), [(0, 0)], (0,), None)


@pytest.mark.parametrize("case", SHAPE_CASES)
def test_reduce_window_shape_tuple_matches_jax(case):
    jax_lax = pytest.importorskip("jax.lax")
    assert lax.reduce_window_shape_tuple(*case) == tuple(
        int(d) for d in jax_lax.reduce_window_shape_tuple(*case))


def test_the_dp_sgd_network_matches_jax(jax_side):
    pytest.importorskip("jax")

    def theirs():  # stored (tests/_jax_stored.py): JAX's init compiles each initializer
        import jax
        from jax.example_libraries import stax as jax_stax
        j_init, j_predict = _dp_sgd_network(jax_stax)
        j_shape, j_params = j_init(jax.random.key(0), (-1, 28, 28, 1))
        return tuple(int(d) for d in j_shape), [[p.shape for p in layer] for layer in j_params]
    j_shape, j_param_shapes = jax_side(theirs)
    t_init, t_predict = _dp_sgd_network(stax)
    t_shape, t_params = t_init(traxla.random.key(0), (-1, 28, 28, 1))
    assert t_shape == j_shape
    assert [[p.shape for p in layer] for layer in t_params] == j_param_shapes

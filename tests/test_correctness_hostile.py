"""Hostile inputs: each raises (or warns) as JAX does, with JAX's class and message;
JAX itself is the oracle."""
import re
import warnings

import numpy as np
import pytest

import traxla

jax = pytest.importorskip("jax")


def _identity(a):
    return a


def _outcome(api, thunk):
    """('ok', repr) or (exception class name, message), plus the warnings raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", repr(thunk(api)))
        except Exception as e:  # noqa: BLE001 - class and message are what we compare
            result = (type(e).__name__, str(e))
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return result, messages


def _normalize(text):
    # function reprs carry addresses; JAX's own module paths differ from ours
    return re.sub(r" at 0x[0-9a-f]+>", ">", text)


class Node:
    def __init__(self, v):
        self.v = v


class NodeThree:
    def __init__(self, v):
        self.v = v


class NodeChildren:
    def __init__(self, v):
        self.v = v


for _api in (jax, traxla):
    _api.tree_util.register_pytree_node(Node, lambda n: n.v, lambda aux, ch: Node(ch))
    _api.tree_util.register_pytree_node(NodeThree, lambda n: (n.v, None, 1),
                                        lambda aux, ch: NodeThree(ch))
    _api.tree_util.register_pytree_node(NodeChildren, lambda n: (1.0, None),
                                        lambda aux, ch: NodeChildren(ch))


def _i32(api):
    return api.numpy.arange(3, dtype=api.numpy.int32)


ROWS = {
    "static_argnums out of range": lambda api: api.jit(_identity, static_argnums=5),
    "object array to jit": lambda api: api.jit(_identity)(np.array([1, "a"], dtype=object)),
    "numeric object array to jit": lambda api: api.jit(_identity)(np.array([1, 2], dtype=object)),
    "string to jit": lambda api: api.jit(_identity)("hi"),
    "object() to jit": lambda api: api.jit(_identity)(object()),
    "int too large to jit": lambda api: api.jit(_identity)(2 ** 40),
    "asarray int64": lambda api: api.numpy.asarray(np.arange(3), dtype=api.numpy.int64),
    "asarray int64 list": lambda api: api.numpy.asarray([1, 2], dtype=api.numpy.int64),
    "zeros float64": lambda api: api.numpy.zeros(3, api.numpy.float64),
    "zeros 'float64'": lambda api: api.numpy.zeros(3, "float64"),
    "ones np.float64": lambda api: api.numpy.ones(3, dtype=np.float64),
    "array float64": lambda api: api.numpy.array([1.0], dtype=api.numpy.float64),
    "full float64": lambda api: api.numpy.full(3, 1.0, api.numpy.float64),
    "astype float64": lambda api: api.numpy.arange(3).astype(api.numpy.float64),
    "int32 + 2**40": lambda api: _i32(api) + 2 ** 40,
    "int32 * 2**31": lambda api: _i32(api) * 2 ** 31,
    "2**40 + float32": lambda api: 2 ** 40 + api.numpy.ones(3),
    "jit int32 + 2**40": lambda api: api.jit(lambda a: a + 2 ** 40)(_i32(api)),
    "asarray 2**64": lambda api: api.numpy.asarray(2 ** 64),
    "asarray 2**40": lambda api: api.numpy.asarray(2 ** 40),
    "array [2**64]": lambda api: api.numpy.array([2 ** 64]),
    "array [2**40]": lambda api: api.numpy.array([2 ** 40]),
    "asarray 2**40 as float32": lambda api: api.numpy.asarray(2 ** 40, dtype=api.numpy.float32),
    "reshape (-1, -1)": lambda api: api.numpy.reshape(_i32(api), (-1, -1)),
    "method reshape (-1, -1)": lambda api: _i32(api).reshape(-1, -1),
    "reshape (2, -1) of 3": lambda api: api.numpy.reshape(_i32(api), (2, -1)),
    "reshape (2, 2) of 3": lambda api: api.numpy.reshape(_i32(api), (2, 2)),
    "zeros (-1, 3)": lambda api: api.numpy.zeros((-1, 3)),
    "ones -2": lambda api: api.numpy.ones(-2),
    "full (-1,)": lambda api: api.numpy.full((-1,), 1.0),
    "broadcast_to (-1,)": lambda api: api.numpy.broadcast_to(1.0, (-1,)),
    "ones 2.5": lambda api: api.numpy.ones(2.5),
    "zeros (2.5, 2)": lambda api: api.numpy.zeros((2.5, 2)),
    "zeros None": lambda api: api.numpy.zeros(None),
    "zeros '3'": lambda api: api.numpy.zeros("3"),
    "asarray str": lambda api: api.numpy.asarray("a"),
    "flatten returns one value": lambda api: api.tree_util.tree_leaves(Node(1.0)),
    "flatten returns one value, jit": lambda api: api.jit(lambda n: n.v)(Node(1.0)),
    "flatten returns three values": lambda api: api.tree_util.tree_leaves(NodeThree(1.0)),
    "flatten children not iterable": lambda api: api.tree_util.tree_leaves(NodeChildren(1.0)),
    "grad fori_loop keeps weak type": lambda api: api.grad(
        lambda x: api.lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0),
    "grad scan keeps weak type": lambda api: api.grad(
        lambda x: api.lax.scan(lambda c, _: (c * x, None), 1.0, None, length=3)[0])(2.0),
    "grad sin keeps weak type": lambda api: api.grad(api.numpy.sin)(2.0),
    "devices('gpu') without a GPU": lambda api: api.devices("gpu"),
}


@pytest.mark.parametrize("row", list(ROWS))
def test_hostile_input_matches_jax(row):
    if row == "devices('gpu') without a GPU" and traxla.default_backend() != "cpu":
        pytest.skip("a GPU is present")
    (ours, our_warnings) = _outcome(traxla, ROWS[row])
    (theirs, their_warnings) = _outcome(jax, ROWS[row])
    assert ours[0] == theirs[0]
    assert _normalize(ours[1]) == _normalize(theirs[1])
    assert our_warnings == their_warnings

"""``jax.experimental.shard_map``, the deprecated legacy module JAX 0.10.2 still ships:
reading ``shard_map`` warns once, the function takes ``check_rep`` (no ``auto``) and maps
to ``shard_map`` over every mesh axis; compared with JAX."""
from __future__ import annotations

import importlib
import inspect
import warnings

import jax
import numpy as np
import pytest

import traxla
from tests._outcomes import error_of


def _legacy(lib):
    module = importlib.import_module(lib.__name__ + ".experimental.shard_map")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = module.shard_map
        module.shard_map  # noqa: B018  (a second read does not warn again)
    return module, fn, [(w.category, str(w.message)) for w in caught]


def _mesh(lib):
    return lib.sharding.Mesh(np.array(lib.devices()[:1]), ("x",))


def test_reading_shard_map_warns_once_as_jax():
    _, _, theirs = _legacy(jax)
    _, _, ours = _legacy(traxla)
    assert ours == theirs == [(DeprecationWarning, "jax.experimental.shard_map is deprecated "
                                                   "in v0.8.0. Used jax.shard_map instead.")]


def test_signature_and_doc_match_jax():
    _, theirs, _ = _legacy(jax)
    _, ours, _ = _legacy(traxla)
    assert inspect.signature(ours) == inspect.signature(theirs)
    assert ours.__doc__ == theirs.__doc__ and ours.__name__ == "shard_map"


@pytest.mark.parametrize("check_rep", [True, False])
def test_values_and_jaxpr_match_jax(check_rep):
    def run(lib):
        _, sm, _ = _legacy(lib)
        P = lib.sharding.PartitionSpec
        f = sm(lambda a: a * 2, _mesh(lib), P("x"), P("x"), check_rep=check_rep)
        x = np.arange(4.0, dtype=np.float32)
        return np.asarray(f(x)).tolist(), str(lib.make_jaxpr(f)(x))
    assert run(traxla) == run(jax)


@pytest.mark.parametrize("call", [
    lambda sm, module, mesh, P: sm(lambda a: a, mesh, P("x"), P("x"), auto=frozenset()),
    lambda sm, module, mesh, P: sm(3, mesh, P("x"), P("x")),
    lambda sm, module, mesh, P: sm(lambda a: a, mesh, P("x")),
    lambda sm, module, mesh, P: module.no_such_name,
])
def test_errors_match_jax(call):
    def run(lib):
        module, sm, _ = _legacy(lib)
        return error_of(lambda: call(sm, module, _mesh(lib), lib.sharding.PartitionSpec))
    theirs = run(jax)
    assert theirs is not None
    assert run(traxla) == theirs.replace("module 'jax.", "module 'traxla.")

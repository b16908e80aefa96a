"""The transformations wrap as JAX 0.10.2's do (issue #41): ``__wrapped__``, ``__dict__``
(updated as functools.wraps does: libraries read back attributes they set on ``f``),
``__name__``, ``__qualname__``, ``__doc__``, ``__module__`` and ``inspect.signature``."""
import inspect

import jax
import pytest

import traxla


def _f(x, y=2.0):
    """Multiplies."""
    return x * y


_f.marker = "set by a library"

_WRAPPERS = {
    "jit": lambda api, f: api.jit(f),
    "jit_static": lambda api, f: api.jit(f, static_argnums=1),
    "jit_of_jit": lambda api, f: api.jit(api.jit(f)),
    "vmap": lambda api, f: api.vmap(f),
    "grad": lambda api, f: api.grad(f),
    "grad_argnums": lambda api, f: api.grad(f, argnums=(0, 1)),
    "value_and_grad": lambda api, f: api.value_and_grad(f, argnums=1),
    "checkpoint": lambda api, f: api.checkpoint(f),
    "remat": lambda api, f: api.remat(f),
    "custom_jvp": lambda api, f: api.custom_jvp(f),
    "custom_vjp": lambda api, f: api.custom_vjp(f),
    "pmap": lambda api, f: api.pmap(f),
    "jacfwd": lambda api, f: api.jacfwd(f),
    "jacrev": lambda api, f: api.jacrev(f),
    "hessian": lambda api, f: api.hessian(f),
    "make_jaxpr": lambda api, f: api.make_jaxpr(f),
    "named_call": lambda api, f: api.named_call(f, name="g"),
}


def _describe(api, kind):
    f = _WRAPPERS[kind](api, _f)
    wrapped = getattr(f, "__wrapped__", None)
    return {
        "wraps_f": wrapped is _f,
        "wraps_a_wrapper_of_f": getattr(wrapped, "__wrapped__", None) is _f,
        "marker": getattr(f, "marker", None),
        "name": getattr(f, "__name__", None),
        "qualname": getattr(f, "__qualname__", None),
        "doc": getattr(f, "__doc__", None),
        "module": getattr(f, "__module__", None),
        "signature": str(inspect.signature(f)),
    }


@pytest.mark.parametrize("kind", sorted(_WRAPPERS))
def test_wrapping_matches_jax(kind):
    assert _describe(traxla, kind) == _describe(jax, kind)


def test_jit_dict_is_a_copy_and_the_call_still_works():
    def f(x):
        return x + 1
    f.config = {"a": 1}
    g = traxla.jit(f)
    assert g.config is f.config
    g.extra = 2
    assert not hasattr(f, "extra")
    assert float(g(1.0)) == 2.0

"""A jitted function's repr and type name are JAX's; ``inspect.signature`` of it is the
wrapped function's, also with ``follow_wrapped=False`` (chex's fake pmap reads it so), as
JAX's. JAX is the oracle."""
from __future__ import annotations

import inspect

import jax
import pytest

import traxla as tx


def foo(x, y=2, *, z=None):
    return x


@pytest.mark.parametrize("follow", [True, False])
@pytest.mark.parametrize("fun", [foo, print])
def test_signature_of_jitted_function_matches_jax(fun, follow):
    assert (str(inspect.signature(tx.jit(fun), follow_wrapped=follow))
            == str(inspect.signature(jax.jit(fun), follow_wrapped=follow)))


def test_signature_with_static_args():
    f = tx.jit(foo, static_argnames="y")
    assert str(inspect.signature(f, follow_wrapped=False)) == "(x, y=2, *, z=None)"
    assert f(1, y=3) == 1


def test_repr_and_type_name_match_jax():
    # chex.asserts_internal.is_traceable looks for 'PjitFunction' in str(type(f))
    assert repr(tx.jit(foo)) == repr(jax.jit(foo))
    assert type(tx.jit(foo)).__name__ == type(jax.jit(foo)).__name__ == "PjitFunction"
    assert tx.JitFunction is type(tx.jit(foo))


def test_plain_binding_agrees_with_signature_bind():
    """The shortcut for naming a traced function's arguments (``plain_binding``) gives what
    ``Signature.bind(...).arguments`` gives, or None where the binding is not plain."""
    import inspect
    from traxla.base.arg_names import plain_binding

    def a(x, y): pass
    def b(x, y=1): pass
    def c(x, *args, **kw): pass
    def d(x, /, y, *, z): pass
    def e(x, *, z=2): pass
    cases = [(a, (1, 2), {}), (a, (1,), {}), (a, (1, 2, 3), {}), (b, (1,), {}),
             (b, (1, 2), {}), (c, (1,), {}), (c, (1, 2), {}), (d, (1, 2), {}), (e, (1,), {}),
             (a, (1,), {"y": 2}), (lambda *v: 0, (1, 2), {})]
    plain = 0
    for fn, args, kwargs in cases:
        sig = inspect.signature(fn)
        try:
            want = list(sig.bind(*args, **kwargs).arguments.items())
        except TypeError:
            want = None
        got = plain_binding(sig, args, kwargs)
        if got is not None:
            assert list(got) == want, (fn, args)
            plain += 1
    assert plain == 5  # a(1, 2), b(1), b(1, 2), c(1) and e(1)
    # names of a jit's arguments through it: positional leaves, static ones left out
    import numpy as np
    from traxla import jit
    f = jit(lambda x, n, p: x, static_argnums=1)
    x = np.ones(2, np.float32)
    assert f.trace(x, 3, {"w": x}).jaxpr.jaxpr.debug_info.arg_names == ("x", "p['w']")

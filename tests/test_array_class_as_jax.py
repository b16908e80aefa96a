"""``jax.Array`` (also ``jax.numpy.ndarray``) as JAX 0.10.2's (issue #41): its class
attributes and methods, abstract on the base class; concrete arrays' public attributes;
``isinstance`` for tracers under jit/grad/vmap and concrete arrays; ``issubclass``."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import traxla
import traxla.numpy as tjnp


def _public(names):
    return {n for n in names if not (n.startswith("_") and not n.startswith("__"))}


def test_array_class_names_as_jax():
    assert traxla.Array is tjnp.ndarray
    assert _public(dir(traxla.Array)) == _public(dir(jax.Array))


def test_concrete_array_names_as_jax():
    # traxla's own: the extended-dtype helper and the marker its fast paths test
    ours = _public(dir(tjnp.ones(3))) - {"physical_value", "__traxla_array__"}
    theirs = _public(dir(jjnp.ones(3))) - {"clone", "traceback", "__annotations__", "__del__",
                                           "__dict__"}
    assert ours == theirs


def _instance_checks(m, jnp):
    seen = {}

    def check(name):
        def f(y):
            seen[name] = isinstance(y, m.Array) and isinstance(y, jnp.ndarray)
            return y
        return f
    x = jnp.ones(3)
    m.jit(check("jit"))(x)
    m.grad(lambda y: check("grad")(y).sum())(x)
    m.vmap(check("vmap"))(x)
    m.make_jaxpr(check("make_jaxpr"))(x)
    seen.update(concrete=isinstance(x, m.Array), numpy=isinstance(np.ones(3), m.Array),
                scalar=isinstance(1.0, m.Array), sub=issubclass(type(x), m.Array),
                np_sub=issubclass(np.ndarray, m.Array))
    return seen


def test_isinstance_and_issubclass_as_jax():
    assert _instance_checks(traxla, tjnp) == _instance_checks(jax, jjnp)


def _behaviour(m, jnp):
    x = jnp.ones((2, 3))
    out = []
    for thunk in (lambda: m.Array.sum(x), lambda: m.Array.T.fget(x), lambda: hash(x),
                  lambda: x.is_fully_replicated, lambda: x.is_fully_addressable,
                  lambda: len(x.global_shards), lambda: x.is_ready(),
                  lambda: x.on_device_size_in_bytes(), lambda: x.platform(),
                  lambda: repr(x.format), lambda: x.device_buffer,
                  lambda: x.__array_module__((type(x),)).__name__,
                  lambda: x.__array_module__((type(x), int)),
                  lambda: hex(jnp.int32(7)), lambda: m.Array.__hash__):
        try:
            out.append(("ok", str(thunk())))
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e).replace("jaxlib._jax.", "")))
    return out


def test_array_behaviour_as_jax():
    ours, theirs = _behaviour(traxla, tjnp), _behaviour(jax, jjnp)
    ours[11] = (ours[11][0], ours[11][1].replace("traxla", "jax"))
    assert ours == theirs


def test_numpy_dtype_protocol_deprecated_as_jax():
    x = tjnp.ones(2)
    with pytest.warns(DeprecationWarning, match="dtype=arr.dtype"):
        assert np.zeros(2, dtype=x).dtype == np.float32

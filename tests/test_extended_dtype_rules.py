"""A library's own extended dtype with type rules (JAX's ``ExtendedDType`` protocol, as
flax's ``fp8_meta32``): conversions to and from its representation type (``to_edtype`` /
``from_edtype``), its tangent dtype, and its own sum of cotangents (the maximum); the same
dtype defined on JAX as the oracle."""
from __future__ import annotations

import dataclasses
import functools

import jax
import jax._src.dtypes as jax_dtypes
import numpy as np
import pytest

import traxla
import traxla._src.dtypes as tx_dtypes


def make_meta_dtype(jx, dtypes):
    lax = jx.lax

    class MetaRules:
        @staticmethod
        def physical_element_aval(dtype):
            return jx.ShapeDtypeStruct((), dtype.float_dtype)

        @staticmethod
        def convert_from(meta, other):
            return meta.float_dtype == other

        @staticmethod
        def convert_to(other, meta):
            return meta.float_dtype == other

        @staticmethod
        def add(dt, x, y):  # cotangents accumulate by their maximum
            to_f = functools.partial(lax.convert_element_type, new_dtype=dt.float_dtype)
            return lax.convert_element_type(lax.max(to_f(x), to_f(y)), dt)

        @staticmethod
        def zero(dt):
            return lax.convert_element_type(np.array(-np.inf, dt.float_dtype), dt)

        @staticmethod
        def tangent_dtype(dtype):
            return dtype

        @staticmethod
        def full(shape, fill_value, dtype):
            fill = lax.convert_element_type(fill_value, dtype.float_dtype)
            return lax.convert_element_type(lax.full(shape, fill, dtype.float_dtype), dtype)

    if jx is jax:  # JAX's eager results of the dtype (traxla's Array holds them itself)
        def global_sharded_result_handler(aval, out_sharding, committed):
            from jax._src import core, earray
            from jax._src.interpreters import pxla
            phys = pxla.global_result_handlers[core.ShapedArray](
                core.physical_aval(aval), out_sharding, committed)
            return lambda bufs: earray.EArray(aval, phys(bufs))

        MetaRules.global_sharded_result_handler = staticmethod(global_sharded_result_handler)

    class meta_scalar(dtypes.extended):
        pass

    @dataclasses.dataclass(frozen=True)
    class MetaDType(dtypes.ExtendedDType):
        float_dtype: object
        _rules: type = MetaRules
        type: type = meta_scalar

        def __repr__(self):
            return "meta32"

        name = property(__repr__)

    return MetaDType(np.dtype(np.float32))


META = {"jax": (jax, make_meta_dtype(jax, jax_dtypes)),
        "traxla": (traxla, make_meta_dtype(traxla, tx_dtypes))}


def program(name):
    """grad of a function whose extended-dtype input is used twice: the custom_vjp's
    backward pass gives it the cotangents 2 and 3, which its rules sum as max(2, 3)."""
    jx, meta = META[name]
    lax, jnp = jx.lax, jx.numpy

    @jx.custom_vjp
    def use(x, m):
        return x

    use.defvjp(lambda x, m: (x, None),
               lambda _, g: (g, lax.convert_element_type(g, meta)))

    def outer(x, a):
        m = lax.convert_element_type(a, meta)
        return use(x, m) * 2.0 + use(x, m) * 3.0

    return jx.grad(outer, (0, 1)), jx.typeof(lax.convert_element_type(jnp.float32(1.0), meta))


@pytest.mark.parametrize("jit", [False, True])
def test_cotangents_accumulate_by_the_dtypes_rules(jit):
    # (JAX's own eager grad of this program fails inside JAX: its jitted one is the oracle)
    want = [np.asarray(g) for g in jax.jit(program("jax")[0])(np.float32(1.0), np.float32(0.5))]
    f = program("traxla")[0]
    f = traxla.jit(f) if jit else f
    got = [np.asarray(g) for g in f(np.float32(1.0), np.float32(0.5))]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, [5.0, 3.0])  # a sum for x, the maximum for a


def test_vmap_matches_jax():
    outs = []
    for name in ("jax", "traxla"):
        jx, meta = META[name]
        lax = jx.lax

        def f(x):  # to the dtype, its maximum with itself (its rules' add), and back
            m = lax.convert_element_type(x, meta)
            return lax.convert_element_type(meta._rules.add(meta, m, m), np.float32) + 1.0

        outs.append(np.asarray(jx.jit(jx.vmap(f))(np.arange(6.0, dtype=np.float32))))
    np.testing.assert_array_equal(outs[1], outs[0])


def test_typeof_and_round_trip():
    _, typ = program("traxla")
    assert (str(typ), typ.shape) == (str(program("jax")[1]), ())
    jx, meta = META["traxla"]
    x = traxla.numpy.arange(3.0)
    m = jx.jit(lambda x: jx.lax.convert_element_type(x, meta))(x)
    assert m.dtype == meta and m.shape == (3,)
    np.testing.assert_array_equal(jx.lax.convert_element_type(m, np.float32), [0.0, 1.0, 2.0])
    from traxla._src.earray import EArray
    assert isinstance(m, EArray) and not isinstance(x, EArray)
    again = EArray(jx.typeof(m), x)
    np.testing.assert_array_equal(jx.lax.convert_element_type(again, np.float32), x)


@pytest.mark.parametrize("src, dst", [(np.int32, "meta"), ("meta", np.int32)])
def test_refused_conversions_match_jax(src, dst):
    msgs = []
    for name in ("jax", "traxla"):
        jx, meta = META[name]
        s, d = (meta if t == "meta" else t for t in (src, dst))
        x = jx.numpy.zeros((2,), np.float32 if s is meta else s)
        if s is meta:
            x = jx.lax.convert_element_type(x, meta)
        with pytest.raises(ValueError) as e:
            jx.jit(lambda x: jx.lax.convert_element_type(x, d))(x)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_primal_tangent_dtype():
    # jax.experimental.primal_tangent_dtype: stored as int8, its tangents are float32
    seen = {}
    for name, jx in (("jax", jax), ("traxla", traxla)):
        from importlib import import_module
        exp = import_module(jx.__name__ + ".experimental")
        dt = exp.primal_tangent_dtype(np.int8, np.float32)
        out = seen[name] = [str(dt), dt == exp.primal_tangent_dtype(np.int8, np.float32),
                            bool(jx.dtypes.issubdtype(dt, jx.dtypes.extended)),
                            str(exp.primal_tangent_dtype(np.int8, np.float32, name="q8"))]

        def h(x, dt=dt, jx=jx):
            y = jx.lax.convert_element_type(x, dt)
            _, vjp = jx.vjp(lambda y: y, y)
            ct, = vjp(np.float32(2.0))
            return jx.lax.convert_element_type(y, np.int8), ct

        outs = jx.jit(h)(np.int8(3))
        out += [(str(o.dtype), o.tolist()) for o in map(np.asarray, outs)]
        out.append(str(jx.make_jaxpr(h)(np.int8(3))))
    assert seen["jax"] == seen["traxla"]

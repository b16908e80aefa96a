"""The ``lax`` names of issue #12 that are not transformations: ``mulhi``, ``reduce_xor``,
``rng_bit_generator`` (vmapped too), ``rng_uniform``, ``broadcast_shapes``,
``DotAlgorithmPreset``, ``reduce_precision`` and ``optimization_barrier`` (with their
derivatives), ``map`` (with ``batch_size``), ``associative_scan``, ``platform_dependent`` and
``composite``: printed jaxprs, values and error messages compared with JAX 0.10.2's."""
from __future__ import annotations

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import lax as tlax

jax = pytest.importorskip("jax")
import jax.numpy as jnp_  # noqa: E402
from jax import lax as jlax  # noqa: E402


def _show(fn):
    try:
        return str(fn())
    except Exception as e:  # noqa: BLE001 - the error class and message are compared
        return f"ERR {type(e).__name__} {e}"


def make_cases(ns, jnp, lax):
    """name -> thunk; the ``str`` of each result (or its error) is compared."""
    x = np.arange(6, dtype=np.uint32).reshape(2, 3)
    return {
        "mulhi": lambda: ns.make_jaxpr(lambda a: lax.mulhi(a, a * 3))(x),
        "mulhi_lit": lambda: ns.make_jaxpr(lambda a: lax.mulhi(a, 5))(np.int32(3)),
        "mulhi_val": (
            lambda: (lax.mulhi(np.uint32(4000000000), np.uint32(3)), lax.mulhi(np.int32(-5), np.int32(1 << 30)))),
        "reduce_xor": lambda: ns.make_jaxpr(lambda a: lax.reduce_xor(a, (1,)))(x),
        "reduce_xor_val": lambda: lax.reduce_xor(x, (0, 1)),
        "rbg": (
            lambda: ns.make_jaxpr(lambda k: lax.rng_bit_generator(k, (2, 3)))(np.zeros(4, np.uint32))),
        "rbg8": (
            lambda: ns.make_jaxpr(lambda k: lax.rng_bit_generator(k, (2, 3), np.uint8, algorithm=lax.RandomAlgorithm.RNG_PHILOX))(np.zeros(4, np.uint32))),
        "rbg_val": lambda: lax.rng_bit_generator(np.zeros(4, np.uint32), (2, 3)),
        "rbg_val16": lambda: lax.rng_bit_generator(np.arange(4, dtype=np.uint32), (5,), np.uint16),
        "rbg_vmap": (
            lambda: ns.vmap(lambda k: lax.rng_bit_generator(k, (3,)))(np.arange(8, dtype=np.uint32).reshape(2, 4))),
        "rbg_bad": lambda: lax.rng_bit_generator(np.zeros(4, np.uint32), (2,), np.int32),
        "rng_uniform": lambda: ns.make_jaxpr(lambda a, b: lax.rng_uniform(a, b, (3,)))(0.0, 1.0),
        "rng_uniform_shape": lambda: lax.rng_uniform(0., 1., (3,)).shape,
        "bshapes": (
            lambda: (lax.broadcast_shapes((2, 1), (1, 3)), lax.broadcast_shapes((3,), (2, 1)), lax.broadcast_shapes((2,), (2,)))),
        "bshapes_err": lambda: lax.broadcast_shapes((2,), (3,)),
        "preset": (
            lambda: (list(lax.DotAlgorithmPreset)[:3], str(lax.DotAlgorithmPreset.F32_F32_F32))),
        "rp": (
            lambda: ns.make_jaxpr(lambda a: ns.grad(lambda z: lax.reduce_precision(z, 5, 10) * 2.0)(a))(1.0)),
        "rp_val": lambda: lax.reduce_precision(np.float32(1.0001), 5, 10),
        "barrier": (
            lambda: ns.make_jaxpr(lambda a: lax.optimization_barrier((a, a * 2)))(np.ones(3, np.float32))),
        "barrier_grad": (
            lambda: ns.make_jaxpr(ns.grad(lambda a: jnp.sum(lax.optimization_barrier(a * 2) ** 2)))(np.ones(3, np.float32))),
        "barrier_val": (
            lambda: ns.grad(lambda a: jnp.sum(lax.optimization_barrier(a * 2) ** 2))(np.ones(3, np.float32))),
        "map": lambda: ns.make_jaxpr(lambda a: lax.map(jnp.sin, a))(np.ones((4, 2), np.float32)),
        "map_bs": (
            lambda: ns.make_jaxpr(lambda a: lax.map(lambda r: jnp.sum(r), a, batch_size=3))(np.ones((7, 2), np.float32))),
        "map_bs_val": lambda: ns.jit(lambda m: lax.map(lambda r: jnp.sum(r * r), m, batch_size=3))(
            np.arange(14, dtype=np.float32).reshape(7, 2)),
        "map_bs_even": (
            lambda: lax.map(lambda r: r * 2, np.arange(6, dtype=np.float32), batch_size=2)),
        "map_bs_big": (
            lambda: lax.map(lambda r: r * 2, np.arange(3, dtype=np.float32), batch_size=5)),
        "ascan": (
            lambda: ns.make_jaxpr(lambda a: lax.associative_scan(jnp.add, a))(np.arange(5, dtype=np.float32))),
        "ascan_val": lambda: ns.jit(lambda a, b: (
            lax.associative_scan(jnp.add, a), lax.associative_scan(jnp.add, b, reverse=True)))(
                np.arange(7), np.arange(4)),
        "ascan_mat": lambda: ns.jit(lambda m: lax.associative_scan(jnp.matmul, m))(
            np.arange(16, dtype=np.float32).reshape(4, 2, 2) / 10),
        "ascan_axis": lambda: ns.jit(lambda m: lax.associative_scan(jnp.maximum, m, axis=1))(
            np.array([[3, 1, 4], [1, 5, 9]])),
        "ascan_tree": lambda: ns.jit(lambda t: lax.associative_scan(
            lambda a, b: (a[0] + b[0], a[1] * b[1]), t))((np.arange(4.0), np.arange(1.0, 5.0))),
        "ascan_err": lambda: lax.associative_scan(jnp.add, (np.arange(4), np.arange(3))),
        "pd": lambda: lax.platform_dependent(1.0, cpu=jnp.sin, default=jnp.cos),
        "pd_jit": (
            lambda: ns.jit(lambda a: lax.platform_dependent(a, tpu=jnp.sin, default=jnp.cos))(1.0)),
        "pd_gpu": lambda: lax.platform_dependent(1.0, gpu=jnp.sin),
        "composite": (
            lambda: ns.make_jaxpr(lambda a: lax.composite(lambda x, y=2.0: jnp.sin(x) * y, name="my.op")(a, y=3.0))(1.0)),
        "composite_val": (
            lambda: ns.jit(lambda a: lax.composite(lambda x, y=2.0: jnp.sin(x) * y, name="my.op")(a, y=3.0))(1.0)),
        "composite_grad": (
            lambda: ns.grad(lambda a: lax.composite(lambda x: jnp.sin(x), name="my.op")(a))(1.0)),
        "composite_text": (
            lambda: "stablehlo.composite \"my.op\"" in ns.jit(lambda a: lax.composite(lambda x: jnp.sin(x), name="my.op", version=2)(a)).lower(1.0).as_text()),
        "stack": lambda: ns.make_jaxpr(lambda a, b: lax.stack([a, b], axis=1))(
            np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)),
        "unstack": lambda: (ns.make_jaxpr(lambda a: lax.unstack(a, axis=1))(
            np.ones((2, 3), np.float32)), type(lax.unstack(np.ones((2, 3), np.float32)))),
        "stack_grad": lambda: ns.make_jaxpr(ns.grad(lambda a: jnp.sum(lax.stack([a, a * 2])[1])))(
            np.ones((2,), np.float32)),
        "precision": lambda: [ns.make_jaxpr(lambda a: lax.dot(a, a, precision=p))(
            np.ones((2, 2), np.float32)) for p in (lax.Precision.HIGHEST, "highest",
                                                   (lax.Precision.HIGH, lax.Precision.DEFAULT),
                                                   ("float32", "bfloat16"), "F32_F32_F32",
                                                   lax.DotAlgorithmPreset.BF16_BF16_F32)],
        "precision_enum": lambda: (list(lax.Precision), lax.Precision("tensorfloat32"),
                                   str(lax.Precision.HIGH), lax.Precision.HIGHEST.value),
        "precision_bad": lambda: ns.make_jaxpr(lambda a: lax.dot(a, a, precision="max"))(
            np.ones((2, 2), np.float32)),
    }


# XLA's RngUniform has no specified algorithm: only its shape is compared (above)
_JAX = make_cases(jax, jnp_, jlax)
_TRAXLA = make_cases(traxla, tnp, tlax)


@pytest.mark.parametrize("name", list(_JAX))
def test_matches_jax(name, jax_side):
    assert _show(_TRAXLA[name]) == jax_side(lambda: _show(_JAX[name]))


def test_rng_uniform_range_and_batching():
    u = np.asarray(tlax.rng_uniform(np.float32(2.0), np.float32(3.0), (64,)))
    assert u.dtype == np.float32 and ((u >= 2.0) & (u < 3.0)).all()
    lo = np.array([0.0, 10.0], np.float32)
    v = np.asarray(traxla.vmap(lambda a: tlax.rng_uniform(a, a + 1.0, (5,)))(lo))
    assert v.shape == (2, 5) and (v[1] >= 10.0).all() and (v[0] < 1.0).all()

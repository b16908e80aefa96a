"""High-level types (``jax.experimental.hijax.HiType``, the page ``hijax_types.md``): the
same quantized-array type and ``VJPHiPrimitive``s defined on JAX and on traxla give the
same jaxprs (one variable of the type, ``b:q8[2,3]``), values under jit (a ``QArray``
argument, result and intermediate), gradients with respect to a ``QArray`` argument (of
its tangent type), scans carrying and stacking ``QArray``s, and ``shard_map`` with a
``HiPspec``; and the same errors where the page shows them. JAX's side is stored (tests/_jax_stored.py)."""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.experimental.hijax as jax_hjx
import numpy as np
import pytest

import traxla
import traxla.experimental.hijax as tx_hjx


def make(jx, hjx):
    jnp = jx.numpy

    @dataclass(frozen=True)
    class QArray:
        qvalue: object
        scale: object

    @dataclass(frozen=True)
    class QArrayTy(hjx.HiType):
        shape: tuple
        sharding: object

        def lo_ty(self):
            scale_sharding = self.sharding.update(spec=jx.P(*self.sharding.spec[:-1]))
            return [hjx.ShapedArray(self.shape, jnp.dtype("int8"), sharding=self.sharding),
                    hjx.ShapedArray(self.shape[:-1], jnp.dtype("float32"),
                                    sharding=scale_sharding)]

        def lower_val(self, q):
            return [q.qvalue, q.scale]

        def raise_val(self, qvalue, scale):
            return QArray(qvalue, scale)

        def to_tangent_aval(self):
            return hjx.ShapedArray(self.shape, jnp.dtype("float32"), sharding=self.sharding)

        def str_short(self, short_dtypes=False, mesh_axis_types=False):
            dims = [str(d) if p is None else f"{d}@{p}"
                    for d, p in zip(self.shape, self.sharding.spec)]
            return f"q8[{','.join(dims)}]"

        __repr__ = str_short

        # shard_map's per-device and global types (JAX asks for them; traxla reads each
        # device's block type off the arrays)
        def shard(self, mesh, manual_axes, check_vma, spec):
            t = self.lo_ty()[0].shard(mesh, manual_axes, check_vma, spec.to_lo()[0])
            return QArrayTy(t.shape, t.sharding)

        def unshard(self, mesh, check_vma, spec):
            t = self.lo_ty()[0].unshard(mesh, check_vma, spec.to_lo()[0])
            return QArrayTy(t.shape, t.sharding)

    hjx.register_hitype(QArray, lambda q: QArrayTy(q.qvalue.shape,
                                                   jx.typeof(q.qvalue).sharding))

    class Quantize(hjx.VJPHiPrimitive):
        def __init__(self, x_aval):
            self.in_avals = (x_aval,)
            self.out_aval = QArrayTy(x_aval.shape, x_aval.sharding)
            self.params = {}
            super().__init__()

        def expand(self, x):
            scale = jnp.max(jnp.abs(x), axis=-1) / 127.
            return QArray(jnp.round(x / scale[..., None]).astype(jnp.int8), scale)

        def vjp_fwd(self, nzs_in, x):
            return self(x), None

        def vjp_bwd_retval(self, _res, g):
            return (g,)

    class Dequantize(hjx.VJPHiPrimitive):
        def __init__(self, q_aval):
            self.in_avals = (q_aval,)
            self.out_aval = hjx.ShapedArray(q_aval.shape, jnp.dtype("float32"),
                                            sharding=q_aval.sharding)
            self.params = {}
            super().__init__()

        def expand(self, qx):
            return qx.qvalue.astype("float32") * qx.scale[..., None]

        def vjp_fwd(self, nzs_in, qx):
            return self(qx), None

        def vjp_bwd_retval(self, _res, g):
            return (g,)

    @dataclass(frozen=True)
    class QArrayP(hjx.HiPspec):
        spec: object

        def to_lo(self):
            return (self.spec, self.spec)

    def quantize(x):
        return Quantize(jx.typeof(x))(x)

    def dequantize(qx):
        return Dequantize(jx.typeof(qx))(qx)

    return QArray, QArrayP, quantize, dequantize


LIBS = {"jax": (jax, jax_hjx), "traxla": (traxla, tx_hjx)}
_made: dict = {}


def lib(name):
    if name not in _made:
        _made[name] = (LIBS[name][0],) + make(*LIBS[name])
    return _made[name]


X = np.array([[1., 2., 3.], [4., -5., 6.]], np.float32)
XS = np.arange(24., dtype=np.float32).reshape(4, 2, 3)


def _run_both(jax_side, fn):
    """JAX's results (stored: tests/_jax_stored.py), then traxla's."""
    return jax_side(lambda: fn(*lib("jax"))), fn(*lib("traxla"))


def test_jaxprs_stage_the_high_level_type(jax_side):
    def fn(jx, QArray, QArrayP, quantize, dequantize):
        qx = quantize(X)
        return (str(jx.jit(lambda x: dequantize(quantize(x))).trace(X).jaxpr),
                str(jx.jit(dequantize).trace(qx).jaxpr),
                str(jx.make_jaxpr(lambda: dequantize(qx))()))
    want, got = _run_both(jax_side, fn)
    assert got == want
    assert "b:q8[2,3] = call_hi_primitive[_prim=Quantize[{}]] a" in got[0]


def test_jit_takes_returns_and_makes_high_level_values(jax_side):
    def fn(jx, QArray, QArrayP, quantize, dequantize):
        qx2 = jx.jit(quantize)(X)
        return (np.asarray(jx.jit(lambda x: dequantize(quantize(x)))(X)), str(jx.typeof(qx2)),
                type(qx2).__name__, np.asarray(qx2.qvalue), np.asarray(qx2.scale),
                np.asarray(jx.jit(dequantize)(qx2)))
    want, got = _run_both(jax_side, fn)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_jit_errors_as_the_page_shows():
    _, QArray, _, quantize, _ = lib("traxla")
    qx = quantize(X)
    with pytest.raises(AttributeError, match="^DynamicJaxprTracer has no attribute qvalue"):
        traxla.jit(lambda q: q.qvalue)(qx)

    def bad_quantize(x):  # the value class built on tracers by hand: no constant handler
        scale = traxla.numpy.max(traxla.numpy.abs(x), axis=-1) / 127.
        return QArray(traxla.numpy.round(x / scale[..., None]).astype("int8"), scale)
    with pytest.raises(TypeError, match="No constant handler for type: .*DynamicJaxprTracer"):
        traxla.jit(bad_quantize)(X)


def test_grad_with_respect_to_a_high_level_argument(jax_side):
    def fn(jx, QArray, QArrayP, quantize, dequantize):
        jnp = jx.numpy
        qx = quantize(X)
        g = jx.grad(lambda q: jnp.sum(dequantize(q) ** 2))(qx)
        g2 = jx.grad(lambda x: jnp.sum(dequantize(quantize(x))))(X)
        return np.asarray(g), str(jx.typeof(g)), np.asarray(g2)
    want, got = _run_both(jax_side, fn)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert got[1] == want[1] == "float32[2,3]"
    np.testing.assert_array_equal(got[2], want[2])


def test_scan_carries_and_stacks_high_level_values(jax_side):
    def fn(jx, QArray, QArrayP, quantize, dequantize):
        jnp = jx.numpy

        def step(qtotal, x):
            return quantize(dequantize(qtotal) + x), quantize(2 * x)
        qtotal, qys = jx.lax.scan(step, quantize(jnp.zeros((2, 3), "float32")), XS)
        return (str(jx.typeof(qtotal)), str(jx.typeof(qys)), np.asarray(dequantize(qtotal)),
                np.asarray(qys.qvalue), np.asarray(qys.scale))
    want, got = _run_both(jax_side, fn)
    assert got[:2] == want[:2] == ("q8[2,3]", "q8[4,2,3]")
    for w, g in zip(want[2:], got[2:]):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_scan_over_high_level_values_inside_jit_is_refused():
    tx, _, _, quantize, dequantize = lib("traxla")
    qzero = quantize(np.zeros((2, 3), np.float32))

    def f(xs):
        return tx.lax.scan(lambda q, x: (quantize(dequantize(q) + x), ()), qzero, xs)[0]
    with pytest.raises(NotImplementedError, match="lax.scan with high-level"):
        tx.jit(f)(XS)


def test_shard_map_with_a_high_level_partition_spec(jax_side):
    def fn(jx, QArray, QArrayP, quantize, dequantize):
        mesh = jx.make_mesh((1,), ("i",))
        P = jx.P
        rows = jx.device_put(XS.reshape(8, 3), jx.NamedSharding(mesh, P("i")))
        qrows = jx.jit(jx.shard_map(quantize, mesh=mesh, in_specs=P("i"),
                                    out_specs=QArrayP(P("i"))))(rows)
        back = jx.jit(jx.shard_map(dequantize, mesh=mesh, in_specs=QArrayP(P("i")),
                                   out_specs=P("i")))(qrows)
        # (on a 1-device mesh traxla's results read back P(None, ...) as their .sharding,
        # for any shard_map: their types say how they are split)
        return (str(jx.typeof(qrows)), str(jx.typeof(qrows.qvalue)),
                str(jx.typeof(qrows.scale)), np.asarray(qrows.qvalue), np.asarray(back))
    want, got = _run_both(jax_side, fn)
    assert got[:3] == want[:3]
    for w, g in zip(want[3:], got[3:]):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_nested_jits_loops_conds_and_eval_shape(jax_side):
    def fn(jx, QArray, QArrayP, quantize, dequantize):
        jnp, lax = jx.numpy, jx.lax
        qx = quantize(X)
        nested = jx.make_jaxpr(lambda q: jx.jit(dequantize)(q))(qx)
        roundtrip = jx.jit(lambda x: dequantize(quantize(x)))
        grad_of_jit = jx.grad(lambda x: jnp.sum(roundtrip(x) ** 2))(X)
        loop = jx.jit(lambda x: lax.fori_loop(0, 2, lambda i, c: c + roundtrip(c), x))(X)
        branch = lax.cond(True, quantize, lambda x: quantize(2 * x), X)
        return (str(nested), np.asarray(grad_of_jit), np.asarray(loop),
                str(jx.typeof(branch)), np.asarray(lax.cond(False, dequantize, dequantize, qx)),
                str(jx.eval_shape(quantize, X)), str(jx.eval_shape(dequantize, qx)))
    want, got = _run_both(jax_side, fn)
    for w, g in zip(want, got):
        if isinstance(w, str):
            assert g == w
        else:
            np.testing.assert_allclose(g, w, rtol=1e-6)
    assert want[5:] == ("q8[2,3]", "ShapeDtypeStruct(shape=(2, 3), dtype=float32)")


def test_shard_map_over_high_level_values_closing_over_a_tracer_is_refused():
    tx, _, QArrayP, quantize, dequantize = lib("traxla")
    mesh = tx.make_mesh((1,), ("i",))
    rows = tx.device_put(XS.reshape(8, 3), tx.NamedSharding(mesh, tx.P("i")))
    qrows = quantize(rows)

    def f(w):
        return tx.shard_map(lambda q: dequantize(q) * w, mesh=mesh, in_specs=QArrayP(tx.P("i")),
                            out_specs=tx.P("i"))(qrows)
    with pytest.raises(NotImplementedError, match="closes over traced values"):
        tx.jit(f)(2.0)

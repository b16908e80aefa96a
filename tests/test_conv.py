"""conv_general_dilated (issue #14): numerics against a direct-loop reference over random
layouts, strides, dilations, paddings and groups; gradients against finite differences;
vmap against stacking; jaxprs against JAX; trace-time errors."""
from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest

import _conv_reference as ref
import traxla
import traxla.lax as tlax

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

SPATIAL = "HWD"


@contextlib.contextmanager
def x64():
    old = traxla.config.read("enable_x64")
    traxla.config.update("enable_x64", True)
    try:
        yield
    finally:
        traxla.config.update("enable_x64", old)


def _layouts(draw, nsp):
    chars = SPATIAL[:nsp]
    perm = lambda s: "".join(draw(st.permutations(list(s))))  # noqa: E731
    return perm("NC" + chars), perm("OI" + chars), perm("NC" + chars)


@st.composite
def conv_cases(draw):
    nsp = draw(st.integers(1, 3))
    groups = draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    fgc, bgc = groups
    n = draw(st.integers(1, 2)) * bgc
    cin = draw(st.integers(1, 2)) * fgc
    cout = draw(st.integers(1, 2)) * max(fgc, bgc)
    spatial = [draw(st.integers(3, 6 if nsp < 3 else 4)) for _ in range(nsp)]
    kernel = [draw(st.integers(1, 3)) for _ in range(nsp)]
    strides = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    lhs_dil = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    rhs_dil = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    padding = draw(st.sampled_from(["pairs", "SAME", "VALID", "SAME_LOWER"]))
    if padding == "pairs" or any(d != 1 for d in lhs_dil):
        padding = tuple((draw(st.integers(-1, 2)), draw(st.integers(0, 2))) for _ in range(nsp))
    layouts = _layouts(draw, nsp)
    dtype = draw(st.sampled_from([np.float32, np.float64, np.complex64]))
    return dict(n=n, cin=cin, cout=cout, spatial=spatial, kernel=kernel, strides=strides,
                lhs_dil=lhs_dil, rhs_dil=rhs_dil, padding=padding, layouts=layouts,
                fgc=fgc, bgc=bgc, dtype=dtype)


def _operands(case, rng):
    lhs_l, rhs_l, _ = case["layouts"]
    nsp = len(case["spatial"])
    sizes_l = dict(N=case["n"], C=case["cin"], **dict(zip(SPATIAL, case["spatial"])))
    sizes_r = dict(O=case["cout"], I=case["cin"] // case["fgc"],
                   **dict(zip(SPATIAL, case["kernel"])))
    shape_l = tuple(sizes_l[c] for c in lhs_l)
    shape_r = tuple(sizes_r[c] for c in rhs_l)
    dt = case["dtype"]

    def draw(shape):
        x = rng.standard_normal(shape)
        if np.issubdtype(dt, np.complexfloating):
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dt)
    assert len(shape_l) == nsp + 2
    return draw(shape_l), draw(shape_r)


@hypothesis.settings(max_examples=12, deadline=None)
@hypothesis.given(conv_cases(), st.integers(0, 2**31 - 1))
def test_conv_matches_direct_loop_reference(case, seed):
    lhs, rhs = _operands(case, np.random.default_rng(seed))
    with x64():
        out = tlax.conv_general_dilated(
            lhs, rhs, case["strides"], case["padding"], case["lhs_dil"], case["rhs_dil"],
            case["layouts"], feature_group_count=case["fgc"], batch_group_count=case["bgc"])
        dn = tlax.conv_dimension_numbers(lhs.shape, rhs.shape, case["layouts"])
        padding = case["padding"]
        if isinstance(padding, str):
            rhs_sp = np.take(rhs.shape, dn.rhs_spec)[2:]
            eff = [(k - 1) * d + 1 for k, d in zip(rhs_sp, case["rhs_dil"])]
            padding = tlax.padtype_to_pads(np.take(lhs.shape, dn.lhs_spec)[2:], eff,
                                           case["strides"], padding)
    want = ref.conv(lhs, rhs, case["strides"], padding, case["lhs_dil"], case["rhs_dil"], dn,
                    case["fgc"], case["bgc"])
    assert out.dtype == lhs.dtype
    tol = 1e-4 if case["dtype"] in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(np.asarray(out), want, rtol=tol, atol=tol)


# -- gradients by finite differences (float64) ------------------------------------------------

def _numeric_vjp_check(f, args, rng, eps=1e-6, tol=1e-6):
    """<ct, J v> from jvp and from finite differences, and <vjp(ct), v> equal to it."""
    out, vjp = traxla.vjp(f, *args)
    ct = rng.standard_normal(np.shape(out))
    grads = vjp(ct)
    for i, a in enumerate(args):
        v = rng.standard_normal(a.shape)
        plus = list(args)
        minus = list(args)
        plus[i] = a + eps * v
        minus[i] = a - eps * v
        fd = (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)
        _, tangent = traxla.jvp(f, tuple(args), tuple(
            v if j == i else np.zeros_like(b) for j, b in enumerate(args)))
        np.testing.assert_allclose(np.asarray(tangent), fd, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.vdot(np.asarray(grads[i]), v), np.vdot(ct, fd),
                                   rtol=tol, atol=tol)


GRAD_CASES = {
    "plain_nchw": dict(layouts=None, strides=(1, 1), padding="SAME", lhs_dil=(1, 1),
                       rhs_dil=(1, 1), fgc=1, bgc=1),
    "strided_dilated_nhwc": dict(layouts=("NHWC", "HWIO", "NHWC"), strides=(2, 1),
                                 padding=((1, 0), (0, 2)), lhs_dil=(1, 2), rhs_dil=(2, 1),
                                 fgc=1, bgc=1),
    "feature_groups": dict(layouts=None, strides=(1, 2), padding="VALID", lhs_dil=(1, 1),
                           rhs_dil=(1, 2), fgc=2, bgc=1),
    "batch_groups": dict(layouts=("NHWC", "OIHW", "CHWN"), strides=(1, 1), padding="SAME",
                         lhs_dil=(1, 1), rhs_dil=(1, 1), fgc=1, bgc=2),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_conv_gradients_match_finite_differences(name):
    c = GRAD_CASES[name]
    rng = np.random.default_rng(0)
    layouts = c["layouts"] or ("NCHW", "OIHW", "NCHW")
    sizes_l = dict(N=2 * c["bgc"], C=2 * c["fgc"], H=5, W=4)
    sizes_r = dict(O=2 * max(c["fgc"], c["bgc"]), I=2, H=3, W=2)
    lhs = rng.standard_normal(tuple(sizes_l[ch] for ch in layouts[0]))
    rhs = rng.standard_normal(tuple(sizes_r[ch] for ch in layouts[1]))

    def f(x, w):
        return tlax.conv_general_dilated(x, w, c["strides"], c["padding"], c["lhs_dil"],
                                         c["rhs_dil"], c["layouts"], feature_group_count=c["fgc"],
                                         batch_group_count=c["bgc"])
    with x64():
        _numeric_vjp_check(f, (lhs, rhs), rng)


# -- vmap equals stacking ---------------------------------------------------------------------

VMAP_CASES = [(0, 0, 1, 1), (0, None, 1, 1), (None, 0, 1, 1), (1, 0, 2, 1), (0, 1, 1, 2),
              (2, None, 1, 2), (None, 3, 2, 1), (None, 0, 1, 2)]


@pytest.mark.parametrize("lhs_axis,rhs_axis,fgc,bgc", VMAP_CASES)
def test_vmap_conv_equals_stacking(lhs_axis, rhs_axis, fgc, bgc):
    rng = np.random.default_rng(1)
    b = 3
    lhs = rng.standard_normal((2 * bgc, 6, 5, 2 * fgc)).astype(np.float32)  # NHWC
    rhs = rng.standard_normal((2, 2, 2, 2 * max(fgc, bgc))).astype(np.float32)  # HWIO

    def f(x, w):
        return tlax.conv_general_dilated(x, w, (1, 2), "SAME", None, (2, 1),
                                         ("NHWC", "HWIO", "NHWC"), feature_group_count=fgc,
                                         batch_group_count=bgc)
    xs = np.stack([lhs + i for i in range(b)], lhs_axis) if lhs_axis is not None else lhs
    ws = np.stack([rhs * (i + 1) for i in range(b)], rhs_axis) if rhs_axis is not None else rhs
    got = traxla.jit(traxla.vmap(f, in_axes=(lhs_axis, rhs_axis)))(xs, ws)  # one program (eagerly: one per op)
    want = np.stack([np.asarray(f(np.take(xs, i, lhs_axis) if lhs_axis is not None else xs,
                                  np.take(ws, i, rhs_axis) if rhs_axis is not None else ws))
                     for i in range(b)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


# -- wrappers ---------------------------------------------------------------------------------

def test_conv_transpose_is_the_gradient_of_conv():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 8, 6, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")
    y, vjp = traxla.vjp(lambda x: tlax.conv_general_dilated(x, w, (2, 2), "SAME",
                                                            dimension_numbers=dn), x)
    ct = rng.standard_normal(y.shape).astype(np.float32)
    want, = vjp(ct)
    got = tlax.conv_transpose(ct, w, (2, 2), "SAME", dimension_numbers=dn, transpose_kernel=True)
    assert got.shape == x.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)


def test_conv_wrappers_and_patches():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    dn = tlax.conv_dimension_numbers(x.shape, w.shape, None)
    want = ref.conv(x, w, (1, 1), [(0, 0), (0, 0)], (1, 1), (1, 1), dn)
    np.testing.assert_allclose(np.asarray(tlax.conv(x, w, (1, 1), "VALID")), want, rtol=1e-4,
                               atol=1e-4)
    got = tlax.conv_with_general_padding(x, w, (1, 1), [(0, 0), (0, 0)], None, None)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    patches = np.asarray(tlax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID"))
    assert patches.shape == (2, 12, 5, 4)
    # patch feature c * 4 + (i * 2 + j) is x[:, c, h + i, w + j]
    np.testing.assert_allclose(patches[:, 1 * 4 + 3], x[:, 1, 1:, 1:], rtol=0, atol=0)
    assert tlax.conv_general_shape_tuple(x.shape, w.shape, (2, 1), "SAME",
                                         ("NCHW", "OIHW", "NCHW")) == (2, 4, 3, 5)
    assert tlax.conv_shape_tuple(x.shape, w.shape, (1, 1), "VALID") == (2, 4, 5, 4)


def test_precision_enum_and_canonicalization():
    P = tlax.Precision
    assert repr(P.HIGHEST) == "Precision.HIGHEST" and str(P.HIGH) == "HIGH"
    assert P("highest") is P.HIGHEST and P("bfloat16") is P.DEFAULT
    f = lambda x, w: tlax.conv(x, w, (1, 1), "VALID", precision="highest")  # noqa: E731
    text = str(traxla.make_jaxpr(f)(np.ones((1, 1, 3, 3), np.float32),
                                    np.ones((1, 1, 2, 2), np.float32)))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text


# -- errors -----------------------------------------------------------------------------------

def test_conv_errors_are_clear_at_trace_time():
    x = np.ones((1, 2, 5), np.float32)
    w = np.ones((1, 3, 2), np.float32)
    with pytest.raises(ValueError, match=r"lhs feature dimension size divided by "
                                         r"feature_group_count must equal.*2 // 1 != 3"):
        traxla.make_jaxpr(lambda x, w: tlax.conv(x, w, (1,), "VALID"))(x, w)
    with pytest.raises(TypeError, match="same set of spatial characters"):
        tlax.conv_general_dilated(x, np.ones((1, 2, 2), np.float32), (1,), "VALID",
                                  dimension_numbers=("NCX", "OIY", "NCX"))
    with pytest.raises(TypeError, match=r"must contain the characters 'N' and 'C'"):
        tlax.conv_dimension_numbers(x.shape, x.shape, ("NNX", "OIX", "NCX"))
    with pytest.raises(TypeError, match="must have len equal to the ndim"):
        tlax.conv_dimension_numbers(x.shape, x.shape, ("NCHW", "OIH", "NCH"))
    with pytest.raises(ValueError, match="feature_group_count must divide"):
        tlax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=3)
    with pytest.raises(TypeError, match="requires arguments to have the same dtypes"):
        tlax.conv(x, np.ones((1, 2, 2), np.int32), (1,), "VALID")
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        tlax.conv(x, np.ones((1, 2, 2), np.float32), (1,), "FULL")
    with pytest.raises(ValueError, match="String padding is not implemented for transposed"):
        tlax.conv_general_dilated(x, np.ones((1, 2, 2), np.float32), (1,), "SAME", (2,))
    with pytest.raises(TypeError, match="`out_sharding` argument of dot_general only supports"):
        tlax.conv_general_dilated(x, np.ones((1, 2, 2), np.float32), (1,), "VALID",
                                  out_sharding=object())
    # a window larger than the padded input gives an empty result, as in JAX
    out = tlax.conv(x, np.ones((1, 2, 7), np.float32), (1,), "VALID")
    assert out.shape == (1, 1, 0)

"""traxla.random: typed Threefry keys and samplers, bit-exact with JAX.

Every sampler runs under traxla and under JAX (the oracle, default
``jax_threefry_partitionable=True``) on the same seeds, eagerly, under ``jit``
and under ``vmap`` over arrays of keys, and the results must have the same
bits. Also: the article's numbers and jaxpr, key printing, legacy raw keys,
key arrays in structural ops and control flow, errors, and statistical sanity.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import traxla
import traxla.lax as tlax
import traxla.numpy as tnp
from traxla import random

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.random as jr  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
SEEDS = (0, 42, -7)


def assert_same_bits(expected, actual):
    """Equal dtype, shape and bits (floats compared bitwise, NaNs included)."""
    e, a = np.asarray(expected), np.asarray(actual)
    assert a.dtype == e.dtype, (a.dtype, e.dtype)
    assert a.shape == e.shape, (a.shape, e.shape)
    if e.dtype.kind in "fcV" or e.dtype == BF16:
        e, a = np.atleast_1d(e).view(np.uint8), np.atleast_1d(a).view(np.uint8)
    np.testing.assert_array_equal(a, e)


def data(mod, x):
    """Key data for typed keys, the value otherwise (so keys compare as bits)."""
    dt = getattr(x, "dtype", None)
    if dt is not None and "key<" in str(dt):
        return mod.key_data(x)
    return x


# -- 1. the article ---------------------------------------------------------------------

ARTICLE_JAXPR_LINES = [
    "{ lambda ; o:key<fry>[]. let",
    "      name=_normal",
    "      jaxpr={ lambda ; o:key<fry>[]. let",
    "    f:u32[3] = random_bits[bit_width=32 shape=(3,)] a",
    "    g:u32[3] = shift_right_logical f 9:u32[]",
    "    h:u32[3] = or g 1065353216:u32[]",
    "    i:f32[3] = bitcast_convert_type[new_dtype=float32] h",
]


def test_article_values(jax_side):
    key = random.key(0)
    x = random.normal(key, (3,))
    np.testing.assert_allclose(np.asarray(x), [1.6226422, 2.0252647, -0.4335944], rtol=1e-6)
    assert_same_bits(jax_side(lambda: jr.normal(jr.key(0), (3,))), x)  # stored
    assert_same_bits(x, random.normal(key, (3,)))  # same key, same draw
    k1, k2 = random.split(key)
    y = random.normal(k1, (3,))
    np.testing.assert_allclose(np.asarray(y), [1.0040143, -0.9063372, -0.7481722], rtol=1e-6)
    assert_same_bits(jax_side(lambda: jr.normal(jr.split(jr.key(0))[0], (3,))), y)
    assert not np.array_equal(np.asarray(random.normal(k2, (3,))), np.asarray(y))


def test_article_jaxpr_matches_jax():
    got = str(traxla.make_jaxpr(lambda k: random.normal(k, (3,)))(random.key(0)))
    want = str(jax.make_jaxpr(lambda k: jr.normal(k, (3,)))(jr.key(0)))
    assert got == want
    for line in ARTICLE_JAXPR_LINES:
        assert line in got


# Programs whose jaxpr prints exactly as JAX's.
JAXPR_CASES = {
    "key": (lambda R: (lambda: R.key(5)), lambda R: ()),
    "key_arg": (lambda R: (lambda s: R.key(s)), lambda R: (np.int32(3),)),
    "PRNGKey": (lambda R: (lambda s: R.PRNGKey(s)), lambda R: (np.uint8(3),)),
    "bits8": (lambda R: (lambda k: R.bits(k, (5,), np.uint8)), lambda R: (R.key(0),)),
    "uniform": (lambda R: (lambda k: R.uniform(k, (3,))), lambda R: (R.key(0),)),
    "uniform_scalar": (lambda R: (lambda k: R.uniform(k)), lambda R: (R.key(0),)),
    "uniform_bf16": (lambda R: (lambda k: R.uniform(k, (3,), BF16, -2.0, np.float32(3))),
                     lambda R: (R.key(0),)),
    "normal_c64": (lambda R: (lambda k: R.normal(k, (3,), np.complex64)), lambda R: (R.key(0),)),
    "randint_u8": (lambda R: (lambda k: R.randint(k, (3,), 0, 10, np.uint8)),
                   lambda R: (R.key(0),)),
    "bernoulli_high": (lambda R: (lambda k: R.bernoulli(k, 0.3, (3,), mode="high")),
                       lambda R: (R.key(0),)),
    "exponential": (lambda R: (lambda k: R.exponential(k, (3,))), lambda R: (R.key(0),)),
    "gumbel": (lambda R: (lambda k: R.gumbel(k, (3,))), lambda R: (R.key(0),)),
    "gumbel_high": (lambda R: (lambda k: R.gumbel(k, (3,), mode="high")), lambda R: (R.key(0),)),
    "laplace": (lambda R: (lambda k: R.laplace(k, (3,))), lambda R: (R.key(0),)),
    "logistic": (lambda R: (lambda k: R.logistic(k, (3,))), lambda R: (R.key(0),)),
    "truncated_normal": (lambda R: (lambda k: R.truncated_normal(k, -1., 1., (3,))),
                         lambda R: (R.key(0),)),
    "split10": (lambda R: (lambda k: R.split(k, 10)), lambda R: (R.key(0),)),
    "split_index": (lambda R: (lambda k: R.split(k)[0]), lambda R: (R.key(0),)),
    "fold_in": (lambda R: (lambda k: R.fold_in(k, 3)), lambda R: (R.key(0),)),
    "key_data": (lambda R: (lambda k: R.key_data(k)), lambda R: (R.key(0),)),
    "wrap_key_data": (lambda R: (lambda d: R.wrap_key_data(d)),
                      lambda R: (np.zeros(2, np.uint32),)),
    "legacy_split": (lambda R: (lambda k: R.split(k)), lambda R: (R.PRNGKey(0),)),
    "legacy_normal": (lambda R: (lambda k: R.normal(k, (3,))), lambda R: (R.PRNGKey(0),)),
    "categorical": (lambda R: (lambda k: R.categorical(k, np.zeros(3, np.float32))),
                    lambda R: (R.key(0),)),
    "permutation": (lambda R: (lambda k: R.permutation(k, 5)), lambda R: (R.key(0),)),
    "vmap_normal": (lambda R: _vmap(R)(lambda k: R.normal(k, (3,))),
                    lambda R: (R.split(R.key(0), 4),)),
    "vmap_fold_in": (lambda R: _vmap(R)(lambda k, d: R.fold_in(k, d)),
                     lambda R: (R.split(R.key(0), 4), np.arange(4, dtype=np.uint32))),
}


def _vmap(R):
    return jax.vmap if R is jr else traxla.vmap


def _make_jaxpr(R):
    return jax.make_jaxpr if R is jr else traxla.make_jaxpr


# Known differences that are not in traxla.random (xfail, strict: they flip when fixed).
JAXPR_KNOWN: dict[str, str] = {}
JAXPR_CASES["split"] = (lambda R: (lambda k: R.split(k)), lambda R: (R.key(0),))
JAXPR_CASES["randint"] = (lambda R: (lambda k: R.randint(k, (3,), 0, 10)), lambda R: (R.key(0),))


@pytest.mark.parametrize("name", sorted(JAXPR_CASES))
def test_jaxpr_matches_jax(name, request):
    if name in JAXPR_KNOWN:
        request.applymarker(pytest.mark.xfail(reason=JAXPR_KNOWN[name], strict=True))
    make, args = JAXPR_CASES[name]
    want = str(_make_jaxpr(jr)(make(jr))(*args(jr)))
    got = str(_make_jaxpr(random)(make(random))(*args(random)))
    assert got == want


# -- 2. bit-exactness ---------------------------------------------------------------------

P4 = np.array([0.125, 0.25, 0.5, 0.125], np.float32)  # dyadic: every cumsum order is exact
A34 = np.arange(12, dtype=np.float32).reshape(3, 4)
LOGITS = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))

SAMPLERS = {
    "bits_u32": lambda R, k: R.bits(k, (4, 3)),
    "bits_u8": lambda R, k: R.bits(k, (5,), np.uint8),
    "bits_u16": lambda R, k: R.bits(k, (2, 3), np.uint16),
    "bits_scalar": lambda R, k: R.bits(k),
    "uniform": lambda R, k: R.uniform(k, (7,)),
    "uniform_scalar": lambda R, k: R.uniform(k),
    "uniform_bf16": lambda R, k: R.uniform(k, (6,), BF16),
    "uniform_f16_range": lambda R, k: R.uniform(k, (2, 3), np.float16, -2., 3.),
    "uniform_array_bounds": lambda R, k: R.uniform(
        k, (2, 3), minval=np.array([0., 1., 2.], np.float32), maxval=5.),
    "normal": lambda R, k: R.normal(k, (2, 3)),
    "normal_f16": lambda R, k: R.normal(k, (5,), np.float16),
    "normal_bf16": lambda R, k: R.normal(k, (5,), BF16),
    "normal_c64": lambda R, k: R.normal(k, (3,), np.complex64),
    "randint": lambda R, k: R.randint(k, (6,), -100, 7),
    "randint_u8_full": lambda R, k: R.randint(k, (6,), 0, 256, np.uint8),
    "randint_i8": lambda R, k: R.randint(k, (6,), -5, 5, np.int8),
    "randint_array_bounds": lambda R, k: R.randint(
        k, (2, 3), np.array([0, 10, 20], np.int32), np.array([5, 15, 1000], np.int32)),
    "randint_empty_range": lambda R, k: R.randint(k, (4,), 5, 3),
    "bernoulli": lambda R, k: R.bernoulli(k, 0.3, (8,)),
    "bernoulli_high": lambda R, k: R.bernoulli(k, 0.3, (8,), mode="high"),
    "bernoulli_p_array": lambda R, k: R.bernoulli(k, np.array([0.1, 0.5, 0.9], np.float32)),
    "exponential": lambda R, k: R.exponential(k, (5,)),
    "exponential_f16": lambda R, k: R.exponential(k, (5,), np.float16),
    "gumbel": lambda R, k: R.gumbel(k, (5,)),
    "gumbel_high": lambda R, k: R.gumbel(k, (5,), mode="high"),
    "gumbel_bf16": lambda R, k: R.gumbel(k, (5,), BF16),
    "laplace": lambda R, k: R.laplace(k, (5,)),
    "laplace_bf16": lambda R, k: R.laplace(k, (5,), BF16),
    "logistic": lambda R, k: R.logistic(k, (5,)),
    "logistic_f16": lambda R, k: R.logistic(k, (5,), np.float16),
    "truncated_normal": lambda R, k: R.truncated_normal(k, -1., 2., (5,)),
    "truncated_normal_bounds": lambda R, k: R.truncated_normal(
        k, np.array([-1., 0., 1.], np.float32), 3.),
    "truncated_normal_f16": lambda R, k: R.truncated_normal(k, -0.5, 0.5, (4,), np.float16),
    "categorical": lambda R, k: R.categorical(k, LOGITS[0]),
    "categorical_batched": lambda R, k: R.categorical(k, LOGITS, shape=(5, 2)),
    "categorical_axis0": lambda R, k: R.categorical(k, LOGITS, axis=0),
    "categorical_no_replace": lambda R, k: R.categorical(
        k, np.zeros((2, 5), np.float32), shape=(3, 2), replace=False),
    "choice_int": lambda R, k: R.choice(k, 10, (4,)),
    "choice_array": lambda R, k: R.choice(k, A34, (5,)),
    "choice_axis1": lambda R, k: R.choice(k, A34, (2, 2), axis=1),
    "choice_no_replace": lambda R, k: R.choice(k, 10, (4,), replace=False),
    "choice_no_replace_array": lambda R, k: R.choice(k, A34, (2,), replace=False),
    "choice_p": lambda R, k: R.choice(k, 4, (6,), p=P4),
    "choice_p_array": lambda R, k: R.choice(k, A34, (6,), p=np.array([.25, .25, .5], np.float32)),
    "choice_p_no_replace": lambda R, k: R.choice(k, 4, (3,), replace=False, p=P4),
    "permutation_int": lambda R, k: R.permutation(k, 10),
    "permutation_array": lambda R, k: R.permutation(k, np.arange(7, dtype=np.float32)),
    "permutation_2d": lambda R, k: R.permutation(k, A34),
    "permutation_axis1": lambda R, k: R.permutation(k, A34, axis=1),
    "permutation_independent": lambda R, k: R.permutation(k, A34, axis=1, independent=True),
    "permutation_two_rounds": lambda R, k: R.permutation(k, 2000),
    "split": lambda R, k: R.split(k, 3),
    "split_shape": lambda R, k: R.split(k, (2, 3)),
    "split_then_draw": lambda R, k: R.uniform(R.split(k)[1], (2,)),
    "fold_in": lambda R, k: R.fold_in(k, 7),
    "fold_in_large": lambda R, k: R.fold_in(k, 2 ** 31 + 5),
    "fold_in_then_split": lambda R, k: R.split(R.fold_in(k, 1), 4),
    "key_data": lambda R, k: R.key_data(k),
}
# Not compared under vmap (one vmapped program each is plenty for these families).
NO_VMAP = {"permutation_two_rounds"}


def _keys(R, seeds=SEEDS):
    return [R.key(s) for s in seeds]


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_bit_exact_eager(name, jax_side):
    f = SAMPLERS[name]
    wants = jax_side(lambda: [data(jr, f(jr, jk)) for jk in _keys(jr)])
    for want, tk in zip(wants, _keys(random), strict=True):
        assert_same_bits(want, data(random, f(random, tk)))


def _all_samplers(R, names):
    """One function drawing every sampler in ``names`` from one key: {name: draw}."""
    return lambda k: {n: data(R, SAMPLERS[n](R, k)) for n in names}


def assert_all_same_bits(wants: dict, gots: dict):
    """``assert_same_bits`` per sampler, every failure reported by name."""
    assert sorted(gots) == sorted(wants)
    bad = []
    for n in sorted(wants):
        try:
            assert_same_bits(wants[n], gots[n])
        except AssertionError as e:
            bad.append(f"{n}: {e}")
    assert not bad, "\n".join(bad)


def test_bit_exact_jit(jax_side):
    """Every sampler under ``jit``, all in one program (one compile; XLA compiling Threefry
    is most of this file's time), called on two keys."""
    names = sorted(SAMPLERS)

    def theirs():
        jf = jax.jit(_all_samplers(jr, names))
        return [jf(jk) for jk in _keys(jr, SEEDS[:2])]
    tf = traxla.jit(_all_samplers(random, names))
    for want, tk in zip(jax_side(theirs), _keys(random, SEEDS[:2]), strict=True):
        assert_all_same_bits(want, tf(tk))


# vmap'ed eagerly one by one: the samplers whose work outside a jitted helper runs as eager
# primitives under vmap (key splitting and folding, indexing keys, Python-level glue). A
# jitted helper vmapped eagerly is its batched jit equation compiled: every sampler is also
# vmapped in the one program of test_bit_exact_jit_of_vmap.
EAGER_VMAP = ["bits_scalar", "uniform_scalar", "randint_u8_full", "bernoulli_p_array",
              "categorical", "choice_p_array", "choice_no_replace", "split", "split_shape",
              "split_then_draw", "fold_in", "fold_in_large", "fold_in_then_split", "key_data"]


@pytest.mark.parametrize("name", EAGER_VMAP)
def test_bit_exact_vmap_over_keys(name, jax_side):
    f = SAMPLERS[name]
    tks = random.split(random.key(11), 3)
    want = jax_side(lambda: jax.vmap(lambda k: data(jr, f(jr, k)))(jr.split(jr.key(11), 3)))
    got = traxla.vmap(lambda k: data(random, f(random, k)))(tks)
    assert_same_bits(want, got)


def test_bit_exact_jit_of_vmap(jax_side):
    """Every sampler vmapped over four keys, under one ``jit`` (one program)."""
    names = sorted(set(SAMPLERS) - NO_VMAP)
    tks = random.split(random.key(3), 4)
    want = jax_side(lambda: jax.jit(jax.vmap(_all_samplers(jr, names)))(jr.split(jr.key(3), 4)))
    got = traxla.jit(traxla.vmap(_all_samplers(random, names)))(tks)
    assert_all_same_bits(want, got)


LEGACY = ["normal", "uniform_bf16", "randint", "choice_no_replace", "split", "fold_in",
          "split_then_draw", "bits_u8"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_raw_keys(name, jax_side):
    """uint32[2] keys from PRNGKey work everywhere; split/fold_in return raw keys."""
    f = SAMPLERS[name]
    wants = jax_side(lambda: [f(jr, jr.PRNGKey(s)) for s in SEEDS])
    for s, want in zip(SEEDS, wants, strict=True):
        got = f(random, random.PRNGKey(s))
        if name in ("split", "fold_in"):
            assert np.asarray(got).dtype == np.uint32
        assert_same_bits(want, got)


def test_legacy_vmap_over_raw_keys(jax_side):
    want = jax_side(lambda: jax.vmap(lambda k: jr.normal(k, (3,)))(jr.split(jr.PRNGKey(5), 3)))
    got = traxla.vmap(lambda k: random.normal(k, (3,)))(random.split(random.PRNGKey(5), 3))
    assert_same_bits(want, got)


@pytest.mark.parametrize("seed", [0, 1, -1, 2 ** 31 - 1, 2 ** 32 + 5, np.int8(-3), np.uint8(200),
                                  np.uint32(3_000_000_000), True])
def test_seeds(seed, jax_side):
    want_data, want_key = jax_side(lambda: (jr.key_data(jr.key(seed)), jr.PRNGKey(seed)))
    assert_same_bits(want_data, random.key_data(random.key(seed)))
    assert_same_bits(want_key, random.PRNGKey(seed))


def test_seed_under_jit_and_vmap(jax_side):
    seeds = np.array([0, 1, -5, 123456], np.int32)
    assert_same_bits(jax_side(lambda: jax.vmap(lambda s: jr.key_data(jr.key(s)))(seeds)),
                     traxla.vmap(lambda s: random.key_data(random.key(s)))(seeds))
    assert_same_bits(jax_side(lambda: jax.jit(lambda s: jr.PRNGKey(s))(np.int32(-9))),
                     traxla.jit(lambda s: random.PRNGKey(s))(np.int32(-9)))


def test_wrap_key_data_round_trip_and_vmap(jax_side):
    raw = np.array([[1, 2], [3, 4], [5, 6]], np.uint32)
    keys = random.wrap_key_data(raw)
    assert str(traxla.typeof(keys)) == "key<fry>[3]"
    np.testing.assert_array_equal(np.asarray(random.key_data(keys)), raw)
    assert_same_bits(jax_side(lambda: jr.uniform(jr.wrap_key_data(raw[1]), (4,))),
                     random.uniform(random.wrap_key_data(raw[1]), (4,)))
    got = traxla.vmap(lambda d: random.normal(random.wrap_key_data(d), (2,)), in_axes=1)(raw.T)
    want = jax_side(lambda: jax.vmap(lambda d: jr.normal(jr.wrap_key_data(d), (2,)),
                                     in_axes=1)(raw.T))
    assert_same_bits(want, got)


def test_threefry_known_answers(jax_side):
    """Random123's Threefry-2x32 (20 rounds) test vectors, as JAX checks them."""
    cases = [((0x0, 0x0), (0x0, 0x0), (0x6B200159, 0x99BA4EFE)),
             ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
             ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]
    for key, count, expected in cases:
        k = [np.uint32(v) for v in key]
        out = random.threefry_2x32(k, np.array(count, np.uint32))
        np.testing.assert_array_equal(np.asarray(out), np.array(expected, np.uint32))
    # odd sizes are padded as JAX pads them
    from jax._src.random.threefry2x32 import threefry_2x32 as jax_threefry
    count = np.arange(7, dtype=np.uint32).reshape(7)
    k = (np.uint32(12), np.uint32(34))
    assert_same_bits(jax_side(lambda: jax_threefry(k, count)), random.threefry_2x32(k, count))


def test_x64_mode(jax_side):
    """With x64 on: 64-bit seeds, float64/uint64/int64 samplers."""
    cases = [lambda R: R.key_data(R.key(2 ** 40 + 7)), lambda R: R.key_data(R.key(-5)),
             lambda R: R.bits(R.key(1), (5,)), lambda R: R.uniform(R.key(1), (5,)),
             lambda R: R.normal(R.key(2), (5,)),
             lambda R: R.randint(R.key(3), (5,), -2 ** 40, 2 ** 41)]

    def theirs():
        jax.config.update("jax_enable_x64", True)
        try:
            return [np.asarray(f(jr)) for f in cases]
        finally:
            jax.config.update("jax_enable_x64", False)
    wants = jax_side(theirs)
    with traxla.config.flag("enable_x64", True):
        for i, (f, want) in enumerate(zip(cases, wants, strict=True)):
            got = f(random)
            assert i < 2 or np.asarray(got).dtype.itemsize == 8
            assert_same_bits(want, got)


# -- keys as values -----------------------------------------------------------------------

def test_key_printing_and_typeof():
    k = random.key(0)
    assert str(traxla.typeof(k)) == "key<fry>[]"
    assert str(k.dtype) == "key<fry>" and k.shape == () and k.ndim == 0
    assert str(traxla.typeof(random.split(k, 3))) == "key<fry>[3]"
    assert repr(k) == repr(jr.key(0))
    assert repr(random.split(k)) == repr(jr.split(jr.key(0)))
    assert random.key_impl(k) == "threefry2x32"
    assert str(traxla.make_jaxpr(random.key_data)(k)) == \
        "{ lambda ; a:key<fry>[]. let b:u32[2] = random_unwrap a in (b,) }"
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)


STRUCTURAL = [lambda M, x: x.T, lambda M, x: x[1, ::2], lambda M, x: x[:, 1:3][::-1],
              lambda M, x: M.stack([x[0], x[2]]), lambda M, x: M.concatenate([x, x], axis=1),
              lambda M, x: M.where(np.array([True, False, True, False]), x[0], x[1]),
              lambda M, x: M.broadcast_to(x[0, 0], (2, 3)), lambda M, x: x.reshape(12),
              lambda M, x: x[np.array([[2, 0], [1, 1]], np.int32)]]  # gather
STRUCTURAL_JIT = [lambda L, x, i: x[i], lambda L, x, i: x[0][i],
                  lambda L, x, i: L.dynamic_update_slice(x, x[:1], (i, 0))]


def _structural(R, M, L, jit, vmap):
    ks, i = R.split(R.key(0), 12).reshape(3, 4), np.int32(2)
    out = [R.key_data(f(M, ks)) for f in STRUCTURAL]
    out += [jit(lambda x, i, f=f: R.key_data(f(L, x, i)))(ks, i) for f in STRUCTURAL_JIT]
    a, b = R.split(R.key(1))  # iteration of a key array
    out.append(R.key_data(b))
    out.append(vmap(vmap(lambda k: R.uniform(k, (2,))), in_axes=1)(ks))
    return out


def test_key_arrays_in_structural_ops(jax_side):
    wants = jax_side(lambda: _structural(jr, jnp, jax.lax, jax.jit, jax.vmap))
    gots = _structural(random, tnp, tlax, traxla.jit, traxla.vmap)
    for want, got in zip(wants, gots, strict=True):
        assert_same_bits(want, got)


def test_keys_through_jit_and_control_flow(jax_side):
    def body(R, lax):
        def f(k):
            def step(k, _):
                k, sub = R.split(k)
                return k, R.normal(sub, (2,))
            k, ys = lax.scan(step, k, None, length=4)
            k = lax.fori_loop(0, 3, lambda i, k: R.fold_in(k, i), k)
            return R.key_data(k), ys
        return f
    want = jax_side(lambda: jax.jit(body(jr, jax.lax))(jr.key(1)))  # stored
    got = traxla.jit(body(random, tlax))(random.key(1))
    assert_same_bits(want[0], got[0])
    assert_same_bits(want[1], got[1])
    split_jit = traxla.jit(random.split, static_argnums=1)
    keys = split_jit(random.key(4), 3)  # keys come back from a jit as key arrays
    assert str(traxla.typeof(keys)) == "key<fry>[3]"
    assert_same_bits(jax_side(lambda: jr.key_data(jr.split(jr.key(4), 3))),
                     random.key_data(keys))


def test_gradients_through_samplers(jax_side):
    def f(R):
        return lambda lo, x: (R.uniform(R.key(0), (3,), minval=lo, maxval=2.) * x).sum()
    x = np.array([1., 2., 3.], np.float32)
    want = jax_side(lambda: jax.grad(f(jr), argnums=(0, 1))(0.5, x))  # stored
    got = traxla.grad(f(random), argnums=(0, 1))(0.5, x)
    for w, g in zip(want, got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    want = jax_side(lambda: jax.jvp(lambda s: jr.normal(jr.key(1), (2,)) * s, (1.5,), (1.0,)))
    got = traxla.jvp(lambda s: random.normal(random.key(1), (2,)) * s, (1.5,), (1.0,))
    assert_same_bits(want[0], got[0])
    assert_same_bits(want[1], got[1])


# -- errors ---------------------------------------------------------------------------------

ERRORS = [
    (lambda: random.normal(tnp.zeros(3, np.uint32)), TypeError,
     r"invalid PRNG key data: expected key_data.shape to end with \(2,\); got shape=\(3,\)"),
    (lambda: random.normal(tnp.zeros(2, np.float32)), TypeError,
     "expected key_data.dtype = uint32; got dtype=float32"),
    (lambda: random.normal("abc"), TypeError, "expected key_data to have ndim, shape, and dtype"),
    (lambda: random.normal(random.split(random.key(0))), ValueError,
     r"normal accepts a single key, but was given a key array of shape \(2,\) != \(\)\. Use "
     "jax.vmap for batching"),
    (lambda: random.split(random.split(random.key(0))), ValueError, "split accepts a single key"),
    (lambda: random.key(tnp.zeros(2, np.int32)), TypeError, "key accepts a scalar seed"),
    (lambda: random.key(random.key(0)), TypeError, "was given a PRNG key"),
    (lambda: random.key(1.5), TypeError, "PRNG key seed must be an integer"),
    (lambda: random.wrap_key_data(random.key(0)), TypeError, "expected key_data.ndim >= 1"),
    (lambda: random.wrap_key_data(tnp.zeros((3, 2), np.int32)), TypeError,
     "expected key_data.dtype = uint32; got dtype=int32"),
    (lambda: random.uniform(random.key(0), (3,), np.int32), ValueError,
     "dtype argument to `uniform` must be a float dtype, got int32"),
    (lambda: random.normal(random.key(0), (3,), np.int32), ValueError,
     "must be a float or complex dtype"),
    (lambda: random.bits(random.key(0), (3,), np.float32), ValueError, "unsigned int dtype"),
    (lambda: random.randint(random.key(0), (3,), 0, 5, np.float32), TypeError,
     "randint only accepts integer dtypes"),
    (lambda: random.randint(random.key(0), (3,), tnp.zeros(4, np.int32), 5), ValueError,
     "Incompatible shapes for broadcasting"),
    (lambda: random.bernoulli(random.key(0), tnp.full((3,), 0.5), (2,)), ValueError,
     "Incompatible shapes for broadcasting"),
    (lambda: random.bernoulli(random.key(0), 1), TypeError, "must have a floating dtype"),
    (lambda: random.bernoulli(random.key(0), mode="x"), ValueError, "expected 'high' or 'low'"),
    (lambda: random.fold_in(random.key(0), tnp.arange(3)), TypeError, "fold_in accepts a scalar"),
    (lambda: random.normal(random.key(0), (2.5,)), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type"),
    (lambda: random.choice(random.key(0), 3, (5,), replace=False), ValueError,
     "Cannot take a larger sample"),
    (lambda: random.choice(random.key(0), 3, (2,), p=tnp.ones(4) / 4), ValueError,
     "p must be None or a 1D vector"),
    (lambda: random.choice(random.key(0), 3, 2), TypeError, "must be a sequence"),
    (lambda: random.permutation(random.key(0), 2.5), TypeError, "x must be an integer"),
    (lambda: random.gumbel(random.key(0), mode="x"), ValueError, "valid mode for gumbel"),
    (lambda: random.key(0, impl="philox"), ValueError, "unrecognized PRNG implementation"),
    (lambda: random.random_bits_p.bind(np.zeros(2, np.uint32), bit_width=32, shape=(2,)),
     TypeError, "random_bits takes a key array operand"),
    (lambda: random.random_unwrap(np.zeros(2, np.uint32)), TypeError,
     "random_unwrap takes key array operand"),
    (lambda: traxla.jit(lambda k: random.random_split_p.bind(random.key_data(k), shape=(2,)))(
        random.key(0)), TypeError, "random_split takes a key array operand"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, match = ERRORS[i]
    with pytest.raises(exc, match=match):
        fn()


def test_raw_key_data_required_to_be_uint32_pairs_under_jit():
    with pytest.raises(TypeError, match="expected key_data.shape to end with"):
        traxla.jit(lambda k: random.uniform(k))(np.zeros(3, np.uint32))


# -- 3. statistics --------------------------------------------------------------------------

N = 200_000


def _moments(x):
    x = np.asarray(x, np.float64)
    return x.mean(), x.var()


def _check_moments(x, mean, var, k=6.0, var_tol=0.03):
    """Sample mean within k standard errors; variance within ``var_tol`` (relative)."""
    m, v = _moments(x)
    assert abs(m - mean) < k * math.sqrt(var / x.size), (m, mean)
    assert abs(v - var) < var_tol * var, (v, var)


EULER = 0.5772156649015329
TN_VAR = 1 - 2 * math.exp(-0.5) / (math.sqrt(2 * math.pi) * math.erf(1 / math.sqrt(2)))
STATS = {
    "uniform": (lambda k: random.uniform(k, (N,)), 0.5, 1 / 12),
    "uniform_range": (lambda k: random.uniform(k, (N,), minval=-2., maxval=4.), 1.0, 3.0),
    # bf16 draws are multiples of 2**-7 in [0, 1)
    "uniform_bf16": (lambda k: random.uniform(k, (N,), BF16).astype(np.float32),
                     0.5 - 2 ** -8, (1 - 2 ** -14) / 12),
    "normal": (lambda k: random.normal(k, (N,)), 0.0, 1.0),
    "normal_f16": (lambda k: random.normal(k, (N,), np.float16).astype(np.float32), 0.0, 1.0),
    "exponential": (lambda k: random.exponential(k, (N,)), 1.0, 1.0),
    "gumbel": (lambda k: random.gumbel(k, (N,)), EULER, math.pi ** 2 / 6),
    "laplace": (lambda k: random.laplace(k, (N,)), 0.0, 2.0),
    "logistic": (lambda k: random.logistic(k, (N,)), 0.0, math.pi ** 2 / 3),
    "truncated_normal": (lambda k: random.truncated_normal(k, -1., 1., (N,)), 0.0, TN_VAR),
    "bernoulli": (lambda k: random.bernoulli(k, 0.3, (N,)), 0.3, 0.21),
    "randint": (lambda k: random.randint(k, (N,), -3, 7), 1.5, (10 ** 2 - 1) / 12),
    "randint_u8": (lambda k: random.randint(k, (N,), 0, 256, np.uint8), 127.5, (256 ** 2 - 1) / 12),
    "bits_u8": (lambda k: random.bits(k, (N,), np.uint8), 127.5, (256 ** 2 - 1) / 12),
    "bits_u32": (lambda k: random.bits(k, (N,)) / 2.0 ** 32, 0.5, 1 / 12),
    "choice": (lambda k: random.choice(k, 5, (N,)), 2.0, 2.0),
    "categorical": (lambda k: random.categorical(k, np.log(np.array([.2, .3, .5], np.float32)),
                                                 shape=(N,)), 1.3, 0.61),
    "choice_p": (lambda k: random.choice(k, 4, (N,), p=P4), 1.625, 0.734375),
}


def test_statistics():
    """Every sampler's moments; all drawn in one jitted program (one compile, not 18)."""
    draws = traxla.jit(lambda k: {n: f(k) for n, (f, _, _) in STATS.items()})(random.key(2024))
    bad = []
    for name in sorted(STATS):
        _, mean, var = STATS[name]
        x = np.asarray(draws[name])
        try:
            assert np.all(np.isfinite(x.astype(np.float64)))
            _check_moments(x, mean, var)
        except AssertionError as e:
            bad.append(f"{name}: {e!r}")
    assert not bad, "\n".join(bad)


def test_support_and_ranges():
    """Drawn in one jitted program (one compile, not 12: each sampler is checked eagerly in
    test_bit_exact_eager)."""
    def _support_draws(k):
        return {"u": random.uniform(k, (N,), minval=-1., maxval=1.),
                "t": random.truncated_normal(k, -0.5, 2., (N,)),
                "r": random.randint(k, (N,), -5, 5, np.int8),
                "e": random.exponential(k, (N,)),
                "choice_p": random.choice(k, 4, (N,), p=P4),
                "categorical": random.categorical(k, np.log(P4), shape=(N,))}
    d = {n: np.asarray(x) for n, x in traxla.jit(_support_draws)(random.key(9)).items()}
    u = d["u"]
    assert u.min() >= -1 and u.max() < 1
    t = d["t"]
    assert t.min() > -0.5 and t.max() < 2.
    r = d["r"]
    assert r.dtype == np.int8 and r.min() == -5 and r.max() == 4
    assert np.all(d["e"] >= 0)
    counts = np.bincount(d["choice_p"], minlength=4) / N
    np.testing.assert_allclose(counts, P4, atol=0.01)
    counts = np.bincount(d["categorical"], minlength=4) / N
    np.testing.assert_allclose(counts, P4, atol=0.01)


def test_permutations_and_choices_without_replacement():
    """Drawn in one jitted program (one compile, not 9)."""
    def _without_replacement(k):
        return {"p": random.permutation(k, 1000),
                "perms": traxla.vmap(lambda k: random.permutation(k, 8))(random.split(k, 4000)),
                "c50": random.choice(k, 50, (20,), replace=False),
                "c4": random.choice(k, 4, (4,), replace=False, p=P4)}
    d = {n: np.asarray(x) for n, x in traxla.jit(_without_replacement)(random.key(5)).items()}
    p = d["p"]
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    assert not np.array_equal(p, np.arange(1000))
    # each position is uniform over values: the mean over many permutations is ~ (n-1)/2
    perms = d["perms"]
    assert perms.shape == (4000, 8)
    assert np.all(np.sort(perms, axis=1) == np.arange(8))
    np.testing.assert_allclose(perms.mean(axis=0), 3.5, atol=0.15)
    c = d["c50"]
    assert len(set(c.tolist())) == 20 and c.min() >= 0 and c.max() < 50
    c = d["c4"]
    np.testing.assert_array_equal(np.sort(c), np.arange(4))


def test_keys_are_independent():
    """Split and fold_in keys are all distinct and their draws uncorrelated (one jitted
    program, one compile, not 6)."""
    def _independent(k):
        keys = random.split(k, 1000)
        return {"d": random.key_data(keys),
                "folded": traxla.vmap(lambda i: random.key_data(random.fold_in(k, i)))(
                    np.arange(1000, dtype=np.uint32)),
                "x": traxla.vmap(lambda k: random.normal(k, (200,)))(keys[:2]),
                "scalars": traxla.vmap(lambda k: random.normal(k))(keys)}
    d = {n: np.asarray(x) for n, x in traxla.jit(_independent)(random.key(0)).items()}
    assert d["d"].shape == (1000, 2)
    assert len({tuple(r) for r in d["d"].tolist()}) == 1000
    assert d["folded"].shape == (1000, 2)
    assert len({tuple(r) for r in d["folded"].tolist()}) == 1000
    x = d["x"]
    assert abs(np.corrcoef(x[0], x[1])[0, 1]) < 0.3
    _check_moments(d["scalars"], 0.0, 1.0, var_tol=0.2)


def test_binomial_with_python_scalar_arguments_matches_jax(jax_side):
    # a Python float probability is a folded constant inside binomial's jit: its dtype comes
    # from the aval (this raised AttributeError: 'Literal' object has no attribute 'dtype').
    # JAX's side is stored (tests/_jax_stored.py): each call compiles a program, seconds each.
    for n, p, shape in ((30., 0.4, (3,)), (5, 0.9, None), (12., 0.25, (2, 2))):
        ours = traxla.random.binomial(traxla.random.key(0), n, p, shape)
        theirs = jax_side(lambda: jax.random.binomial(jax.random.key(0), n, p, shape))
        np.testing.assert_array_equal(np.asarray(ours), theirs)
        assert np.asarray(ours).dtype == theirs.dtype

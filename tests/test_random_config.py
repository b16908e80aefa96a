"""JAX's PRNG configuration states against JAX: ``threefry_partitionable`` (the Threefry
key derivation), ``legacy_prng_key`` and ``enable_custom_prng`` (raw uint32 keys)."""
import warnings

import jax
import jax.random as jr
import numpy as np
import pytest

import traxla
import traxla.random as tr


def _np(x, mod):
    if "key" in str(x.dtype):
        x = mod.random.key_data(x)
    return np.asarray(x)


def _same(f, flag, value, *args, jax_side=None):
    """``f`` under JAX and under traxla with ``flag`` set to ``value``: equal bits (JAX's
    side stored when the test passes its ``jax_side``)."""
    def theirs():
        with getattr(jax, flag)(value):
            return _np(f(jax, jr, *args), jax)
    a = jax_side(theirs) if jax_side is not None else theirs()
    with getattr(traxla, flag)(value):
        b = f(traxla, tr, *args)
    b = _np(b, traxla)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


SAMPLERS = {
    "bits8": lambda m, R, s: R.bits(R.key(1), s, "uint8"),
    "bits16": lambda m, R, s: R.bits(R.key(2), s, "uint16"),
    "bits32": lambda m, R, s: R.bits(R.key(3), s),
    "uniform": lambda m, R, s: R.uniform(R.PRNGKey(4), s),
    "normal": lambda m, R, s: R.normal(R.key(5), s),
    "randint": lambda m, R, s: R.randint(R.key(6), s, -5, 9),
    "split": lambda m, R, s: R.split(R.key(7), s),
    "split_raw": lambda m, R, s: R.split(R.PRNGKey(8), 5),
    "fold_in": lambda m, R, s: R.fold_in(R.key(9), 17),
    "jit_normal": lambda m, R, s: m.jit(lambda k: R.normal(k, s))(R.key(10)),
    "vmap_uniform": lambda m, R, s: m.vmap(lambda k: R.uniform(k, s))(R.split(R.key(11), 3)),
    "jit_vmap_bits": lambda m, R, s: m.jit(m.vmap(lambda k: R.bits(k, s, "uint8")))(
        R.split(R.key(12), 2)),
    "vmap_split": lambda m, R, s: m.vmap(lambda k: R.split(k, 3))(R.split(R.key(13), 2)),
}


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("shape", [(), (3,), (2, 5)])
@pytest.mark.parametrize("name", list(SAMPLERS))
def test_threefry_partitionable_bits_match_jax(name, shape, value, jax_side):
    _same(SAMPLERS[name], "threefry_partitionable", value, shape, jax_side=jax_side)


@pytest.mark.parametrize("value", [True, False])
def test_threefry_partitionable_64_bits(value, jax_side):
    with jax.enable_x64(True), traxla.enable_x64(True):
        for shape in [(), (3,), (2, 3)]:
            _same(lambda m, R, s: R.bits(R.key(1), s, "uint64"), "threefry_partitionable",
                  value, shape, jax_side=jax_side)
            _same(lambda m, R, s: R.uniform(R.key(2), s, "float64"), "threefry_partitionable",
                  value, shape, jax_side=jax_side)


def test_threefry_partitionable_values_differ_and_default():
    assert traxla.threefry_partitionable.value is True == jax.threefry_partitionable.value
    with traxla.threefry_partitionable(False):
        a = np.asarray(tr.bits(tr.key(0), (4,)))
        assert traxla.threefry_partitionable.value is False
    b = np.asarray(tr.bits(tr.key(0), (4,)))
    assert not (a == b).all()


def test_threefry_partitionable_keys_jit_and_eager_caches(jax_side):
    f = traxla.jit(lambda k: tr.bits(k, (4,)))
    key = tr.key(0)
    on = np.asarray(f(key))
    with traxla.threefry_partitionable(False):
        off = np.asarray(f(key))
        eager_off = np.asarray(tr.key_data(tr.split(key, 3)))

    def theirs():  # stored (tests/_jax_stored.py)
        with jax.threefry_partitionable(False):
            off = (jr.bits(jr.key(0), (4,)), jr.key_data(jr.split(jr.key(0), 3)))
        return off + (jr.bits(jr.key(0), (4,)), jr.key_data(jr.split(jr.key(0), 3)))
    want_off, want_split_off, want_on, want_split_on = jax_side(theirs)
    np.testing.assert_array_equal(off, want_off)
    np.testing.assert_array_equal(eager_off, want_split_off)
    np.testing.assert_array_equal(on, want_on)
    np.testing.assert_array_equal(np.asarray(tr.key_data(tr.split(key, 3))), want_split_on)
    traxla.config.update("jax_threefry_partitionable", False)
    try:
        np.testing.assert_array_equal(np.asarray(f(key)), off)
        assert traxla.config.jax_threefry_partitionable is False
    finally:
        traxla.config.update("jax_threefry_partitionable", True)
    np.testing.assert_array_equal(np.asarray(f(key)), on)


def _outcome(mod, R, f):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, err = f(R), None
        except Exception as e:  # noqa: BLE001 - compared with JAX's
            out, err = None, (type(e), str(e))
    out = None if out is None else (str(out.dtype), _np(out, mod).tolist())
    return out, err, [(w.category, str(w.message)) for w in caught]


RAW = {
    "split": lambda R: R.split(R.PRNGKey(0)),
    "uniform": lambda R: R.uniform(R.PRNGKey(0), (2,)),
    "fold_in": lambda R: R.fold_in(R.PRNGKey(0), 3),
    "PRNGKey": lambda R: R.PRNGKey(0),
    "key_data": lambda R: R.key_data(R.PRNGKey(1)),
    "typed": lambda R: R.split(R.key(0)),
}


@pytest.mark.parametrize("flag,value", [("legacy_prng_key", "allow"),
                                        ("legacy_prng_key", "warn"),
                                        ("legacy_prng_key", "error"),
                                        ("enable_custom_prng", False),
                                        ("enable_custom_prng", True)])
@pytest.mark.parametrize("name", list(RAW))
def test_raw_key_flags_match_jax(flag, value, name):
    with getattr(jax, flag)(value):
        expected = _outcome(jax, jr, RAW[name])
    with getattr(traxla, flag)(value):
        got = _outcome(traxla, tr, RAW[name])
    assert got == expected


def test_legacy_prng_key_values_and_errors():
    assert repr(traxla.legacy_prng_key.value) == repr(jax.legacy_prng_key.value)
    with traxla.legacy_prng_key("warn"):
        assert repr(traxla.legacy_prng_key.value) == "<LegacyPrngKeyState.WARN: 'warn'>"
    traxla.config.update("jax_legacy_prng_key", "error")
    try:
        assert repr(traxla.config.jax_legacy_prng_key) == "<LegacyPrngKeyState.ERROR: 'error'>"
        with pytest.raises(ValueError, match="Legacy uint32 key array"):
            tr.normal(tr.PRNGKey(0))
    finally:
        traxla.config.update("jax_legacy_prng_key", "allow")
    for bad in (lambda: traxla.config.update("jax_legacy_prng_key", "bad"),
                lambda: traxla.legacy_prng_key("bad").__enter__()):
        with pytest.raises(ValueError, match="'bad' is not a valid LegacyPrngKeyState"):
            bad()
    with pytest.raises(TypeError, match="requires an argument"):
        traxla.legacy_prng_key()
    tr.normal(tr.PRNGKey(0))


@pytest.mark.parametrize("flag", ["threefry_partitionable", "enable_custom_prng"])
def test_bool_flags_coerce_as_jax(flag):
    state = getattr(traxla, flag)
    old = state.value
    try:
        for value in ["x", None, 0, 1]:
            traxla.config.update("jax_" + flag, value)
            assert state.value is bool(value)
            with state(value):
                assert state.value is bool(value)
    finally:
        traxla.config.update("jax_" + flag, old)


def test_enable_custom_prng_global_update():
    traxla.config.update("jax_enable_custom_prng", True)
    try:
        assert traxla.enable_custom_prng.value is True
        assert str(tr.PRNGKey(0).dtype) == "key<fry>"
    finally:
        traxla.config.update("jax_enable_custom_prng", False)
    assert str(tr.PRNGKey(0).dtype) == "uint32"

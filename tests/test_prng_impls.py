"""User-defined PRNG implementations (``jax.extend.random.define_prng_impl``, JAX's
``prng.PRNGImpl``) against JAX: key arrays carry their implementation, and the key
operations run through its functions (vectorized over the key shape); and JAX's Pallas PRNG
kernels (``jax.experimental.pallas.ops.tpu.random.{philox,threefry}``), whose modules build
such implementations at import, under the drop-in in TPU interpret mode."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import random as trandom
from traxla.extend import random as textend_random

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def toy_impl(jnp, define_prng_impl, tag="toy"):
    """A small PRNG implementation with 3-word keys, written against ``jnp``."""
    def seed(s):
        return jnp.stack([s.astype(jnp.uint32), jnp.uint32(7), (s * 3).astype(jnp.uint32)])

    def split(k, shape):
        n = int(np.prod(shape))
        return (k[None] * jnp.uint32(5) + jnp.arange(n, dtype=jnp.uint32)[:, None]).reshape(
            tuple(shape) + (3,))

    def random_bits(k, bit_width, shape):
        n = int(np.prod(shape))
        x = (k[0] ^ k[2]) * jnp.uint32(2654435761) + jnp.arange(n, dtype=jnp.uint32) * k[1]
        return x.reshape(shape).astype(f"uint{bit_width}")

    def fold_in(k, d):
        return k + d * jnp.uint32(3)

    return define_prng_impl(key_shape=(3,), seed=seed, split=split, random_bits=random_bits,
                            fold_in=fold_in, name=f"{tag}_impl", tag=tag)


def run(jax, jnp, define_prng_impl):
    r = jax.random
    impl = toy_impl(jnp, define_prng_impl)
    k = r.key(5, impl=impl)
    keys = r.split(k, 3)
    out = {
        "dtype": str(k.dtype), "impl": str(r.key_impl(k)), "impl_repr": repr(r.key_impl(k)),
        "data": r.key_data(k), "split": r.key_data(keys),
        "split2": r.key_data(r.split(k, (2, 2))),
        "fold_in": r.key_data(r.fold_in(k, 4)),
        "bits": r.bits(k, (2, 3)), "bits8": r.bits(k, (4,), jnp.uint8),
        "uniform": r.uniform(k, (4,)), "normal": r.normal(keys[1], (3,)),
        "randint": r.randint(k, (5,), 0, 10),
        "jit_vmap": jax.jit(lambda ks: jax.vmap(lambda kk: r.bits(kk, (2,)))(ks))(keys),
        "vmap_fold": r.key_data(jax.vmap(r.fold_in)(keys, jnp.arange(3))),
        "vmap_seed": r.key_data(jax.vmap(lambda s: r.key(s, impl=impl))(jnp.arange(2))),
        "wrap": r.bits(r.wrap_key_data(jnp.array([1, 2, 3], jnp.uint32), impl=impl), (2,)),
        "jaxpr": str(jax.make_jaxpr(lambda kk: r.bits(kk, (2,)))(k)),
    }
    return {n: np.asarray(v) if not isinstance(v, str) else v for n, v in out.items()}


def _jax_run():
    import jax
    import jax.numpy as jnp
    from jax.extend.random import define_prng_impl
    return run(jax, jnp, define_prng_impl)


def test_user_impl_matches_jax(jax_side):
    theirs = jax_side(_jax_run)
    ours = run(traxla, tnp, textend_random.define_prng_impl)
    assert ours.keys() == theirs.keys()
    for name in theirs:
        if isinstance(theirs[name], str):
            assert ours[name] == theirs[name], name
        else:
            assert ours[name].dtype == theirs[name].dtype, name
            np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)


def test_impls_are_values():
    a = toy_impl(tnp, textend_random.define_prng_impl)
    b = toy_impl(tnp, textend_random.define_prng_impl)
    impl = a._impl
    assert a != b and hash(a) == hash(b)  # new functions: another implementation, one tag
    ka, kb = trandom.key(1, impl=a), trandom.key(1, impl=b)
    assert str(ka.dtype) == str(kb.dtype) == "key<toy>" and ka.dtype != kb.dtype
    assert ka.dtype == trandom.key_dtype(a) and trandom.key_impl(ka) == a
    assert impl._fields == ("key_shape", "seed", "split", "random_bits", "fold_in", "name",
                            "tag")
    assert str(impl) == "toy" and impl.pprint().startswith("PRNGImpl [toy] {toy_impl}:")
    # the built-in Threefry implementation's functions on raw key data, as JAX's
    fry = textend_random.threefry_prng_impl
    raw = fry.seed(np.int32(5))
    np.testing.assert_array_equal(fry.split(raw, (2,)),
                                  trandom.key_data(trandom.split(trandom.key(5))))
    np.testing.assert_array_equal(fry.random_bits(raw, 32, (3,)),
                                  trandom.bits(trandom.key(5), (3,)))
    np.testing.assert_array_equal(fry.fold_in(raw, 2),
                                  trandom.key_data(trandom.fold_in(trandom.key(5), 2)))


def test_user_impl_errors():
    bad = textend_random.define_prng_impl(
        key_shape=(2,), seed=lambda s: tnp.zeros((3,), tnp.uint32), split=None,
        random_bits=None, fold_in=None, name="bad")
    with pytest.raises(TypeError, match="seed function of PRNG implementation 'bad' returned "
                                        "uint32\\[3\\]; random_seed needs uint32\\[2\\]"):
        trandom.key(0, impl=bad)
    with pytest.raises(TypeError, match="expected key_data.shape to end with \\(2,\\)"):
        trandom.wrap_key_data(np.zeros(3, np.uint32), impl=bad)
    with pytest.raises(TypeError, match="unrecognized type"):
        trandom.key(0, impl=object())


# JAX's Pallas PRNG kernels: their modules register PRNG implementations at import; the
# kernels run in TPU interpret mode (JAX runs them eagerly; under jit JAX's interpret mode
# fails to lower there, so the comparison is eager).
PALLAS_PRNG = '''
import numpy as np
import jax
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas.ops.tpu.random import philox, threefry

def run():
    out = {}
    r = jax.random
    with pltpu.force_tpu_interpret_mode():
        for name, impl in [("fry", threefry.plthreefry_prng_impl),
                           ("lox", philox.plphilox_prng_impl)]:
            k = r.key(3, impl=impl)
            out[name + "_impl"] = np.frombuffer(str(r.key_impl(k)).encode(), np.uint8)
            out[name + "_split"] = r.key_data(r.split(k, 3))
            out[name + "_fold"] = r.key_data(r.fold_in(k, 7))
            out[name + "_bits"] = r.bits(k, (2, 257))
        out["by_name"] = r.key_data(r.split(r.key(1, impl="pallas_philox4x32")))
    return {k: np.asarray(v) for k, v in out.items()}
'''


def test_pallas_prng_kernels_under_the_drop_in(tmp_path, jax_side):
    script = tmp_path / "prng.py"
    script.write_text(PALLAS_PRNG + "\nnp.savez(%r, **run())\n" % str(tmp_path / "out.npz"))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-m", "traxla.as_jax", str(script)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ours = dict(np.load(tmp_path / "out.npz"))

    def theirs():
        namespace = {}
        exec(compile(PALLAS_PRNG, "<prng>", "exec"), namespace)
        return namespace["run"]()
    want = jax_side(theirs)
    assert sorted(ours) == sorted(want)
    for name, value in want.items():
        np.testing.assert_array_equal(ours[name], value, err_msg=name)


def _prng_kernel(pltpu):
    def kernel(o_ref):
        pltpu.prng_seed(3, 4)
        o_ref[...] = pltpu.prng_random_bits((8, 128)) + 1
    return kernel


def _tpu_prng_outcomes(api, pl, pltpu):
    """The TPU's stateful PRNG in a kernel: TPU interpret mode (given and forced) and the
    generic ``interpret=True``."""
    out = []
    shape = api.ShapeDtypeStruct((8, 128), np.int32)
    for interp in (True, pltpu.InterpretParams()):
        try:
            out.append(np.asarray(pl.pallas_call(_prng_kernel(pltpu), out_shape=shape,
                                                 interpret=interp)()))
        except NotImplementedError as e:
            out.append(str(e))
    with pltpu.force_tpu_interpret_mode():
        out.append(np.asarray(api.jit(pl.pallas_call(_prng_kernel(pltpu), out_shape=shape))()))
    return out


def test_tpu_prng_in_interpret_mode_as_jax(jax_side):
    # JAX's TPU interpret mode does not simulate the core's PRNG: prng_seed does nothing and
    # prng_random_bits gives zeros; interpret=True has no lowering for prng_seed
    from traxla.experimental import pallas as pl
    from traxla.experimental.pallas import tpu as pltpu

    def theirs():
        import jax
        from jax.experimental import pallas as jpl
        from jax.experimental.pallas import tpu as jpltpu
        return _tpu_prng_outcomes(jax, jpl, jpltpu)
    want = jax_side(theirs)
    got = _tpu_prng_outcomes(traxla, pl, pltpu)
    assert got[0] == want[0] and "prng_seed" in got[0]
    for g, w in zip(got[1:], want[1:]):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    with pytest.raises(NotImplementedError, match="stateful PRNG"):
        pltpu.prng_random_bits((8, 128))  # outside interpret mode (a compiled kernel)

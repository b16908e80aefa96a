"""traxla's config knows every option of JAX 0.10.2's, with JAX's defaults, kinds, errors,
``read``/attribute/``values`` behaviour and (where traxla honours it) effect; an option whose
non-default value traxla cannot honour refuses it (issue #41)."""
import json
import os
import subprocess
import sys
import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import traxla
import traxla.numpy as tjnp
from traxla.ir.config import Config, _jax_default
from traxla.ir.config_options import JAX_OPTIONS

_DUMP_JAX_OPTIONS = r"""
import json, jax
from jax._src import config as c
out = []
for k in sorted(jax.config.values):
    t, a, kw = jax.config.meta[k]
    h = jax.config._value_holders[k]
    v, kind, choices = h.value, t if isinstance(t, str) else t.__name__, None
    def takes_none():
        try:
            h._parser(None)
            return True
        except Exception:
            return False
    if kind == 'enum':
        choices = list(kw['enum_values'])
        kind = 'optenum' if takes_none() else 'enum'
    elif kind == 'enum_class':
        choices, v = kw['enum_class'].__name__, v.value
    elif kind == 'str' and isinstance(h, c.State) and takes_none():
        kind = 'optstr'
    out.append([k, kind, v, choices, isinstance(h, c.State)])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def jax_options():
    """JAX's options in a fresh process (this one's may have been updated by other tests),
    stored (JAX is pinned) under the script and the environment's JAX_/XLA_ variables (which
    set defaults): another environment runs JAX live."""
    from _device_scripts import jax_output
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(("JAX_", "XLA_")))

    def run():
        return json.loads(subprocess.run([sys.executable, "-c", _DUMP_JAX_OPTIONS],
                                         capture_output=True, text=True, check=True).stdout)
    rows = jax_output(f"config_as_jax\n{env}\n{_DUMP_JAX_OPTIONS}", run)
    return {row[0]: row[1:] for row in rows}


def test_every_jax_option_with_its_default_kind_and_choices(jax_options):
    ours = {}
    for name, kind, default, choices, is_state, effect in JAX_OPTIONS:
        assert effect in ("traxla", "inert", "unsupported")
        choices = list(choices) if isinstance(choices, tuple) else choices
        if kind in ("device", "pjrt_options"):
            kind = "optstr"
        ours[name] = [kind, default, choices, is_state]
    assert ours == jax_options
    fresh = Config().values  # a new Config: the defaults (and the environment, as JAX)
    for name, row in zip((r[0] for r in JAX_OPTIONS), JAX_OPTIONS):
        assert name in fresh
        assert fresh[name] == _jax_default(row), name
        assert type(fresh[name]).__name__ == type(_jax_default(row)).__name__, name


def _reads(m):
    c, out = m.config, []
    for thunk in (lambda: c.read("jax_enable_x64"), lambda: c.read("jax_numpy_rank_promotion"),
                  lambda: c.read("jax_platform_name"), lambda: c.read("nope"),
                  lambda: c.jax_numpy_rank_promotion,
                  lambda: c.jax_check_tracer_leaks, lambda: c.check_vma, lambda: c.jax_nope,
                  lambda: c.jax_platform_name, lambda: c.update("jax_nope", 1),
                  lambda: c.update("jax_numpy_rank_promotion", "bogus"),
                  lambda: c.update("jax_num_cpu_devices", "2"),
                  lambda: c.update("jax_logging_level", "LOUD"),
                  lambda: c.update("jax_compilation_cache_dir", 3),
                  lambda: c.update("jax_debug_log_modules", None),
                  lambda: c.update("jax_exec_time_optimization_effort", "x"),
                  lambda: c.update("jax_numpy_dtype_promotion", 3),
                  lambda: c.update("jax_explicit_x64_dtypes", "sometimes"),
                  lambda: c.jax_numpy_dtype_promotion, lambda: c.jax_legacy_prng_key,
                  lambda: c.values["jax_explicit_x64_dtypes"],
                  lambda: c.values["jax_send_traceback_to_runtime"]):
        try:
            v = thunk()
            out.append(("ok", type(v).__name__, str(v)))
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


def test_read_attributes_and_errors_as_jax():
    assert _reads(traxla) == _reads(jax)
    # traxla's own keys still read and update (traxla.config.update("enable_x64", ...))
    assert traxla.config.read("numpy_rank_promotion") == "allow"


def test_update_parses_as_jax_and_restores():
    for m in (traxla, jax):
        m.config.update("jax_numpy_dtype_promotion", "strict")
        value = m.config.jax_numpy_dtype_promotion
        m.config.update("jax_numpy_dtype_promotion", "standard")
        assert type(value).__name__ == "NumpyDtypePromotion" and value == "strict"
        m.config.update("jax_log_compiles", 1)  # a bool option takes bool(value), as JAX
        assert m.config.jax_log_compiles is True
        m.config.update("jax_log_compiles", False)


def test_unsupported_values_refused_inert_ones_accepted():
    c = traxla.config
    for name, kind, default, choices, is_state, effect in JAX_OPTIONS:
        if effect == "unsupported":
            other = (not default if kind == "bool" else 7 if kind == "int" else
                     choices[-1] if kind in ("enum", "optenum") else
                     "allow" if kind == "enum_class" else "x")
            with pytest.raises(NotImplementedError, match=name):
                c.update(name, other)
            c.update(name, c.values[name])  # the default is accepted
            assert c.values[name] == _jax_default((name, kind, default, choices, 0, 0))
    c.update("jax_compiler_enable_remat_pass", False)  # inert: accepted, read back
    assert c.jax_compiler_enable_remat_pass is False
    c.update("jax_compiler_enable_remat_pass", True)


def test_environment_as_jax(monkeypatch):
    monkeypatch.setenv("JAX_DEBUG_INFS", "on")
    monkeypatch.setenv("JAX_CAPTURED_CONSTANTS_WARN_BYTES", "12")
    monkeypatch.setenv("JAX_NUMPY_RANK_PROMOTION", "warn")
    values = Config().values
    assert values["jax_debug_infs"] is True
    assert values["jax_captured_constants_warn_bytes"] == 12
    assert values["jax_numpy_rank_promotion"] == "warn"
    monkeypatch.setenv("JAX_DEBUG_INFS", "perhaps")
    with pytest.raises(ValueError, match="invalid truth value 'perhaps' for environment "
                                         "'JAX_DEBUG_INFS'"):
        Config()


def _rank_promotion(m, jnp):
    x, y, out = jnp.ones(3), jnp.ones((2, 3)), []
    for mode in ("raise", "warn", "allow"):
        m.config.update("jax_numpy_rank_promotion", mode)
        jitted = [lambda: m.jit(lambda a, b: a - b)(x, y)] if mode == "raise" else []
        for f in (lambda: x + y, lambda: jnp.maximum(x, y), lambda: x * 2.0,
                  lambda: jnp.where(y > 0, x, y), *jitted):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    out.append(("ok", np.asarray(f()).shape, [str(i.message) for i in w]))
                except ValueError as e:
                    out.append(("ValueError", str(e)))
    with m.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            x + y
    return out


def test_rank_promotion_as_jax():
    try:
        assert _rank_promotion(traxla, tjnp) == _rank_promotion(jax, jjnp)
    finally:
        traxla.config.update("jax_numpy_rank_promotion", "allow")
        jax.config.update("jax_numpy_rank_promotion", "allow")


def test_random_seed_offset_as_jax():
    def keys(m):
        f = m.jit(lambda s: m.random.key_data(m.random.key(s)))
        f(3)
        m.config.update("jax_random_seed_offset", 5)
        try:
            return [np.asarray(m.random.key_data(m.random.PRNGKey(3))).tolist(),
                    np.asarray(f(3)).tolist()]
        finally:
            m.config.update("jax_random_seed_offset", 0)
    assert keys(traxla) == keys(jax) == [[0, 8], [0, 8]]


def test_platform_name_selects_the_default_backend():
    c = traxla.config
    current = traxla.default_backend()
    tjnp.ones(1).block_until_ready()
    c.update("jax_platform_name", current)  # the default backend already: accepted
    c.update("jax_platform_name", "")
    other = "tpu" if current != "tpu" else "cpu"
    with pytest.raises(RuntimeError, match="must run before the first computation"):
        c.update("jax_platform_name", other)
    assert c.values["jax_platform_name"] == ""

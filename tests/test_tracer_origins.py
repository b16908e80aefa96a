"""Traced arrays against JAX 0.10.2: ``to_device`` (a ``device_put`` equation), the
Array methods only materialized arrays have (``devices()``, ``delete()``... raise JAX's
ConcretizationTypeError), and where an error names a BatchTracer's origin ("This
BatchTracer with object id ... was created on line: file:line:col (function)") while
differentiation's tracers name none. Both libraries run the same functions of this file,
so the lines printed are the same; object ids differ and are blanked. The errors run in a
fresh process per library (traxla turns jaxlib's traceback collection off, and JAX's
origin lines read those tracebacks)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from _device_scripts import jax_comparison

import traxla
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
LIBS = {"traxla": (traxla, tnp), "jax": (jax, jnp)}


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, re.sub(r"object id \d+", "object id N", str(e))
    return None


def _to_device_results(lib):
    api, np_ = LIBS[lib]
    d = api.devices()[0]

    def f(x):
        return x.to_device(d) * 2

    jaxpr = str(api.make_jaxpr(f)(np_.ones(3)))
    values = [np.asarray(api.jit(f)(np_.ones(3))), np.asarray(api.vmap(f)(np_.ones((2, 3)))),
              np.asarray(api.grad(lambda x: f(x).sum())(np_.ones(3)))]
    concrete = np_.ones(3).to_device(d)
    stream = _error(lambda: api.jit(lambda x: x.to_device(d, stream=1))(np_.ones(3)))
    return jaxpr, [v.tolist() for v in values], concrete.committed, stream


def test_to_device_on_tracers_and_arrays_as_jax():
    assert _to_device_results("traxla") == _to_device_results("jax")


_SCRIPT = """
import json, re
import {lib} as api
import {lib}.numpy as np_
out = {{}}
def error(key, fn):
    try:
        fn()
        out[key] = None
    except Exception as e:
        out[key] = [type(e).__name__, re.sub(r"object id \\d+", "object id N", str(e))]
# Array methods only materialized arrays have, on a tracer made in the function
for name in ["devices()", "addressable_data(0)", "delete()", "is_deleted()",
             "on_device_size_in_bytes()", "unsafe_buffer_pointer()", "global_shards",
             "is_fully_addressable", "is_fully_replicated", "traceback"]:
    def f(x, name=name):
        y = x * 2
        eval("y." + name)
        return x.sum()
    error("jit " + name, lambda: api.jit(f)(np_.ones(3)))
    error("vmap " + name, lambda: api.vmap(f)(np_.ones((2, 3))))
    error("grad " + name, lambda: api.grad(f)(np_.ones(())))
# conversions of a BatchTracer (and of what wraps one)
def converting(how):
    def f(x):
        y = np_.sin(x) if how != "bool" else x > 0
        if how == "bool":
            return x if y else -x
        if how == "float":
            return float(y)
        if how == "int":
            return np_.ones(int(y))
        return y.devices()
    return f
x = np_.arange(3.0)
for how in ["bool", "float", "int", "devices"]:
    f = converting(how)
    error(how + " vmap", lambda: api.vmap(f)(x))
    error(how + " jit_vmap", lambda: api.jit(api.vmap(f))(x))
    error(how + " vmap_jit", lambda: api.vmap(api.jit(f))(x))
    error(how + " vmap_grad", lambda: api.vmap(api.grad(lambda v: f(v) * 1.0))(x))
    error(how + " jit_grad", lambda: api.jit(api.grad(lambda v: f(v) * 1.0))(1.0))
g = lambda v: float(v)
try:  # (the input tracers are made on the exec'd line, at its column 0)
    exec("api.vmap(g)(x)")
except Exception as e:
    out["input at column 0"] = [type(e).__name__, re.sub(r"object id \\d+", "object id N", str(e))]
print(json.dumps(out))
"""

# (Not compared: JAX's message for an input BatchTracer made under jit names an empty line,
# its traceback of that moment stopping short of the user's frames, where traxla names the
# vmap call's line; and traxla's TracerIntegerConversionError carries a hint of its own.)
_NAMES = ([f"{t} {m}" for t in ("jit", "vmap", "grad")
           for m in ("devices()", "addressable_data(0)", "delete()", "is_deleted()",
                     "on_device_size_in_bytes()", "unsafe_buffer_pointer()", "global_shards",
                     "is_fully_addressable", "is_fully_replicated", "traceback")]
          + [f"{h} {w}" for h in ("bool", "float", "int", "devices")
             for w in ("vmap", "vmap_jit", "vmap_grad", "jit_grad")]
          + ["bool jit_vmap", "devices jit_vmap", "input at column 0"])


outputs, test_tracer_errors_as_jax = jax_comparison(_SCRIPT, 1, _NAMES)


def test_batch_tracer_errors_name_the_line_that_made_the_tracer(outputs):
    ours, _ = outputs
    assert ours["devices vmap"][1].count(
        "This BatchTracer with object id N was created on line:\n  <string>:") == 2
    assert "<string>:" in ours["float jit_vmap"][1]  # (JAX's names no line there)
    assert ours["vmap devices()"][0] == "ConcretizationTypeError"

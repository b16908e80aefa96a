"""JAX's side of an in-process comparison, stored (JAX is pinned at 0.10.2).

A test takes the ``jax_side`` fixture (tests/conftest.py) and wraps each piece of JAX work in a thunk:
``theirs = jax_side(lambda: jax.jit(f)(x))``. The result is encoded (arrays: values,
dtype, shape; BCOO/BCSR: their buffers, layout, flags and repr; errors: the type and
message) and stored in ``tests/data/jax_stored/<test module>.json`` under a hash of the
code that produced it: the test module's source without its other ``test_*`` functions,
this test's source (decorators and parameter lists included), the parameter id and the
thunk's call index. A test whose code (or whose module's shared code) is edited has no
stored output and runs JAX live; ``TRAXLA_STORE_JAX_OUTPUTS=1 python -m pytest
tests/test_X.py`` (without ``-n``) stores it; ``TRAXLA_STORE_JAX_OUTPUTS=prune`` also
removes the module's entries the run did not use (after editing a module: tests/conftest.py). Live results go through the same encoding,
so a test sees the same objects whether JAX ran or not. A thunk must depend only on the
code (constants, JAX's own results), never on traxla's results: the key does not cover
its inputs."""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pathlib
from dataclasses import dataclass

import numpy as np

from _device_scripts import REPO, jax_output

_SPARSE_FIELDS = ("shape", "nse", "n_batch", "n_sparse", "n_dense")
_BCOO_FLAGS = ("indices_sorted", "unique_indices")


@dataclass
class StoredError:
    """An exception JAX raised: its class (resolved by qualified name) and message."""
    type: type
    message: str


class StoredSparse:
    """A BCOO or BCSR JAX returned: ``kind``, the buffers as numpy arrays, the layout,
    the flags (BCOO) and ``repr``."""

    def __init__(self, rec: dict):
        self.kind = rec["kind"]
        for name, value in rec.items():
            if name != "kind":
                setattr(self, name, decode(value))
        self.shape = tuple(rec["shape"])

    def __repr__(self):
        return self.repr


def _type_name(t: type) -> str:
    return f"{t.__module__}:{t.__qualname__}"


def _resolve(name: str) -> type:
    module, qualname = name.split(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def encode(x):
    """A JSON-able record of a JAX result (Python scalars stay themselves; dicts need
string keys)."""
    if isinstance(x, BaseException):
        return {"kind": "error", "type": _type_name(type(x)), "message": str(x)}
    kind = type(x).__name__
    if kind in ("BCOO", "BCSR") and type(x).__module__.startswith("jax."):
        rec = {"kind": kind, "repr": repr(x), "data": encode(x.data), "indices": encode(x.indices)}
        rec.update({name: getattr(x, name) for name in _SPARSE_FIELDS})
        rec["shape"] = list(x.shape)
        if kind == "BCSR":
            rec["indptr"] = encode(x.indptr)
        else:
            rec.update({name: bool(getattr(x, name)) for name in _BCOO_FLAGS})
        return rec
    if isinstance(x, (tuple, list)):
        return {"kind": type(x).__name__, "items": [encode(v) for v in x]}
    if isinstance(x, dict) and all(isinstance(k, str) for k in x):
        return {"kind": "dict", "items": {k: encode(v) for k, v in x.items()}}
    if isinstance(x, np.dtype):
        return {"kind": "dtype", "name": x.name}
    if x is None or isinstance(x, (bool, int, float, str)):
        return x  # as itself (records are dicts)
    a = np.asarray(x)
    if a.dtype == object:
        raise TypeError(f"cannot store a JAX result of type {type(x).__name__}")
    values = a.ravel()
    if np.iscomplexobj(values):  # (real, imaginary) pairs
        values = np.stack([values.real, values.imag], -1)
    return {"kind": "array", "dtype": a.dtype.name, "shape": list(a.shape),
            "values": values.tolist()}


def _dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, name))


def decode(rec):
    if not isinstance(rec, dict):
        return rec
    kind = rec["kind"]
    if kind == "error":
        return StoredError(_resolve(rec["type"]), rec["message"])
    if kind in ("BCOO", "BCSR"):
        return StoredSparse(rec)
    if kind == "dict":
        return {k: decode(v) for k, v in rec["items"].items()}
    if kind in ("tuple", "list"):
        items = [decode(v) for v in rec["items"]]
        return tuple(items) if kind == "tuple" else items
    if kind == "dtype":
        return _dtype(rec["name"])
    dtype = _dtype(rec["dtype"])
    if dtype.kind == "c":
        pairs = np.array(rec["values"], dtype.type(0).real.dtype).reshape(-1, 2)
        return (pairs[:, 0] + 1j * pairs[:, 1]).astype(dtype).reshape(rec["shape"])
    return np.array(rec["values"], dtype).reshape(rec["shape"])


@functools.lru_cache(maxsize=None)
def strip_tests(source: str) -> str:
    """A module's source without its top-level ``test_*`` functions (decorators included).
    Cached: every test of a module asks for it (parsing a large module costs ~40 ms)."""
    lines = source.splitlines()
    for node in reversed(ast.parse(source).body):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            del lines[start - 1:node.end_lineno]
    return "\n".join(lines)


def stored_path(module_name: str) -> pathlib.Path:
    return REPO / "tests" / "data" / "jax_stored" / f"{module_name}.json"


class JaxSide:
    """Runs (or looks up) JAX's side of one test, thunk by thunk."""

    def __init__(self, request):
        module = request.module
        callspec = getattr(request.node, "callspec", None)
        self._base = "\n".join([strip_tests(inspect.getsource(module)),
                                inspect.getsource(request.function),
                                callspec.id if callspec else ""])
        self._store = stored_path(module.__name__.split(".")[-1])
        self._calls = 0

    def _outcome(self, run, key):
        self._calls += 1

        def live():
            try:
                return encode(run())
            except Exception as e:  # noqa: BLE001 - JAX's error is the stored outcome
                return encode(e)
        key_text = f"{self._base}\n#{self._calls}" + (f"\n{key}" if key else "")
        return decode(jax_output(key_text, live, self._store))

    def __call__(self, run, key: str = ""):
        """JAX's result of ``run()`` (arrays come back as numpy arrays, BCOO/BCSR as
        ``StoredSparse``, tuples, lists and dicts as such). ``key``: text the result also
        depends on (code in another file, inputs computed at run time)."""
        out = self._outcome(run, key)
        if isinstance(out, StoredError):
            raise AssertionError(f"JAX raised {out.type.__name__}: {out.message}")
        return out

    def raises(self, run, key: str = "") -> StoredError:
        """The error JAX raised running ``run()`` (asserting it raised)."""
        out = self._outcome(run, key)
        assert isinstance(out, StoredError), f"JAX did not raise; it returned {out!r}"
        return out

"""A random-program fuzzer: hypothesis composes ops, shapes, dtypes (weak Python scalars
included) and transformations (eager, jit, vmap, grad); traxla must agree with JAX -- same
error class, or the same value, dtype, shape and weak type. Without JAX it checks values
against NumPy.

CI runs a few hundred programs. For a long run (set the count and the seed):

    TRAXLA_FUZZ_EXAMPLES=10000 TRAXLA_FUZZ_SEED=1 python -m pytest -q -n 0 tests/test_fuzz.py
"""
import hashlib
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings

import traxla
import traxla.numpy as tnp

import _device_scripts
import _fuzz_programs
from _device_scripts import jax_output
from _fuzz_programs import describe, make_input, programs, run_program
from _jax_stored import decode, encode, stored_path

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - the NumPy fallback
    jax = jnp = None

EXAMPLES = int(os.environ.get("TRAXLA_FUZZ_EXAMPLES", "80"))  # sized to the suite's budget; tools/fuzz_differential.py runs thousands
SEED = int(os.environ.get("TRAXLA_FUZZ_SEED", "20261202"))
LONG_RUN = "TRAXLA_FUZZ_EXAMPLES" in os.environ or "TRAXLA_FUZZ_SEED" in os.environ
PROGRESS = os.environ.get("TRAXLA_FUZZ_PROGRESS")  # a file to write the count to, if set
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


def _outcome(thunk):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", thunk())
        except Exception as e:  # noqa: BLE001 - compared by class across implementations
            return ("error", e)


def _leaves(x):
    return x if isinstance(x, (list, tuple)) else [x]


class _StoredLeaf:
    """A leaf of JAX's stored result: its value (an array) and, as a JAX Array has, its
    weak type."""

    def __init__(self, value, weak_type):
        self.value, self.weak_type = value, weak_type

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value, dtype)

    def __repr__(self):
        return f"{self.value!r} (weak_type={self.weak_type})"


_CODE = []


def _code():
    """The code JAX's stored outcomes depend on: this module and the program generator."""
    if not _CODE:
        for path in (__file__, _fuzz_programs.__file__):
            with open(path, encoding="utf-8") as f:
                _CODE.append(f.read())
    return "\n".join(_CODE)


_MISSES = [0]


def _stored_or_live(key_text, live):
    """``jax_output`` for this module's store, but a program not stored runs JAX live
    without a warning unless many do: hypothesis draws an integer now and then from the
    constants of the (non-test) modules the process has imported, so a worker that
    imported other modules of traxla first draws a program or two that a run of this
    file alone did not. Many missing programs (an edited module) warn as a stale store."""
    store = stored_path("test_fuzz")
    if os.environ.get("TRAXLA_STORE_JAX_OUTPUTS"):
        return jax_output(key_text, live, store)
    key = hashlib.sha256(key_text.encode()).hexdigest()
    _device_scripts.USED.setdefault(store, set()).add(key)
    stored = _device_scripts._stored(store)
    if key in stored:
        return stored[key]
    _MISSES[0] += 1
    if _MISSES[0] == 12:  # (the stored run is ~140 outcomes)
        return jax_output(key_text, live, store)  # warns: JaxRanLive
    return live()


def _jax_outcome(program, args, steps, transform):
    """JAX's outcome of the program, as ``_outcome`` gives it: stored (JAX is pinned) in
    tests/data/jax_stored/test_fuzz.json under a hash of the code, the program (which
    fixes its inputs) and the transformation; a program not stored runs JAX live (and a
    run with its own count or seed runs JAX live throughout). Arrays
    keep their weak type, errors their class name and message."""
    def live():
        kind, value = _outcome(lambda: _reference(jnp, jax, steps, args, transform))
        if kind == "error":
            return {"error": type(value).__name__, "message": str(value)}
        return {"sequence": type(value).__name__ if isinstance(value, (list, tuple)) else None,
                "leaves": [encode(np.asarray(leaf)) for leaf in _leaves(value)],
                "weak": [bool(leaf.weak_type) if hasattr(leaf, "weak_type") else None
                         for leaf in _leaves(value)]}
    rec = live() if LONG_RUN else _stored_or_live(
        f"test_fuzz\n{_code()}\n{program!r}\n{transform}", live)
    if "error" in rec:
        return ("error", type(rec["error"], (Exception,), {})(rec["message"]))
    leaves = [decode(v) if w is None else _StoredLeaf(decode(v), w)
              for v, w in zip(rec["leaves"], rec["weak"])]
    if rec["sequence"] is None:
        return ("ok", leaves[0])
    return ("ok", tuple(leaves) if rec["sequence"] == "tuple" else leaves)


def _check_same(ours, theirs, program, what):
    context = f"{what}\n{describe(program)}"
    if theirs[0] == "error" or ours[0] == "error":
        assert ours[0] == theirs[0], (f"{context}\ntraxla: {ours[1]!r}\nreference: "
                                      f"{theirs[1]!r}")
        assert type(ours[1]).__name__ == type(theirs[1]).__name__, (
            f"{context}\ntraxla: {ours[1]!r}\nreference: {theirs[1]!r}")
        return
    for a, b in zip(_leaves(ours[1]), _leaves(theirs[1])):
        x, y = np.asarray(a), np.asarray(b)
        assert x.shape == y.shape, f"{context}\nshape {x.shape} != {y.shape}"
        assert x.dtype == y.dtype, f"{context}\ndtype {x.dtype} != {y.dtype}"
        # (JAX hands some NumPy inputs back as they are, e.g. from vmap of an identity;
        # traxla returns Arrays: only Arrays on both sides have a weak type to compare)
        if jax is not None and hasattr(a, "weak_type") and hasattr(b, "weak_type"):
            assert a.weak_type == b.weak_type, (
                f"{context}\nweak_type {getattr(a, 'weak_type', None)} != "
                f"{getattr(b, 'weak_type', None)}")
        if x.dtype.kind in "fc":
            tol = 2e-3 if x.dtype == np.float16 else 2e-5
            np.testing.assert_allclose(x, y, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=context)
        else:
            np.testing.assert_array_equal(x, y, err_msg=context)


def _batched(args):
    """Each array input with a leading batch axis of 2 (Python scalars stay unbatched)."""
    out, axes = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            second = (a * 2).astype(a.dtype) if a.dtype != np.bool_ else ~a
            out.append(np.stack([a, second]))
            axes.append(0)
        else:
            out.append(a)
            axes.append(None)
    return out, tuple(axes)


def _reference(m, api, steps, args, transform):
    def program(*a):
        return run_program(m, steps, a)

    if transform == "eager":
        return program(*args)
    if transform == "jit":
        return api.jit(program)(*args)
    if transform == "vmap":
        batched, axes = _batched(args)
        return api.vmap(program, in_axes=axes)(*batched)
    if transform == "grad":
        def scalar(x, *rest):
            return m.sum(m.asarray(program(x, *rest), m.float32))
        return api.grad(scalar)(*args)
    raise AssertionError(transform)


def _transforms(program, index):
    """Which transformations this program runs under: all of them in a long run; in CI
    eager always and one of jit/vmap/grad in turn (compiles are what cost)."""
    inputs, _ = program
    first_float = inputs[0][0] in ("float32", "py_float")
    chosen = ["eager"]
    if EXAMPLES > 1000:  # a long run: the eager-evaluated transformations every time, and
        # jit (a compile in each library per program) for every tenth program
        chosen += ["vmap"] + (["grad"] if first_float else []) + (["jit"] if index % 10 == 0
                                                                  else [])
    else:
        extra = ["jit", "vmap", "grad"][index % 3]
        if extra != "grad" or first_float:
            chosen.append(extra)
    return chosen


_counter = [0]


@seed(SEED)
@FUZZ
@given(programs())
def test_random_programs_agree_with_the_reference(program):
    _counter[0] += 1
    if PROGRESS and _counter[0] % 100 == 0:
        with open(PROGRESS, "w") as f:
            f.write(f"{_counter[0]} programs\n")
    inputs, steps = program
    args = [make_input(*spec) for spec in inputs]
    for transform in _transforms(program, _counter[0]):
        ours = _outcome(lambda: _reference(tnp, traxla, steps, args, transform))
        if jax is not None:
            theirs = _jax_outcome(program, args, steps, transform)
        elif transform == "eager":
            theirs = _outcome(lambda: _reference(np, None, steps, args, transform))
        else:
            continue
        _check_same(ours, theirs, program, transform)
    assert ours[0] == "ok" or not isinstance(ours[1], (AssertionError, KeyError, AttributeError,
                                                       IndexError, NameError, RecursionError)), (
        f"internal error\n{describe(program)}\n{ours[1]!r}")


def test_fuzzer_can_fail():
    """The checker itself: a wrong value, dtype or error class is reported."""
    program = ([("float32", (3,), 0)], [("sin", (0,))])
    good = ("ok", np.sin(np.ones(3, np.float32)))
    with pytest.raises(AssertionError):
        _check_same(("ok", np.cos(np.ones(3, np.float32))), good, program, "eager")
    with pytest.raises(AssertionError):
        _check_same(("ok", np.sin(np.ones(3))), good, program, "eager")
    with pytest.raises(AssertionError):
        _check_same(("error", ValueError()), ("error", TypeError()), program, "eager")

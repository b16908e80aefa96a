"""``traxla.pmap`` against JAX 0.10.2's (a jit of a shard_map over a one-axis mesh): the
same program (tests/_pmap_program.py) runs under both on 8 CPU devices, each in a fresh
process; values, result types and shardings, printed jaxprs and errors must agree."""
from __future__ import annotations

import functools
import inspect
import json
import os
import pathlib
import subprocess
import sys

import jax
import pytest

import traxla
from _device_scripts import jax_output

_REPO = pathlib.Path(__file__).resolve().parent.parent
_PROGRAM = str(pathlib.Path(__file__).with_name("_pmap_program.py"))


@functools.lru_cache(maxsize=None)
def _results(which: str) -> dict:
    def run():
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(_REPO))
        env.pop("XLA_FLAGS", None)
        env.pop("TRAXLA_NUM_CPU_DEVICES", None)
        proc = subprocess.run([sys.executable, _PROGRAM, which], capture_output=True,
                              text=True, timeout=600, env=env, cwd=str(_REPO))
        assert proc.returncode == 0, proc.stderr[-4000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])
    # JAX's side is pinned: stored under a hash of the program (a new or edited one runs live)
    if which == "jax":
        return jax_output("pmap\n" + pathlib.Path(_PROGRAM).read_text(), run)
    return run()


def _case_names():
    # the cases are the program's; parse their names so that a new case is a new test
    text = pathlib.Path(_PROGRAM).read_text()
    body = text[text.index("cases = {"):text.index("res = {")]
    return [line.split('"')[1] for line in body.splitlines() if line.startswith('    "')]


# Results whose sharding traxla spells with its full rank (P('i', None) where JAX keeps
# P('i',)): the same layout. Derivatives of pmap reach their results through vmap or a
# transposed shard_map.
_SPEC_PADDED = {"hessian", "grad_all_gather_groups"}


def _unpadded(result):
    for leaf in result.get("leaves", []):
        if leaf["sharding"] is not None:
            spec = list(leaf["sharding"][1])
            while spec and spec[-1] is None:
                spec.pop()
            leaf["sharding"] = [leaf["sharding"][0], spec]
    return result


@pytest.mark.parametrize("name", _case_names())
def test_pmap_case_matches_jax(name):
    want, got = _results("jax")[name], _results("traxla")[name]
    if name in _SPEC_PADDED:
        copy = lambda r: json.loads(json.dumps(r))  # noqa: E731  (the results are cached)
        want, got = _unpadded(copy(want)), _unpadded(copy(got))
    assert got == want


def test_pmap_results_are_sharded_arrays():
    got = _results("traxla")["psum_named"]["leaves"][0]
    assert got["array"]
    assert got["sharding"] == ["Mesh('i': 4, axis_types=(Auto,))", ["i"]]


def test_pmap_signature_matches_jax():
    ours = inspect.signature(traxla.pmap)
    theirs = inspect.signature(jax.pmap)
    assert list(ours.parameters) == list(theirs.parameters)
    assert [(p.kind, p.default) for p in ours.parameters.values()] == [
        (p.kind, p.default) for p in theirs.parameters.values()]


def test_pmap_on_one_device_runs_in_process():
    # the test process has one CPU device: a mapped size of 1 runs; with 2 the one-device
    # mesh hands each "device" both slices, and squeezing the mapped axis fails (as in JAX)
    def build(ns):
        return ns.pmap(lambda x: ns.lax.psum(x, "i") + ns.lax.axis_index("i"), axis_name="i")
    assert float(build(traxla)(traxla.numpy.ones(1))[0]) == float(build(jax)(jax.numpy.ones(1))[0])
    with pytest.raises(ValueError) as want:
        build(jax)(jax.numpy.ones(2))
    with pytest.raises(ValueError) as got:
        build(traxla)(traxla.numpy.ones(2))
    assert str(got.value) == str(want.value)


def test_pmap_lower_compile_takes_the_functions_arguments():
    """``pmap(f).lower(*args).compile()`` is a Compiled called with ``f``'s own arguments
    (equinox's filter_pmap AOT path), as JAX's."""
    def run(ns):
        f = ns.pmap(lambda x, y: 2 * x + y["b"])
        x, y = ns.numpy.array([3.0]), {"b": ns.numpy.array([4.0])}
        lowered = f.lower(x, y)
        compiled = lowered.compile()
        return (type(lowered).__name__, type(compiled).__name__,
                [float(v) for v in compiled(x, y)])
    assert run(traxla) == run(jax)

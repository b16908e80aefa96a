"""Random programs for the fuzzer: a program is a list of steps, each applying one op to
earlier values (inputs or results). The same program runs on any jnp-like module, so traxla
is checked against JAX (the oracle) or, without JAX, against NumPy."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

SHAPES = [(), (3,), (2, 3)]  # pairwise broadcast-compatible
INPUT_KINDS = ["float32", "int32", "bool", "py_float", "py_int", "float16", "uint8"]

# name -> (arity, fn(m, *args)), m is the numpy-like module. Every op is total on any
# input it can get (no division by zero, no log of negatives), so results are comparable.
UNARY = {
    "neg": lambda m, a: m.negative(a),
    "abs": lambda m, a: m.abs(a),
    "sin": lambda m, a: m.sin(a),
    "cos": lambda m, a: m.cos(a),
    "tanh": lambda m, a: m.tanh(a),
    "exp_clip": lambda m, a: m.exp(m.clip(a, -5, 5)),
    "log1p_abs": lambda m, a: m.log1p(m.abs(a)),
    "sqrt_abs": lambda m, a: m.sqrt(m.abs(a)),
    "square": lambda m, a: m.square(a),
    "sign": lambda m, a: m.sign(a),
    "floor": lambda m, a: m.floor(a),
    "logical_not": lambda m, a: m.logical_not(a),
    "sum": lambda m, a: m.sum(a),
    "sum0": lambda m, a: m.sum(a, axis=0) if m.ndim(a) else a,
    "max": lambda m, a: m.max(a),
    "min_last": lambda m, a: m.min(a, axis=-1) if m.ndim(a) else a,
    "mean": lambda m, a: m.mean(a),
    "cumsum": lambda m, a: m.cumsum(a) if m.ndim(a) else a,
    "ravel": lambda m, a: m.ravel(a),
    "transpose": lambda m, a: m.transpose(a),
    "reverse": lambda m, a: m.flip(a, axis=0) if m.ndim(a) else a,
    "to_f32": lambda m, a: m.asarray(a).astype(m.float32),
    "to_i32": lambda m, a: m.clip(m.asarray(a), -1000, 1000).astype(m.int32),
    "gt0": lambda m, a: m.greater(a, 0),
    "scale": lambda m, a: m.multiply(a, 2),
    "shift": lambda m, a: m.add(a, 1.5),
    "expand_sum": lambda m, a: m.sum(m.expand_dims(m.asarray(a), 0), axis=0),
    "sort": lambda m, a: m.sort(a) if m.ndim(a) else a,
    "argmax": lambda m, a: m.argmax(a),
    "any": lambda m, a: m.any(a),
}
BINARY = {
    "add": lambda m, a, b: m.add(a, b),
    "sub": lambda m, a, b: m.subtract(a, b),
    "mul": lambda m, a, b: m.multiply(a, b),
    "max2": lambda m, a, b: m.maximum(a, b),
    "min2": lambda m, a, b: m.minimum(a, b),
    "safe_div": lambda m, a, b: m.true_divide(a, m.add(m.abs(m.asarray(b, m.float32)), 1)),
    "where": lambda m, a, b: m.where(m.greater(a, 0), a, b),
    "eq": lambda m, a, b: m.equal(a, b),
    "lt": lambda m, a, b: m.less(a, b),
    "logical_and": lambda m, a, b: m.logical_and(a, b),
    "hypot_like": lambda m, a, b: m.sqrt(m.add(m.square(a), m.square(b))),
    "arctan2": lambda m, a, b: m.arctan2(a, b),
}
OPS = {**{k: (1, f) for k, f in UNARY.items()}, **{k: (2, f) for k, f in BINARY.items()}}
OP_NAMES = sorted(OPS)


@st.composite
def programs(draw, max_inputs=3, max_steps=6):
    n_inputs = draw(st.integers(1, max_inputs))
    inputs = []
    for _ in range(n_inputs):
        kind = draw(st.sampled_from(INPUT_KINDS))
        shape = () if kind.startswith("py_") else draw(st.sampled_from(SHAPES))
        seed = draw(st.integers(0, 2**16))
        inputs.append((kind, shape, seed))
    steps = []
    for i in range(draw(st.integers(1, max_steps))):
        name = draw(st.sampled_from(OP_NAMES))
        arity = OPS[name][0]
        args = tuple(draw(st.integers(0, n_inputs + i - 1)) for _ in range(arity))
        steps.append((name, args))
    return inputs, steps


def make_input(kind, shape, seed):
    rng = np.random.default_rng(seed)
    if kind == "py_float":
        return float(np.round(rng.normal() * 3, 3))
    if kind == "py_int":
        return int(rng.integers(-5, 6))
    if kind == "bool":
        return rng.random(shape) > 0.5
    if kind in ("int32", "uint8"):
        return rng.integers(0 if kind == "uint8" else -9, 10, shape).astype(kind)
    return (rng.normal(size=shape) * 3).astype(kind)


def run_program(m, steps, args):
    """The program's value on ``args`` using module ``m`` (jnp-like)."""
    values = list(args)
    for name, operands in steps:
        values.append(OPS[name][1](m, *[values[i] for i in operands]))
    return values[-1]


def describe(program) -> str:
    inputs, steps = program
    lines = [f"inputs: {inputs}"]
    lines += [f"  v{len(inputs) + i} = {name}({', '.join(f'v{a}' for a in args)})"
              for i, (name, args) in enumerate(steps)]
    return "\n".join(lines)

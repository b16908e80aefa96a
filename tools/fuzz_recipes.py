"""Random programs over the lax primitives, as recipes (plain JSON data) that build the same
program against any lax-like library: ``jax`` or ``traxla``.

A recipe is ``{"inputs": [...], "steps": [...], "outputs": [...], "transform": ..., ...}``:

* an input is ``[kind, shape, seed]``: an array kind (``"float32"``, ``"int32"``, ``"bool"``,
  ``"float16"``, ``"bfloat16"``, ``"uint8"``, ``"complex64"``) or a weak Python scalar
  (``"py_float"``, ``"py_int"``, ``"py_complex"``); its value comes from ``make_value``;
* a step is ``[op, operands, params]``; an operand is ``i`` (value ``i``: the inputs
  first, then one value per step), ``["lit", x]`` (a Python scalar), ``["litc", re, im]`` (a
  Python complex), ``["np", dtype, x]`` (a NumPy scalar) or ``["const", dtype, shape, seed]``
  (a NumPy array the program closes over);
* the program returns the values named by ``outputs``, under ``transform`` (eager, jit, vmap,
  grad, jvp, scan, cond, switch, while, fori, jit_grad, vmap_jit).

``generate(rng)`` draws a recipe; it tracks each value's shape and dtype (its own small model
of the typing rules), so that most programs are valid, and it injects a bad operand now and
then so that errors are compared too. ``build(lib, recipe)`` makes ``(fn, args)``.
"""
from __future__ import annotations

import math
import random
from types import SimpleNamespace

import ml_dtypes
import numpy as np

FLOATS = ("float32", "float16", "bfloat16")
INTS = ("int32", "uint8")
NUM = FLOATS + INTS + ("complex64",)
ARRAY_KINDS = FLOATS + INTS + ("bool", "complex64")
PY_KINDS = {"py_float": "float32", "py_int": "int32", "py_complex": "complex64"}
SHAPES = [(), (), (0,), (1,), (3,), (3,), (2, 3), (2, 3), (3, 1), (2, 0), (1, 3), (2, 1, 3),
          (4, 2)]
TRANSFORMS = {"eager": 14, "jit": 14, "vmap": 12, "grad": 8, "jvp": 5, "scan": 5, "cond": 5,
              "switch": 3, "while": 4, "fori": 3, "jit_grad": 3, "vmap_jit": 4}
MAX_INPUTS = 4


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def make_value(kind, shape, seed):
    """The deterministic value of an input or a constant (specials included now and then)."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if kind == "py_float":
        return float(rng.choice([0.0, -0.0, 1.5, -2.0, 0.5, 3.25, float("inf")],
                                p=[.1, .05, .3, .2, .15, .15, .05]))
    if kind == "py_int":
        return int(rng.integers(-5, 8))
    if kind == "py_complex":
        return complex(float(rng.integers(-3, 4)) / 2, float(rng.integers(-3, 4)) / 2)
    if kind == "bool":
        return rng.random(shape) > 0.5
    if kind == "int32":
        x = rng.integers(-9, 10, shape).astype(np.int32)
        extreme = rng.random(shape) < 0.03
        return np.where(extreme, rng.choice([2**31 - 1, -2**31, 0], shape), x).astype(np.int32)
    if kind == "uint8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if kind == "complex64":
        return (rng.normal(size=shape) * 2 + 1j * rng.normal(size=shape) * 2).astype(np.complex64)
    x = rng.normal(size=shape) * 3
    special = rng.random(shape) < 0.05
    x = np.where(special, rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], shape), x)
    return x.astype(np_dtype(kind))


# -- the generator's model of values -----------------------------------------------------------

class Val:
    __slots__ = ("shape", "dtype", "py")

    def __init__(self, shape, dtype, py=False):
        self.shape, self.dtype, self.py = tuple(shape), dtype, py


def _bshape(a, b):
    if a == ():
        return b
    if b == ():
        return a
    return tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(a, b))


class Gen:
    """Draws one recipe, modelling the shape and dtype of each value as the program grows."""

    def __init__(self, rng: random.Random):
        self.r = rng
        self.inputs, self.steps = [], []
        self.ins, self.outs = [], []  # the models of the inputs and of the steps' results

    def seed(self):
        return self.r.randrange(2**31)

    def new_input(self, dtype=None, shape=None):
        """A new input (random unless given); returns its reference."""
        r = self.r
        if dtype is None:
            if r.random() < 0.15:
                kind = r.choice(["py_float", "py_float", "py_int", "py_complex"])
                self.inputs.append([kind, [], self.seed()])
                self.ins.append(Val((), PY_KINDS[kind], True))
                return ["in", len(self.inputs) - 1]
            dtype = r.choice(ARRAY_KINDS + ("float32", "float32", "int32"))
        if shape is None:
            shape = r.choice(SHAPES)
        self.inputs.append([dtype, list(shape), self.seed()])
        self.ins.append(Val(shape, dtype))
        return ["in", len(self.inputs) - 1]

    def refs(self):
        return ([["in", k] for k in range(len(self.ins))]
                + [["v", k] for k in range(len(self.outs))])

    def pick(self, ok=lambda v: True):
        """A reference to a value (recent values preferred) satisfying ``ok``, or None."""
        cands = [ref for ref in self.refs() if ok(self.val(ref))]
        if not cands:
            return None
        if self.r.random() < 0.6:
            return cands[-1]
        return self.r.choice(cands)

    def operand_like(self, shape, dtype, allow_scalar=True):
        """An operand of this dtype with this shape (or a scalar): a value, literal or const."""
        r = self.r
        roll = r.random()
        if roll < 0.45:
            i = self.pick(lambda v: v.dtype == dtype and (
                v.shape == tuple(shape) or (allow_scalar and v.shape == ())))
            if i is not None:
                return i
        if roll < 0.6 and len(self.inputs) < MAX_INPUTS:
            return self.new_input(dtype, shape)
        if allow_scalar and roll < 0.8:
            return self.literal(dtype)
        return ["const", dtype, list(shape), self.seed()]

    def literal(self, dtype):
        r = self.r
        if dtype == "float32" and r.random() < 0.6:
            return ["lit", r.choice([0.0, 1.0, -1.5, 2.0, 0.25])]
        if dtype == "int32" and r.random() < 0.6:
            return ["lit", r.choice([0, 1, -1, 2, 3, 7])]
        if dtype == "complex64" and r.random() < 0.6:
            return ["litc", r.choice([0.0, 1.0, -0.5]), r.choice([0.0, 1.0, 2.0])]
        if dtype == "bool":
            return ["np", "bool", r.random() < 0.5]
        if dtype == "complex64":
            return ["np", dtype, [1.5, -0.5]]
        if dtype in INTS:
            return ["np", dtype, r.choice([0, 1, 2, 5])]
        return ["np", dtype, r.choice([0.0, 1.0, -1.5, 2.0])]

    def add(self, op, operands, params, out):
        self.steps.append([op, operands, params])
        self.outs.append(out)

    def val(self, ref):
        """The model of an operand reference."""
        if ref[0] == "v":
            return self.outs[ref[1]]
        if ref[0] == "in":
            return self.ins[ref[1]]
        if ref[0] == "const":
            return Val(ref[2], ref[1])
        if ref[0] == "lit":
            return Val((), "bool" if isinstance(ref[1], bool) else
                       "int32" if isinstance(ref[1], int) else "float32", True)
        if ref[0] == "litc":
            return Val((), "complex64", True)
        return Val((), ref[1])


# op name -> (dtypes accepted by its first operand, exact?, result dtype rule)
_REAL_TO = {"complex64": "float32"}
UNARY = {
    "neg": (NUM, True, None), "sign": (NUM, True, None), "abs": (NUM, True, "real"),
    "floor": (FLOATS, True, None), "ceil": (FLOATS, True, None), "round": (FLOATS, True, None),
    "is_finite": (FLOATS, True, "bool"), "square": (NUM, True, None),
    "exp": (FLOATS + ("complex64",), False, None), "exp2": (FLOATS, False, None),
    "log": (FLOATS + ("complex64",), False, None), "log1p": (FLOATS, False, None),
    "expm1": (FLOATS, False, None), "tanh": (FLOATS + ("complex64",), False, None),
    "logistic": (FLOATS, False, None), "sin": (FLOATS + ("complex64",), False, None),
    "cos": (FLOATS, False, None), "tan": (FLOATS, False, None), "atan": (FLOATS, False, None),
    "sqrt": (FLOATS + ("complex64",), False, None), "rsqrt": (FLOATS, False, None),
    "cbrt": (FLOATS, False, None), "erf": (FLOATS, False, None), "erfc": (FLOATS, False, None),
    "lgamma": (("float32",), False, None), "asinh": (FLOATS, False, None),
    "sinh": (FLOATS, False, None), "acos": (("float32",), False, None),
    "reciprocal": (FLOATS, True, None), "bitwise_not": (INTS + ("bool",), True, None),
    "population_count": (INTS, True, None), "clz": (INTS, True, None),
    "real": (("complex64",), True, "real"), "imag": (("complex64",), True, "real"),
    "conj": (("complex64",), True, None), "stop_gradient": (ARRAY_KINDS, True, None),
}
BINARY = {
    "add": (NUM, True, None), "sub": (NUM, True, None), "mul": (NUM, True, None),
    "div": (NUM, True, None), "rem": (FLOATS + INTS, True, None),
    "pow": (("float32", "complex64"), False, None), "max": (FLOATS + INTS + ("bool",), True, None),
    "min": (FLOATS + INTS + ("bool",), True, None), "atan2": (FLOATS, False, None),
    "nextafter": (("float32",), True, None),
    "bitwise_and": (INTS + ("bool",), True, None), "bitwise_or": (INTS + ("bool",), True, None),
    "bitwise_xor": (INTS + ("bool",), True, None), "shift_left": (INTS, True, None),
    "shift_right_logical": (INTS, True, None), "shift_right_arithmetic": (INTS, True, None),
    "eq": (ARRAY_KINDS, True, "bool"), "ne": (ARRAY_KINDS, True, "bool"),
    "lt": (FLOATS + INTS + ("bool",), True, "bool"), "le": (FLOATS + INTS, True, "bool"),
    "gt": (FLOATS + INTS, True, "bool"), "ge": (FLOATS + INTS + ("bool",), True, "bool"),
    "complex": (("float32",), True, "complex64"),
}
REDUCE = {"reduce_sum": NUM, "reduce_prod": NUM, "reduce_max": FLOATS + INTS + ("bool",),
          "reduce_min": FLOATS + INTS, "reduce_and": INTS + ("bool",),
          "reduce_or": INTS + ("bool",), "reduce_xor": ("bool", "int32")}
CUMULATIVE = {"cumsum": NUM, "cumprod": FLOATS + INTS, "cummax": FLOATS + INTS,
              "cummin": FLOATS + INTS, "cumlogsumexp": ("float32",)}
# ops whose float results may differ in the last bits between two correct lowerings
INEXACT = ({k for k, v in UNARY.items() if not v[1]} | {k for k, v in BINARY.items() if not v[1]}
           | {"reduce_sum", "reduce_prod", "cumsum", "cumprod", "cumlogsumexp", "dot_general"})


def _out_dtype(rule, dtype):
    if rule is None:
        return dtype
    if rule == "real":
        return _REAL_TO.get(dtype, dtype)
    return rule


def _gen_unary(g, name):
    accepted, _, rule = UNARY[name]
    i = g.pick(lambda v: v.dtype in accepted)
    if i is None:
        return False
    a = g.val(i)
    params = {}
    if name == "round":
        params = {"rounding_method": g.r.choice([0, 1])}
    g.add(name, [i], params, Val(a.shape, _out_dtype(rule, a.dtype)))
    return True


def _gen_binary(g, name):
    accepted, _, rule = BINARY[name]
    i = g.pick(lambda v: v.dtype in accepted)
    if i is None:
        return False
    a = g.val(i)
    shape = a.shape
    if a.shape and g.r.random() < 0.15:  # a size-1 dimension broadcasts
        shape = tuple(1 if g.r.random() < 0.5 else d for d in a.shape)
    if name.startswith("shift") and g.r.random() < 0.5:
        b = ["np", a.dtype, g.r.choice([0, 1, 3, 7, 8, 31, 33])]
    elif name == "pow" and g.r.random() < 0.3:
        b = g.operand_like(shape, "int32")  # pow's exponent may be an integer
    else:
        b = g.operand_like(shape, a.dtype)
    ops = [i, b] if g.r.random() < 0.7 else [b, i]
    out_shape = _bshape(a.shape, g.val(b).shape)
    g.add(name, ops, {}, Val(out_shape, _out_dtype(rule, a.dtype)))
    return True


def _gen_select_n(g, _):
    i = g.pick(lambda v: True)
    a = g.val(i)
    which = g.operand_like(a.shape, "bool")
    cases = [i, g.operand_like(a.shape, a.dtype, allow_scalar=False)]
    g.add("select_n", [which] + cases, {}, Val(a.shape, a.dtype))
    return True


def _gen_clamp(g, _):
    i = g.pick(lambda v: v.dtype in FLOATS + INTS)
    if i is None:
        return False
    a = g.val(i)
    lo, hi = g.literal(a.dtype), g.operand_like(a.shape, a.dtype)
    if lo[0] == "lit" or hi[0] == "lit":  # clamp does not promote weak scalars
        lo, hi = ["np", a.dtype, 0], ["np", a.dtype, 3]
    g.add("clamp", [lo, i, hi], {}, Val(a.shape, a.dtype))
    return True


def _gen_convert(g, _):
    i = g.pick(lambda v: True)
    new = g.r.choice(ARRAY_KINDS)
    g.add("convert_element_type", [i], {"new_dtype": new}, Val(g.val(i).shape, new))
    return True


def _gen_bitcast(g, _):
    pairs = {"float32": "int32", "int32": "float32", "float16": "bfloat16",
             "bfloat16": "float16", "uint8": "uint8"}
    i = g.pick(lambda v: v.dtype in pairs)
    if i is None:
        return False
    new = pairs[g.val(i).dtype]
    g.add("bitcast_convert_type", [i], {"new_dtype": new}, Val(g.val(i).shape, new))
    return True


def _gen_broadcast_in_dim(g, _):
    i = g.pick(lambda v: len(v.shape) < 3)
    if i is None:
        return False
    a = g.val(i)
    out, dims = [], []
    for d in a.shape:
        while g.r.random() < 0.3 and len(out) < 3:
            out.append(g.r.choice([1, 2, 3]))
        dims.append(len(out))
        out.append(g.r.choice([1, 2]) if d == 1 else d)
    while g.r.random() < 0.4 and len(out) < 3:
        out.append(g.r.choice([0, 2, 3]))
    g.add("broadcast_in_dim", [i], {"shape": out, "broadcast_dimensions": dims},
          Val(out, a.dtype))
    return True


def _factor(r, n):
    """A random shape with ``n`` elements and at most 3 dimensions."""
    if n == 0:
        return r.choice([[0], [2, 0], [0, 3]])
    shape = []
    while n > 1 and len(shape) < 2:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        d = r.choice(divs)
        shape.append(d)
        n //= d
    if n > 1:
        shape.append(n)
    if r.random() < 0.3:
        shape.insert(r.randrange(len(shape) + 1), 1)
    return shape


def _gen_reshape(g, _):
    i = g.pick(lambda v: True)
    a = g.val(i)
    new = _factor(g.r, math.prod(a.shape))
    params = {"new_sizes": new}
    if len(a.shape) > 1 and g.r.random() < 0.3:
        perm = list(range(len(a.shape)))
        g.r.shuffle(perm)
        params["dimensions"] = perm
    g.add("reshape", [i], params, Val(new, a.dtype))
    return True


def _gen_transpose(g, _):
    i = g.pick(lambda v: True)
    a = g.val(i)
    perm = list(range(len(a.shape)))
    g.r.shuffle(perm)
    g.add("transpose", [i], {"permutation": perm},
          Val([a.shape[p] for p in perm], a.dtype))
    return True


def _gen_rev(g, _):
    i = g.pick(lambda v: len(v.shape) > 0)
    if i is None:
        return False
    a = g.val(i)
    dims = sorted(g.r.sample(range(len(a.shape)), g.r.randint(1, len(a.shape))))
    g.add("rev", [i], {"dimensions": dims}, Val(a.shape, a.dtype))
    return True


def _gen_squeeze_expand(g, _):
    i = g.pick(lambda v: True)
    a = g.val(i)
    ones = [d for d, n in enumerate(a.shape) if n == 1]
    if ones and g.r.random() < 0.6:
        dims = g.r.sample(ones, g.r.randint(1, len(ones)))
        g.add("squeeze", [i], {"dimensions": dims},
              Val([n for d, n in enumerate(a.shape) if d not in dims], a.dtype))
        return True
    if len(a.shape) >= 3:
        return False
    d = g.r.randint(-len(a.shape) - 1, len(a.shape))
    out = list(a.shape)
    out.insert(d % (len(a.shape) + 1), 1)
    g.add("expand_dims", [i], {"dimensions": [d]}, Val(out, a.dtype))
    return True


def _gen_slice(g, _):
    i = g.pick(lambda v: len(v.shape) > 0)
    if i is None:
        return False
    a = g.val(i)
    start, limit, strides, out = [], [], [], []
    for n in a.shape:
        s = g.r.randint(0, n)
        e = g.r.randint(s, n)
        st = g.r.choice([1, 1, 2])
        start.append(s), limit.append(e), strides.append(st)
        out.append(0 if e == s else (e - s - 1) // st + 1)
    params = {"start_indices": start, "limit_indices": limit}
    if any(st != 1 for st in strides) or g.r.random() < 0.3:
        params["strides"] = strides
    g.add("slice", [i], params, Val(out, a.dtype))
    return True


def _index_operand(g):
    """A start index: a Python int (out of range now and then) or an int32 scalar value."""
    j = g.pick(lambda v: v.dtype == "int32" and v.shape == () and not v.py)
    if j is not None and g.r.random() < 0.3:
        return j
    return ["lit", g.r.choice([0, 0, 1, 2, -1, 5])]


def _gen_dynamic_slice(g, _):
    i = g.pick(lambda v: len(v.shape) > 0)
    if i is None:
        return False
    a = g.val(i)
    sizes = [g.r.randint(0, n) for n in a.shape]
    starts = [_index_operand(g) for _ in a.shape]
    g.add("dynamic_slice", [i] + starts, {"slice_sizes": sizes}, Val(sizes, a.dtype))
    return True


def _gen_dynamic_update_slice(g, _):
    i = g.pick(lambda v: len(v.shape) > 0)
    if i is None:
        return False
    a = g.val(i)
    sizes = [g.r.randint(0, n) for n in a.shape]
    upd = g.operand_like(sizes, a.dtype, allow_scalar=False)
    starts = [_index_operand(g) for _ in a.shape]
    g.add("dynamic_update_slice", [i, upd] + starts, {}, Val(a.shape, a.dtype))
    return True


def _gen_concatenate(g, _):
    i = g.pick(lambda v: len(v.shape) > 0)
    if i is None:
        return False
    a = g.val(i)
    dim = g.r.randrange(len(a.shape))
    ops, total = [i], a.shape[dim]
    for _ in range(g.r.randint(1, 2)):
        shape = list(a.shape)
        shape[dim] = g.r.choice([0, 1, 2])
        j = g.pick(lambda v: v.dtype == a.dtype and len(v.shape) == len(a.shape) and all(
            x == y for d, (x, y) in enumerate(zip(v.shape, a.shape)) if d != dim))
        ref = j if j is not None and g.r.random() < 0.5 else g.operand_like(
            shape, a.dtype, allow_scalar=False)
        total += g.val(ref).shape[dim]
        ops.append(ref)
    out = list(a.shape)
    out[dim] = total
    g.add("concatenate", ops, {"dimension": dim}, Val(out, a.dtype))
    return True


def _gen_pad(g, _):
    i = g.pick(lambda v: True)
    a = g.val(i)
    config, out = [], []
    for n in a.shape:
        lo, hi, interior = g.r.choice([0, 1, 2, -1]), g.r.choice([0, 1, -1]), g.r.choice([0, 0, 1])
        size = lo + hi + n + max(n - 1, 0) * interior
        if size < 0:
            lo = hi = 0
            size = n + max(n - 1, 0) * interior
        config.append([lo, hi, interior])
        out.append(size)
    pv = g.literal(a.dtype)
    if pv[0] in ("lit", "litc") and a.dtype not in ("float32", "int32", "complex64"):
        pv = ["np", a.dtype, 0] if a.dtype != "complex64" else ["np", a.dtype, [0.0, 0.0]]
    g.add("pad", [i, pv], {"padding_config": config}, Val(out, a.dtype))
    return True


def _gen_reduce(g, name):
    i = g.pick(lambda v: v.dtype in REDUCE[name] and not v.py)
    if i is None:
        return False
    a = g.val(i)
    axes = sorted(g.r.sample(range(len(a.shape)), g.r.randint(0, len(a.shape))))
    if name in ("reduce_max", "reduce_min") and any(a.shape[d] == 0 for d in axes):
        pass  # an empty max/min is the identity (-inf, the dtype's min, ...): compared too
    g.add(name, [i], {"axes": axes},
          Val([n for d, n in enumerate(a.shape) if d not in axes], a.dtype))
    return True


def _gen_argminmax(g, name):
    i = g.pick(lambda v: v.dtype in FLOATS + INTS and len(v.shape) > 0 and 0 not in v.shape)
    if i is None:
        return False
    a = g.val(i)
    axis = g.r.randrange(len(a.shape))
    g.add(name, [i], {"axis": axis, "index_dtype": "int32"},
          Val([n for d, n in enumerate(a.shape) if d != axis], "int32"))
    return True


def _gen_cumulative(g, name):
    i = g.pick(lambda v: v.dtype in CUMULATIVE[name] and len(v.shape) > 0)
    if i is None:
        return False
    a = g.val(i)
    g.add(name, [i], {"axis": g.r.randrange(len(a.shape)), "reverse": g.r.random() < 0.3},
          Val(a.shape, a.dtype))
    return True


def _gen_dot_general(g, _):
    i = g.pick(lambda v: v.dtype in ("float32", "int32", "float16", "complex64") and not v.py)
    if i is None:
        return False
    a = g.val(i)
    dims = list(range(len(a.shape)))
    g.r.shuffle(dims)
    nb = g.r.randint(0, min(1, len(dims)))
    lb, rest = dims[:nb], dims[nb:]
    nc = g.r.randint(0, min(1, len(rest)))
    lc = rest[:nc]
    free_b = [g.r.choice([1, 2, 3]) for _ in range(g.r.randint(0, 1))]
    b_shape = [a.shape[d] for d in lb] + [a.shape[d] for d in lc] + free_b
    perm = list(range(len(b_shape)))
    g.r.shuffle(perm)
    b_shape_p = [b_shape[p] for p in perm]
    inv = {p: k for k, p in enumerate(perm)}
    rb = [inv[k] for k in range(nb)]
    rc = [inv[nb + k] for k in range(nc)]
    b = g.operand_like(b_shape_p, a.dtype, allow_scalar=False)
    params = {"dimension_numbers": [[lc, rc], [lb, rb]]}
    out_dtype = a.dtype
    if a.dtype == "float16" and g.r.random() < 0.5:
        params["preferred_element_type"] = out_dtype = "float32"
    out = ([a.shape[d] for d in lb] + [n for d, n in enumerate(a.shape) if d not in lb + lc]
           + free_b)
    g.add("dot_general", [i, b], params, Val(out, out_dtype))
    return True


def _gen_getitem(g, _):
    i = g.pick(lambda v: len(v.shape) > 0 and not v.py)
    if i is None:
        return False
    a = g.val(i)
    n = a.shape[0]
    kind = g.r.choice(["int", "slice", "array", "none", "value"])
    if kind == "int" and n > 0:
        k = g.r.randrange(-n, n)
        g.add("getitem", [i], {"index": ["int", k]}, Val(a.shape[1:], a.dtype))
    elif kind == "slice":
        s, e, st = g.r.choice([None, 0, 1, -1]), g.r.choice([None, 2, -1]), g.r.choice([None, 2, -1])
        size = len(range(n)[slice(s, e, st)])
        g.add("getitem", [i], {"index": ["slice", s, e, st]},
              Val((size,) + a.shape[1:], a.dtype))
    elif kind == "array":
        m = g.r.choice([0, 1, 3])
        idx = [g.r.randint(-n - 1, n) for _ in range(m)]
        g.add("getitem", [i], {"index": ["array", idx]}, Val((m,) + a.shape[1:], a.dtype))
    elif kind == "value":
        j = g.pick(lambda v: v.dtype == "int32" and len(v.shape) <= 1 and not v.py)
        if j is None:
            return False
        g.add("getitem", [i, j], {"index": ["operand"]},
              Val(g.val(j).shape + a.shape[1:], a.dtype))
    else:
        g.add("getitem", [i], {"index": ["none"]}, Val((1,) + a.shape, a.dtype))
    return True


def _gen_sort(g, _):
    i = g.pick(lambda v: len(v.shape) > 0 and v.dtype != "complex64")
    if i is None:
        return False
    a = g.val(i)
    dim = g.r.randrange(len(a.shape))
    ops = [i]
    if g.r.random() < 0.3:
        ops.append(g.operand_like(a.shape, g.r.choice(["int32", "float32"]), allow_scalar=False))
    g.add("sort", ops, {"dimension": dim, "is_stable": g.r.random() < 0.5, "num_keys": 1},
          Val(a.shape, a.dtype))
    return True


def _gen_top_k(g, _):
    i = g.pick(lambda v: len(v.shape) > 0 and v.dtype in ("float32", "int32") and v.shape[-1] > 0)
    if i is None:
        return False
    a = g.val(i)
    k = g.r.randint(1, a.shape[-1])
    g.add("top_k", [i], {"k": k}, Val(a.shape[:-1] + (k,), a.dtype))
    return True


def _gen_iota(g, _):
    dtype = g.r.choice(["int32", "float32", "uint8", "float16"])
    if g.r.random() < 0.5:
        size = g.r.choice([0, 1, 3, 4])
        g.add("iota", [], {"dtype": dtype, "size": size}, Val((size,), dtype))
    else:
        shape = g.r.choice([s for s in SHAPES if s])
        g.add("broadcasted_iota", [], {"dtype": dtype, "shape": list(shape),
                                       "dimension": g.r.randrange(len(shape))}, Val(shape, dtype))
    return True


def _gen_integer_pow(g, _):
    i = g.pick(lambda v: v.dtype in NUM)
    if i is None:
        return False
    a = g.val(i)
    y = g.r.choice([0, 1, 2, 3, 5] + ([-1, -2] if a.dtype not in INTS else []))
    g.add("integer_pow", [i], {"y": y}, Val(a.shape, a.dtype))
    return True


def _gen_reduce_precision(g, _):
    i = g.pick(lambda v: v.dtype in FLOATS)
    if i is None:
        return False
    a = g.val(i)
    e, m = g.r.choice([(5, 10), (8, 7), (4, 3)])
    g.add("reduce_precision", [i], {"exponent_bits": e, "mantissa_bits": m},
          Val(a.shape, a.dtype))
    return True


GENERATORS = {**{k: _gen_unary for k in UNARY}, **{k: _gen_binary for k in BINARY},
              **{k: _gen_reduce for k in REDUCE}, **{k: _gen_cumulative for k in CUMULATIVE},
              "argmax": _gen_argminmax, "argmin": _gen_argminmax, "select_n": _gen_select_n,
              "clamp": _gen_clamp, "convert_element_type": _gen_convert,
              "bitcast_convert_type": _gen_bitcast, "broadcast_in_dim": _gen_broadcast_in_dim,
              "reshape": _gen_reshape, "transpose": _gen_transpose, "rev": _gen_rev,
              "squeeze_or_expand": _gen_squeeze_expand, "slice": _gen_slice,
              "dynamic_slice": _gen_dynamic_slice,
              "dynamic_update_slice": _gen_dynamic_update_slice,
              "concatenate": _gen_concatenate, "pad": _gen_pad, "dot_general": _gen_dot_general,
              "getitem": _gen_getitem, "sort": _gen_sort, "top_k": _gen_top_k,
              "iota": _gen_iota, "integer_pow": _gen_integer_pow,
              "reduce_precision": _gen_reduce_precision}
# the families weigh about the same whatever their number of ops
_WEIGHTS = {**{k: 1.0 for k in UNARY}, **{k: 1.0 for k in BINARY},
            **{k: 1.5 for k in REDUCE}, **{k: 1.5 for k in CUMULATIVE}}
GEN_NAMES = sorted(GENERATORS)
GEN_WEIGHTS = [_WEIGHTS.get(k, 3.0) for k in GEN_NAMES]


def _corrupt(g):
    """A step with a deliberately bad operand or parameter (both libraries should refuse)."""
    if not g.steps:
        return
    step = g.steps[-1]
    r = g.r
    kind = r.choice(["operand", "param"])
    if kind == "operand" and step[1]:
        k = r.randrange(len(step[1]))
        step[1][k] = r.choice(g.refs()[:-1] or g.refs())
    elif step[2]:
        key = r.choice(sorted(step[2]))
        v = step[2][key]
        if isinstance(v, list) and v and isinstance(v[0], int):
            v[r.randrange(len(v))] += r.choice([-3, 1, 5])
        elif isinstance(v, int) and not isinstance(v, bool):
            step[2][key] = v + r.choice([-7, 4])
        elif isinstance(v, str):
            step[2][key] = r.choice(ARRAY_KINDS)


def generate(rng: random.Random, max_steps=6) -> dict:
    g = Gen(rng)
    transform = rng.choices(list(TRANSFORMS), list(TRANSFORMS.values()))[0]
    if transform in ("grad", "jvp", "jit_grad"):  # differentiated with respect to input 0
        kind = rng.choice(["float32", "float32", "float16", "py_float"])
        if kind == "py_float":
            g.inputs.append([kind, [], g.seed()])
            g.ins.append(Val((), "float32", True))
        else:
            g.new_input(kind)
    for _ in range(rng.randint(1, 2)):
        g.new_input()
    n_steps = rng.randint(1, max_steps)
    bad = rng.random() < 0.06
    tries = 0
    while len(g.steps) < n_steps and tries < 50:
        tries += 1
        name = rng.choices(GEN_NAMES, GEN_WEIGHTS)[0]
        if not GENERATORS[name](g, name) and len(g.inputs) < MAX_INPUTS and rng.random() < 0.3:
            g.new_input()
    if bad:
        _corrupt(g)
    refs = g.refs()
    outputs = [refs[-1]]
    if rng.random() < 0.2 and len(refs) > 1:
        outputs.append(rng.choice(refs[:-1]))
    in0 = g.ins[0]
    last = g.val(refs[-1])
    recipe = {"inputs": g.inputs, "steps": g.steps, "outputs": outputs, "transform": transform,
              # the loop bodies feed the result back when it has the first input's type
              "feedback": (last.shape, last.dtype) == (in0.shape, in0.dtype) and not in0.py,
              "exact": not any(s[0] in INEXACT for s in g.steps)}
    if transform in ("vmap", "vmap_jit"):
        recipe["in_axes"] = [None if v[0].startswith("py_") else rng.choice([0, len(v[1])])
                             for v in g.inputs]
    if transform in ("cond", "switch"):
        recipe["index"] = rng.choice([0, 1] if transform == "cond" else [-1, 0, 1, 2, 3])
    return recipe


# -- building a recipe against a library ------------------------------------------------------

def library(name):
    """``lib.lax``, ``lib.api`` (jit, vmap, grad, ...), ``lib.numpy`` of jax or traxla."""
    if name == "jax":
        import jax
        import jax.numpy as jnp
        return SimpleNamespace(name="jax", lax=jax.lax, api=jax, numpy=jnp)
    import traxla
    import traxla.lax
    import traxla.numpy
    return SimpleNamespace(name="traxla", lax=traxla.lax, api=traxla, numpy=traxla.numpy)


def _operand(ref):
    tag = ref[0]
    if tag == "lit":
        return ref[1]
    if tag == "litc":
        return complex(ref[1], ref[2])
    if tag == "np":
        if ref[1] == "complex64":
            return np.complex64(complex(*ref[2]))
        return np_dtype(ref[1]).type(ref[2])
    if tag == "const":
        return make_value(ref[1], ref[2], ref[3])
    raise ValueError(f"bad operand reference {ref!r}")


def _tup(x):
    return tuple(_tup(y) for y in x) if isinstance(x, list) else x


def apply_step(lib, op, args, params):
    lax = lib.lax
    p = {k: _tup(v) for k, v in params.items()}
    if op in ("convert_element_type", "bitcast_convert_type"):
        return getattr(lax, op)(args[0], np_dtype(p["new_dtype"]))
    if op == "round":
        return lax.round(args[0], lax.RoundingMethod(p["rounding_method"]))
    if op in REDUCE:
        return getattr(lax, op)(args[0], p["axes"])
    if op in ("argmax", "argmin"):
        return getattr(lax, op)(args[0], p["axis"], np_dtype(p["index_dtype"]))
    if op in CUMULATIVE:
        return getattr(lax, op)(args[0], axis=p["axis"], reverse=p["reverse"])
    if op == "dynamic_slice":
        return lax.dynamic_slice(args[0], args[1:], p["slice_sizes"])
    if op == "dynamic_update_slice":
        return lax.dynamic_update_slice(args[0], args[1], args[2:])
    if op == "concatenate":
        return lax.concatenate(args, p["dimension"])
    if op == "dot_general":
        pet = p.get("preferred_element_type")
        return lax.dot_general(args[0], args[1], p["dimension_numbers"],
                               preferred_element_type=None if pet is None else np_dtype(pet))
    if op == "sort":
        out = lax.sort(tuple(args), dimension=p["dimension"], is_stable=p["is_stable"],
                       num_keys=p["num_keys"])
        return out[0]
    if op == "top_k":
        return lax.top_k(args[0], p["k"])[0]
    if op == "iota":
        return lax.iota(np_dtype(p["dtype"]), p["size"])
    if op == "broadcasted_iota":
        return lax.broadcasted_iota(np_dtype(p["dtype"]), p["shape"], p["dimension"])
    if op == "getitem":
        idx = p["index"]
        if idx[0] == "int":
            return args[0][idx[1]]
        if idx[0] == "slice":
            return args[0][slice(*idx[1:])]
        if idx[0] == "array":
            return args[0][np.array(idx[1], np.int32)]
        if idx[0] == "operand":
            return args[0][args[1]]
        return args[0][None]
    if op == "squeeze":
        return lax.squeeze(args[0], p["dimensions"])
    if op == "expand_dims":
        return lax.expand_dims(args[0], p["dimensions"])
    return getattr(lax, op)(*args, **p)


def build_program(lib, recipe):
    consts = {}

    def operand(args, vals, ref):
        if ref[0] == "in":
            return args[ref[1]]
        if ref[0] == "v":
            return vals[ref[1]]
        key = repr(ref)
        if key not in consts:
            consts[key] = _operand(ref)
        return consts[key]

    def program(*args):
        vals = []
        for op, refs, params in recipe["steps"]:
            vals.append(apply_step(lib, op, [operand(args, vals, r) for r in refs], params))
        outs = [operand(args, vals, r) for r in recipe["outputs"]]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return program


def input_values(recipe):
    return [make_value(kind, shape, seed) for kind, shape, seed in recipe["inputs"]]


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _scalar_loss(lib, y):
    lax = lib.lax
    y = _first(y)
    if np.dtype(y.dtype) == np.complex64:
        y = lax.real(y)
    y = lax.convert_element_type(y, np.float32)
    return lax.reduce_sum(y, tuple(range(len(y.shape))))


def _flip(lib, y):
    """A change of value that keeps the type (the other branch of a cond)."""
    def one(x):
        dt = np.dtype(x.dtype)
        return lib.lax.bitwise_not(x) if dt == np.bool_ or dt.kind == "u" else lib.lax.neg(x)
    return tuple(one(x) for x in y) if isinstance(y, tuple) else one(y)


def build(lib, recipe):
    """``(fn, args)``: the recipe's program under its transformation, and its arguments."""
    program = build_program(lib, recipe)
    args = input_values(recipe)
    api, lax, t = lib.api, lib.lax, recipe["transform"]
    n = len(args)
    if t == "eager":
        return program, args
    if t == "jit":
        return api.jit(program), args
    if t in ("vmap", "vmap_jit"):
        batched = []
        for a, spec, axis in zip(args, recipe["inputs"], recipe["in_axes"]):
            if axis is None:
                batched.append(a)
            else:
                other = make_value(spec[0], spec[1], spec[2] + 1)
                batched.append(np.stack([a, other], axis=axis))
        f = api.jit(program) if t == "vmap_jit" else program
        return api.vmap(f, in_axes=tuple(recipe["in_axes"])), batched
    if t in ("grad", "jit_grad"):
        def loss(x, *rest):
            return _scalar_loss(lib, program(x, *rest))
        f = api.grad(loss)
        return (api.jit(f) if t == "jit_grad" else f), args
    if t == "jvp":
        tangent = np.ones_like(args[0]) if isinstance(args[0], np.ndarray) else 1.0

        def f(x, *rest):
            return api.jvp(lambda x0: program(x0, *rest), (x,), (tangent,))
        return f, args
    if t == "scan":
        def body(carry, _):
            out = program(*carry)
            new = (_first(out),) + carry[1:] if recipe["feedback"] else carry
            return new, out

        def f(*a):
            return lax.scan(body, tuple(a), None, length=2)
        return f, args
    if t in ("cond", "switch"):
        def f(index, *a):
            if t == "cond":
                return lax.cond(index, program, lambda *b: _flip(lib, program(*b)), *a)
            return lax.switch(index, [program, lambda *b: _flip(lib, program(*b)),
                                      lambda *b: program(*b)], *a)
        index = np.bool_(recipe["index"]) if t == "cond" else np.int32(recipe["index"])
        return f, [index] + args
    if t in ("while", "fori"):
        def step(carry):
            vals = carry[:n]
            out = program(*vals)
            new = ((_first(out),) + tuple(vals[1:])) if recipe["feedback"] else tuple(vals)
            return new + (out,)

        def f(*a):
            init = tuple(a) + (program(*a),)
            if t == "fori":
                return lax.fori_loop(0, 2, lambda i, c: step(c), init)
            return lax.while_loop(lambda c: c[0][0] < 2,
                                  lambda c: ((c[0][0] + 1,),) + step(c[1:]),
                                  ((np.int32(0),),) + init)
        return f, args
    raise ValueError(f"unknown transform {t!r}")


def _ref_name(ref, base):
    if ref[0] == "in":
        return f"v{ref[1]}"
    if ref[0] == "v":
        return f"v{base + ref[1]}"
    return repr(ref)


def describe(recipe) -> str:
    """The recipe as readable pseudo-code (for failure reports)."""
    lines = [f"transform: {recipe['transform']}" + "".join(
        f", {k}={recipe[k]}" for k in ("in_axes", "index", "feedback") if k in recipe)]
    for i, (kind, shape, seed) in enumerate(recipe["inputs"]):
        lines.append(f"  v{i} = input {kind}{list(shape) if not kind.startswith('py_') else ''}"
                     f" seed={seed}")
    base = len(recipe["inputs"])
    for k, (op, refs, params) in enumerate(recipe["steps"]):
        args = ", ".join(_ref_name(r, base) for r in refs)
        ps = ", ".join(f"{a}={b}" for a, b in params.items())
        lines.append(f"  v{base + k} = {op}({args}{', ' if args and ps else ''}{ps})")
    lines.append(f"  return {', '.join(_ref_name(r, base) for r in recipe['outputs'])}")
    return "\n".join(lines)

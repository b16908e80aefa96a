"""Pallas helpers that are plain functions of traxla operations: ``pl.loop``,
``pl.estimate_cost`` and ``pl.CostEstimate``, ``pl.multiple_of``, ``pl.reciprocal``,
``pl.debug_print``, ``pl.empty``/``empty_like``, ``pl.align_to``, ``pl.next_power_of_2``,
``pl.strides_from_shape``."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from traxla import lax, tree_util
from traxla.api import make_jaxpr
from traxla.ir.jaxpr import subjaxprs
from traxla.tracer import Tracer
import traxla.numpy as jnp

__all__ = ["CostEstimate", "align_to", "debug_print", "empty", "empty_like", "estimate_cost",
           "loop", "multiple_of", "next_power_of_2", "reciprocal", "strides_from_shape"]


def loop(lower, upper, *, init_carry=None, step=1, unroll=None):
    """A decorator running the decorated ``body(i)`` (``body(i, carry) -> carry`` with
    ``init_carry``) for ``i`` in ``range(lower, upper, step)``."""
    concrete = not any(isinstance(v, Tracer) for v in (lower, upper, step))
    if not concrete:
        idx_type = jnp.result_type(lower, upper, step)
        lower, upper, step = (lax.convert_element_type(v, idx_type)
                              for v in (lower, upper, step))
        zero = jnp.array(0, dtype=idx_type)
        trips = lax.div(upper - lower + step - 1, step)
    else:
        lower, upper, step = int(lower), int(upper), int(step)
        zero, trips = 0, -((upper - lower) // -step)

    def decorator(body):
        if init_carry is None:
            body_fn = lambda idx, _: body(lower + idx * step)  # noqa: E731
        else:
            body_fn = lambda idx, carry: body(lower + idx * step, carry)  # noqa: E731
        return lax.fori_loop(zero, trips, body_fn, init_carry, unroll=unroll)

    return decorator


@dataclasses.dataclass(frozen=True)
class CostEstimate:
    """A ``pallas_call``'s cost, for XLA's scheduler."""
    flops: int
    transcendentals: int
    bytes_accessed: int
    remote_bytes_transferred: int = 0

    def to_json(self) -> bytes:
        return (f'{{"flops": {self.flops}, "transcendentals": {self.transcendentals}, '
                f'"bytes_accessed": {self.bytes_accessed}}}').encode("ascii")


_BINARY = {"add", "mul", "sub", "div", "min", "max", "or", "and", "xor"}
_UNARY = {"neg", "floor", "ceil", "round", "not"}
_TRANSCENDENTAL = {"cos", "sin", "tan", "sinh", "cosh", "tanh", "acos", "asin", "atan", "exp",
                   "log", "logistic", "sqrt"}
_CALLS = {"jit", "pjit", "custom_vjp_call", "custom_vjp_call_jaxpr", "run_state"}


def _size(aval):
    return math.prod(aval.shape)


def _jaxpr_cost(jaxpr):
    """(flops, transcendentals) of a jaxpr's equations, by JAX's rules (cost_estimate.py):
    unknown primitives count nothing."""
    flops = trans = 0
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in _BINARY:
            flops += _size(eqn.outvars[0].aval)
        elif name in _UNARY:
            flops += _size(eqn.invars[0].aval)
        elif name in _TRANSCENDENTAL:
            trans += _size(eqn.invars[0].aval)
        elif name == "integer_pow":
            y = eqn.params["y"]
            per = 0 if y in (0, 1) else math.floor(math.log(y, 2)) + bin(y).count("1")
            flops += _size(eqn.invars[0].aval) * per
        elif name == "dot_general":
            (lc, rc), (_, rb) = eqn.params["dimension_numbers"]
            xs, ys = eqn.invars[0].aval.shape, eqn.invars[1].aval.shape
            f = 2 * math.prod(xs[d] for d in lc)
            f *= math.prod(n for i, n in enumerate(xs) if i not in lc)
            f *= math.prod(n for i, n in enumerate(ys) if i not in rc and i not in rb)
            flops += f
        elif name in _CALLS:
            for sub in subjaxprs(eqn.params):
                f, t = _jaxpr_cost(getattr(sub, "jaxpr", sub))
                flops, trans = flops + f, trans + t
    return flops, trans


def estimate_cost(fun, *args, **kwargs) -> CostEstimate:
    """A cost estimate for ``fun`` at ``args`` (arrays or ``ShapeDtypeStruct``s): its
    flops and transcendentals by JAX's per-primitive rules, and the bytes of its
    inputs and outputs."""
    leaves, treedef = tree_util.tree_flatten(args)
    structs = [jnp.zeros(a.shape, a.dtype) if not hasattr(a, "aval") else a for a in leaves]

    def flat(*xs):
        return fun(*tree_util.tree_unflatten(treedef, xs), **kwargs)

    closed = make_jaxpr(flat)(*structs)
    flops, trans = _jaxpr_cost(closed.jaxpr)
    in_bytes = sum(math.prod(a.shape) * np.dtype(a.dtype).itemsize for a in leaves)
    out_bytes = sum(_size(v.aval) * np.dtype(v.aval.dtype).itemsize
                    for v in closed.jaxpr.outvars)
    return CostEstimate(flops=flops, transcendentals=trans,
                        bytes_accessed=in_bytes + out_bytes)


def multiple_of(x, values):
    """A hint that ``x`` is a multiple of ``values``: ``x`` itself (in a compiled kernel,
    Mosaic's ``tpu.assume_multiple``)."""
    from traxla.experimental.pallas.mosaic_call import in_compiled_kernel
    if in_compiled_kernel():
        from traxla.ir.rules.pallas_memory import multiple_of_p
        values = (values,) if isinstance(values, int) else tuple(values)
        return multiple_of_p.bind(x, values=values)
    return x


def reciprocal(x, *, approx: bool = False):
    """``1 / x`` (``approx`` only allows a faster, less exact result on hardware)."""
    return lax.div(jnp.ones_like(x), x)


def debug_print(fmt: str, *args):
    """Prints ``fmt`` formatted with ``args`` from inside a kernel (``jax.debug.print``'s
    formatting)."""
    from traxla import debug
    debug.print(fmt, *args)


empty = lax.empty


def empty_like(x):
    """A pytree like ``x`` (of ``ShapeDtypeStruct``s or arrays) of uninitialized arrays."""
    return tree_util.tree_map(lambda leaf: lax.empty(leaf.shape, leaf.dtype), x)


def align_to(x: int, alignment: int) -> int:
    return -(x // -alignment) * alignment


def next_power_of_2(x: int) -> int:
    if x < 0:
        raise ValueError("`next_power_of_2` requires a non-negative integer.")
    return 1 if x == 0 else 1 << (x - 1).bit_length()


def strides_from_shape(shape) -> tuple:
    size = math.prod(shape)
    strides = []
    for s in shape:
        size = size // s
        strides.append(size)
    return tuple(strides)

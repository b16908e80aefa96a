"""``debug_nans`` / ``debug_infs``: a NaN or inf produced by a program raises
``FloatingPointError`` naming the primitive and the source line that produced it.

An eager primitive's outputs are checked as they come. A jitted program's outputs are
checked after it runs; when one is invalid the program's jaxpr is re-run equation by
equation (into nested ``jit``s and the taken ``cond`` branch), as JAX re-runs the
de-optimized function, so that the first equation producing the invalid value is named."""
from __future__ import annotations

import numpy as np

from ..ir import dtypes
from ..ir.config import config
from ..ir.core import ClosedJaxpr, Literal

# [debug_nans, debug_infs], mirrored from the config so that the hot paths read one list
flags = [False, False]


def _on_update(name, value):
    if name == "debug_nans":
        flags[0] = bool(value)
    elif name == "debug_infs":
        flags[1] = bool(value)


config.on_update(_on_update)


def enabled() -> bool:
    return flags[0] or flags[1]


def invalid_kind(value):
    """'nan' or 'inf' if ``value`` (an Array or NumPy array) holds one that is being checked."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or dtypes.is_extended(dtype) or not (
            dtypes.is_float(dtype) or dtypes.is_complex(dtype)):
        return None
    host = np.asarray(value)
    if flags[0] and np.isnan(host).any():
        return "nan"
    if flags[1] and np.isinf(host).any():
        return "inf"
    return None


def check_eager(prim, outs):
    for out in (outs if prim.multiple_results else [outs]):
        kind = invalid_kind(out)
        if kind is not None:
            raise FloatingPointError(f"invalid value ({kind}) encountered in {prim.name}")


def check_program(name: str, closed: ClosedJaxpr, args, outs):
    """After a jitted call: if an output is invalid, find the equation that made it."""
    kind = next((k for k in map(invalid_kind, outs) if k is not None), None)
    if kind is None:
        return
    _rerun(closed.jaxpr, list(closed.consts), list(args))
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in jit({name}). Because "
        "config.debug_nans and/or config.debug_infs is set, the de-optimized function (i.e., "
        "the function as if the `jit` decorator were removed) was called in an attempt to get "
        "a more precise error message. However, the de-optimized function did not produce "
        "invalid values during its execution. This behavior can result from `jit` "
        "optimizations causing the invalid value to be produced. It may also arise from having "
        "nan/inf literals as inputs or outputs, like `jax.jit(lambda ...: jax.numpy.nan)(...)`.")


def _rerun(jaxpr, consts, args):
    from ..ir.rules.call import jit_p
    from ..ir.rules.control_flow import cond_p
    from .dispatch import apply_primitive_unchecked
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(x):
        return x if type(x) is Literal else env[x]

    for eqn in jaxpr.eqns:
        vals = [read(x) for x in eqn.invars]
        if eqn.primitive is jit_p:
            sub = eqn.params["jaxpr"]
            outs = _rerun(sub.jaxpr, list(sub.consts), vals)
        elif eqn.primitive is cond_p:
            branches = eqn.params["branches"]
            index = int(np.clip(int(np.asarray(vals[0])), 0, len(branches) - 1))
            branch = branches[index]
            outs = _rerun(branch.jaxpr, list(branch.consts), vals[1:])
        else:
            outs = apply_primitive_unchecked(eqn.primitive, vals, eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            for out in outs:
                kind = invalid_kind(out)
                if kind is not None:
                    where = f" (from line {eqn.source_info})" if eqn.source_info else ""
                    raise FloatingPointError(
                        f"invalid value ({kind}) encountered in {eqn.primitive.name}{where}")
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    return [read(v) for v in jaxpr.outvars]

"""``debug_nans`` / ``debug_infs``: a NaN or inf produced by a program raises
``FloatingPointError`` naming the primitive and the source line that produced it; and
``log_compiles``: each compilation (jitted or eager) is logged (logger ``traxla``, WARNING).

An eager primitive's outputs are checked as they come. A jitted program's outputs are
checked after it runs; when one is invalid the program's jaxpr is re-run equation by
equation (into nested ``jit``s, the taken ``cond`` branch, and ``scan``/``while`` bodies
iteration by iteration), as JAX re-runs the de-optimized function, so that the first
equation producing the invalid value is named."""
from __future__ import annotations

import logging

import numpy as np

from traxla.ir import dtypes
from traxla.ir.config import config
from traxla.ir.jaxpr import ClosedJaxpr, Literal
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.control_flow import cond_p, scan_p, while_p
import traxla.runtime.dispatch as _runtime_dispatch

# the calling thread's flags (debug_nans, debug_infs, log_compiles: ``with`` blocks are
# per thread), read on the hot paths
flags = config.current
logger = logging.getLogger("traxla")


def enabled() -> bool:
    return flags.debug_nans or flags.debug_infs


def log_compile(name: str, avals, seconds: float):
    if flags.log_compiles:
        logger.warning("Compiling %s with global shapes and types %s.", name, list(avals))
        logger.warning("Finished XLA compilation of jit(%s) in %.9f sec", name, seconds)


def invalid_kind(value):
    """'nan' or 'inf' if ``value`` (an Array or NumPy array) holds one that is being checked."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or dtypes.is_extended(dtype) or not (
            dtypes.is_float(dtype) or dtypes.is_complex(dtype)):
        return None
    host = np.asarray(value)
    if flags.debug_nans and np.isnan(host).any():
        return "nan"
    if flags.debug_infs and np.isinf(host).any():
        return "inf"
    return None


def check_eager(prim, outs):
    for out in (outs if prim.multiple_results else [outs]):
        kind = invalid_kind(out)
        if kind is not None:
            raise FloatingPointError(f"invalid value ({kind}) encountered in {prim.name}")


DEOPTIMIZED_NOTICE = ("Invalid nan value encountered in the output of a jax.jit function. "
                      "Calling the de-optimized version.")


def run_deoptimized(fn, args, kwargs):
    """``fn(*args, **kwargs)`` run op by op for a function JAX runs jitted (a ``jnp``
    ufunc or operator): a NaN/inf it produces prints JAX's notice before the error."""
    try:
        return fn(*args, **kwargs)
    except FloatingPointError:
        print(DEOPTIMIZED_NOTICE)
        raise


def check_program(name: str, closed: ClosedJaxpr, args, outs):
    """After a jitted call: if an output is invalid, find the equation that made it (JAX
    prints its notice first)."""
    kind = next((k for k in map(invalid_kind, outs) if k is not None), None)
    if kind is None:
        return
    print(DEOPTIMIZED_NOTICE)
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
        elif eqn.primitive is scan_p:
            outs = _rerun_scan(vals, **eqn.params)
        elif eqn.primitive is while_p:
            outs = _rerun_while(vals, **eqn.params)
        else:
            outs = _runtime_dispatch.apply_primitive_unchecked(eqn.primitive, vals, eqn.params)
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


def _rerun_scan(vals, *, jaxpr, length, reverse, num_consts, num_carry, **_):
    consts, carry = vals[:num_consts], list(vals[num_consts:num_consts + num_carry])
    xs = [np.asarray(x) for x in vals[num_consts + num_carry:]]
    ys = [None] * length
    for i in (reversed(range(length)) if reverse else range(length)):
        outs = _rerun(jaxpr.jaxpr, list(jaxpr.consts), list(consts) + carry + [x[i] for x in xs])
        carry, ys[i] = list(outs[:num_carry]), [np.asarray(y) for y in outs[num_carry:]]
    n_ys = len(jaxpr.jaxpr.outvars) - num_carry
    stacked = [np.stack([ys[i][k] for i in range(length)]) if length else
               np.zeros((0,) + tuple(v.aval.shape), v.aval.dtype)
               for k, v in enumerate(jaxpr.jaxpr.outvars[num_carry:num_carry + n_ys])]
    return carry + stacked


def _rerun_while(vals, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts = vals[:cond_nconsts]
    body_consts = vals[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(vals[cond_nconsts + body_nconsts:])
    while True:
        pred, = _rerun(cond_jaxpr.jaxpr, list(cond_jaxpr.consts), list(cond_consts) + carry)
        if not np.asarray(pred).any():  # (a batched predicate runs while any lane is live)
            return carry
        carry = _rerun(body_jaxpr.jaxpr, list(body_jaxpr.consts), list(body_consts) + carry)

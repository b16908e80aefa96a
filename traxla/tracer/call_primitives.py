"""Binding JAX's call primitives ``call`` and ``closed_call`` (``ir/rules/call.py``) with a
function: ``prim.bind(*args, subfuns=(f,), **params)``, ``f`` a ``WrappedFun``.

Outside any transformation ``f`` simply runs (JAX's ``call_impl``). Under one, ``f`` is traced
to a jaxpr on the operands' types, its constants become leading operands, and the primitive
is bound again with ``call_jaxpr=`` that jaxpr (open for ``call``, closed for
``closed_call``), so it is staged, differentiated and batched as one equation.
``get_bind_params`` is the way back: an equation's ``call_jaxpr`` as ``subfuns``."""
from __future__ import annotations

from functools import partial

from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.primitive import Primitive
from traxla.ir.rules.call import CallPrimitive, JitPrimitive, call_p, closed_call_p
from traxla.tracer.eval import EvalTrace
from traxla.tracer.interpret import eval_jaxpr
from traxla.tracer.linear_util import WrappedFun, wrap_init
from traxla.tracer.staging import trace_to_jaxpr
from traxla.tracer.traces import Tracer, current_trace
from traxla.tracer.values import concrete_aval


def _aval(x):
    return x.aval if isinstance(x, Tracer) else concrete_aval(x)


def bind_call_jaxpr(prim: CallPrimitive, args, closed: ClosedJaxpr, **params):
    """Binds ``prim`` on ``args`` calling ``closed``: its constants go first among the
    operands and its jaxpr takes them as its first inputs."""
    inner = closed.jaxpr
    jaxpr = Jaxpr([], [*inner.constvars, *inner.invars], inner.outvars, inner.eqns,
                  inner.debug_info)
    call_jaxpr = jaxpr if prim is call_p else ClosedJaxpr(jaxpr, [])
    return Primitive.bind(prim, *closed.consts, *args, call_jaxpr=call_jaxpr, **params)


def _bind_with_subfuns(prim, args, params):
    params = dict(params)
    subfuns = params.pop("subfuns")
    if len(subfuns) != 1 or not isinstance(subfuns[0], WrappedFun):
        raise TypeError(f"{prim.name}: subfuns must be a tuple of one WrappedFun (made by "
                        f"linear_util.wrap_init), got {subfuns!r}")
    fun, = subfuns
    if isinstance(current_trace(), EvalTrace):  # no transformation: just call it
        return list(fun.call_wrapped(*args))
    closed = trace_to_jaxpr(lambda *xs: list(fun.call_wrapped(*xs)),
                            [_aval(a) for a in args], fun.debug_info)
    if params.pop("inline", False):
        return eval_jaxpr(closed, (), *args)
    return bind_call_jaxpr(prim, args, closed, **params)


def _eval_call(*args, call_jaxpr, **params):
    del params
    return eval_jaxpr(call_jaxpr, (), *args)


def _get_bind_params(prim, params):
    new = dict(params)
    jaxpr = new.pop("call_jaxpr")
    if isinstance(jaxpr, ClosedJaxpr):
        fun = partial(eval_jaxpr, jaxpr.jaxpr, jaxpr.consts)
        dbg = jaxpr.jaxpr.debug_info
    else:
        fun = partial(eval_jaxpr, jaxpr, ())
        dbg = jaxpr.debug_info
    new["subfuns"] = (wrap_init(fun, debug_info=dbg),)
    return new


CallPrimitive._hooks[:] = [_bind_with_subfuns, _get_bind_params]
JitPrimitive._inline_hook[:] = [eval_jaxpr]
call_p.impl = _eval_call  # eager: the equations one by one, as JAX's call_impl
closed_call_p.impl = _eval_call

__all__ = ["bind_call_jaxpr"]

"""Leak checking (JAX's ``jax_check_tracer_leaks`` / ``jax.checking_leaks()``): when the
flag is on, a trace that has finished (a jit, make_jaxpr, scan body or vmap) looks for its
tracers still referenced from outside, and raises naming each one and the chain of
references that keeps it alive, as JAX's ``leaked_tracer_error``.

Off by default: the search runs the garbage collector and asks it for the referrers of the
trace, which costs milliseconds per trace."""
from __future__ import annotations

import gc
import inspect
import types

from traxla.ir.config import config
from traxla.tracer.traces import Tracer


def check_no_leaks(trace, name: str = "trace") -> None:
    """Raises when ``check_tracer_leaks`` is on and tracers of the finished ``trace`` are
    still alive. Callers drop their own references to the trace's tracers first."""
    if not config.current.check_tracer_leaks:
        return
    leaked = find_leaked_tracers(trace)
    if leaked:
        raise leaked_tracer_error(name, trace, leaked)


def find_leaked_tracers(trace) -> list:
    """The tracers of ``trace`` still reachable (unreachable cycles are collected first:
    they cannot reach user code)."""
    gc.collect()
    return [r for r in gc.get_referrers(trace) if isinstance(r, Tracer) and r._trace is trace]


def leaked_tracer_error(name: str, trace, tracers: list) -> Exception:
    ignore = {id(tracers)}
    msgs = []
    for t in tracers:
        msgs.append(f"{t}{_origin(t)}{_why_alive(ignore, t)}")
    msgs = "\n\n".join(msgs)
    return Exception(f"Leaked {name} {type(trace).__name__}. Leaked tracer(s):\n\n{msgs}\n")


def _origin(tracer) -> str:
    try:
        return tracer._origin_msg()
    except Exception:  # noqa: BLE001 - a message about a leak must not fail on its own
        return ""


def _parents(ignore: set, x) -> list:
    """What refers to ``x``, but frames (the running code's locals), ``ignore`` and the
    lists this search makes (added to ``ignore`` as they are made)."""
    out = []
    ignore.add(id(out))
    for r in gc.get_referrers(x):
        if id(r) not in ignore and not isinstance(r, types.FrameType):
            out.append(r)
    return out


def _why_alive(ignore, x) -> str:
    """The chain of objects referring to ``x``, up to a module or an object nothing refers
    to, one line per step (``<list 123>[0]``, ``module.name``, ``<Foo 456>.attr``)."""
    child, lines, seen = x, [], set()
    ignore = ignore | {id(lines), id(seen)}
    while id(child) not in seen and type(child) is not types.ModuleType:
        parents = _parents(ignore, child)
        if not parents:
            break
        parent = parents[0]
        # an instance's (or module's) __dict__, a closure's cell: name the owner in one jump
        if isinstance(parent, dict):
            for owner in _parents(ignore, parent):
                if getattr(owner, "__dict__", None) is parent:
                    parent = owner
                    break
        elif type(parent) is types.CellType:
            for closure in _parents(ignore, parent):
                if type(closure) is tuple:
                    for fn in _parents(ignore, closure):
                        if type(fn) is types.FunctionType:
                            parent = fn
                            break
                    break
        lines.append(f"<{type(child).__name__} {id(child)}> is referred to by "
                     f"{_container_info(parent, id(child))}")
        seen.add(id(child))
        child = parent
    return "\n" + "\n".join(lines) if lines else ""


def _container_info(container, obj_id) -> str:
    name = f"<{type(container).__name__} {id(container)}>"
    if type(container) is types.ModuleType:
        name = getattr(container, "__name__", name)
    if type(container) is types.FunctionType:
        fn_name = getattr(container, "__name__", "<no-name>")
        closure = inspect.getclosurevars(container)
        keys = [k for k, v in dict(closure.nonlocals, **closure.globals).items() if id(v) == obj_id]
        if len(keys) == 1:
            return f"{name} ({fn_name}) closed-over variable {keys[0]}"
        if keys:
            return f"{name} in closed-over variables " + ", ".join(map(repr, keys))
    if hasattr(container, "__dict__"):  # a module's or an instance's attribute
        keys = [k for k in vars(container) if id(vars(container)[k]) == obj_id]
        if len(keys) == 1:
            return f"{name}.{keys[0]}"
        if keys:
            return f"{name} in vars " + ", ".join(map(repr, keys))
    if isinstance(container, (list, tuple)):
        idxs = [i for i, x in enumerate(container) if id(x) == obj_id]
        if len(idxs) == 1:
            return f"{name}[{idxs[0]}]"
        return f"{name} at indices " + ", ".join(map(str, idxs))
    if isinstance(container, dict):
        keys = [k for k in container if id(container[k]) == obj_id]
        if len(keys) == 1:
            return f"{name}[{keys[0]!r}]"
        return f"{name} at keys " + ", ".join(map(repr, keys))
    return name

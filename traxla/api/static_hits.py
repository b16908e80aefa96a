"""The hit path of a ``jit`` with static arguments (``static_argnums``/``static_argnames``),
for calls whose other positional arguments are default-device Arrays and whose keywords,
if any, are static arguments.

Such a call's entry sits in the function's ``HitTable`` under the key
``(tag, part_0, ..., part_n-1)``: the static value itself at a static position, the Array's
aval elsewhere, then the keywords' values; ``tag`` is one object per number of positional
arguments (which fixes the static positions) and keyword names in the call's order, so no
key can be mistaken for a plain ``jit``'s tuple of avals. Per such form, ``hit(*args)``
(``hit(kwargs, *args)``) is straight-line code compiled once (as the pytree
matchers of ``call_signatures``): it checks each Array, compares the key with the table's
last hit by identity (``HitTable.lastn``, forgotten on any removal), else looks it up (the
static values hashed and compared as the executable cache compares them), then runs the
entry, or returns ``MISS`` for the slow path to decide (an unhashable static value, a new
signature, a placed Array...)."""
from __future__ import annotations

from traxla.api import debug_mode
from traxla.api.call_signatures import MISS, run_entry_lines
from traxla.api.jit_caches import _config_epoch
from traxla.api_util import static_positions
from traxla.ir.config import config
from traxla.ir.thread_state import unusual
from traxla.tracer import EvalTrace
from traxla.tracer.traces import _state as trace_state
from traxla.runtime import ArrayImpl
from traxla.runtime.array import check_not_deleted
from traxla.runtime.xla_adapter import RuntimeErrorType, tracebacks_enabled

flags = config.current
# Beyond this many positional arguments the call takes the slow path (the code is per count).
MAX_ARGS = 32
# Per program, the keyword orders beyond the first that get a hit path of their own.
MAX_MORE_ORDERS = 4


def make_hit(table, n: int, static_positions, names=()):
    """``hit(*args)`` for calls with ``n`` positional arguments, ``static_positions`` (a set
    of indices) static, every other one an Array; with ``names`` (static arguments passed
    by keyword, in the call's order) ``hit(kwargs, *args)``. ``hit.tag`` is the first
    element of its keys in ``table``."""
    tag = object()
    # f(array, static): its memo also as ``table.last_as``, which the call itself reads
    as_form = n == 2 and set(static_positions) == {1} and not names
    dyn = [i for i in range(n) if i not in static_positions]
    parts = [f"a{i}" if i in static_positions else f"a{i}.aval" for i in range(n)]
    parts += [f"k{j}" for j in range(len(names))]
    arrays = "(" + "".join(f"a{i}, " for i in dyn) + ")"
    bufs = "[" + ", ".join(f"a{i}._buf" for i in dyn) + "]"
    same = " and ".join(["last[0] is tag"] + [f"last[{k + 1}] is {p}"
                                              for k, p in enumerate(parts)])
    params = ["kwargs"] * bool(names) + [f"a{i}" for i in range(n)]
    lines = [f"def hit({', '.join(params)}):"]
    lines += [f" k{j} = kwargs[_n{j}]" for j in range(len(names))]
    lines += [f" if type(a{i}) is not Array or a{i}._placement is not None: return MISS"
              for i in dyn]
    lines += [" last = table.lastn",
              f" if {same}:",
              f"  entry = last[{len(parts) + 1}]",
              " else:",
              f"  key = (tag, {''.join(p + ', ' for p in parts)})",
              "  try:",
              "   entry = table.get(key)",
              "  except TypeError:",  # an unhashable static value: the slow path's error
              "   return MISS",
              "  if entry is None: return MISS",
              "  table.lastn = (*key, entry)",
              *(["  table.last_as = (key[1], a1, entry)"] if as_form else []),
              *run_entry_lines(arrays, bufs)]
    namespace = dict({f"_n{j}": name for j, name in enumerate(names)},
                     Array=ArrayImpl, MISS=MISS, table=table, tag=tag,
                     tracebacks_enabled=tracebacks_enabled, RuntimeErrorType=RuntimeErrorType,
                     check_not_deleted=check_not_deleted)
    exec(compile("\n".join(lines), f"<traxla.api.static_hits {n} arguments>", "exec"), namespace)
    hit = namespace["hit"]
    hit.tag = tag
    return hit


def hit_key(jitted, args, kwargs, arrays, avals):
    """Whether a slow-path call that compiles a program puts it on a hit path: False, True
    (a jit without static arguments: keyed by ``avals``) or the key of ``make_hit``'s
    table (None: not this call). Not with keywords other than static arguments, pytree
    arguments or switches that need the slow path (disable_jit, debug_nans...), nor inside
    a thread's flag block."""
    if debug_mode.slow_path_only() or flags.local_blocks:
        return False
    if jitted._plain:
        return not kwargs and len(args) == len(arrays) and all(
            type(a) is ArrayImpl for a in args)
    if any(k not in jitted.static_argnames for k in kwargs):
        return False
    key = fast_key(jitted._static_hits, jitted._fast, args,
                   static_positions(jitted.static_argnums, len(args)), avals, kwargs)
    jitted._static_hit2 = jitted._static_hits.get(2)
    return key


def add_keyword_order(jitted, args, kwargs, arrays, avals, entry, epoch):
    """A call that found its program in the executable cache but not on a hit path, passing
    static arguments by keyword (in another order than the call that compiled it, or after
    the hit path forgot it): its own key for ``entry`` in the hit table (``entry.more_keys``,
    dropped with the entry), so that this order hits from now on."""
    key = hit_key(jitted, args, kwargs, arrays, avals)
    table = jitted._fast
    if (type(key) is not tuple or len(entry.more_keys) >= MAX_MORE_ORDERS
            or key[0] is entry.fast_key[0]):  # (the first order: refill's business)
        return
    try:
        if table.get(key) is entry:
            return
    except TypeError:  # an unhashable static value (the slow path has said so already)
        return
    table[key] = entry
    entry.more_keys += (key,)
    if _config_epoch[0] != epoch:  # a configuration change meanwhile: see _hit_paths_stale
        table.pop(key, None)


def fast_key(hits: dict, table, args, static_positions, avals, kwargs=None):
    """The hit-path key of a slow-path call (positional ``args``, the dynamic ones the
    Arrays whose avals are ``avals``, in order; ``kwargs`` static arguments by keyword),
    making its hit function on first use (``hits[len(args)]``, with keywords
    ``hits[len(args), names]``); None when the call cannot take the hit path."""
    n = len(args)
    if n > MAX_ARGS or len(avals) != n - len(static_positions):
        return None
    parts, it = [], iter(avals)
    for i, a in enumerate(args):
        if i in static_positions:
            parts.append(a)
        elif type(a) is not ArrayImpl or a._placement is not None:
            return None
        else:
            parts.append(next(it))
    names = tuple(kwargs) if kwargs else ()
    which = (n, names) if names else n
    hit = hits.get(which)
    if hit is None:
        hit = hits[which] = make_hit(table, n, static_positions, names)
    return (hit.tag, *parts, *(kwargs[k] for k in names))


def call_with_keywords(jitted, args, kwargs):
    """The hit path of a call passing static arguments by keyword: its result, or MISS."""
    if unusual and (type(trace_state.trace) is not EvalTrace or flags.local_blocks):
        return MISS
    hit = jitted._static_hits.get((len(args), tuple(kwargs)))
    return MISS if hit is None else hit(kwargs, *args)


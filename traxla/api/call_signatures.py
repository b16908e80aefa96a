"""What a jitted function's hit path needs: its entries (``Entry``: an executable and how
to call it), the table of Array-argument signatures (``HitTable``), and the signatures it
recognises when its arguments are builtin containers (tuples, lists, dicts, None,
namedtuples) of default-device Arrays (``TreeSignatures``).

A structure seen once is compiled into a straight-line matcher: Python code that checks
each node's exact type, length and dict keys and collects the leaves in the order
``tree_flatten`` gives them, returning None at the first difference. For a known
structure this is about twice as fast as a general flatten (jaxlib's C++ one included,
which also builds and hashes a treedef), and a mismatch never formats an error message
(jaxlib's ``flatten_up_to`` puts the repr of the subtree, and so a readback of every
Array in it, into its ValueError).
"""
from __future__ import annotations

from operator import attrgetter

from traxla import tree_util
from traxla.api.debug_mode import slow_path_only
from traxla.api.jit_caches import _config_epoch
from traxla.ir.config import config
from traxla.runtime import ArrayImpl
from traxla.runtime.array import arrays_from_buffers, check_not_deleted
from traxla.runtime.cache import BoundedCache
from traxla.runtime.xla_adapter.execution import RuntimeErrorType, tracebacks_enabled

_flags = config.current
# Per jitted function: structures compiled, and per structure the aval lists seen.
MAX_STRUCTURES = 8
MAX_SIGNATURES = 8
# Larger structures are left to the slow path (their matcher would be huge code).
MAX_NODES = 4096
# Larger ones have no straight-line hit function (its comparison would be one long line).
MAX_HIT_LEAVES = 64
# What a hit function returns when the call is not its to make (the slow path decides).
MISS = object()

_aval_of = attrgetter("aval")
buf_of = attrgetter("_buf")


class _Unsupported(Exception):
    pass


# Matchers by structure, shared by all functions: a structure evicted from one function's
# few slots (or seen by many functions) is not compiled again.
_matchers = BoundedCache(256)


def matcher_for(treedef):
    """The (cached) compiled matcher of ``treedef``; None when it has no matcher."""
    try:
        return _matchers.get_or_create(treedef, lambda: compile_matcher(treedef))
    except TypeError:  # a custom node's unhashable aux data: no matcher (and no cache)
        return None


def _structure_code(treedef, on_leaf):
    """Lines (indented two spaces) that check ``n0`` node by node against ``treedef``,
    ``return None`` at the first difference, and call ``on_leaf(var)`` for the lines of
    each leaf (in ``tree_flatten`` order); and the constants they name. None when the
    structure holds a node type other than the builtin containers."""
    consts: dict = {"Array": ArrayImpl}
    lines: list = []
    counter = [0]

    def const(value) -> str:
        name = f"_k{len(consts)}"
        consts[name] = value
        return name

    def emit(node, var):
        counter[0] += 1
        if counter[0] > MAX_NODES:
            raise _Unsupported
        kind, data, children = node
        if kind == tree_util._LEAF:
            lines.append(f"  if type({var}) is not Array or {var}._placement is not None: "
                         "return None")
            lines.extend(on_leaf(var))
            return
        if kind == tree_util._NONE:
            lines.append(f"  if {var} is not None: return None")
            return
        if kind == tree_util._TUPLE:
            type_name = "tuple"
        elif kind == tree_util._LIST:
            type_name = "list"
        elif kind == tree_util._DICT or kind == tree_util._NAMEDTUPLE:
            type_name = "dict" if kind == tree_util._DICT else const(data)
        else:
            raise _Unsupported
        lines.append(f"  if type({var}) is not {type_name} or len({var}) != {len(children)}: "
                     "return None")
        for i, child in enumerate(children):
            child_var = f"n{counter[0]}"
            # A dict of the right size that has every key has exactly these keys.
            index = const(data[i]) if kind == tree_util._DICT else str(i)
            lines.append(f"  {child_var} = {var}[{index}]")
            emit(child, child_var)

    try:
        emit(treedef._node, "n0")
    except (_Unsupported, RecursionError):
        return None
    return lines, consts


def compile_matcher(treedef):
    """``match(args) -> leaves | None`` for the positional-argument structure ``treedef``
    (a ``tree_util.PyTreeDef`` of a tuple), or None when it holds a node type other than
    the builtin containers (custom nodes are flattened by user code, so they take the slow
    path)."""
    code = _structure_code(treedef, lambda var: [f"  put({var})"])
    if code is None:
        return None
    body, consts = code
    lines = ["def match(n0):", " leaves = []", " put = leaves.append", " try:", *body,
             " except Exception:", "  return None",  # a missing key, a key's own __eq__
             " return leaves"]
    namespace = dict(consts)
    exec(compile("\n".join(lines), "<traxla.api.call_signatures matcher>", "exec"), namespace)
    return namespace["match"]


def run_entry_lines(arrays: str, bufs: str) -> list:
    """The generated hit functions' last lines: run ``entry`` on the argument buffers
    ``bufs`` (one result straight into an Array when the entry allows it, else
    ``entry.call``); ``arrays`` are the Arrays checked for deletion if running fails."""
    return [" direct = entry.direct",
            " if direct is not None and not tracebacks_enabled():",
            "  start, finish, handlers, aval = direct",
            "  try:",
            f"   buf = finish(start({bufs}), handlers)[0]",
            "  except RuntimeErrorType:",
            f"   check_not_deleted({arrays})",
            "   raise",
            "  out = Array()",
            "  out.aval = aval",
            "  out._buf = buf",
            "  out._npy = None",
            "  out._placement = None",
            "  return out",
            f" return entry.call({arrays}, {bufs})"]


def compile_hit(treedef, match, candidates):
    """``hit(args) -> result | MISS``: the whole cached call of one structure for one
    jitted function, whose known signatures are ``candidates`` (``[(avals list, entry)]``,
    shared with ``TreeSignatures``): the structure checked and its leaves gathered into
    locals (as ``match``), the avals compared with the last hit's by identity
    (``hit.memo[0]``; reset on removals), else with each candidate's, then the entry run
    (inlined for one result and every argument kept). A structure of more than
    ``MAX_HIT_LEAVES`` leaves gets the general form (``match``, then ``Entry.call``)."""
    leaves: list = []
    code = None if treedef.num_leaves > MAX_HIT_LEAVES else _structure_code(
        treedef, lambda var: leaves.append(var) or ())
    empty = (None,) * (len(leaves) + 1)  # (no leaf's aval is None: it never matches)
    memo = [empty]
    if code is None:
        def hit(args):
            got = match(args)
            if got is not None:
                avals = list(map(_aval_of, got))
                for known, entry in candidates:
                    if known == avals:  # elementwise, by identity first
                        kept = entry.kept
                        return entry.call(got, list(map(buf_of, got)) if kept is None
                                          else [got[i]._buf for i in kept])
            return MISS
        hit.memo, hit.empty = memo, empty
        return hit
    body, consts = code
    k = len(leaves)
    listed = "[" + ", ".join(leaves) + "]"
    bufs = "[" + ", ".join(f"{v}._buf" for v in leaves) + "]"
    same = " and ".join(f"last[{i}] is {v}.aval" for i, v in enumerate(leaves)) or "False"
    lines = ["def hit(n0):", " try:", *[ln.replace("return None", "return MISS") for ln in body],
             " except Exception:", "  return MISS",
             " last = memo[0]",
             f" if {same}:",
             f"  entry = last[{k}]",
             " else:",
             f"  avals = [{''.join(v + '.aval, ' for v in leaves)}]",
             "  for known, entry in candidates:",
             "   if known == avals: break",
             "  else:",
             "   return MISS",
             "  memo[0] = (*avals, entry)",
             " kept = entry.kept",
             " if kept is not None:",
             f"  got = {listed}",
             "  return entry.call(got, [got[i]._buf for i in kept])",
             *run_entry_lines(listed, bufs)]
    namespace = dict(consts, MISS=MISS, memo=memo, candidates=candidates,
                     tracebacks_enabled=tracebacks_enabled, RuntimeErrorType=RuntimeErrorType,
                     check_not_deleted=check_not_deleted)
    exec(compile("\n".join(lines), "<traxla.api.call_signatures hit>", "exec"), namespace)
    hit = namespace["hit"]
    hit.memo, hit.empty = memo, empty
    return hit


class Entry:
    """What a cache hit needs: the executable, the arguments it keeps (None: all) and
    how to rebuild the output tree."""

    __slots__ = ("executable", "out_tree", "single", "run", "parts", "direct", "aval0",
                 "out_avals", "kept", "fast_key", "more_keys")

    def __init__(self, executable, out_tree, kept=None):
        self.fast_key = None  # its key in the hot-path dict, if it has one
        self.more_keys = ()  # its other keys there (static keywords in another order)
        self.executable = executable
        self.out_tree = out_tree
        self.kept = kept
        self.single = out_tree.num_leaves == 1 and tree_util.treedef_is_leaf(out_tree)
        self.run = executable.run
        self.out_avals = executable.out_avals
        self.aval0 = executable.out_avals[0] if executable.out_avals else None
        # ``run(bufs)`` is ``finish(start(bufs), handlers)`` while jaxlib's tracebacks are off,
        # two C calls that the hit paths inline (None: the executable has no such parts)
        parts = getattr(executable, "parts", None)
        self.parts = None if parts is None else (*parts, executable.handlers)
        # (start, finish, handlers, result aval) of a program with one result, the common case
        self.direct = None if parts is None or not self.single else (*self.parts, self.aval0)

    def execute(self, arrays):
        kept = self.kept
        return self.executable.execute(arrays if kept is None else [arrays[i] for i in kept])

    def call(self, arrays, bufs):
        """The hit path's run: ``bufs`` are the buffers of the arguments the program keeps
        (of ``arrays``, every argument, whose avals were matched); returns the output tree."""
        try:
            parts = self.parts
            if parts is not None and not tracebacks_enabled():
                outs = parts[1](parts[0](bufs), parts[2])
            else:
                outs = self.run(bufs)
        except RuntimeErrorType:
            check_not_deleted(arrays)
            raise
        if self.single:  # (array_from_buffer, inlined)
            out = ArrayImpl()
            out.aval = self.aval0
            out._buf = outs[0]
            out._npy = None
            out._placement = None
            return out
        return self.out_tree.unflatten(arrays_from_buffers(self.out_avals, outs))


class HitTable(dict):
    """(avals of the Array arguments) -> hit-path entry, remembering its last one- and
    two-argument hits as ``last1 = (aval, entry)`` and ``last2 = (aval, aval, entry)`` (and
    of a jit with static arguments, ``lastn = (*key, entry)``, and for its calls
    ``f(array, static)`` also ``last_as = (aval, static value, entry)``, which
    ``PjitFunction.__call__`` reads itself: see ``static_hits``; and for a jit's calls of
    one and two Arrays whose entry runs directly, ``last1d = (aval, start, finish,
    handlers, result aval)`` and ``last2d = (aval, aval, ...)``, all the call reads): a
    call repeating one compares avals by identity instead of hashing a key
    (``ShapedArray.__hash__`` is Python code). Any removal forgets them, so a dropped
    entry is never served."""

    __slots__ = ("last1", "last2", "lastn", "last_as", "last1d", "last2d")

    def __init__(self):
        super().__init__()
        self._forget()

    def _forget(self):
        self.last1 = (None, None)
        self.last2 = (None, None, None)
        self.lastn = (None,)
        self.last_as = (None, None, None)
        self.last1d = (None,)
        self.last2d = (None, None)

    def clear(self):
        self._forget()
        super().clear()

    def pop(self, *args):
        self._forget()
        return super().pop(*args)

    def __delitem__(self, key):
        self._forget()
        super().__delitem__(key)

    def popitem(self):
        self._forget()
        return super().popitem()

    def refill(self, entry, epoch):
        """Puts back ``entry`` (a slow-path call's, compiled for the hit path) after a
        configuration change emptied the table, unless the epoch moved again since the call
        began (``epoch``), and only under the global flags (as the entry was made) with no
        switch on that needs the slow path."""
        key = entry.fast_key
        if self.get(key) is not entry and not _flags.local_blocks and not slow_path_only():
            self[key] = entry
            if _config_epoch[0] != epoch:
                self.pop(key, None)

    def call_arrays(self, args):
        """The hit path of a call with three or more default-device Arrays: its result, or
        ``MISS``."""
        avals = []
        for x in args:
            if type(x) is not ArrayImpl or x._placement is not None:
                return MISS
            avals.append(x.aval)
        entry = self.get(tuple(avals))
        return MISS if entry is None else entry.call(args, [x._buf for x in args])

    def lookup2(self, aval0, aval1):
        """The entry of a two-argument signature (None: not cached)."""
        last = self.last2  # read once: the triple is replaced whole, never mutated
        if last[0] is aval0 and last[1] is aval1:
            return last[2]
        entry = self.get((aval0, aval1))
        if entry is not None:
            self.last2 = (aval0, aval1, entry)
        return entry


class TreeSignatures:
    """Known (structure, avals) -> hit-path entry of one jitted function."""

    __slots__ = ("structures", "hits")

    def __init__(self):
        # [(matcher, [(avals list, entry)])]; the hit path reads its truth (no Python frame)
        self.structures: list = []
        # per structure, its compile_hit function: what the hit path runs (a tuple, replaced
        # whole: a call reading it while another thread changes it sees one or the other)
        self.hits: tuple = ()

    def __bool__(self):
        return bool(self.structures)

    def clear(self):
        self.structures.clear()
        self.hits = ()

    def lookup(self, args):
        """``(entry, leaves)`` for a call with these positional arguments, or None."""
        for match, candidates in self.structures:
            leaves = match(args)
            if leaves is None:
                continue
            avals = list(map(_aval_of, leaves))
            for known, entry in candidates:
                if known == avals:  # elementwise, by identity first: cheap for equal objects
                    return entry, leaves
            return None
        return None

    def remember(self, args, args_tree, arrays, avals, entry):
        """Registers a slow-path call whose leaves ``arrays`` (with ``avals``) are exactly
        ``args``'s leaves, so that later calls of the same structure hit."""
        for i, (match, candidates) in enumerate(self.structures):
            if match(args) is not None:
                hit = self.hits[i]
                break
        else:
            match = matcher_for(args_tree)
            if match is None:
                return
            leaves = match(args)
            if leaves is None or len(leaves) != len(arrays) or any(
                    a is not b for a, b in zip(leaves, arrays)):
                return
            if len(self.structures) >= MAX_STRUCTURES:
                del self.structures[0]
                self.hits = self.hits[1:]
            candidates = []
            hit = compile_hit(args_tree, match, candidates)
            self.structures.append((match, candidates))
            self.hits = (*self.hits, hit)
        known = list(avals)
        if any(k == known for k, _ in candidates):
            return
        if len(candidates) >= MAX_SIGNATURES:
            del candidates[0]
            hit.memo[0] = hit.empty  # (it may name the dropped entry)
        candidates.append((known, entry))

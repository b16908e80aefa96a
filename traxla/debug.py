"""``traxla.debug``: print traced values, call Python for its side effects, inspect
placements (JAX's ``jax.debug``, ``jax/_src/debugging.py``)."""
from __future__ import annotations

import bdb
import importlib.util
import logging
import string
import sys

import numpy as np

import linecache

from traxla import tree_util
from traxla.ir.avals import ShapedArray
from traxla.ir.effects import DebugEffect, OrderedDebugEffect, debug_effect, ordered_debug_effect
from traxla.ir.rules.callbacks import debug_callback_p, debug_print_p
from traxla.lowering.rules.callbacks import DebugPrintFormatter
from traxla.runtime.dispatch import eager_impls
from traxla.api.callback import host_values
from traxla.tracer.values import is_concrete
from traxla.tracer import Tracer
from traxla.tracer.traces import user_source_info
from traxla.runtime import devices
from traxla.sharding import SingleDeviceSharding

__all__ = ["print", "callback", "breakpoint", "inspect_array_sharding",
           "visualize_array_sharding", "visualize_sharding", "log", "DebugEffect",
           "OrderedDebugEffect"]



def _is_array_like(x) -> bool:
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
        return True
    return hasattr(x, "aval") and isinstance(getattr(x, "aval"), ShapedArray)


def _split_callback_args(args, kwargs):
    """Array-like leaves are operands; anything else (strings, None...) stays in Python."""
    flat, in_tree = tree_util.tree_flatten((args, kwargs))
    static_args, dyn_args = {}, []
    for i, a in enumerate(flat):
        if _is_array_like(a) and (not isinstance(a, (bool, int, float, complex))
                                  or is_concrete(a)):
            dyn_args.append(a)
        else:
            static_args[i] = a
    return in_tree, dyn_args, static_args


class _FormatChecker(string.Formatter):
    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(
                f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                "You may be passing an f-string (i.e, `f\"{x}\"`) into "
                "`jax.debug.print` and instead should pass in a regular string.")


_formatter = _FormatChecker()


def _make_logging_record(level):
    info = user_source_info()
    file_name, line_no = ("(unknown file)", 0) if info is None else (info.file, info.line)
    return logging.getLogger("traxla").makeRecord("traxla", level, file_name, line_no, "", (), None)


def _call_or_return(name, fn, first, args, kwargs):
    """JAX's two forms of ``debug.print``/``debug.callback``: ``fn(first, *args, **kwargs)``
    now, or (called with no arguments) ``fn`` itself to call later."""
    if first is not None:
        fn(first, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"{name} received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return fn


def print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
          _use_logging=False, **kwargs):
    """Prints ``fmt.format(*args, **kwargs)`` with the values the program computes, when it
    runs (``jax.debug.print``). ``ordered=True`` keeps prints in program order."""

    def _debug_print(fmt, *c_args, **c_kwargs):
        if not isinstance(fmt, str):
            raise TypeError(f"jax.debug.print's format must be a str, got {type(fmt).__name__}")
        if not skip_format_check:
            _formatter.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        in_tree, dyn_args, static_args = _split_callback_args(c_args, c_kwargs)
        debug_print_p.bind(
            *dyn_args, fmt=fmt, ordered=ordered, partitioned=partitioned, in_tree=in_tree,
            static_args=tuple(static_args.items()),
            np_printoptions=tuple(np.get_printoptions().items()),
            has_placeholders=has_placeholders,
            logging_record=_make_logging_record(logging.INFO) if _use_logging else None)

    return _call_or_return("debug_print", _debug_print, fmt, args, kwargs)


def log(fmt=None, *args, **kwargs):
    """``debug.print`` through the ``logging`` module (logger ``traxla``, level INFO)."""
    return print(fmt, *args, _use_logging=True, **kwargs)


def callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Calls ``callback(*args, **kwargs)`` with the values the program computes, for its side
    effects (``jax.debug.callback``)."""

    def _debug_callback(callback, *c_args, **c_kwargs):
        if not callable(callback):
            raise TypeError("first argument to jax.debug.callback must be callable, "
                            f"but got an object of type {type(callback)}")
        in_tree, dyn_args, static_args = _split_callback_args(c_args, c_kwargs)

        def _flat_callback(*dyn_args_flat):
            n = len(static_args) + len(dyn_args_flat)
            it = iter(dyn_args_flat)
            leaves = [static_args[i] if i in static_args else next(it) for i in range(n)]
            args_, kwargs_ = tree_util.tree_unflatten(in_tree, leaves)
            callback(*args_, **kwargs_)
            return ()

        _flat_callback.user_callback = callback
        # named as JAX names it, so that jaxprs print the same
        _flat_callback.__qualname__ = "debug_callback.<locals>._debug_callback.<locals>._flat_callback"
        debug_callback_p.bind(*dyn_args, callback=_flat_callback,
                              effect=ordered_debug_effect if ordered else debug_effect,
                              partitioned=partitioned)

    return _call_or_return("debug_callback", _debug_callback, callback, args, kwargs)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,
               token=None, **kwargs):
    """Stops the running program in a small terminal debugger (``jax.debug.breakpoint``):
    the caller's array variables hold their concrete values. Commands: ``p expr``/``pp
    expr`` (or any expression), ``l`` (list the source), ``w`` (where), ``c`` (continue),
    ``q`` (quit: raise ``BdbQuit`` out of the program)."""
    frame = sys._getframe(1)
    arrays, others = {}, {}
    for name, value in frame.f_locals.items():
        leaves, tree = tree_util.tree_flatten(value)
        if leaves and all(_is_array_like(x) for x in leaves):
            arrays[name] = (tree, len(leaves), leaves)
        else:
            others[name] = value
    names = list(arrays)
    flat = [x for n in names for x in arrays[n][2]]
    where = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)

    def _stop(*values):
        env, it = dict(others), iter(values)
        for n in names:
            tree, count, _ = arrays[n]
            env[n] = tree_util.tree_unflatten(tree, [next(it) for _ in range(count)])
        _Debugger(env, where).cmdloop()

    callback(_stop, *flat, ordered=ordered)


class _Debugger:
    """A line-oriented debugger over one frame's concrete values (prompt ``(jdb)``)."""

    prompt = "(jdb) "

    def __init__(self, env, where, stdin=None, stdout=None):
        self.env, self.where = env, where
        self.stdin, self.stdout = stdin or sys.stdin, stdout or sys.stdout

    def write(self, text):
        self.stdout.write(text + "\n")

    def listing(self, context=2):
        file, line, _ = self.where
        out = []
        for n in range(max(1, line - context), line + context + 1):
            src = linecache.getline(file, n)
            if src:
                out.append(f"{'->' if n == line else '  '} {n:4d} {src.rstrip()}")
        return "\n".join(out)

    def cmdloop(self):
        file, line, fn = self.where
        self.write(f"Entering jdb:\n> {file}({line}){fn}()\n{self.listing()}")
        while True:
            self.stdout.write(self.prompt)
            self.stdout.flush()
            text = self.stdin.readline()
            if not text:  # end of input: continue
                return
            command, _, arg = text.strip().partition(" ")
            if command in ("c", "cont", "continue"):
                return
            if command in ("q", "quit", "exit"):
                raise bdb.BdbQuit()
            if command in ("l", "list", "ll"):
                self.write(self.listing(5))
            elif command in ("w", "where", "bt"):
                self.write(f"> {file}({line}){fn}()")
            elif command in ("p", "pp") and arg:
                self.evaluate(arg)
            elif command in ("h", "help"):
                self.write("p <expr>, pp <expr>, l(ist), w(here), c(ontinue), q(uit)")
            elif text.strip():
                self.evaluate(text.strip())

    def evaluate(self, expr):
        try:
            self.write(repr(eval(expr, {"np": np}, dict(self.env))))  # noqa: S307
        except Exception as e:  # noqa: BLE001 - reported to the user, the session goes on
            self.write(f"*** {type(e).__name__}: {e}")


# -- placements ---------------------------------------------------------------------

def _sharding_of(x):
    if not isinstance(x, Tracer):
        sharding = getattr(x, "sharding", None)
        if sharding is not None:
            return sharding
    placement = getattr(getattr(x, "aval", None), "sharding_type", None)
    if placement is not None and getattr(placement, "mesh", None) is not None:
        return placement
    return SingleDeviceSharding(devices()[0])


def inspect_array_sharding(value, *, callback):
    """Calls ``callback`` with the placement of each array in ``value`` (at trace time
    under ``jit``: the placement in the type; outside: the array's own)."""

    def _inspect(x):
        callback(_sharding_of(x))
    tree_util.tree_map(_inspect, value)


def _raise_to_slice(slc):
    return slice(slc, slc + 1) if isinstance(slc, int) else slc


def _slice_to_chunk_idx(size, slc):
    if slc.stop is None and slc.start is None:
        return 0
    return slc.start // (slc.stop - slc.start)


def _canonicalize_color(color):
    if isinstance(color, str):
        return color
    r, g, b = (int(a * 255) for a in color)
    return f"#{r:02X}{g:02X}{b:02X}"


def _text_color(color):
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def _color_iter(color_map, num_rows, num_cols):
    num_colors = num_rows * num_cols
    values = np.linspace(0, 1, num_colors)
    idx = 0
    for _ in range(num_colors):
        yield color_map(values[idx])
        idx = (idx + num_colors // 2 + bool(num_colors % 2 == 0)) % num_colors


def _blocks(shape, sharding):
    """``(devices per block, block heights, block widths)`` keyed by (row, column) of the
    block grid, as fractions of the array (a 1-D array is one row of height None)."""
    slices, heights, widths = {}, {}, {}
    for dev, slcs in sharding.devices_indices_map(tuple(shape)).items():
        slcs = tuple(map(_raise_to_slice, slcs))
        chunk = tuple(map(_slice_to_chunk_idx, shape, slcs))
        if len(slcs) == 2:
            vert, horiz = slcs
            vert_size = vert.stop - vert.start if vert.stop is not None else shape[0]
            horiz_size = horiz.stop - horiz.start if horiz.stop is not None else shape[1]
            heights[chunk] = vert_size / shape[0]
            widths[chunk] = horiz_size / shape[1]
        else:
            horiz, = slcs
            horiz_size = horiz.stop - horiz.start if horiz.stop is not None else shape[0]
            chunk = (0, *chunk)
            heights[chunk] = None
            widths[chunk] = horiz_size / shape[0]
        slices.setdefault(chunk, set()).add(dev.id)
    return slices, heights, widths


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
    """Draws which devices hold which block of an array of ``shape`` (at most 2-D), with
    ``rich``, as JAX's ``jax.debug.visualize_sharding`` does."""
    if not importlib.util.find_spec("rich"):
        raise ValueError("`visualize_sharding` requires `rich` to be installed.")
    import rich.align  # an optional dependency, as JAX's  # noqa: PLC0415
    import rich.box  # noqa: PLC0415
    import rich.console  # noqa: PLC0415
    import rich.padding  # noqa: PLC0415
    import rich.style  # noqa: PLC0415
    import rich.table  # noqa: PLC0415
    if len(shape) > 2 or len(shape) < 1:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    console = rich.console.Console(width=max_width)
    use_color = use_color and console.color_system is not None
    if use_color and not color_map:
        try:
            import matplotlib as mpl  # noqa: PLC0415
            color_map = mpl.colormaps["tab20b"]
        except ModuleNotFoundError:
            use_color = False
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    device_kind = next(iter(sharding.device_set)).platform.upper()
    slices, heights, widths = _blocks(shape, sharding)
    num_rows = max(a[0] for a in slices) + 1
    num_cols = max(a[1] for a in slices) + 1
    colors = _color_iter(color_map, num_rows, num_cols)
    table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0,
                             highlight=not use_color, pad_edge=False,
                             box=rich.box.SQUARE if not use_color else None)
    for i in range(num_rows):
        row = []
        for j in range(num_cols):
            entry = f"{device_kind} " + ",".join(str(s) for s in sorted(slices[i, j]))
            width = min(max(int(widths[i, j] * base_width * 2.5), min_width), max_width)
            height = 1 if heights[i, j] is None else int(heights[i, j] * base_height)
            left, extra = divmod(width - len(entry) - 2, 2)
            right = left + extra
            top, extra = divmod(height - 2, 2)
            bottom = top + extra
            color = text_color = None
            if use_color:
                color = _canonicalize_color(next(colors)[:3])
                text_color = _text_color(color)
                top, bottom, left, right = top + 1, bottom + 1, left + 1, right + 1
            row.append(rich.padding.Padding(
                rich.align.Align(entry, "center", vertical="middle"),
                (max(top, 0), max(right, 0), max(bottom, 0), max(left, 0)),
                style=rich.style.Style(bgcolor=color, color=text_color)))
        table.add_row(*row)
    console.print(table, end="\n\n")


def visualize_array_sharding(arr, **kwargs):
    """Draws ``arr``'s placement (``jax.debug.visualize_array_sharding``)."""

    def _visualize(sharding):
        visualize_sharding(tuple(arr.shape), sharding, **kwargs)
    inspect_array_sharding(arr, callback=_visualize)


# -- outside jit: the callback runs right away --------------------------------------------

def _eager_debug_callback(*args, callback, effect, partitioned):
    callback(*host_values(args))
    return []


def _eager_debug_print(*args, fmt, ordered, partitioned, in_tree, static_args, np_printoptions,
                       has_placeholders, logging_record):
    DebugPrintFormatter(fmt, in_tree, static_args, np_printoptions, has_placeholders,
                        logging_record)(*host_values(args))
    return []


eager_impls[debug_callback_p] = _eager_debug_callback
eager_impls[debug_print_p] = _eager_debug_print

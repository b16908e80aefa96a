"""``python -m traxla cache ls|stats|why FILE:FN|clear``: the persistent compilation cache,
readable (``runtime/compilation_cache.py`` keeps a manifest beside the entries)."""
from __future__ import annotations

import importlib.util
import os
import re
import time

import numpy as np

import ml_dtypes

from traxla.runtime import compilation_cache as cc
from traxla.runtime.xla_adapter import serialization as xla
from traxla import api
from traxla.runtime.backend import get_backend

_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
           "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
           "u32": "uint32", "bool": "bool", "c64": "complex64", "c128": "complex128"}


def parse_avals(text: str) -> list:
    """``"f32[4,8] i32[]"`` -> zero arrays of those shapes and dtypes."""
    out = []
    for tok in text.split():
        m = re.fullmatch(r"([a-z0-9]+)\[([0-9, ]*)\]", tok)
        if m is None or m.group(1) not in _DTYPES:
            raise SystemExit(f"cannot read the argument type {tok!r}: write e.g. f32[4,8] or "
                             f"i32[] (dtypes: {', '.join(_DTYPES)})")
        shape = tuple(int(d) for d in m.group(2).replace(" ", "").split(",") if d)
        dtype = np.dtype(ml_dtypes.bfloat16) if m.group(1) == "bf16" else np.dtype(
            _DTYPES[m.group(1)])
        out.append(np.zeros(shape, dtype))
    return out


def load_function(spec: str):
    """``path/to/file.py:fn`` -> the function (the file is imported as a module)."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise SystemExit(f"expected FILE:FUNCTION, got {spec!r}")
    if not os.path.isfile(path):
        raise SystemExit(f"no such file: {path}")
    module_spec = importlib.util.spec_from_file_location(
        "_traxla_user_" + os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        raise SystemExit(f"{path} has no function {name!r}")
    return fn


def _root(args):
    root = args.dir or cc.cache_dir()
    if not root:
        raise SystemExit("no cache directory: pass --dir, set JAX_COMPILATION_CACHE_DIR, or "
                         "traxla.config.update('compilation_cache_dir', path)")
    return root


def _ago(t):
    if not t:
        return "-"
    s = time.time() - t
    return f"{s:.0f}s ago" if s < 120 else f"{s / 60:.0f}m ago" if s < 7200 else f"{s / 3600:.0f}h ago"


def cmd_ls(args):
    manifest = cc.read_manifest(_root(args))
    print(f"{'key':12s}  {'name':28s} {'arguments':30s} {'compile s':>9s} {'size':>9s} "
          f"{'hits':>5s}  last used")
    for key, e in sorted(manifest.items(), key=lambda kv: -kv[1].get("last_used", 0)):
        avals = " ".join(e.get("avals", []))
        print(f"{key[:12]}  {str(e.get('name'))[:28]:28s} {avals[:30]:30s} "
              f"{e.get('compile_seconds', 0):9.3f} {e.get('size', 0):9d} {e.get('hits', 0):5d}"
              f"  {_ago(e.get('last_used'))}")
    return 0


def cmd_stats(args):
    root = _root(args)
    manifest = cc.read_manifest(root)
    files = [f for f in os.listdir(root) if f.endswith(".xla")] if os.path.isdir(root) else []
    size = sum(os.path.getsize(os.path.join(root, f)) for f in files)
    hits = sum(e.get("hits", 0) for e in manifest.values())
    saved = sum(e.get("hits", 0) * e.get("compile_seconds", 0) for e in manifest.values())
    print(f"cache directory   {root}")
    print(f"entries           {len(files)} ({size / 1024:.1f} KiB)")
    print(f"hits recorded     {hits} (about {saved:.2f} s of XLA compilation saved)")
    limit = cc.config.read("compilation_cache_max_size")
    print(f"size limit        {'none' if limit is None or limit < 0 else f'{limit} bytes'}")
    return 0


def cmd_clear(args):
    print(f"removed {cc.clear(_root(args))} entries")
    return 0


def cmd_why(args):
    """Is FILE:FN's program (for --args) in the cache, and if not, what differs."""
    root = _root(args)
    fn = load_function(args.function)
    name = "jit_" + getattr(fn, "__name__", "fn")
    manifest = cc.read_manifest(root)
    mine = {k: e for k, e in manifest.items() if e.get("name") == name}
    if not args.args:
        print(f"{len(mine)} cached entr{'y' if len(mine) == 1 else 'ies'} named {name}:")
        for k, e in mine.items():
            print(f"  {k[:12]}  ({' '.join(e.get('avals', []))})  hits={e.get('hits', 0)}  "
                  f"jaxlib {e.get('jaxlib')}")
        print("pass --args 'f32[4,8] ...' to check one signature")
        return 0
    lowered = api.jit(fn).lower(*parse_avals(args.args))
    devices = [get_backend().default_device]
    key, program = cc.cache_key(str(lowered.module),
                                xla.compile_options_fingerprint(), devices)
    if key in manifest and os.path.exists(os.path.join(root, key + ".xla")):
        e = manifest[key]
        print(f"cached: {key[:12]} ({e.get('compile_seconds', 0):.3f} s to compile, "
              f"{e.get('hits', 0)} hits)")
        return 0
    same_program = [e for e in manifest.values() if e.get("program") == program]
    if same_program:
        e = same_program[0]
        print(f"not cached for this jaxlib/devices: the same program was cached by jaxlib "
              f"{e.get('jaxlib')} on {e.get('platform')} x{e.get('devices')}")
    elif mine:
        wanted = [a.str_short() for a in lowered._program.in_avals]
        for k, e in mine.items():
            if e.get("avals") != wanted:
                print(f"not cached: {name} is cached for ({' '.join(e.get('avals', []))}), "
                      f"not ({' '.join(wanted)})")
            else:
                print(f"not cached: {name} ({' '.join(wanted)}) was cached from a different "
                      "program (the function, its constants or compile options changed)")
            break
    else:
        print(f"not cached: no entry named {name} (compiled programs are cached when they "
              "take at least persistent_cache_min_compile_time_secs to compile)")
    return 1


def add_parser(sub):
    cache = sub.add_parser("cache", help="the persistent compilation cache: ls, stats, why, clear")
    cache.add_argument("action", choices=["ls", "stats", "why", "clear"])
    cache.add_argument("function", nargs="?", help="for why: path/to/file.py:function")
    cache.add_argument("--args", default="", help="for why: argument types, e.g. 'f32[4,8] i32[]'")
    cache.add_argument("--dir", default=None, help="the cache directory (default: as configured)")


def run(args):
    if args.action == "why" and not args.function:
        raise SystemExit("cache why needs FILE:FUNCTION")
    return {"ls": cmd_ls, "stats": cmd_stats, "why": cmd_why, "clear": cmd_clear}[args.action](args)

"""The persistent compilation cache: compiled executables on disk, shared by processes.

Configured as JAX's (``compilation_cache_dir``, ``persistent_cache_min_compile_time_secs``,
``persistent_cache_min_entry_size_bytes``, ``compilation_cache_max_size``; the ``jax_``
prefix and ``JAX_COMPILATION_CACHE_DIR`` are accepted too). Unlike JAX's, it is readable:
``manifest.json`` records per entry the program's name, argument types, compile seconds, size,
hits and last use (``python -m traxla cache ls|stats|why|clear``).

An entry is ``MAGIC + sha256(payload) + payload`` (the payload is XLA's serialized executable),
written to a temporary file and renamed into place, so readers never see half an entry and
concurrent writers of one key both leave a whole one. A short, corrupt or foreign entry is
logged, deleted and recompiled; an unwritable directory is logged once and compiling goes on.
The key hashes the StableHLO text (shardings included), the compile options, the platform, the
devices' kinds and count (for SPMD programs, the device assignment too) and the jaxlib version,
so a jaxlib upgrade recompiles (and says why). Programs with host
callbacks are cached too: the callables are passed again when loading.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time

from traxla.ir.config import config
from traxla.runtime import xla_adapter as xla

logger = logging.getLogger("traxla.compilation_cache")

MAGIC = b"TRAXLA-XLA-EXECUTABLE-1\n"
_DIGEST = 32
MANIFEST = "manifest.json"

stats = {"hits": 0, "misses": 0, "writes": 0, "errors": 0, "skipped": 0}
_lock = threading.Lock()
_warned_unwritable: set = set()


def cache_dir():
    d = config.read("compilation_cache_dir")
    if d is None:
        d = os.environ.get("TRAXLA_COMPILATION_CACHE_DIR") or os.environ.get(
            "JAX_COMPILATION_CACHE_DIR")
    return os.path.expanduser(d) if d else None


def set_cache_dir(path) -> None:
    """``jax.experimental.compilation_cache.compilation_cache.set_cache_dir``."""
    config.update("compilation_cache_dir", None if path is None else os.fspath(path))


def reset_stats() -> None:
    for k in stats:
        stats[k] = 0


# -- keys -------------------------------------------------------------------------------------

def _program_hash(module_text: str, options: bytes) -> str:
    return hashlib.sha256(module_text.encode() + b"\0" + options).hexdigest()


def cache_key(module_text: str, options: bytes, devices, spmd: bool = False) -> tuple[str, str]:
    """``(key, program)``: the entry's key, and the hash of the program alone (what stays
    equal across a jaxlib upgrade, so a miss can say why). An SPMD program's key also
    names its devices in assignment order (its shardings are in the module text)."""
    program = _program_hash(module_text, options)
    kinds = ",".join(sorted({getattr(d, "device_kind", "?") for d in devices}))
    platform = getattr(devices[0], "platform", "?") if devices else "?"
    ident = f"{program}|{platform}|{kinds}|{len(devices)}|jaxlib-{xla.JAXLIB_VERSION}"
    if spmd:
        ident += "|assignment-" + ",".join(str(getattr(d, "id", "?")) for d in devices)
    return hashlib.sha256(ident.encode()).hexdigest(), program


# -- entries ------------------------------------------------------------------------------------

def _entry_path(root, key):
    return os.path.join(root, key + ".xla")


def _read_entry(root, key):
    """The payload of ``key``, or None (missing; corrupt entries are removed and logged)."""
    path = _entry_path(root, key)
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        logger.warning("compilation cache: cannot read %s (%s); compiling", path, e)
        stats["errors"] += 1
        return None
    problem = None
    if not blob:
        problem = "is empty"
    elif not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + _DIGEST:
        problem = "is not a traxla cache entry (or is truncated)"
    else:
        digest, payload = blob[len(MAGIC):len(MAGIC) + _DIGEST], blob[len(MAGIC) + _DIGEST:]
        if hashlib.sha256(payload).digest() != digest:
            problem = "is corrupt (checksum mismatch: truncated or overwritten)"
    if problem is not None:
        logger.warning("compilation cache: entry %s %s; deleting it and recompiling", path,
                       problem)
        stats["errors"] += 1
        with contextlib.suppress(OSError):
            os.remove(path)
        return None
    return payload


def _write_entry(root, key, payload: bytes) -> bool:
    try:
        os.makedirs(root, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-" + key[:16], dir=root)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, _entry_path(root, key))  # atomic: readers see all or nothing
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise
        return True
    except OSError as e:
        if root not in _warned_unwritable:
            _warned_unwritable.add(root)
            logger.warning("compilation cache: cannot write to %s (%s); compiled programs will "
                           "not be cached there", root, e)
        stats["errors"] += 1
        return False


# -- the manifest (readable metadata; advisory: entries are valid without it) -------------------

@contextlib.contextmanager
def _manifest_locked(root, write=True):
    """The manifest dict, under an exclusive file lock when ``write``."""
    path = os.path.join(root, MANIFEST)
    lock = None
    if write:
        import fcntl  # optional: POSIX only
        try:
            lock = open(os.path.join(root, ".manifest.lock"), "a")
            fcntl.flock(lock, fcntl.LOCK_EX)
        except OSError:
            lock = None
            write = False
    try:
        try:
            with open(path) as f:
                manifest = json.load(f)
            if not isinstance(manifest, dict):
                raise ValueError("not an object")
        except FileNotFoundError:
            manifest = {}
        except (OSError, ValueError) as e:
            logger.warning("compilation cache: manifest %s unreadable (%s); starting a new one",
                           path, e)
            manifest = {}
        yield manifest
        if write:
            fd, tmp = tempfile.mkstemp(prefix=".manifest-", dir=root)
            with os.fdopen(fd, "w") as f:
                json.dump(manifest, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
    except OSError:
        pass
    finally:
        if lock is not None:
            lock.close()


def read_manifest(root=None) -> dict:
    root = root or cache_dir()
    if not root:
        return {}
    with _manifest_locked(root, write=False) as manifest:
        return dict(manifest)


def _touch(root, key, **fields):
    with _manifest_locked(root) as manifest:
        entry = manifest.setdefault(key, {"hits": 0})
        entry.update(fields)
        entry["last_used"] = time.time()
        return manifest


def _evict(root, manifest, keep):
    limit = config.read("compilation_cache_max_size")
    if limit is None or limit < 0:
        return
    entries = sorted(manifest.items(), key=lambda kv: kv[1].get("last_used", 0))
    total = sum(e.get("size", 0) for _, e in entries)
    for key, entry in entries:
        if total <= limit:
            break
        if key == keep:
            continue
        with contextlib.suppress(OSError):
            os.remove(_entry_path(root, key))
        total -= entry.get("size", 0)
        del manifest[key]
        logger.info("compilation cache: evicted %s (%s, %d bytes; least recently used)",
                    key[:12], entry.get("name"), entry.get("size", 0))


# -- the compile path ---------------------------------------------------------------------------

def _module_name(module_text):
    head = module_text[:200]
    start = head.find("module @")
    return head[start + 8:].split()[0] if start >= 0 else "module"


def compile_or_load(client, module, devices, host_callbacks, compiler_options, compile_fn,
                    num_partitions=1, in_avals=(), spmd_options=None):
    """``compile_fn()`` (XLA), unless the persistent cache holds this program.
    ``spmd_options``: an SPMD program's compile options (``devices`` in assignment order)."""
    root = cache_dir()
    if not root or not config.current.enable_compilation_cache:  # (jax_enable_compilation_cache)
        return compile_fn()
    text = str(module)
    if spmd_options is not None:
        options = spmd_options.SerializeAsString()
    else:
        options = xla.compile_options_fingerprint(num_partitions, compiler_options)
    key, program = cache_key(text, options, devices, spmd=spmd_options is not None)
    payload = _read_entry(root, key)
    if payload is not None:
        try:
            loaded = xla.deserialize_executable(client, payload, devices, host_callbacks,
                                                compiler_options, options=spmd_options)
        except Exception as e:  # noqa: BLE001  (an entry XLA refuses is recompiled)
            logger.warning("compilation cache: entry %s could not be loaded (%s); recompiling",
                           key[:12], str(e).splitlines()[0])
            stats["errors"] += 1
            with contextlib.suppress(OSError):
                os.remove(_entry_path(root, key))
        else:
            with _lock:
                stats["hits"] += 1
            with _manifest_locked(root) as manifest:
                entry = manifest.setdefault(key, {"hits": 0, "name": _module_name(text)})
                entry["hits"] = entry.get("hits", 0) + 1
                entry["last_used"] = time.time()
            return loaded
    with _lock:
        stats["misses"] += 1
    _explain_miss(root, key, program, text)
    start = time.perf_counter()
    loaded = compile_fn()
    seconds = time.perf_counter() - start
    if seconds < config.read("persistent_cache_min_compile_time_secs"):
        stats["skipped"] += 1
        return loaded
    payload = xla.serialize_executable(loaded)
    if len(payload) < config.read("persistent_cache_min_entry_size_bytes"):
        stats["skipped"] += 1
        return loaded
    if _write_entry(root, key, payload):
        stats["writes"] += 1
        with _manifest_locked(root) as manifest:
            manifest[key] = {
                "name": _module_name(text), "program": program,
                "jaxlib": xla.JAXLIB_VERSION, "platform": getattr(devices[0], "platform", "?"),
                "devices": len(devices), "avals": [a.str_short() for a in in_avals],
                "compile_seconds": round(seconds, 6), "size": len(payload), "hits": 0,
                "created": time.time(), "last_used": time.time(),
                "host_callbacks": len(host_callbacks),
            }
            _evict(root, manifest, key)
    return loaded


def _explain_miss(root, key, program, text):
    """Logs why a program that was cached under other conditions is compiled again."""
    manifest = read_manifest(root)
    for other_key, entry in manifest.items():
        if entry.get("program") == program and other_key != key:
            if entry.get("jaxlib") != xla.JAXLIB_VERSION:
                logger.warning("compilation cache: %s was cached by jaxlib %s; this is jaxlib "
                               "%s, so it is recompiled", entry.get("name"), entry.get("jaxlib"),
                               xla.JAXLIB_VERSION)
            else:
                logger.warning("compilation cache: %s was cached for other devices (%s x%s); "
                               "recompiling", entry.get("name"), entry.get("platform"),
                               entry.get("devices"))
            return


def clear(root=None) -> int:
    """Deletes every entry and the manifest; returns how many entries there were."""
    root = root or cache_dir()
    if not root or not os.path.isdir(root):
        return 0
    n = 0
    for name in os.listdir(root):
        if name.endswith(".xla") or name in (MANIFEST, ".manifest.lock") or name.startswith(
                (".tmp-", ".manifest-")):
            with contextlib.suppress(OSError):
                os.remove(os.path.join(root, name))
                n += name.endswith(".xla")
    return n

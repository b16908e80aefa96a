"""traxla as a drop-in ``jax``: an import hook mapping ``jax`` and ``jax.X.Y`` to ``traxla``
and ``traxla.X.Y``.

    python -m traxla.as_jax script.py args...
    python -m traxla.as_jax -m pytest tests/
    traxla.as_jax.install()          # from inside a process, before anything imports jax

The finder sits first on ``sys.meta_path``, so the real ``jax`` package may stay installed
and is never imported; ``jaxlib`` is the real one. ``jax.X`` *is* ``traxla.X`` (one module
object under two names), so ``jax.numpy.ndarray is traxla.numpy.ndarray``. JAX's private
``jax._src.X`` paths that libraries import resolve to ``traxla._src.X``, thin re-export
modules; a path traxla has no counterpart for raises ``ModuleNotFoundError`` naming it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

SOURCE = "jax"
TARGET = "traxla"

# The JAX version whose API traxla implements: libraries gate code paths on
# ``jax.__version__`` / ``jax.__version_info__``, so under the drop-in they read this one.
JAX_API_VERSION = "0.10.2"


def target_name(fullname: str) -> str | None:
    """``jax.X.Y`` -> ``traxla.X.Y``; None outside ``jax``. (Only the name is mapped:
    ``from jax._src import compiler`` imports ``traxla._src.compiler`` by the package's own
    name, so a JAX module whose counterpart lives elsewhere in traxla is a module under
    ``traxla/_src/`` that stands for it.)"""
    if fullname == SOURCE:
        return TARGET
    if fullname.startswith(SOURCE + "."):
        return TARGET + fullname[len(SOURCE):]
    return None


class _AliasLoader(importlib.abc.Loader):
    """Loads ``jax.X`` by importing ``traxla.X`` and putting that very module object in
    ``sys.modules['jax.X']`` (the import system returns what ``sys.modules`` holds after
    ``exec_module``, so the placeholder made by ``create_module`` is dropped)."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None  # a placeholder module; replaced in exec_module

    def exec_module(self, module):
        name = module.__name__
        try:
            real = importlib.import_module(self.target)
        except ModuleNotFoundError as e:
            if e.name is not None and (e.name == self.target
                                       or self.target.startswith(e.name + ".")):
                raise ModuleNotFoundError(
                    f"No module named '{name}': traxla, standing in for jax, has no module "
                    f"'{self.target}' (the counterpart of '{name}')", name=name) from None
            raise
        if name == SOURCE:
            # JAX reads JAX_ENABLE_X64, JAX_PLATFORMS, ... when ``jax`` is imported; traxla
            # was imported earlier (by this hook), so the environment is read again now.
            try:
                real.config.read_environment()
            except RuntimeError:  # a backend already started: its settings stay
                pass
            # ``import jax`` imports jax.tree_util, jax.lax, ... as JAX's own imports do:
            # the traxla modules imported so far get their ``jax.`` names in sys.modules
            # (treescope looks its aliases' modules up there)
            for sub, mod in list(sys.modules.items()):
                if sub.startswith(TARGET + ".") and mod is not None:
                    sys.modules.setdefault(SOURCE + sub[len(TARGET):], mod)
        sys.modules[name] = real


class JaxAliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``jax`` and ``jax.*`` as aliases of ``traxla`` and ``traxla.*``."""

    def find_spec(self, fullname, path=None, target=None):
        mapped = target_name(fullname)
        if mapped is None:
            return None
        real = sys.modules.get(mapped)
        is_package = real is None or hasattr(real, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(mapped),
                                              is_package=is_package)

    def __repr__(self):
        return "<traxla.as_jax.JaxAliasFinder: jax -> traxla>"


_FINDER = JaxAliasFinder()


def installed() -> bool:
    return any(isinstance(f, JaxAliasFinder) for f in sys.meta_path)


def install() -> None:
    """Makes every later ``import jax`` / ``from jax.X import Y`` resolve to traxla.

    Refuses (RuntimeError) when the real ``jax`` is already imported in this process: two
    different ``jax`` modules in one process would mix their arrays and tracers."""
    if installed():
        return
    already = sys.modules.get(SOURCE)
    if already is not None and not getattr(already, "__name__", "").startswith(TARGET):
        raise RuntimeError("traxla.as_jax.install(): the real 'jax' package is already "
                           "imported in this process; install the hook before any import "
                           "of jax.")
    sys.meta_path.insert(0, _FINDER)
    import traxla
    from traxla import version as _version
    info = tuple(int(p) for p in JAX_API_VERSION.split("."))
    for mod in (traxla, _version):
        mod.__version__ = JAX_API_VERSION
        mod.__version_info__ = info
    _version._version = JAX_API_VERSION


def uninstall() -> None:
    """Removes the hook and the ``jax`` aliases from ``sys.modules`` (tests)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, JaxAliasFinder)]
    for name in [n for n in sys.modules if n == SOURCE or n.startswith(SOURCE + ".")]:
        if getattr(sys.modules[name], "__name__", "").startswith(TARGET):
            del sys.modules[name]


__all__ = ["install", "uninstall", "installed", "target_name", "JaxAliasFinder",
           "JAX_API_VERSION"]

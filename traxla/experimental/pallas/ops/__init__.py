"""``jax.experimental.pallas.ops`` under the drop-in: JAX's own Pallas kernels (flash,
splash, paged and ragged paged attention, megablox, matmul, all_gather, ...).

These kernels are user-level code written against the public ``jax`` and ``pallas`` API.
traxla does not copy them: this package's ``__path__`` is the ``ops`` folder of the
installed JAX distribution, so ``import jax.experimental.pallas.ops.tpu.flash_attention``
under ``traxla.as_jax`` executes JAX's file as the module
``traxla.experimental.pallas.ops.tpu.flash_attention`` (aliased as the ``jax.`` name, like
every ``jax.X``), and its ``import jax`` resolves to traxla, exactly as any library is run.

The real ``jax`` package is never imported: its folder is located with
``importlib.machinery.PathFinder`` (a search of ``sys.path``, not an import). Without the
drop-in those files' ``import jax`` would import the real JAX, so importing this package
outside ``traxla.as_jax`` raises ``ImportError``; so does a machine without JAX's files.
"""
from __future__ import annotations

import importlib.machinery
import os
import sys


def _jax_ops_folder() -> str:
    # the drop-in is on when ``jax`` already is traxla or its import hook is installed
    # (looked up, not imported: ``traxla.as_jax`` sits in a layer above this package)
    hooked = any(type(f).__name__ == "JaxAliasFinder" for f in sys.meta_path)
    jax_module = sys.modules.get("jax")
    if not hooked and (jax_module is None or jax_module is not sys.modules.get("traxla")):
        raise ImportError(
            "jax.experimental.pallas.ops runs JAX's own kernel files with traxla standing in "
            "for jax: import it under the drop-in (`python -m traxla.as_jax ...` or "
            "`traxla.as_jax.install()` first), as `jax.experimental.pallas.ops`",
            name=__name__)
    spec = importlib.machinery.PathFinder.find_spec("jax")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        ops = os.path.join(folder, "experimental", "pallas", "ops")
        if os.path.isdir(os.path.join(ops, "tpu")):
            return ops
    raise ImportError(
        "jax.experimental.pallas.ops needs the kernel files of the JAX distribution "
        "(jax 0.10.2's jax/experimental/pallas/ops/, pure Python): traxla runs them as a "
        "library; install the `jax` package (`pip install jax==0.10.2`) to use them",
        name=__name__)


__path__ = [_jax_ops_folder()]

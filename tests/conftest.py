"""Test tiers: tests marked ``tpu`` run programs on a TPU and are skipped where there is
none. The check is cheap and starts nothing: libtpu installed and a TPU chip on the PCI bus
(what JAX checks), and the platforms asked for (JAX_PLATFORMS) allowing the TPU."""
import os
import shutil
import tempfile

import pytest


def tpu_present() -> bool:
    from traxla.runtime import xla_adapter
    requested = os.environ.get("TRAXLA_PLATFORMS", os.environ.get("JAX_PLATFORMS", ""))
    if requested and "tpu" not in requested.lower():
        return False
    return xla_adapter.find_libtpu() is not None and xla_adapter.tpu_chips_present() > 0


def pytest_configure(config):
    """Where bytecode is not written (PYTHONDONTWRITEBYTECODE), every Python process the
    suite starts (the xdist workers, the scripts run in a fresh interpreter) compiled
    traxla's sources again, ~0.75 s of each one's start. They share one bytecode cache in
    a temporary folder instead (PYTHONPYCACHEPREFIX), removed at the end: nothing is
    written beside the sources, as asked. (Set here, in the first process: workers and
    scripts inherit it; a process that finds it set leaves it.)"""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    path = tempfile.mkdtemp(prefix="traxla-tests-pycache-")
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = path
    config.add_cleanup(lambda: shutil.rmtree(path, ignore_errors=True))


def pytest_collection_modifyitems(config, items):
    if any("tpu" in item.keywords for item in items) and not tpu_present():
        skip = pytest.mark.skip(reason="no TPU here (tools/tpu_check.sh runs these on one)")
        for item in items:
            if "tpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def jax_side(request):
    """JAX's side of the test, stored: ``jax_side(lambda: ...)`` (tests/_jax_stored.py)."""
    from _jax_stored import JaxSide
    return JaxSide(request)

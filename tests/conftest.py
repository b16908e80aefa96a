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


def pytest_sessionfinish(session, exitstatus):
    """``TRAXLA_STORE_JAX_OUTPUTS=prune python -m pytest tests/test_X.py``: stores JAX's
    missing outputs as ``=1`` does and then drops the entries of test_X's own store that the
    run did not use (tests/_device_scripts.py: prune_unused). Only after a whole, passing,
    single-process run of the named modules: a filtered or partial run would drop the
    entries of the tests it left out."""
    if os.environ.get("TRAXLA_STORE_JAX_OUTPUTS") != "prune" or exitstatus != 0:
        return
    opt = session.config.option
    if getattr(opt, "keyword", "") or getattr(opt, "markexpr", "") or \
            getattr(opt, "numprocesses", None) or getattr(opt, "lf", False) or \
            any("::" in a for a in session.config.args):
        raise pytest.UsageError("TRAXLA_STORE_JAX_OUTPUTS=prune needs a whole run of the "
                                "modules (no -k, -m, -n, --lf or ::test)")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and reporter.stats.get("skipped"):
        print("\nTRAXLA_STORE_JAX_OUTPUTS=prune: nothing removed (skipped tests here may "
              "use stored entries)")
        return
    from _device_scripts import prune_unused
    for store, n in prune_unused():
        print(f"\n{store.name}: {n} stale entries removed")


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

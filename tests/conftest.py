"""Test tiers: tests marked ``tpu`` run programs on a TPU and are skipped where there is
none. The check is cheap and starts nothing: libtpu installed and a TPU chip on the PCI bus
(what JAX checks), and the platforms asked for (JAX_PLATFORMS) allowing the TPU."""
import os

import pytest


def tpu_present() -> bool:
    from traxla.runtime import xla_adapter
    requested = os.environ.get("TRAXLA_PLATFORMS", os.environ.get("JAX_PLATFORMS", ""))
    if requested and "tpu" not in requested.lower():
        return False
    return xla_adapter.find_libtpu() is not None and xla_adapter.tpu_chips_present() > 0


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

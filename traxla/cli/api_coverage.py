"""``python -m traxla coverage --api``: how many of JAX 0.10.2's public names each traxla
namespace has. The reference is a snapshot of JAX's names (``jax_public_names.json``, written
by ``tools/jax_public_names.py`` and checked against the installed JAX by a test), so the
package never imports jax."""
from __future__ import annotations

import importlib
import json
import os

SNAPSHOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jax_public_names.json")

# (label, JAX module, traxla module)
NAMESPACES = [
    ("top level", "jax", "traxla"),
    ("numpy", "jax.numpy", "traxla.numpy"),
    ("numpy.linalg", "jax.numpy.linalg", "traxla.numpy.linalg"),
    ("numpy.fft", "jax.numpy.fft", "traxla.numpy.fft"),
    ("lax", "jax.lax", "traxla.lax"),
    ("random", "jax.random", "traxla.random"),
    ("nn", "jax.nn", "traxla.nn"),
    ("nn.initializers", "jax.nn.initializers", "traxla.nn.initializers"),
    ("scipy.special", "jax.scipy.special", "traxla.scipy.special"),
    ("scipy.linalg", "jax.scipy.linalg", "traxla.scipy.linalg"),
    ("scipy", "jax.scipy", "traxla.scipy"),
    ("scipy.stats", "jax.scipy.stats", "traxla.scipy.stats"),
    ("scipy.integrate", "jax.scipy.integrate", "traxla.scipy.integrate"),
    ("scipy.optimize", "jax.scipy.optimize", "traxla.scipy.optimize"),
    ("scipy.ndimage", "jax.scipy.ndimage", "traxla.scipy.ndimage"),
    ("scipy.signal", "jax.scipy.signal", "traxla.scipy.signal"),
    ("scipy.fft", "jax.scipy.fft", "traxla.scipy.fft"),
    ("scipy.interpolate", "jax.scipy.interpolate", "traxla.scipy.interpolate"),
    ("scipy.spatial", "jax.scipy.spatial", "traxla.scipy.spatial"),
    ("scipy.spatial.transform", "jax.scipy.spatial.transform", "traxla.scipy.spatial.transform"),
    ("scipy.cluster", "jax.scipy.cluster", "traxla.scipy.cluster"),
    ("scipy.cluster.vq", "jax.scipy.cluster.vq", "traxla.scipy.cluster.vq"),
    ("scipy.sparse", "jax.scipy.sparse", "traxla.scipy.sparse"),
    ("scipy.sparse.linalg", "jax.scipy.sparse.linalg", "traxla.scipy.sparse.linalg"),
    ("export", "jax.export", "traxla.export"),
    ("experimental.ode", "jax.experimental.ode", "traxla.experimental.ode"),
    ("experimental.jet", "jax.experimental.jet", "traxla.experimental.jet"),
    ("experimental.sparse", "jax.experimental.sparse", "traxla.experimental.sparse"),
]

# Names that cannot exist without a feature JAX itself lacks on this platform, or that are
# deliberately not part of traxla, with the reason. They are reported, not counted missing.
LEFT_OUT: dict = {}


def _import(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def load_snapshot() -> dict:
    with open(SNAPSHOT) as f:
        return json.load(f)


def api_coverage() -> list:
    """``[(label, have, total, missing names, left-out names)]`` per namespace."""
    rows = []
    for label, entry in load_snapshot()["namespaces"].items():
        ours = _import(entry["traxla"])
        names = entry["names"]
        left_out = LEFT_OUT.get(label, {})
        have = [n for n in names if ours is not None and hasattr(ours, n)]
        missing = [n for n in names if n not in have and n not in left_out]
        rows.append((label, len(have), len(names), missing, [n for n in names if n in left_out]))
    return rows


def api_coverage_table(show_missing: bool = True) -> str:
    rows = api_coverage()
    version = load_snapshot()["jax_version"]
    lines = [f"traxla's coverage of JAX {version}'s public names", "",
             f"{'namespace':30s}{'have':>6s}{'of':>6s}{'percent':>9s}"]
    for label, have, total, missing, left_out in rows:
        pct = 100.0 * have / total if total else 100.0
        lines.append(f"{label:30s}{have:6d}{total:6d}{pct:8.1f}%")
    if show_missing:
        for label, have, total, missing, left_out in rows:
            if missing:
                lines.append(f"\n{label}: missing {len(missing)}: {' '.join(missing)}")
            for name in left_out:
                lines.append(f"\n{label}: left out {name}: {LEFT_OUT[label][name]}")
    return "\n".join(lines)

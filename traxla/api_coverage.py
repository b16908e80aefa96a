"""``python -m traxla coverage --api``: how many of JAX 0.10.2's public names each traxla
namespace has. JAX is imported only inside ``api_coverage()`` (it is the reference, not a
dependency): without it the command says so and exits non-zero."""
from __future__ import annotations

import importlib
import types

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
    ("export", "jax.export", "traxla.export"),
]

# Names that cannot exist without a feature JAX itself lacks on this platform, or that are
# deliberately not part of traxla, with the reason. They are reported, not counted missing.
# (None so far: every jax.numpy name exists or is owned by a namespace still being merged.)
LEFT_OUT: dict = {}


def public_names(module) -> list:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def _stats_namespaces(jax_stats):
    return [(f"scipy.stats.{n}", f"jax.scipy.stats.{n}", f"traxla.scipy.stats.{n}")
            for n in public_names(jax_stats)
            if isinstance(getattr(jax_stats, n), types.ModuleType)]


def _import(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def api_coverage() -> list:
    """``[(label, have, total, missing names, left-out names)]`` per namespace."""
    import jax  # noqa: F401  (the reference; only this command needs it)
    import jax.scipy.stats
    rows = []
    for label, jax_name, traxla_name in NAMESPACES + _stats_namespaces(jax.scipy.stats):
        ref = _import(jax_name)
        if ref is None:
            continue
        ours = _import(traxla_name)
        names = public_names(ref)
        left_out = LEFT_OUT.get(label, {})
        have = [n for n in names if ours is not None and hasattr(ours, n)]
        missing = [n for n in names if n not in have and n not in left_out]
        rows.append((label, len(have), len(names), missing, [n for n in names if n in left_out]))
    return rows


def api_coverage_table(show_missing: bool = True) -> str:
    try:
        rows = api_coverage()
    except ImportError:
        raise SystemExit("python -m traxla coverage --api compares traxla with JAX's public "
                         "names and needs the `jax` package, which is not installed here "
                         "(pip install traxla[test] or pip install jax==0.10.2).")
    import jax
    lines = [f"traxla's coverage of JAX {jax.__version__}'s public names", "",
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

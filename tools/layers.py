#!/usr/bin/env python3
"""traxla's layers, and the imports that break them.

    python tools/layers.py             # upward imports, then the largest import circle
    python tools/layers.py --diagram   # the layer picture of docs/architecture.md (Markdown)

Every module belongs to one layer, by the longest prefix of its dotted name in ``LAYERS``
(bottom first). A module may import its own layer and the layers below it; an import of a
layer above is an *upward import*. Every import counts: module level, inside functions, and
``from pkg import name`` where name is a submodule (as ``../shared/tools/import_graph.py``
counts them). ``tests/test_layering.py`` fails on an upward import and on an import circle
of more than ``MAX_CIRCLE`` modules.
"""
from __future__ import annotations

import ast
import os
import sys
from collections import defaultdict

# Bottom first. Within a layer, modules import each other freely (circles stay small).
LAYERS: list[tuple[str, str, tuple[str, ...]]] = [
    ("base", "pytrees and error classes; the standard library and NumPy only",
     ("traxla.errors", "traxla.tree_util", "traxla.tree", "traxla.version", "traxla.base")),
    ("ir", "dtypes, avals, jaxprs, primitives and their typing rules, configuration",
     ("traxla.ir", "traxla.dtypes")),
    ("tracer", "tracers, the trace stack, bind, staging into jaxprs",
     ("traxla.tracer",)),
    ("lowering", "StableHLO emission per primitive, module building and verification",
     ("traxla.lowering",)),
    ("runtime", "PJRT clients, Arrays, compile and caches, eager dispatch, placement",
     ("traxla.runtime", "traxla.distributed", "traxla._src.earray")),
    ("primitives", "functions that bind one primitive (the binding half of lax)",
     ("traxla.primitives",)),
    ("transforms", "autodiff and vmap machinery: traces, rule registries, entry points",
     ("traxla.autodiff", "traxla.batching", "traxla.jet")),
    ("api", "jit, stages, make_jaxpr, device_put, sharding, array refs",
     ("traxla.api", "traxla.stages", "traxla.api_util", "traxla.sharding", "traxla.state",
      "traxla.typing")),
    ("lax", "jax.lax: composites over the primitives (control flow, linalg, windowed, ...)",
     ("traxla.lax",)),
    ("numpy", "jax.numpy on lax",
     ("traxla.numpy",)),
    ("rules", "JVP, transpose and batching rules, registered into the transforms' tables",
     ("traxla.autodiff.rules", "traxla.batching.rules", "traxla.jet.rules")),
    ("libraries", "namespaces built on numpy: random, nn, scipy, image, export, debug, ffi, ...",
     ("traxla.random", "traxla.nn", "traxla.scipy", "traxla.image", "traxla.export",
      "traxla.debug", "traxla.ffi", "traxla.experimental", "traxla.example_libraries",
      "traxla.diagnostics", "traxla.ops", "traxla.flatten_util")),
    ("namespaces", "the top-level namespace, JAX's compatibility namespaces and the CLIs",
     ("traxla", "traxla.__main__", "traxla.cli", "traxla.extend", "traxla.interpreters",
      "traxla.custom_derivatives", "traxla.custom_batching", "traxla.dlpack", "traxla.profiler", "traxla.ad_checkpoint", "traxla.test_util", "traxla.ref",
      "traxla.core", "traxla.monitoring", "traxla.as_jax",
      "traxla._src",
      # JAX modules of capabilities traxla does not have (traxla.base.unsupported fills
      # them): compatibility namespaces, which import the top-level package as ``jax``;
      # and the experimental namespaces whose modules carry the names of JAX's (its imports)
      "traxla.experimental.sparse", "traxla.experimental.colocated_python",
      "traxla.experimental.jet", "traxla.experimental.ode", "traxla.experimental.multihost_utils",
      "traxla.experimental.shard_map", "traxla.example_libraries.optimizers",
      "traxla.collect_profile",
      "traxla.experimental.array_serialization.pytree_serialization",
      "traxla.experimental.array_serialization.pytree_serialization_utils",
      "traxla.experimental.array_serialization.tensorstore_impl",
      "traxla.experimental.buffer_callback",
      "traxla.experimental.colocated_python.func_backend",
      "traxla.experimental.colocated_python.obj",
      "traxla.experimental.colocated_python.obj_backend", "traxla.experimental.compute_on",
      "traxla.experimental.control_deps", "traxla.experimental.custom_partitioning",
      "traxla.experimental.fused", "traxla.experimental.jax2tf",
      "traxla.experimental.key_reuse", "traxla.experimental.mosaic",
      "traxla.experimental.profiler", "traxla.experimental.random", "traxla.experimental.rnn",
      "traxla.experimental.roofline", "traxla.experimental.scheduling_groups",
      "traxla.experimental.serialize_executable", "traxla.experimental.shard_alike",
      "traxla.experimental.source_mapper", "traxla.experimental.topologies",
      "traxla.experimental.transfer", "traxla.experimental.xla_metadata",
      "traxla.interpreters.xla", "traxla.tools",)),
]
MAX_CIRCLE = 15
_RANK = {name: i for i, (name, _, _) in enumerate(LAYERS)}
_PREFIXES = sorted(((p, name) for name, _, ps in LAYERS for p in ps), key=lambda t: -len(t[0]))


def layer_of(module: str) -> str:
    for prefix, name in _PREFIXES:
        if module == prefix or module.startswith(prefix + "."):
            return name
    raise KeyError(f"{module} is in no layer: add it to LAYERS in tools/layers.py")


def modules(root: str) -> dict[str, str]:
    base = os.path.dirname(os.path.abspath(root))
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                rel = os.path.relpath(p, base)[:-3].replace(os.sep, ".")
                out[rel[:-9] if rel.endswith(".__init__") else rel] = p
    return out


def imports(root: str):
    """{module: {imported module: first line}} for imports inside the package."""
    mods = modules(root)
    pkg = os.path.basename(os.path.normpath(root))
    graph: dict[str, dict[str, int]] = defaultdict(dict)
    for name, path in mods.items():
        is_pkg = path.endswith("__init__.py")
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = name.split(".")
                    parent = parts if is_pkg else parts[:-1]
                    parent = parent[: len(parent) - (node.level - 1)]
                    mod = ".".join(parent + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in mods]
                targets = subs + ([mod] if len(subs) < len(node.names) else [])
            else:
                continue
            for t in targets:
                if not t.startswith(pkg):
                    continue
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != name and not name.startswith(t + "."):
                    graph[name].setdefault(t, node.lineno)
    return mods, graph


def upward_imports(root: str = "traxla") -> list[str]:
    mods, graph = imports(root)
    out = []
    for a in sorted(graph):
        for b, line in sorted(graph[a].items()):
            la, lb = layer_of(a), layer_of(b)
            if _RANK[lb] > _RANK[la]:
                out.append(f"{mods[a]}:{line}: {a} ({la}) imports {b} ({lb})")
    return out


def circles(root: str = "traxla") -> list[list[str]]:
    mods, graph = imports(root)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(mods):
        if v not in index:
            visit(v)
    return sorted((c for c in out if len(c) > 1), key=len, reverse=True)


def diagram(root: str = "traxla") -> str:
    """The layers bottom-up with their module counts and which lower layers each imports."""
    mods, graph = imports(root)
    count = defaultdict(int)
    uses: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for m in mods:
        count[layer_of(m)] += 1
    for a, targets in graph.items():
        for b in targets:
            la, lb = layer_of(a), layer_of(b)
            if la != lb:
                uses[la][lb] += 1
    lines = ["```"]
    for name, what, prefixes in reversed(LAYERS):
        below = ", ".join(f"{b} {n}" for b, n in sorted(uses[name].items(), key=lambda t: -_RANK[t[0]]))
        lines.append(f"{name:<11} {count[name]:>3} modules  {what}")
        lines.append(f"{'':<11}   {' '.join(prefixes)}")
        if below:
            lines.append(f"{'':<11}   imports: {below}")
        lines.append(f"{'':<11}   {'|' if name != LAYERS[0][0] else ''}")
    lines[-1] = "```"
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "traxla")
    if "--diagram" in argv:
        print(diagram(root))
        return 0
    ups = upward_imports(root)
    cs = circles(root)
    for u in ups:
        print(u)
    print(f"upward imports: {len(ups)}; largest circle: {len(cs[0]) if cs else 1} modules"
          + (f" ({', '.join(cs[0])})" if cs and len(cs[0]) > MAX_CIRCLE else ""))
    return 1 if ups or (cs and len(cs[0]) > MAX_CIRCLE) else 0


if __name__ == "__main__":
    sys.exit(main())

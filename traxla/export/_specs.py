"""``symbolic_args_specs``: ShapeDtypeStructs with symbolic shapes for a pytree of args."""
from __future__ import annotations

import numpy as np

from traxla import tree_util
from traxla.ir.shape_poly import SymbolicScope, symbolic_shape
from traxla.api.shape_dtype_struct import ShapeDtypeStruct


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    """``ShapeDtypeStruct``s for ``args`` with the symbolic shapes ``shapes_specs`` (one
    string for every argument, or a pytree of strings/None matching ``args``); a trailing
    ``...`` keeps the argument's remaining dimensions, ``_`` keeps one."""
    leaves, tree = tree_util.tree_flatten(args)
    if scope is None:
        scope = SymbolicScope(constraints)  # one scope for every argument, as JAX's
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    if shapes_specs is None or isinstance(shapes_specs, str):
        specs = [shapes_specs] * len(leaves)
    else:
        specs = tree.flatten_up_to(shapes_specs)
    out = []
    for x, spec in zip(leaves, specs):
        shape = tuple(np.shape(x))
        dtype = getattr(x, "dtype", None) or np.asarray(x).dtype
        if spec is None:
            out.append(ShapeDtypeStruct(shape, dtype))
            continue
        parts = [p.strip() for p in spec.strip().strip("()").split(",") if p.strip()]
        if parts and parts[-1] == "...":
            parts = parts[:-1] + [str(d) for d in shape[len(parts) - 1:]]
        parts = [str(shape[i]) if p == "_" else p for i, p in enumerate(parts)]
        sym = symbolic_shape(", ".join(parts), scope=scope)
        if len(sym) != len(shape):
            raise ValueError(f"polymorphic shape spec {spec!r} has {len(sym)} dimensions but "
                             f"the argument has shape {shape}")
        out.append(ShapeDtypeStruct(sym, dtype))
    return tree_util.tree_unflatten(tree, out)

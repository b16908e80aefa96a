"""``shard_map`` over high-level (hijax) values: a ``HiPspec`` in ``in_specs`` or
``out_specs`` says how each of a high-level type's ``lo_ty`` arrays is split
(``to_lo``), and the body sees each device's block of the value as a value of the type
(``raise_val`` of its arrays' blocks), as JAX's ``shard_map_p.to_lojax`` lowers it.

Where the values can be lowered (eagerly, or while a staged jaxpr is lowered:
``traxla/api/hi_lowering.py``) the ``shard_map`` runs on their arrays at once. In any
other staging trace it is one ``call_hi_primitive`` equation of the global types (its
``_prim`` a ``HiShardMap``), which runs so when the jaxpr is lowered."""
from __future__ import annotations

from traxla import tree_util
from traxla.api.hi_lowering import is_high, lo_avals, lower_vals, raise_vals
from traxla.autodiff.hi_primitive import call_hi_primitive_p
from traxla.primitives import aval_of as typeof
from traxla.sharding.specs import HiPspec, _broadcast_specs
from traxla.tracer import EvalTrace, Tracer, make_debug_info, trace_to_jaxpr
from traxla.tracer.traces import current_trace
from traxla.tracer.values import hitype_avals


def involves_hi(leaves, specs, out_specs) -> bool:
    """Whether a ``shard_map`` call meets a high-level value or spec."""
    if any(isinstance(s, HiPspec) for s in specs):
        return True
    if any(isinstance(s, HiPspec) for s in tree_util.tree_leaves(
            out_specs, is_leaf=lambda s: isinstance(s, HiPspec))):
        return True
    return bool(hitype_avals) and any(
        type(x) in hitype_avals or (isinstance(x, Tracer) and is_high(x.aval)) for x in leaves)


def _lo_specs(avals, specs, what):
    out = []
    for a, s in zip(avals, specs):
        if not is_high(a):
            if isinstance(s, HiPspec):
                raise TypeError(f"shard_map {what}: the spec {s} of a high-level type is "
                                f"given to a value of type {a.str_short()}")
            out.append(s)
            continue
        n = len(a.lo_ty())
        los = tuple(s.to_lo()) if isinstance(s, HiPspec) else (s,) * n
        if len(los) != n:
            raise ValueError(f"shard_map {what}: {s}.to_lo() gave {len(los)} specs for the "
                             f"{n} arrays of {a.str_short()}")
        out.extend(los)
    return out


class HiShardMap:
    """A ``shard_map`` over high-level values as a hijax primitive (``call_hi_primitive``'s
    ``_prim``): its ``expand`` runs the ``shard_map`` on the values' arrays."""

    def __init__(self, run, in_avals, out_avals, name):
        self.run, self.name = run, name
        self.in_avals_flat, self.out_avals_flat = list(in_avals), list(out_avals)
        self.in_tree = tree_util.tree_structure([0] * len(in_avals))
        self.out_tree = tree_util.tree_structure([0] * len(out_avals))
        self.params = {}

    def expand(self, *args):
        return self.run(list(args))

    def _unsupported(self, *_, **__):
        raise NotImplementedError("autodiff and vmap of a shard_map over high-level (hijax) "
                                  "values staged inside a jit")

    jvp = vjp_fwd = lin = batch = _unsupported

    def __repr__(self):
        return f"HiShardMap[{self.name}]"


def call(shard_map, f, mesh, specs, out_specs, check_vma, axis_names, leaves, tree):
    in_avals = [typeof(x) for x in leaves]
    lo_in_specs = tuple(_lo_specs(in_avals, specs, "in_specs"))
    store = {}

    def lo_body(*lo_blocks):
        trace = current_trace()
        previous, trace.requires_low = trace.requires_low, True
        try:
            out = f(*tree_util.tree_unflatten(tree, raise_vals(in_avals, lo_blocks)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            local = [typeof(o) for o in out_leaves]
            store["tree"], store["local"] = out_tree, local
            return lower_vals(local, out_leaves)
        finally:
            trace.requires_low = previous

    def lo_out_specs():
        out_flat = _broadcast_specs(out_specs, store["tree"], "out_specs")
        return tuple(_lo_specs(store["local"], out_flat, "out_specs"))

    def run(args):
        """The shard_map of ``args`` (values, high-level ones as objects): its results'
        values, high-level ones rebuilt from their arrays."""
        lo_args = lower_vals(in_avals, args)
        if "tree" not in store:  # the body's results (their structure and types) first
            trace_to_jaxpr(lambda *xs: lo_body(*xs), _local_avals(mesh, lo_in_specs, lo_args),
                           make_debug_info(f, "shard_map", ()))
        lo_outs = shard_map(lo_body, mesh=mesh, in_specs=lo_in_specs,
                            out_specs=lo_out_specs(), check_vma=check_vma,
                            axis_names=axis_names)(*lo_args)
        return raise_vals(store["local"], lo_outs)

    trace = current_trace()
    if isinstance(trace, EvalTrace) or trace.requires_low:
        outs = run(list(leaves))
        return tree_util.tree_unflatten(store["tree"], outs)
    # staged: one equation of the global types, which abstract evaluation finds
    glob = {}

    def abstract(*lo_args):
        outs = run(raise_vals(in_avals, lo_args))
        glob["avals"] = [hitype_avals[type(o)](o) if type(o) in hitype_avals else typeof(o)
                         for o in outs]
        return lower_vals(glob["avals"], outs)

    closed = trace_to_jaxpr(abstract, lo_avals(in_avals), make_debug_info(f, "shard_map", ()))
    if any(isinstance(c, Tracer) for c in closed.consts):  # (expand runs in another trace)
        raise NotImplementedError(
            "shard_map over high-level (hijax) values inside jit whose function closes over "
            "traced values: pass them to it as arguments")
    prim = HiShardMap(run, in_avals, glob["avals"], getattr(f, "__name__", "f"))
    outs = call_hi_primitive_p.bind(*leaves, _prim=prim)
    return tree_util.tree_unflatten(store["tree"], outs)


def _local_avals(mesh, specs, lo_args):
    """Each device's block type of ``lo_args`` split by ``specs``."""
    from traxla.ir.rules.collectives import spec_factor  # noqa: PLC0415
    abstract = mesh.abstract_mesh
    out = []
    for x, spec in zip(lo_args, specs):
        aval = typeof(x)
        out.append(aval.update(shape=tuple(s // spec_factor(abstract, spec, d)
                                           for d, s in enumerate(aval.shape)),
                               sharding=None))
    return out

"""``shard_map`` and the collectives that run inside it over Manual mesh axes:
psum, pmax, pmin, all_gather, psum_scatter, ppermute, pbroadcast, axis_index, and the
one-sided psend (a value out, a token back) and precv (a token in, a value of ``out_shape``
back), which carry JAX's "one-sided communication" effect."""
from __future__ import annotations

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.effects import Effect, def_effects
from traxla.ir.rules.tokens import abstract_token
from traxla.ir.jaxpr_printer import pp_param_rules
from traxla.ir.primitive import Primitive, def_printing, def_typing
from traxla.ir.sharding import AxisType, ShardingType
from traxla.ir.vma import manual_axes_of, ordered, vma_rules

shard_map_p = Primitive("shard_map", multiple_results=True)
psum_p = Primitive("psum")
pmax_p = Primitive("pmax")
pmin_p = Primitive("pmin")
all_gather_p = Primitive("all_gather")
psum_scatter_p = Primitive("reduce_scatter")
ppermute_p = Primitive("ppermute")
axis_index_p = Primitive("axis_index")
pbroadcast_p = Primitive("pbroadcast")  # every index gets the value at index ``source``
psend_p = Primitive("psend")
precv_p = Primitive("precv")
REDUCERS = {"psum": psum_p, "pmax": pmax_p, "pmin": pmin_p}


def _names(p):
    return () if p is None else (p if isinstance(p, tuple) else (p,))


def spec_factor(mesh, spec, d):
    n = 1
    for a in _names(spec[d]) if d < len(spec) else ():
        n *= mesh.axis_size(a)
    return n


def _shard_map_rule(*args, jaxpr, mesh, in_specs, out_specs, manual_axes, check_vma=True):
    for i, (a, spec, local) in enumerate(zip(args, in_specs, jaxpr.in_avals)):
        expected = tuple(s // spec_factor(mesh, spec, d) for d, s in enumerate(a.shape))
        if expected != tuple(local.shape):
            raise TypeError(f"shard_map argument {i} of shape {a.shape} split by {spec} gives "
                            f"blocks of shape {expected}, but the body takes {local.shape}.")
    outs = []
    explicit = any(t is AxisType.Explicit for t in mesh.axis_types)
    for local, spec in zip(jaxpr.out_avals, out_specs):
        if local is abstract_token:  # (JAX 0.10.2 fails with an AttributeError here)
            raise TypeError("shard_map cannot return a token (psend's result): pass it to "
                            "precv inside the body instead.")
        shape = tuple(s * spec_factor(mesh, spec, d) for d, s in enumerate(local.shape))
        sharding = None
        if explicit:
            full = tuple(spec) + (None,) * (len(shape) - len(spec))
            sharding = ShardingType(mesh, tuple(
                None if not _names(p) else p for p in full))
        outs.append(ShapedArray(shape, local.dtype, local.weak_type, sharding))
    return outs


def _reducer_rule(x, *, axes, axis_index_groups=None):
    # integer entries of ``axes`` are positional axes, reduced away (vmap's collectives)
    pos = [a for a in axes if isinstance(a, int)]
    for a in pos:
        if not 0 <= a < len(x.shape):
            raise ValueError(f"reduction axis {a} is out of bounds for an operand of shape "
                             f"{x.shape}")
    if pos and axis_index_groups is not None:
        raise ValueError("axis_index_groups can only be used with reductions over named axes, "
                         f"but got: {axes}")
    shape = tuple(s for d, s in enumerate(x.shape) if d not in pos)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _all_gather_rule(x, *, all_gather_dimension, axis_name, axis_size, tiled,
                     axis_index_groups=None):
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _psum_scatter_rule(x, *, scatter_dimension, axis_name, axis_size, tiled,
                       axis_index_groups=None):
    shape = list(x.shape)
    if tiled:
        if shape[scatter_dimension] % axis_size:
            raise TypeError(f"psum_scatter of dimension {scatter_dimension} of size "
                            f"{shape[scatter_dimension]} over an axis of size {axis_size}: the "
                            "dimension must be divisible by the axis size.")
        shape[scatter_dimension] //= axis_size
    else:
        if shape[scatter_dimension] != axis_size:
            raise TypeError(f"psum_scatter with tiled=False needs dimension {scatter_dimension} "
                            f"of size {axis_size} (the axis size), got {shape[scatter_dimension]}.")
        del shape[scatter_dimension]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _ppermute_rule(x, *, axis_name, perm):
    srcs = [s for s, _ in perm]
    dsts = [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got perm={perm}")
    return x


def _axis_index_rule(*, axis_name):
    return ShapedArray((), dtypes.int32, False)


def_typing(shard_map_p, _shard_map_rule)


def _shard_map_printing(params):
    """As JAX prints shard_map: its params sorted, ``manual_axes`` under JAX's name
    ``newly_manual_axes``, and the mesh as the call was given it: the concrete mesh of
    ``mesh=`` (``shard_map_shown_meshes``), else the abstract mesh of the context."""
    mesh = params["mesh"]
    shown = {"check_vma": params.get("check_vma", True), "in_specs": params["in_specs"],
             "jaxpr": params["jaxpr"], "mesh": shard_map_shown_meshes.get(mesh, mesh),
             "newly_manual_axes": params["manual_axes"], "out_specs": params["out_specs"]}
    return sorted(shown.items())


# abstract mesh -> the concrete Mesh that shard_map (or pmap) was called with; for printing
shard_map_meshes: dict = {}
# abstract mesh -> the concrete Mesh the last shard_map over it was given as ``mesh=``
shard_map_shown_meshes: dict = {}
pp_param_rules[shard_map_p] = _shard_map_printing
for _prim in REDUCERS.values():
    def_typing(_prim, _reducer_rule)
    def_printing(_prim)
def_typing(all_gather_p, _all_gather_rule)
def_typing(psum_scatter_p, _psum_scatter_rule)
def_typing(ppermute_p, _ppermute_rule)
def_typing(pbroadcast_p, lambda x, *, axis_name, source: x)  # as JAX's: the operand's type


class SingleSideCollectiveEffect(Effect):
    """JAX's effect of psend and precv: they are kept although their results go unused."""
    name = "one-sided communication"


single_side_collective_effect = SingleSideCollectiveEffect()
def_typing(psend_p, lambda x, *, axis_name, perm: abstract_token)
def_typing(precv_p, lambda token, *, out_shape, axis_name, perm: out_shape)
for _prim in (psend_p, precv_p):
    def_effects(_prim, lambda params: frozenset({single_side_collective_effect}))
def_printing(precv_p, first=("axis_name", "out_shape", "perm"))
def_typing(axis_index_p, _axis_index_rule)


# -- varying manual axes (check_vma): what each collective does to them ----------------------

def _axis_names(name):
    return tuple(name) if isinstance(name, (tuple, list)) else (name,)


def _reduced_over(in_avals, *, axes, axis_index_groups=None):
    return ordered(set(in_avals[0].vma) - set(axes))


for _prim in REDUCERS.values():
    vma_rules[_prim] = _reduced_over
vma_rules[psum_scatter_p] = lambda in_avals, *, axis_name, **_: ordered(
    set(in_avals[0].vma) | set(manual_axes_of(_axis_names(axis_name))))
vma_rules[axis_index_p] = lambda in_avals, *, axis_name: ordered(
    manual_axes_of(_axis_names(axis_name)))


# -- reshard: change an array's sharding (its type, under Explicit axes) ------------------------
reshard_p = Primitive("reshard")


def _reshard_rule(x, *, dst_sharding, dst_spec):
    return ShapedArray(x.shape, x.dtype, x.weak_type, dst_sharding, x.memory_space)


def_typing(reshard_p, _reshard_rule)
def_printing(reshard_p, hide=("dst_spec", "dst_sharding"))  # implied by the binder's type

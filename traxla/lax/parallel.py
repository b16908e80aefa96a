"""Collectives over named mesh axes, for use inside ``shard_map``: the reductions (``psum``,
``pmax``, ``pmin``, ``pmean``), ``all_gather``, ``psum_scatter``, ``ppermute`` and ``pshuffle``,
``all_to_all`` and ``pswapaxes``, ``axis_index`` and ``axis_size``."""
from __future__ import annotations

import numpy as np

from traxla import tree_util
from traxla.runtime import dispatch as _dispatch
from traxla.ir.rules.all_to_all import all_to_all_p, ragged_all_to_all_p
from traxla.ir.thread_state import axis_env
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.collectives import (all_gather_p, axis_index_p, pbroadcast_p, pmax_p, pmin_p, ppermute_p,
                                    precv_p, psend_p,
                                    psum_p, psum_scatter_p)
from traxla.ir.rules.reduction import P as _reductions
from traxla.primitives.shapes import expand_dims, squeeze
from traxla.primitives.values import _const, asarray, convert_element_type, dtype_of, shape_of
from traxla.primitives.elementwise import add, mul
from traxla.ir.jaxpr import Literal
from traxla.tracer import Tracer
from traxla.ir.vma import (active as vma_active, manual_ur, ordered, preduced_p, pvary_p,
                            reduced_vary_cast_p, vary_unreduced_cast_p)
from traxla.primitives.values import aval_of

reduce_sum_p = _reductions["reduce_sum"]


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _frame_size(name):
    """The size of the named axis bound innermost (by shard_map's mesh or by a vmap)."""
    for frame in reversed(axis_env):
        if name in frame.axis_names:
            return int(frame.axis_size(name))
    raise NameError(f"unbound axis name: {name}")


def _check_bound(names, api_name):
    """JAX's check of a collective's named axes (integers are positional axes)."""
    for name in names:
        if isinstance(name, int):
            continue
        if not any(name in frame.axis_names for frame in axis_env):
            raise NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                            f"{api_name} under `jax.shard_map`.")


def _group_size(axis_name, axis_index_groups):
    if axis_index_groups is not None:
        return len(axis_index_groups[0])
    return int(np.prod([_frame_size(n) for n in _names(axis_name)], dtype=np.int64))


def axis_size(axis_name) -> int:
    """The size of the mapped axis ``axis_name`` (a tuple: the product of the sizes)."""
    return _group_size(axis_name, None)


def _check_groups(axis_name, axis_index_groups):
    if axis_index_groups is None:
        return None
    if any(isinstance(a, int) for a in _names(axis_name)):
        raise ValueError("axis_index_groups only supported for sums over just named axes")
    groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    if len({len(g) for g in groups}) != 1:
        raise ValueError("axis_index_groups must all be the same size")
    flat = sorted(i for g in groups for i in g)
    if flat != list(range(len(flat))):
        raise ValueError("axis_index_groups must cover all indices exactly once")
    return groups


def _bool_to_int(leaf):
    return convert_element_type(leaf, np.int32) if dtype_of(leaf) == np.bool_ else leaf


def _scaled(leaf, size):
    """``size * leaf`` for a leaf that is no tracer, typed as JAX's ``_const(leaf, size) * leaf``."""
    if type(leaf) in (bool, int, float, complex):
        return type(leaf)(size) * leaf
    c = _const(leaf, size)
    return mul(c if not isinstance(c, Literal) else c.val, leaf)


def psum(x, axis_name, *, axis_index_groups=None):
    """All-reduce sum of ``x`` over the mapped axes ``axis_name`` (integers in it are
    positional axes of ``x``, summed as ``reduce_sum``)."""
    names = _names(axis_name)
    if not names:
        return x
    groups = _check_groups(names, axis_index_groups)
    leaves, tree = tree_util.tree_flatten(x)
    leaves = [_bool_to_int(leaf) for leaf in leaves]
    if all(not isinstance(leaf, Tracer) for leaf in leaves):
        # A value that does not vary over the axes: its sum is size * x, computed here
        # (as JAX does), so that it stays a constant.
        named = [n for n in names if not isinstance(n, int)]
        pos = [n for n in names if isinstance(n, int)]
        size = len(groups[0]) if groups is not None else int(np.prod(
            [_frame_size(n) for n in named], dtype=np.int64))
        out = []
        for leaf in leaves:
            if pos:
                nd = len(shape_of(leaf))
                leaf = reduce_sum_p.bind(asarray(leaf), axes=tuple(a % nd for a in pos),
                                         out_sharding=None)
            out.append(_scaled(leaf, size))
        return tree_util.tree_unflatten(tree, out)
    _check_bound(names, "psum")
    return tree_util.tree_unflatten(tree, [psum_p.bind(leaf, axes=names, axis_index_groups=groups)
                                           for leaf in leaves])


def _extremum(prim, api_name, x, axis_name, axis_index_groups):
    names = _names(axis_name)
    groups = _check_groups(names, axis_index_groups)
    _check_bound(names, api_name)
    return tree_util.tree_map(lambda leaf: prim.bind(leaf, axes=names, axis_index_groups=groups),
                              x)


def pmax(x, axis_name, *, axis_index_groups=None):
    return _extremum(pmax_p, "psum", x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    return _extremum(pmin_p, "psum", x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    x = psum(x, axis_name, axis_index_groups=axis_index_groups)
    n = _group_size(axis_name, axis_index_groups)
    return tree_util.tree_map(lambda s: s / n, x)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Gathers ``x`` from every index of ``axis_name``, stacked at ``axis`` (``tiled``:
    concatenated along it)."""
    if to != "varying":
        raise NotImplementedError(f"all_gather(to={to!r}) is not supported by traxla.")
    groups = _check_groups(axis_name, axis_index_groups)
    size = _group_size(axis_name, groups)
    axis_name = _names(axis_name)  # bound as a tuple, as JAX binds it

    def bind(leaf):
        nd = len(shape_of(leaf))
        dim = int(axis) % (nd + (0 if tiled else 1)) if nd or not tiled else int(axis)
        return all_gather_p.bind(leaf, all_gather_dimension=dim, axis_name=axis_name,
                                 axis_index_groups=groups, axis_size=size, tiled=bool(tiled))
    return tree_util.tree_map(bind, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    groups = _check_groups(axis_name, axis_index_groups)
    size = _group_size(axis_name, groups)
    axis_name = _names(axis_name)  # bound as a tuple, as JAX binds it
    return tree_util.tree_map(lambda leaf: psum_scatter_p.bind(
        leaf, scatter_dimension=int(scatter_dimension), axis_name=axis_name,
        axis_index_groups=groups, axis_size=size, tiled=bool(tiled)), x)


def ppermute(x, axis_name, perm):
    """Sends the value at axis index ``s`` to index ``d`` for each ``(s, d)`` in ``perm``;
    indices that receive nothing get zeros."""
    names = _names(axis_name)
    _check_bound(names, "ppermute")
    size = axis_size(names)
    perm = tuple((int(s), int(d)) for s, d in perm)
    for s, d in perm:
        if not (0 <= s < size and 0 <= d < size):
            raise ValueError(f"ppermute perm {perm} has an index outside the axis of size {size}")
    return tree_util.tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=names, perm=perm), x)


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    """Ragged ``all_to_all``: the caller sends ``operand[input_offsets[i]:][:send_sizes[i]]``
    to index ``i // (len(input_offsets) // axis size)`` of ``axis_name``, which writes it
    into its ``output`` at the offset ``output_offsets[i]`` names; the result is ``output``
    with the received slices written (``recv_sizes`` their sizes), as JAX's."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    groups = None if axis_index_groups is None else tuple(map(tuple, axis_index_groups))
    operands = (operand, output, input_offsets, send_sizes, output_offsets, recv_sizes)
    if any(isinstance(x, Tracer) for x in operands):  # (eagerly: the impl's error below)
        _check_bound(names, "ragged_all_to_all")
    return ragged_all_to_all_p.bind(operand, output, input_offsets, send_sizes,
                                    output_offsets, recv_sizes, axis_name=names,
                                    axis_index_groups=groups)


def _ragged_all_to_all_eager(*args, **params):
    raise RuntimeError("ragged_all_to_all must be used within a mapped context like vmap or "
                       "shard_map.")


_dispatch.eager_impls[ragged_all_to_all_p] = _ragged_all_to_all_eager


def psend(x, axis_name, perm):
    """Sends ``x`` from axis index ``s`` to ``d`` for each ``(s, d)`` in ``perm`` (one-sided:
    ``precv`` receives it); returns a token that orders the pair. JAX lowers it for GPUs."""
    names = tuple(axis_name) if isinstance(axis_name, (list, tuple)) else (axis_name,)
    perm = tuple(map(tuple, perm))

    def bind(leaf):
        _check_bound(names, "psend")
        if vma_active[0]:  # as JAX's insert_collective_pvary: the value varies over the axes
            missing = tuple(a for a in names if a not in aval_of(leaf).vma)
            if missing:
                leaf = pvary_p.bind(leaf, axes=missing)
        return psend_p.bind(leaf, axis_name=names, perm=perm)
    return tree_util.tree_map(bind, x)


def precv(token, out_shape, axis_name, perm):
    """Receives a value of ``out_shape`` (a ShapeDtypeStruct) sent by ``psend`` over
    ``perm``, after ``token``. JAX lowers it for GPUs."""
    names = tuple(axis_name) if isinstance(axis_name, (list, tuple)) else (axis_name,)
    return precv_p.bind(token, out_shape=ShapedArray(tuple(out_shape.shape),
                                                     np.dtype(out_shape.dtype)),
                        axis_name=names, perm=tuple(map(tuple, perm)))


def pbroadcast(x, axis_name, source):
    """Every index along ``axis_name`` gets the value at index ``source`` (a collective
    broadcast: ``psum(where(axis_index(axis_name) == source, x, 0), axis_name)``, as one
    operation). As JAX's, it lowers for GPUs only."""
    return tree_util.tree_map(
        lambda leaf: pbroadcast_p.bind(leaf, axis_name=axis_name, source=source), x)


def axis_index(axis_name):
    """The index along the mapped axis ``axis_name`` (a tuple: the row-major index over
    the axes, the first one major)."""
    if not isinstance(axis_name, (tuple, list)):
        _check_bound((axis_name,), "axis_index")
        return axis_index_p.bind(axis_name=axis_name)
    inner_size = 1
    index = 0
    for name in reversed(axis_name):
        index = add(index, mul(axis_index(name), inner_size))
        inner_size *= axis_size(name)
    return index


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Materializes the mapped axis ``axis_name`` at ``concat_axis`` and maps ``split_axis``
    instead (``tiled``: the chunks stay concatenated along the existing axes)."""
    if axis_index_groups is not None:
        raise NotImplementedError("all_to_all: axis_index_groups is not supported by traxla "
                                  "(shard_map over a sub-mesh expresses the same groups).")
    size = axis_size(axis_name)

    def bind(x, split_axis=split_axis, concat_axis=concat_axis):
        shape = shape_of(x)
        if tiled:
            if shape[split_axis] % size != 0:
                raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has "
                                 f"to be divisible by the size of the named axis {axis_name} "
                                 f"({size})")
        else:
            if size != shape[split_axis]:
                raise ValueError("all_to_all requires the size of the mapped axis axis_name to "
                                 "equal x.shape[split_axis], but they are "
                                 f"{size} and {shape[split_axis]} respectively.")
            if split_axis < concat_axis:
                concat_axis += 1
                x = expand_dims(x, (concat_axis,))
            elif split_axis > concat_axis:
                x = expand_dims(x, (concat_axis,))
                split_axis += 1
        result = all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                   axis_name=axis_name, axis_index_groups=None, tiled=tiled,
                                   axis_size=size)
        if not tiled and split_axis != concat_axis:
            result = squeeze(result, (split_axis,))
        return result

    return tree_util.tree_map(bind, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the mapped axis ``axis_name`` with the unmapped ``axis``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pshuffle(x, axis_name, perm):
    """``ppermute`` where the output at axis index i comes from input index ``perm[i]``."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


_PCAST_TO = ("unreduced", "reduced", "varying")


def pcast(x, axis_name, *, to: str):
    """A value invariant over the manual axes ``axis_name`` taken as varying over them
    (``to='varying'``, JAX's ``pvary``): a cast in the type (check_vma), nothing at run time."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    axes = (axis_name,) if not isinstance(axis_name, tuple) else axis_name
    if not axis_name:
        return x
    if to not in _PCAST_TO:
        raise ValueError("Got unexpected `to` value. Allowed `to` values are:"
                         f" {set(_PCAST_TO)}")

    def bind(leaf):
        aval = aval_of(leaf)
        unreduced, reduced = manual_ur(aval)
        state = {"varying" if a in aval.vma else "unreduced" if a in unreduced else
                 "reduced" if a in reduced else "invarying" for a in axes}
        if len(state) > 1:
            raise ValueError(
                "jax.lax.pcast can only accept axis_name which corresponds to one of varying, "
                f"unreduced, reduced or invarying state of the input. Got input type: {aval}, "
                f"axes: {axes} and input state: {state}")
        from_, = state
        prim = _PCASTS.get((from_, to))
        if prim is None:
            raise ValueError(f"Unsupported pcast from={from_}, to={to!r}")
        _check_bound(axes, "pcast")
        if not vma_active[0]:  # without check_vma there is no type to change (as JAX)
            return leaf
        return prim.bind(leaf, axes=ordered(axes))
    return tree_util.tree_map(bind, x)


# JAX's free casts between the manual types: (from, to) -> primitive
_PCASTS = {("invarying", "varying"): pvary_p, ("invarying", "reduced"): preduced_p,
           ("varying", "unreduced"): vary_unreduced_cast_p,
           ("reduced", "varying"): reduced_vary_cast_p}

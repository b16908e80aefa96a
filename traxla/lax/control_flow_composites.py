"""More of ``lax``'s control flow, built on the primitives (as JAX builds them):
``map`` (a ``scan``, or a ``scan`` of ``vmap``s with ``batch_size``), ``associative_scan``
(Blelloch's parallel prefix with strided slices, pads and adds) and
``platform_dependent`` (a ``platform_index`` resolved when the program is lowered)."""
from __future__ import annotations

import builtins

import numpy as np

from traxla import tree_util
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.platform import platform_index_p
from traxla.ir.traceback_util import api_boundary
from traxla.lax import (_const, bitwise_or, add, aval_of, concatenate, pad,
               reshape, rev, slice_in_dim)
from traxla.primitives.shapes import slice  # noqa: A004
from traxla.primitives.values import _is_array, _lift, shape_of
from traxla.runtime import device_put_numpy
from traxla.tracer import Tracer
from traxla.lax.control_flow import _switch_internal, scan
from traxla.batching import vmap


# -- map --------------------------------------------------------------------------------------

def _scan_leaf(leaf, batch_elems, num_batches, batch_size):
    shape = tuple(aval_of(leaf).shape)
    return reshape(_leading_rows(leaf, 0, batch_elems), (num_batches, batch_size) + shape[1:])


def _remainder_leaf(leaf, batch_elems):
    return _leading_rows(leaf, batch_elems, None)


def _leading_rows(leaf, start, stop):
    """``leaf[start:stop]`` (JAX's ``l[:n]`` and ``l[n:]``) of a traxla array or a host array
    (put on the device first, as ``jnp.asarray`` does): the ``slice`` primitive, or ``leaf``
    itself when the slice is all of it."""
    if not _is_array(leaf):
        host = np.asarray(leaf)
        dtype = dtypes.canonicalize(host.dtype)
        leaf = device_put_numpy(np.array(host, dtype), ShapedArray(host.shape, dtype, False))
    shape = tuple(shape_of(leaf))
    stop = shape[0] if stop is None else stop
    if (start, stop) == (0, shape[0]):
        return leaf
    rest = len(shape) - 1
    return _lift(slice(leaf, (start,) + (0,) * rest, (stop,) + shape[1:]))


def _batch_and_remainder(x, batch_size):
    leaves, treedef = tree_util.tree_flatten(x)
    if not leaves:
        return x, None
    n = aval_of(leaves[0]).shape[0]
    num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    batch_elems = num_batches * batch_size
    if num_batches == 0:
        return None, treedef.unflatten([_remainder_leaf(l, batch_elems) for l in leaves])
    scans = [_scan_leaf(l, batch_elems, num_batches, batch_size) for l in leaves]
    if remainder:
        return (treedef.unflatten(scans),
                treedef.unflatten([_remainder_leaf(l, batch_elems) for l in leaves]))
    return treedef.unflatten(scans), None


@api_boundary
def map(f, xs, *, batch_size=None):  # noqa: A001
    """``f`` applied over the leading axis of ``xs`` (a ``scan``); with ``batch_size``,
    ``batch_size`` elements at a time under ``vmap`` (the remainder in one more ``vmap``)."""
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    scan_xs, remainder_xs = _batch_and_remainder(xs, batch_size)
    scan_ys = None
    if scan_xs is not None:
        _, scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), scan_xs)

    def flatten(x):
        shape = tuple(aval_of(x).shape)
        return reshape(x, (shape[0] * shape[1],) + shape[2:])

    if scan_ys is None:
        return vmap(f)(remainder_xs)
    if remainder_xs is not None:
        remainder_ys = vmap(f)(remainder_xs)
        return tree_util.tree_map(lambda x, y: concatenate([flatten(x), y], 0), scan_ys,
                                  remainder_ys)
    return tree_util.tree_map(flatten, scan_ys)


# -- associative_scan ---------------------------------------------------------------------------

def _interleave(a, b, axis):
    """Two arrays interleaved along ``axis`` (zero-padded with interior padding, then added)."""
    a_aval, b_aval = aval_of(a), aval_of(b)
    a_pad = [(0, 0, 0)] * len(a_aval.shape)
    b_pad = [(0, 0, 0)] * len(b_aval.shape)
    same = a_aval.shape[axis] == b_aval.shape[axis]
    a_pad[axis] = (0, 1 if same else 0, 1)
    b_pad[axis] = (1, 0 if same else 1, 1)
    op = bitwise_or if a_aval.dtype == bool else add
    return op(pad(a, _const(a, 0), a_pad), pad(b, _const(b, 0), b_pad))


@api_boundary
def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations of ``elems`` along ``axis`` under the associative ``fn``,
    computed in O(log n) parallel steps."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    elems_flat, tree = tree_util.tree_flatten(elems)
    if reverse:
        elems_flat = [rev(e, [axis]) for e in elems_flat]

    def combine(a_flat, b_flat):
        c = fn(tree_util.tree_unflatten(tree, a_flat), tree_util.tree_unflatten(tree, b_flat))
        return tree_util.tree_flatten(c)[0]

    ndim = len(aval_of(elems_flat[0]).shape)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis = axis % builtins.max(ndim, 1)
    num_elems = int(aval_of(elems_flat[0]).shape[axis])
    if not all(int(aval_of(e).shape[axis]) == num_elems for e in elems_flat[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first dimension. "
                         f"(saw: {[tuple(aval_of(e).shape) for e in elems_flat]})")

    def _scan(elems):
        n = aval_of(elems[0]).shape[axis]
        if n < 2:
            return elems
        reduced = combine([slice_in_dim(e, 0, -1, 2, axis) for e in elems],
                          [slice_in_dim(e, 1, None, 2, axis) for e in elems])
        odd = _scan(reduced)
        if n % 2 == 0:
            even = combine([slice_in_dim(e, 0, -1, 1, axis) for e in odd],
                           [slice_in_dim(e, 2, None, 2, axis) for e in elems])
        else:
            even = combine(odd, [slice_in_dim(e, 2, None, 2, axis) for e in elems])
        even = [concatenate([slice_in_dim(e, 0, 1, 1, axis), r], axis)
                for e, r in zip(elems, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    scans = _scan(elems_flat)
    if reverse:
        scans = [rev(s, [axis]) for s in scans]
    return tree_util.tree_unflatten(tree, scans)


# -- platform_dependent ---------------------------------------------------------------------------

def platform_dependent(*args, default=None, **per_platform):
    """``per_platform[p](*args)`` for the platform ``p`` the program is lowered for (or
    ``default``); ``gpu`` must be spelled ``cuda`` or ``rocm``."""
    branches_platforms, branches = [], []
    for pname, pbranch in per_platform.items():
        if not callable(pbranch):
            raise TypeError(f"lax.platform_dependent: the '{pname}' branch must be a callable.")
        if pname == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for ps, b in zip(branches_platforms, branches):
            if b == pbranch:
                ps.append(pname)
                break
        else:
            branches_platforms.append([pname])
            branches.append(pbranch)
    platforms = tuple(tuple(ps) for ps in branches_platforms)
    if default is not None:
        if not callable(default):
            raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
        branches.append(default)
        platforms = platforms + (None,)
    index = platform_index_p.bind(platforms=platforms)
    if not isinstance(index, Tracer):  # evaluated eagerly: the platform is known
        return branches[int(index)](*args)
    return _switch_internal(index, branches, args, branches_platforms=platforms)


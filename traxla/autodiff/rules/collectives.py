"""JVP and transpose rules of the collectives. Within a shard_map every value is
per-device, so psum's transpose is psum, all_gather's is psum_scatter (and back),
and ppermute's is the inverse permutation."""
from __future__ import annotations

from traxla.ir.rules.collectives import (all_gather_p, pbroadcast_p, pmax_p, pmin_p, ppermute_p, psum_p,
                                    psum_scatter_p, reshard_p)
from traxla.ir.vma import preduced_p, pvary_p, reduced_vary_cast_p, vary_unreduced_cast_p
from traxla.autodiff.ad import Zero, is_undefined, jvp_rules, transpose_rules
from traxla.autodiff.rules._util import deflinear, defjvp_zero
from traxla import lax


def _positional(axes):
    return tuple(a for a in axes if isinstance(a, int))


def _unreduce(y, shape, axes):
    """``y``, reduced over the positional ``axes`` of ``shape``, broadcast back over them."""
    pos = _positional(axes)
    if not pos:
        return y
    return lax.broadcast_in_dim(y, shape, [d for d in range(len(shape)) if d not in pos])


def _psum_transpose(ct, x, *, axes, axis_index_groups=None):
    # as JAX's: positional axes (vmap's) transpose as reduce_sum does, by broadcasting; the
    # named ones by psum again (psum is psum + pbroadcast)
    ct = _unreduce(ct, x.aval.shape, axes)
    named = tuple(a for a in axes if not isinstance(a, int))
    return [psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)]


def _all_gather_transpose(ct, x, *, all_gather_dimension, axis_name, axis_size, tiled,
                          axis_index_groups=None):
    # (untiled: the stacked axis becomes the scattered one)
    return [psum_scatter_p.bind(ct, scatter_dimension=all_gather_dimension, axis_name=axis_name,
                                axis_size=axis_size, tiled=tiled,
                                axis_index_groups=axis_index_groups)]


def _psum_scatter_transpose(ct, x, *, scatter_dimension, axis_name, axis_size, tiled,
                            axis_index_groups=None):
    return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name,
                              axis_size=axis_size, tiled=tiled,
                              axis_index_groups=axis_index_groups)]


def _ppermute_transpose(ct, x, *, axis_name, perm):
    inverse = tuple((d, s) for s, d in perm)
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


def _pbroadcast_transpose(ct, x, *, axis_name, source):
    """Every index's cotangent, summed, goes back to the source index (zeros elsewhere)."""
    total = psum_p.bind(ct, axes=_names(axis_name), axis_index_groups=None)
    is_source = lax.eq(lax.axis_index(axis_name), source)
    return [lax.select(lax.broadcast(is_source, lax.shape_of(ct)), total,
                       lax.full_like(ct, 0))]


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _reshard_transpose(ct, x, *, dst_sharding, dst_spec):
    # the cotangent goes back to where the operand lived
    src = x.aval.sharding_type
    if src is None:
        return [ct]
    src = src.to_ct()  # (unreduced where the operand is reduced, as JAX's)
    return [reshard_p.bind(ct, dst_sharding=src, dst_spec=(dst_spec[0], tuple(src.spec)))]


deflinear(psum_p, _psum_transpose)
deflinear(all_gather_p, _all_gather_transpose)
deflinear(psum_scatter_p, _psum_scatter_transpose)
deflinear(ppermute_p, _ppermute_transpose)
deflinear(pbroadcast_p, _pbroadcast_transpose)
deflinear(reshard_p, _reshard_transpose)
# pvary (a value invariant over some manual axes taken as varying over them) transposes to
# the identity here: traxla's shard_map transpose sums the cotangent of an input replicated
# over manual axes at the boundary (JAX's check_vma=False conventions), where JAX's
# check_vma=True transpose sums it at the pvary instead
deflinear(pvary_p, lambda ct, x, *, axes: [ct])
# the free casts between unreduced, reduced and varying transpose to each other (JAX's)
deflinear(vary_unreduced_cast_p, lambda ct, x, *, axes: [reduced_vary_cast_p.bind(ct, axes=axes)])
deflinear(reduced_vary_cast_p, lambda ct, x, *, axes: [vary_unreduced_cast_p.bind(ct, axes=axes)])


def _preduced_transpose(ct, x, *, axes):
    raise NotImplementedError("the transpose of pcast(..., to='reduced') (JAX's unreduced_psum "
                              "of the cotangent) is not implemented in traxla")


deflinear(preduced_p, _preduced_transpose)


def _extremum_jvp(prim):
    def rule(primals, tangents, **params):
        x, = primals
        t, = tangents
        out = prim.bind(x, **params)
        if type(t) is Zero:
            return out, t
        # the tangent of the lane(s) holding the extremum, averaged over ties
        mask = lax.convert_element_type(lax.eq(x, _unreduce(out, lax.shape_of(x),
                                                            params["axes"])),
                                        lax.dtype_of(t))
        count = psum_p.bind(mask, axes=params["axes"], axis_index_groups=None)
        return out, lax.div(psum_p.bind(lax.mul(t, mask), axes=params["axes"],
                                        axis_index_groups=None), count)
    return rule


jvp_rules[pmax_p] = _extremum_jvp(pmax_p)
jvp_rules[pmin_p] = _extremum_jvp(pmin_p)
del defjvp_zero, is_undefined, transpose_rules

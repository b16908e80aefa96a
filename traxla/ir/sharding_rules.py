"""Sharding typing rules: how an explicitly sharded operand's placement flows
to the result, and which placements are refused (``ShardingTypeError``).

``infer_avals`` is the one entry point every stage uses to type an equation:
the typing rule, then -- only when some operand carries a sharding -- the
primitive's sharding rule.
"""
from __future__ import annotations

import numpy as np

from traxla.errors import ShardingTypeError
from traxla.ir.avals import interned
from traxla.ir.primitive import (typed_param_keys, typing_caches, typing_rules,
                                 uncached_dtypes)
from traxla.ir.sharding import ShardingType
from traxla.ir import sharding_ur as ur
from traxla.ir.sharding_ur import apply_ur, ur_rules
from traxla.ir.rules import call, control_flow, conv, ffi, indexing, reduction, shape, special
from traxla.ir.rules.ad import add_any_p
from traxla.ir.rules.elementwise import BINARY, COMPARE, P as E, UNARY
from traxla.ir.rules.collectives import reshard_p, shard_map_p
from traxla.ir.rules.device_put import device_put_p
from traxla.ir.vma import active as vma_active, with_vma

# primitive -> rule(in_avals, out_avals, **params) -> list of spec tuples (one per output)
sharding_rules: dict = {}

# primitives whose typing rule gives the whole result type, sharding included: a hijax
# primitive's declared ``out_aval`` (which may be a high-level type), as in JAX
self_typed: set = set()


def register_sharding(prim, rule):
    sharding_rules[prim] = rule
    return rule


_TYPING_CACHE_LIMIT = 4096


def infer_avals(prim, in_avals, params):
    cache = typing_caches.get(prim)
    if cache is None or vma_active[0]:  # (in a check_vma body, axis_index's type varies)
        return _infer(prim, in_avals, params)
    # Keyed by the identity of the (interned) operand avals: no Python-level hashing of
    # avals on a hit. Each entry keeps its avals alive, so an id in a key stays theirs.
    if prim in typed_param_keys:  # ``y=2`` and ``y=2.0`` are equal keys; only one is valid
        key = (*map(id, in_avals), *params, *params.values(), *map(type, params.values()))
    else:
        key = (*map(id, in_avals), *params, *params.values())
    try:
        hit = cache.get(key)
    except TypeError:  # an unhashable param (a list, an array): typed afresh
        return _infer(prim, in_avals, params)
    if hit is not None:
        return hit[0]
    canonical = tuple(interned(a) for a in in_avals)  # equal operands seen as other objects?
    key = (*map(id, canonical), *key[len(in_avals):])
    hit = cache.get(key)
    if hit is not None:
        return hit[0]
    out = _infer(prim, in_avals, params)
    if type(out) is not list and all(a.sharding_type is None for a in in_avals):
        unless = uncached_dtypes.get(prim)
        if unless is not None and in_avals and in_avals[0].dtype in unless:
            return out  # (its rule read a flag for this dtype)
        if len(cache) >= _TYPING_CACHE_LIMIT:
            cache.clear()
        # One object per distinct aval: the next equation's key is made of this one.
        out = interned(out)
        cache[key] = (out, canonical)
    return out


def _infer(prim, in_avals, params):
    rule = typing_rules.get(prim)
    if rule is None:  # a user primitive (extend.core) given no def_abstract_eval
        raise NotImplementedError(f"Abstract evaluation for '{prim.name}' not implemented")
    out = rule(*in_avals, **params)
    if prim in self_typed:
        return out
    varying = vma_active[0]
    for a in in_avals:
        if a.sharding_type is not None:
            out = _with_shardings(prim, in_avals, out, params)
            break
        if a.vma:
            varying = True
    else:
        if not varying:
            return out
    if varying or any(a.vma for a in in_avals):
        out = with_vma(prim, in_avals, out, params)
    return out


def _with_shardings(prim, in_avals, out, params):
    meshes = {a.sharding_type.mesh for a in in_avals if a.sharding_type is not None}
    if len(meshes) > 1:
        raise ShardingTypeError(f"{prim.name} got operands sharded over different meshes: "
                                f"{sorted(map(repr, meshes))}")
    mesh = meshes.pop()
    outs = out if prim.multiple_results else [out]
    rule = sharding_rules.get(prim)
    if rule is None:
        if all(a.sharding_type is None or a.sharding_type.is_replicated for a in in_avals):
            return out
        if any(ur.has_ur(a) for a in in_avals):
            raise ur._not_implemented(prim)
        raise ShardingTypeError(
            f"{prim.name} has no sharding rule: its operands "
            f"{[a.str_short() for a in in_avals]} are explicitly sharded. Reshard them to "
            "replicated (traxla.sharding.reshard(x, P())) before this operation.")
    specs = rule(in_avals, outs, **params)
    typed = []
    for o, spec in zip(outs, specs):
        if spec is None or isinstance(spec, ShardingType):
            sharding = spec
        else:
            sharding = ShardingType(mesh, tuple(spec))
        typed.append(o.update(sharding=sharding))
        if sharding is not None and _duplicate_axis(sharding.spec):
            # JAX's DuplicateSpecError, reported as a ShardingTypeError naming the operation
            raise ShardingTypeError(
                f"{prim.name} operation with inputs: "
                f"{', '.join(a.str_short() for a in in_avals)} produces an illegally sharded "
                f"result: {typed[-1].str_short()}")
    typed = apply_ur(prim, in_avals, typed, params)
    if mesh.are_all_axes_manual:  # in a shard_map body: only unreduced/reduced is typed
        typed = [o if ur.has_ur(o) else o.update(sharding=None) for o in typed]
    return typed if prim.multiple_results else typed[0]


def _duplicate_axis(spec):
    seen = set()
    for p in spec:
        for a in _axes(p):
            if a in seen:
                return True
            seen.add(a)
    return False


def spec_of(aval):
    return tuple(aval.sharding_type.spec) if aval.sharding_type is not None else (None,) * aval.ndim


def _axes(p):
    return () if p is None else (p if isinstance(p, tuple) else (p,))


# -- elementwise -----------------------------------------------------------------------------

def elementwise(name):
    def rule(in_avals, outs, **params):
        out = outs[0]
        arrays = [a for a in in_avals if a.ndim]
        result = []
        for d in range(out.ndim):
            chosen = None
            for a in arrays:
                if a.shape[d] == 1 and out.shape[d] != 1:
                    continue
                p = spec_of(a)[d]
                if p is None:
                    continue
                if chosen is not None and p != chosen:
                    raise ShardingTypeError(
                        f"{name} got incompatible shardings for broadcasting: "
                        f"{', '.join(str(spec_of(x)) for x in arrays)}.")
                chosen = p
            result.append(chosen)
        return [tuple(result)] * len(outs)
    return rule


# -- shapes -----------------------------------------------------------------------------------

def _reduce(in_avals, outs, *, axes, out_sharding=None, **params):
    if out_sharding is not None:
        return [out_sharding]
    spec = spec_of(in_avals[0])
    return [tuple(p for i, p in enumerate(spec) if i not in axes)]


def _broadcast_in_dim(in_avals, outs, *, shape, broadcast_dimensions, sharding=None):
    if sharding is not None:
        return [sharding]
    x = in_avals[0]
    spec = [None] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] == shape[d]:
            spec[d] = spec_of(x)[i]
    return [tuple(spec)]


def _transpose(in_avals, outs, *, permutation):
    spec = spec_of(in_avals[0])
    return [tuple(spec[p] for p in permutation)]


def _squeeze(in_avals, outs, *, dimensions):
    spec = spec_of(in_avals[0])
    return [tuple(p for i, p in enumerate(spec) if i not in dimensions)]


def _same(in_avals, outs, **params):
    return [spec_of(in_avals[0])] * len(outs)


def _reshape(in_avals, outs, *, new_sizes, dimensions, sharding=None):
    if sharding is not None:
        return [sharding]
    x = in_avals[0]
    spec = spec_of(x)
    if all(p is None for p in spec):
        return [(None,) * len(new_sizes)]
    # Merging or splitting groups of dims keeps a sharding only on the group's major dim.
    out, i, j = [None] * len(new_sizes), 0, 0
    shape = x.shape
    while i < len(shape) and j < len(new_sizes):
        gi, gj, a, b = i, j, shape[i], new_sizes[j]
        while a != b:
            if a < b:
                i += 1
                a *= shape[i]
            else:
                j += 1
                b *= new_sizes[j]
        group = spec[gi:i + 1]
        if any(p is not None for p in group[1:]):
            raise ShardingTypeError(
                f"reshape of {x.str_short()} to {tuple(new_sizes)} would move a sharded minor "
                "dimension; pass out_sharding to say how the result is sharded.")
        out[gj] = group[0]
        i, j = i + 1, j + 1
    return [tuple(out)]


def _require_unsharded(name, aval, dims, what):
    spec = spec_of(aval)
    for d in dims:
        if spec[d] is not None:
            raise ShardingTypeError(f"{name} {what} dimension {d} of {aval.str_short()}, which is "
                                    f"sharded over {spec[d]!r}; reshard it first.")


def _varying_out_shape(x, out_shape, name):
    """JAX's rule for a result of another shape (slice, pad, dynamic_slice, split): the
    operand's sharding, where every sharded dimension that changes size still divides
    evenly over its mesh axes (always so over axes of size 1)."""
    spec = spec_of(x)
    sizes = x.sharding_type.mesh.shape if x.sharding_type is not None else {}
    for op_sh, out_sh, p in zip(x.shape, out_shape, spec):
        if op_sh != out_sh and p is not None:
            size = 1
            for axis in _axes(p):
                size *= sizes[axis]
            if out_sh % size:
                raise ShardingTypeError(
                    f"{name} on sharded dims where out dim ({out_sh}) is not divisible by mesh "
                    f"axes ({size}) with spec ({p}) is not implemented. Got input type="
                    f"{x.str_short()} and output shape={tuple(out_shape)}")
    return spec


def _slice(in_avals, outs, *, start_indices, limit_indices, strides):
    return [_varying_out_shape(in_avals[0], outs[0].shape, "slicing")]


def _pad(in_avals, outs, *, padding_config):
    return [_varying_out_shape(in_avals[0], outs[0].shape, "padding")]


def _concatenate(in_avals, outs, *, dimension):
    # JAX's rule: the operands typed with a mesh share one sharding, the result's
    typed = [a.sharding_type for a in in_avals if a.sharding_type is not None]
    if any(s != typed[0] for s in typed):
        shardings = ", ".join(str(a.sharding) for a in in_avals)
        raise ShardingTypeError(f"All operands should have the same sharding. Got shardings "
                                f"{shardings}")
    return [typed[0]]


def _dynamic_slice(in_avals, outs, *, slice_sizes):
    return [_varying_out_shape(in_avals[0], outs[0].shape, "dynamic_slice")]


def _dynamic_update_slice(in_avals, outs):
    x, upd = in_avals[:2]
    _require_unsharded("dynamic_update_slice", x,
                       [d for d in range(x.ndim) if upd.shape[d] != x.shape[d]], "updates")
    return [spec_of(x)]


def _cumulative(in_avals, outs, *, axis, reverse):
    _require_unsharded("cumulative reduction", in_avals[0], [axis], "scans along")
    return [spec_of(in_avals[0])]


def _stack(in_avals, outs, *, axis):
    specs = {spec_of(a) for a in in_avals}
    if len(specs) > 1:
        raise ShardingTypeError(f"stack got operands with different shardings: {sorted(map(str, specs))}")
    spec = list(specs.pop())
    spec.insert(axis, None)
    return [tuple(spec)]


def _unstack(in_avals, outs, *, axis):
    _require_unsharded("unstack", in_avals[0], [axis], "unstacks")
    spec = spec_of(in_avals[0])
    return [spec[:axis] + spec[axis + 1:]] * len(outs)


def _split(in_avals, outs, *, sizes, axis):
    return [_varying_out_shape(in_avals[0], o.shape, "split") for o in outs]


def _iota(in_avals, outs, *, dtype, shape, dimension, sharding=None):
    return [sharding]


# -- dot_general -------------------------------------------------------------------------------

def _dot_general(in_avals, outs, *, dimension_numbers, precision=None,
                 preferred_element_type=None, out_sharding=None):
    if out_sharding is not None:
        _check_divisible(outs[0].shape, out_sharding)
        return [out_sharding]
    lhs, rhs = in_avals
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = spec_of(lhs), spec_of(rhs)
    l_contract = tuple(ls[d] for d in lc)
    r_contract = tuple(rs[d] for d in rc)
    l_batch, r_batch = tuple(ls[d] for d in lb), tuple(rs[d] for d in rb)
    # (JAX's order of checks and messages)
    for l, r in zip(l_batch, r_batch):
        if l is not None and r is not None and l != r:
            raise ShardingTypeError(
                "dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                f"the consistent sharding, got {l_batch} and {r_batch}.")
    for l, r in zip(l_contract, r_contract):
        if l is not None and r is not None and l != r:
            raise ShardingTypeError(
                "dot_general requires contracting dimensions to have consistent sharding, "
                f"got {l_contract} and {r_contract}.")
    for l, r in zip(l_contract, r_contract):
        if l is not None and r is not None:
            raise ShardingTypeError(
                "Contracting dimensions are sharded and it is ambiguous how the output should "
                "be sharded. Please specify the output sharding via the `out_sharding` "
                f"parameter. Got lhs_contracting_spec={l_contract} and "
                f"rhs_contracting_spec={r_contract}")
    batch = list(l_batch)
    free_l = [ls[d] for d in range(lhs.ndim) if d not in lc and d not in lb]
    free_r = [rs[d] for d in range(rhs.ndim) if d not in rc and d not in rb]
    return [tuple(batch + free_l + free_r)]  # (a repeated axis: refused by the caller)


def _check_divisible(shape, sharding):
    """JAX's check of a result's sharding against its shape: every split dimension divides
    evenly over its mesh axes."""
    sizes = sharding.mesh.shape
    for d, (n, p) in enumerate(zip(shape, sharding.spec)):
        names = _axes(p)
        k = int(np.prod([sizes[a] for a in names])) if names else 1
        if k > 1 and n % k:
            raise ValueError(
                f"Sharding spec {names} implies that array axis {d} is partitioned {k} times, "
                f"but does not evenly divide the dimension size {n}. Got shape: {tuple(shape)} "
                f"and sharding {sharding!r}")


# -- conv_general_dilated -----------------------------------------------------------------------

def _conv(in_avals, outs, *, dimension_numbers, out_sharding=None, **params):
    """JAX's ``_conv_general_dilated_sharding_rule``: an ``out_sharding`` is the result's;
    else, for a replicated kernel and an lhs whose feature dimension is whole, the lhs's
    sharding dimension by dimension (its batch dimension's: the result's), where each
    sharded dimension that changes size still divides over its mesh axes."""
    if out_sharding is not None:  # (its spec as written: padded to the result's rank)
        spec = tuple(out_sharding.spec)
        return [out_sharding.with_spec(spec + (None,) * (outs[0].ndim - len(spec)))]
    lhs, rhs = in_avals
    if ((rhs.sharding_type is None or rhs.sharding_type.is_replicated)
            and spec_of(lhs)[dimension_numbers.lhs_spec[1]] is None):
        # (the shape as JAX's shape rule gives it, numpy integers, for the message)
        out_shape = tuple(np.int64(d) for d in outs[0].shape)
        return [_varying_out_shape(lhs, out_shape, "conv_general_dilated")]
    raise ShardingTypeError("Please specify the output sharding via `out_sharding` parameter of"
                            " `conv_general_dilated`")


# -- calls and control flow: the sub-jaxprs' types already carry shardings --------------------

def _jit(in_avals, outs, *, jaxpr, name):
    return [a.sharding_type for a in jaxpr.out_avals]


def _cond(in_avals, outs, *, branches, branches_platforms=None):
    return [a.sharding_type for a in branches[0].out_avals]


def _while(in_avals, outs, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return [a.sharding_type for a in body_jaxpr.out_avals]


def _scan(in_avals, outs, *, jaxpr, length, num_carry, **params):
    out = jaxpr.out_avals
    return [a.sharding_type for a in out[:num_carry]] + [
        None if a.sharding_type is None else a.sharding_type.with_spec(
            a.sharding_type.spec.update(partitions=(None,) + tuple(a.sharding_type.spec)))
        for a in out[num_carry:]]


def _register_all():
    for name in list(UNARY) + list(BINARY) + list(COMPARE) + [
            "select_n", "clamp", "convert_element_type"]:
        register_sharding(E[name], elementwise(name))
    register_sharding(add_any_p, elementwise("add_any"))
    # the special functions and complex-number operations are elementwise too (lax's
    # standard_unop/standard_naryop): square, lgamma, erfc, real, conj, complex, igamma...
    for name in (list(special.UNARY_SPECIAL) + list(special.NARY_SPECIAL)
                 + ["real", "imag", "conj", "complex", "bessel_i0e", "bessel_i1e"]):
        register_sharding(special.P[name], elementwise(name))
    for name in reduction.REDUCTIONS:
        register_sharding(reduction.P[name], _reduce)
    for name in ("argmax", "argmin"):
        register_sharding(reduction.P[name], _reduce)
    register_sharding(reduction.dot_general_p, _dot_general)
    register_sharding(conv.conv_general_dilated_p, _conv)
    for prim, rule in [(shape.broadcast_in_dim_p, _broadcast_in_dim), (shape.transpose_p, _transpose),
                       (shape.squeeze_p, _squeeze), (shape.rev_p, _same), (shape.reshape_p, _reshape),
                       (shape.slice_p, _slice), (shape.pad_p, _pad),
                       (shape.concatenate_p, _concatenate), (shape.dynamic_slice_p, _dynamic_slice),
                       (shape.dynamic_update_slice_p, _dynamic_update_slice),
                       (shape.iota_p, _iota), (shape.stack_p, _stack),
                       (shape.unstack_p, _unstack), (shape.split_p, _split)]:
        register_sharding(prim, rule)
    for name in indexing.CUMULATIVE:
        register_sharding(indexing.P[name], _cumulative)
    register_sharding(call.jit_p, _jit)
    # an FFI call's results are replicated over the mesh whatever its operands' shardings
    # (JAX's ffi_call_abstract_eval: the current mesh with P()); XLA gathers the operands
    register_sharding(ffi.ffi_call_p, lambda in_avals, outs, **_: [(None,) * o.ndim
                                                                   for o in outs])
    register_sharding(reshard_p, lambda in_avals, outs, *, dst_sharding, dst_spec: [dst_sharding])
    register_sharding(control_flow.cond_p, _cond)
    register_sharding(control_flow.while_p, _while)
    register_sharding(control_flow.scan_p, _scan)
    register_sharding(shard_map_p, _shard_map)
    # device_put to a NamedSharding: the destination's (typed by its rule)
    register_sharding(device_put_p, lambda in_avals, outs, **_: [o.sharding_type for o in outs])


def _register_ur():
    """JAX's unreduced/reduced rules (``ur_rule``) of the primitives that have one."""
    nonlinear = set(UNARY) | set(special.UNARY_SPECIAL) | {"real", "imag", "conj",
                                                            "bessel_i0e", "bessel_i1e"}
    for name in nonlinear:
        prim = E.get(name) or special.P.get(name)
        ur_rules[prim] = ur.unop(name)
    for name in list(BINARY) + list(COMPARE) + list(special.NARY_SPECIAL) + ["complex", "clamp"]:
        prim = E.get(name) or special.P.get(name)
        ur_rules[prim] = ur.nary(name)
    ur_rules[E["add"]] = ur.add_rule
    ur_rules[add_any_p] = ur.add_rule
    ur_rules[E["mul"]] = ur.mul_rule
    ur_rules[E["select_n"]] = ur.select_rule
    ur_rules[E["convert_element_type"]] = ur.with_param_rule("sharding")
    ur_rules[shape.broadcast_in_dim_p] = ur.with_param_rule("sharding")
    ur_rules[reduction.P["reduce_sum"]] = ur.reduce_sum_rule
    ur_rules[reduction.dot_general_p] = ur.dot_general_rule
    ur_rules[shape.reshape_p] = ur.reshape_rule
    ur_rules[shape.concatenate_p] = ur.concatenate_rule
    ur_rules[shape.stack_p] = ur.concatenate_rule
    for prim in (shape.transpose_p, shape.squeeze_p, shape.slice_p, shape.dynamic_slice_p,
                 shape.pad_p, shape.unstack_p, shape.split_p, shape.rev_p):
        ur_rules[prim] = ur.same_rule
    for prim in (call.jit_p, control_flow.cond_p, control_flow.while_p, control_flow.scan_p,
                 reshard_p, shard_map_p, device_put_p):
        ur_rules[prim] = ur.keep_rule
    from traxla.ir.vma import preduced_p, reduced_vary_cast_p, vary_unreduced_cast_p
    for prim in (preduced_p, reduced_vary_cast_p, vary_unreduced_cast_p):
        register_sharding(prim, lambda in_avals, outs, **_: [o.sharding_type for o in outs])
        ur_rules[prim] = ur.keep_rule
    for name in ("copy", "reduce_precision"):
        if name in E:
            ur_rules[E[name]] = ur.same_rule


def _shard_map(in_avals, outs, *, mesh, out_specs, **_):
    """Results are laid out by ``out_specs``; the type names only the mesh's Explicit axes."""
    explicit = set(mesh.explicit_axes)

    def keep(entry):
        names = entry if isinstance(entry, tuple) else (entry,)
        kept = tuple(n for n in names if n in explicit)
        return None if not kept else kept[0] if len(kept) == 1 else kept

    result = []
    for out, spec in zip(outs, out_specs):
        entries = [keep(e) for e in tuple(spec or ())]
        entries += [None] * (out.ndim - len(entries))
        if spec is not None and (spec.unreduced or spec.reduced):
            entries = spec.update(partitions=entries)
        result.append(ShardingType(mesh, entries) if explicit else None)
    return result


_register_all()
_register_ur()

"""Unreduced and reduced mesh axes in the type (JAX's ``ur_rule``s): which primitives
accept operands that are unreduced (each device holds a partial sum) or reduced
(replicated, with unreduced cotangents) over Explicit mesh axes, and what their results
are. A primitive with no rule refuses both, as JAX's ``call_ur_rule``; nonlinear
elementwise operations refuse unreduced operands and keep reduced ones."""
from __future__ import annotations

from traxla.errors import ShardingTypeError

_NONE = frozenset()

# primitive -> rule(in_avals, outs, **params) -> list of (unreduced, reduced), one per output;
# a rule returning None keeps the sharding types the sharding rule gave (calls, control flow)
ur_rules: dict = {}


def getu(aval):
    st = getattr(aval, "sharding_type", None)
    return _NONE if st is None else st.spec.unreduced


def getr(aval):
    st = getattr(aval, "sharding_type", None)
    return _NONE if st is None else st.spec.reduced


def has_ur(aval) -> bool:
    st = getattr(aval, "sharding_type", None)
    return st is not None and bool(st.spec.unreduced or st.spec.reduced)


def _not_implemented(prim):
    return NotImplementedError(
        f"unreduced/reduced rule for {prim.name} is not implemented. Please file an issue "
        "at https://github.com/jax-ml/jax/issues")


def apply_ur(prim, in_avals, typed, params):
    """``typed`` (the results with the sharding rule's shardings) with the unreduced and
    reduced axes JAX's rule for ``prim`` gives them."""
    rule = ur_rules.get(prim)
    if rule is None:
        if any(has_ur(a) for a in in_avals) or any(has_ur(o) for o in typed):
            raise _not_implemented(prim)
        return typed
    ur = rule(in_avals, typed, **params)
    if ur is None:
        return typed
    out = []
    for o, (u, r) in zip(typed, ur):
        st = o.sharding_type
        if st is None:
            if u or r:
                raise ShardingTypeError(f"{prim.name}: an unreduced or reduced result needs "
                                        "a mesh in its type")
            out.append(o)
        elif st.spec.unreduced != u or st.spec.reduced != r:
            out.append(o.update(sharding=st.with_ur(frozenset(u), frozenset(r))))
        else:
            out.append(o)
    return out


def _flat(spec):
    out = set()
    for p in spec:
        if p is None:
            continue
        out.update(p if isinstance(p, tuple) else (p,))
    return frozenset(out)


def _replicated_axes(aval, mesh):
    st = getattr(aval, "sharding_type", None)
    if st is None:
        return frozenset(mesh.axis_names)
    return frozenset(mesh.axis_names) - (_flat(st.spec) | st.spec.unreduced | st.spec.reduced
                                         | frozenset(aval.vma))


def _mesh_of(in_avals):
    for a in in_avals:
        if a.sharding_type is not None:
            return a.sharding_type.mesh
    return None


def nary_reduced(in_avals):
    """JAX's ``default_nary_reduced_rule``: all reduced operands reduced over the same axes,
    and no operand replicated or sharded over them."""
    reduced = {r for a in in_avals if (r := getr(a))}
    if len(reduced) > 1:
        raise ShardingTypeError(f"All inputs should be reduced across the same mesh axes. Got "
                                f"specs: {reduced}")
    reduced_s, = reduced if reduced else (_NONE,)
    if reduced_s:
        mesh = _mesh_of(in_avals)
        for a in in_avals:
            if _replicated_axes(a, mesh) & reduced_s:
                raise ShardingTypeError(
                    "Inputs cannot be replicated on the same axes that another input is "
                    f"reduced on. Got input type: {a} and reduced spec: {reduced_s}")
            st = a.sharding_type
            if st is not None and (_flat(st.spec) | frozenset(a.vma)) & reduced_s:
                raise ShardingTypeError(
                    "Inputs cannot be sharded/varying on the same axes that another input is "
                    "reduced on. Reshard the input which is reduced to be sharded on the mesh "
                    "axes it is reduced on via `jax.sharding.reshard(inp, jax.P(...))`. Got "
                    f"input type: {a} and reduced spec: {reduced_s}")
    return reduced_s


def unop(name):
    def rule(in_avals, outs, **params):
        if getu(in_avals[0]):
            raise NotImplementedError(
                f"unreduced rule for {name} is not implemented. Please file an issue at "
                "https://github.com/jax-ml/jax/issues")
        return [(_NONE, getr(in_avals[0]))] * len(outs)
    return rule


def nary(name):
    def rule(in_avals, outs, **params):
        reduced = nary_reduced(in_avals)
        if any(getu(a) for a in in_avals):
            raise NotImplementedError(
                f"unreduced rule for {name} is not implemented. Please file an issue at "
                "https://github.com/jax-ml/jax/issues")
        return [(_NONE, reduced)] * len(outs)
    return rule


def add_rule(in_avals, outs, **params):
    x, y = in_avals
    reduced = nary_reduced(in_avals)
    xu, yu = getu(x), getu(y)
    if xu and yu:
        if xu != yu:
            raise ShardingTypeError("lhs and rhs to `add` must be unreduced along the same mesh "
                                    f"axes. Got lhs={xu}, rhs={yu}")
        return [(xu, reduced)]
    if xu or yu:
        lhs, rhs = ("lhs", "rhs") if xu else ("rhs", "lhs")
        raise ShardingTypeError(
            f"{lhs} is unreduced while {rhs} is not. `add` operation does not allow this "
            "because there will be implicit communication. Please reduce "
            f"{lhs} via `reshard` before calling `add`.")
    return [(_NONE, reduced)]


def mul_rule(in_avals, outs, **params):
    x, y = in_avals
    reduced = nary_reduced(in_avals)
    xu, yu = getu(x), getu(y)
    if xu and yu:
        raise ShardingTypeError("lhs and rhs to `mul` cannot be unreduced since mul is "
                                f"bilinear. Got lhs={xu}, rhs={yu}")
    if xu and xu != getr(y):
        raise ShardingTypeError("RHS should be reduced along the same axes LHS is unreduced "
                                f"on. Got lhs={x} and rhs={y}")
    if yu and getr(x) != yu:
        raise ShardingTypeError("LHS should be reduced along the same axes RHS is unreduced "
                                f"on. Got lhs={x} and rhs={y}")
    unreduced = xu or yu
    return [(unreduced, _NONE if unreduced else reduced)]


def same_rule(in_avals, outs, **params):
    """The operand's unreduced and reduced axes (transpose, squeeze, slices...)."""
    return [(getu(in_avals[0]), getr(in_avals[0]))] * len(outs)


def _given(params, key):
    st = params.get(key)
    return st.spec if st is not None and hasattr(st, "spec") else None


def with_param_rule(key):
    """The ``sharding``/``out_sharding`` param's axes when it names some, else the
    operand's (convert_element_type, broadcast_in_dim)."""
    def rule(in_avals, outs, **params):
        spec = _given(params, key)
        x = in_avals[0]
        if spec is not None:
            return [(spec.unreduced, spec.reduced)]
        return [(getu(x), getr(x))]
    return rule


def reshape_rule(in_avals, outs, *, sharding=None, **params):
    x = in_avals[0]
    spec = None if sharding is None else sharding.spec
    out = []
    for what, get in (("unreduced", getu), ("reduced", getr)):
        mine = get(x)
        given = _NONE if spec is None else getattr(spec, what)
        if mine:
            if spec is not None and given != mine:
                raise ValueError(f"out_sharding passed to reshape must be {what} over the same "
                                 f"mesh axes as operand. Got out_sharding: {spec} and operand "
                                 f"type: {x.str_short()}")
        elif given:
            raise ValueError(f"out_sharding passed to `reshape` cannot contain {what} axes. "
                             f"Got {sharding}")
        out.append(mine)
    return [tuple(out)]


def reduce_sum_rule(in_avals, outs, *, axes, out_sharding=None, **params):
    x = in_avals[0]
    given = None if out_sharding is None else out_sharding.spec
    if given is not None and given.unreduced:
        spec = x.sharding_type.spec if x.sharding_type is not None else ()
        used = _flat(p for i, p in enumerate(spec) if i in axes) | getu(x)
        if not all(u in used for u in given.unreduced):
            raise ShardingTypeError(
                "out_sharding's unreduced axes should be in operand's specs that were summed "
                f"over. Got operand={x}, axes={tuple(axes)}, unreduced_spec={given.unreduced}")
        return [(given.unreduced, getr(x))]
    return [(getu(x), getr(x))]


def dot_general_rule(in_avals, outs, *, dimension_numbers, out_sharding=None, **params):
    lhs, rhs = in_avals
    if getu(lhs) or getu(rhs):
        raise ShardingTypeError(f"lhs or rhs passed to dot_general cannot be unreduced. Got "
                                f"lhs={lhs!r} and rhs={rhs!r}")
    given = None if out_sharding is None else out_sharding.spec
    if given is not None and given.unreduced:
        (lc, rc), _ = dimension_numbers
        ls = lhs.sharding_type.spec if lhs.sharding_type is not None else (None,) * lhs.ndim
        rs = rhs.sharding_type.spec if rhs.sharding_type is not None else (None,) * rhs.ndim
        l_spec, r_spec = tuple(ls[i] for i in lc), tuple(rs[i] for i in rc)
        if l_spec != r_spec:
            raise ShardingTypeError(
                "lhs and rhs contracting dims should be sharded identically when out_sharding "
                "provided to dot_general mentions unreduced_axes. Got "
                f"lhs_contracting_spec={l_spec}, rhs_contracting_spec={r_spec}")
        if given.unreduced != _flat(l_spec):
            raise ShardingTypeError(
                "out_sharding's unreduced axes should be equal to the contracting specs. Got "
                f"unreduced axes={given.unreduced} and contracting spec={l_spec}")
        return [(given.unreduced, _NONE)]
    return [(_NONE, _NONE)]


def _same_over_operands(what, get):
    def rule(in_avals, outs, **params):
        found = {s for a in in_avals if (s := get(a))}
        if len(found) > 1:
            raise ShardingTypeError(f"All operands should be {what} along the same mesh axes. "
                                    f"Got {what} specs: {found}")
        return found.pop() if found else _NONE
    return rule


_concat_u = _same_over_operands("unreduced", getu)
_concat_r = _same_over_operands("reduced", getr)


def concatenate_rule(in_avals, outs, **params):
    return [(_concat_u(in_avals, outs), _concat_r(in_avals, outs))] * len(outs)


def select_rule(in_avals, outs, **params):
    cases = [c for c in in_avals[1:] if c.sharding_type is not None]
    if not cases:
        return [(_NONE, _NONE)]
    return [(getu(cases[0]), getr(cases[0]))]


def keep_rule(in_avals, outs, **params):
    """The sharding rule's result as it is (calls and control flow: their sub-jaxprs' types;
    reshard, device_put, shard_map: the destination's)."""
    return None

"""Array refs (JAX 0.10's mutable arrays): the ``Ref{f32[3]}`` type and the primitives
that create, read, write and retire one: ``new_ref``, ``empty_ref``, ``get``, ``swap``,
``addupdate``, ``freeze`` and ``free_ref``, typed and printed as JAX's
``jax/_src/state/primitives.py`` and ``core.py`` type and print them
(``e:f32[4] <- d[c,:]``, ``d[0,:] += h``, ``i:f32[], d[e] <- d[e], h``).

A ref never reaches lowering: the state-discharge pass (``traxla/state/discharge.py``)
turns every jaxpr that holds one into a pure jaxpr first, threading each ref's value.
"""
from __future__ import annotations

from itertools import chain
from operator import attrgetter

import numpy as np

from traxla.ir import doc_layout as pp
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import Literal, eqns_with_subjaxprs, subjaxprs
from traxla.ir.effects import Effect, def_effects
from traxla.ir.primitive import Primitive, def_typing, pp_eqn_rules
from traxla.ir.jaxpr_printer import pp_vars


class AbstractRef:
    """The type of a mutable array reference: the array type it holds (``inner_aval``)."""

    __slots__ = ("inner_aval", "memory_space", "kind")
    sharding = None
    sharding_type = None  # (the type-level sharding every aval carries: none on a ref)
    weak_type = False
    vma = ()  # (a ref itself varies over no manual axes)
    # Whether any ref type was ever made in this process: until one is, no operand of any
    # primitive can be a ref, and ``bind`` skips looking for them.
    ever_created = False

    def __init__(self, inner_aval: ShapedArray, memory_space=None, kind=None):
        AbstractRef.ever_created = True
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    def __reduce__(self):  # copies and unpickled refs come through __init__ too
        return AbstractRef, (self.inner_aval, self.memory_space, self.kind)

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: self.inner_aval.ndim)
    size = property(lambda self: self.inner_aval.size)

    def __eq__(self, other):
        return (type(other) is AbstractRef and self.inner_aval == other.inner_aval
                and self.memory_space == other.memory_space and self.kind == other.kind)

    def __hash__(self):
        return hash((AbstractRef, self.inner_aval, self.memory_space, self.kind))

    def update(self, inner_aval=None):
        return AbstractRef(inner_aval or self.inner_aval, self.memory_space, self.kind)

    def strip_weak_type(self):
        return self

    def str_short(self, short_dtypes: bool = True) -> str:
        return f"Ref{{{self.inner_aval.str_short(short_dtypes)}}}"

    def __str__(self):
        return self.str_short(short_dtypes=False)

    def __repr__(self):
        return f"AbstractRef({self.inner_aval!r})"


def is_ref_aval(aval) -> bool:
    return type(aval) is AbstractRef


class RefIndexer:
    """A static description of ``ref[idx]``: per dimension either a static slice
    ``("slice", start, size, stride)``, a slice of static size and stride whose start is
    one (scalar integer) operand of the equation ``("dslice", size, stride)`` (Pallas's
    ``pl.ds(i, n)``), a slice of traced size (a DMA's view: ``pl.ds(i, n)`` with ``n``
    traced) ``("dsize", bound, start)`` whose size is an operand, and its start too where
    ``start`` is None (the dimension's bound stands for it in shapes), or an integer indexer ``("int",)`` whose value is one
    operand.
    Operands come in the order of the dimensions. ``trivial`` (``ref[...]``) has no
    entries at all."""

    __slots__ = ("dims", "shape")

    def __init__(self, dims: tuple, shape: tuple):
        self.dims = dims
        self.shape = shape

    @property
    def trivial(self) -> bool:
        return not self.dims

    @property
    def num_operands(self) -> int:
        return len(self.operand_kinds())

    def operand_kinds(self) -> list:
        """The kind of dimension each operand indexes, in order."""
        return [k for d in self.dims if d[0] != "slice"
                for k in (((d[0],) if d[2] is not None else (d[0], d[0]))
                          if d[0] == "dsize" else (d[0],))]

    def __eq__(self, other):
        return type(other) is RefIndexer and (self.dims, self.shape) == (other.dims, other.shape)

    def __hash__(self):
        return hash((self.dims, self.shape))

    def __repr__(self):
        return f"RefIndexer(dims={self.dims}, shape={self.shape})"

    def result_shape(self, int_shapes) -> tuple:
        """The shape ``ref[idx]`` reads (JAX's ``NDIndexer.get_indexer_shape``): integer
        indexers broadcast together and stand where the first of them is."""
        if self.trivial:
            return self.shape
        slice_shape = tuple(d[2] if d[0] == "slice" else d[1] for d in self.dims
                            if d[0] != "int")
        is_int = [d[0] == "int" for d in self.dims]
        if not any(is_int):
            return slice_shape
        int_shapes = [s for s, k in zip(int_shapes, self.operand_kinds()) if k == "int"]
        try:
            int_shape = tuple(np.broadcast_shapes(*int_shapes))
        except ValueError:
            raise ValueError(f"Cannot broadcast shapes for indexing: {list(int_shapes)}") from None
        pos = is_int.index(True)
        return slice_shape[:pos] + int_shape + slice_shape[pos:]


class RefReshape:
    """``ref.reshape(*shape)`` as a link of a ``RefChain`` (JAX's ``RefReshaper``): the
    ref seen with another shape, no operands."""

    __slots__ = ("shape",)
    trivial = False
    num_operands = 0

    def __init__(self, shape: tuple):
        self.shape = tuple(int(d) for d in shape)

    def __eq__(self, other):
        return type(other) is RefReshape and self.shape == other.shape

    def __hash__(self):
        return hash(("reshape", self.shape))

    def __repr__(self):
        return f"RefReshape({self.shape})"


class RefChain:
    """``ref.at[i].at[j]...`` (and ``.reshape``) as JAX keeps it: one link per ``.at``
    (a ``RefIndexer`` of the shape the previous links leave) or reshape, their operands in
    turn. A Mosaic kernel slices its ref once per link, as JAX lowers a ref's transforms."""

    __slots__ = ("links",)

    def __init__(self, links: tuple):
        self.links = tuple(links)

    trivial = property(lambda self: not self.links)
    num_operands = property(lambda self: sum(t.num_operands for t in self.links))

    def __eq__(self, other):
        return type(other) is RefChain and self.links == other.links

    def __hash__(self):
        return hash(self.links)

    def __repr__(self):
        return f"RefChain({list(self.links)})"

    def link_shapes(self, shape, int_shapes=None) -> list:
        """The shape each link is applied to, then the final shape."""
        out, k = [tuple(shape)], 0
        for link in self.links:
            if isinstance(link, RefReshape):
                if int(np.prod(link.shape)) != int(np.prod(out[-1])):
                    raise ValueError(f"Reshape a ref with different number of elements: "
                                     f"{out[-1]} vs {link.shape}")
                out.append(link.shape)
                continue
            n = link.num_operands
            shapes = [()] * n if int_shapes is None else int_shapes[k:k + n]
            k += n
            out.append(tuple(link.result_shape(shapes)))
        return out


class RefEffect(Effect):
    """Reading or writing a ref: never dead code, never reordered past another one."""

    name = "RefEffect"


ref_effect = RefEffect()

new_ref_p = Primitive("new_ref")
empty_ref_p = Primitive("empty_ref")
get_p = Primitive("get")
swap_p = Primitive("swap")
addupdate_p = Primitive("addupdate", multiple_results=True)
freeze_p = Primitive("freeze")
free_ref_p = Primitive("free_ref", multiple_results=True)
REF_PRIMITIVES = (new_ref_p, empty_ref_p, get_p, swap_p, addupdate_p, freeze_p, free_ref_p)

for _prim in REF_PRIMITIVES:
    def_effects(_prim, lambda params: frozenset({ref_effect}))


def _check_ref(name, ref):
    if not is_ref_aval(ref):
        raise ValueError(f"`{name}` must be called on `Ref` types: {ref}.")


def _indexed_type(name, ref, idx_avals, tree):
    _check_ref(name, ref)
    if isinstance(tree, RefChain):  # the links before the last give the ref it indexes
        *links, last = tree.links
        head = RefChain(tuple(links))
        n = head.num_operands
        shape = head.link_shapes(ref.shape, [a.shape for a in idx_avals[:n]])[-1]
        inner = ShapedArray(shape, ref.dtype, ref.inner_aval.weak_type)
        if not isinstance(last, RefIndexer):
            raise ValueError(f"`{name}`: a ref chain ends with an indexer; got {tree}")
        return _indexed_type(name, AbstractRef(inner, ref.memory_space), idx_avals[n:], last)
    if tree.num_operands != len(idx_avals):
        raise ValueError(f"`{name}`: the indexer {tree} takes {tree.num_operands} integer "
                         f"operands; got {len(idx_avals)}.")
    for a in idx_avals:
        if not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"`{name}`: a ref is indexed by integers or slices; got an index "
                            f"of type {a.str_short(False)}.")
    for a, kind in zip(idx_avals, tree.operand_kinds()):
        if kind in ("dslice", "dsize") and a.shape:
            raise TypeError(f"`{name}`: the start of a dynamic slice must be a scalar; got "
                            f"{a.str_short(False)}.")
    shape = tree.result_shape([a.shape for a in idx_avals])
    return ShapedArray(shape, ref.dtype, ref.inner_aval.weak_type)  # (JAX keeps weakness)


def _new_ref_rule(init, *, memory_space=None, kind=None):
    if is_ref_aval(init):
        raise ValueError("Cannot store a Ref into another Ref. Did you forget to load from it "
                         "using `[...]`?")
    return AbstractRef(ShapedArray(init.shape, init.dtype, init.weak_type), memory_space, kind)


def _empty_ref_rule(*, ty, memory_space=None):
    return AbstractRef(ShapedArray(ty.shape, ty.dtype), memory_space)


def _get_rule(ref, *idx, tree):
    return _indexed_type("get", ref, idx, tree)


def _check_value(name, expected, value):
    if is_ref_aval(value):
        raise ValueError("Cannot store a Ref into another Ref. Did you forget to load from it "
                         "using `[...]`?")
    if expected.shape != value.shape:
        raise ValueError(f"Invalid shape for `{name}`. Expected shape: {expected.shape}. "
                         f"Value shape: {value.shape}.")
    if expected.dtype != value.dtype:
        raise ValueError(f"Invalid dtype for `{name}`. Ref dtype: {expected.dtype}. "
                         f"Value dtype: {value.dtype}. ")


def _swap_rule(ref, value, *idx, tree):
    expected = _indexed_type("swap", ref, idx, tree)
    _check_value("swap", expected, value)
    return expected


def _addupdate_rule(ref, value, *idx, tree):
    expected = _indexed_type("addupdate", ref, idx, tree)
    _check_value("addupdate", expected, value)
    return []


def _freeze_rule(ref):
    _check_ref("freeze", ref)
    return ref.inner_aval


def _free_ref_rule(ref):
    _check_ref("free_ref", ref)
    return []


def_typing(new_ref_p, _new_ref_rule)
def_typing(empty_ref_p, _empty_ref_rule)
def_typing(get_p, _get_rule)
def_typing(swap_p, _swap_rule)
def_typing(addupdate_p, _addupdate_rule)
def_typing(freeze_p, _freeze_rule)
def_typing(free_ref_p, _free_ref_rule)


# -- printing (as JAX's _get_pp_rule, _swap_pp_rule, _addupdate_pp_rule) ----------------

def _pp_index(atom, ctx) -> str:
    if isinstance(atom, Literal):
        return str(np.asarray(atom.val).item())
    return ctx.name(atom)


def _pp_ref(ref, tree, idx_atoms, ctx):
    if tree.trivial:
        return pp.text(f"{ctx.name(ref)}[...]")
    parts, it = [], iter(idx_atoms)
    for dim, size in zip(tree.dims, tree.shape):
        if dim[0] == "int":
            parts.append(_pp_index(next(it), ctx))
            continue
        if dim[0] == "dslice":  # JAX's _pp_slice: i:i+n
            start = _pp_index(next(it), ctx)
            parts.append(f"{start}:{start}+{dim[1]}")
            continue
        if dim[0] == "dsize":
            start = dim[2] if dim[2] is not None else _pp_index(next(it), ctx)
            length = _pp_index(next(it), ctx)
            parts.append(f"{start}:{start}+{length}")
            continue
        _, start, length, _stride = dim  # JAX prints start:start+size, not the stride
        start_str = "" if start == 0 else str(start)
        end = start + length
        parts.append(f"{start_str}:{'' if end == size else end}")
    return pp.text(f"{ctx.name(ref)}[{','.join(parts)}]")


def _pp_get(eqn, ctx):
    ref, *idx = eqn.invars
    lhs = pp_vars(eqn.outvars, ctx, print_shapes=True)
    return pp.concat([lhs, pp.text(" <- "), _pp_ref(ref, eqn.params["tree"], idx, ctx)])


def _pp_swap(eqn, ctx):
    ref, value, *idx = eqn.invars
    target = _pp_ref(ref, eqn.params["tree"], idx, ctx)
    out = eqn.outvars[0]
    if ctx.var_names.get(out) == "_":  # a set: the old value is not read
        return pp.concat([target, pp.text(" <- "), pp.text(ctx.name(value))])
    lhs = pp_vars([out], ctx, print_shapes=True)
    return pp.concat([lhs, pp.text(", "), target, pp.text(" <- "), target, pp.text(", "),
                      pp.text(ctx.name(value))])


def _pp_addupdate(eqn, ctx):
    ref, value, *idx = eqn.invars
    return pp.concat([_pp_ref(ref, eqn.params["tree"], idx, ctx), pp.text(" += "),
                      pp.text(ctx.name(value))])


pp_eqn_rules[get_p] = _pp_get
pp_eqn_rules[swap_p] = _pp_swap
pp_eqn_rules[addupdate_p] = _pp_addupdate


def jaxpr_has_refs(jaxpr, operands=None) -> bool:
    """Whether a jaxpr (or one nested in it) holds a ref anywhere: what the discharge
    pass must rewrite before lowering or a transformation sees it. ``operands``: the set
    of the operands of ``jaxpr``'s equations, where the caller has made it (the pruning
    before lowering needs it too)."""
    memo = _has_refs_memo.get(id(jaxpr))
    if memo is not None and memo[0] is jaxpr:
        return memo[1]
    eqns = jaxpr.eqns
    # C-level passes over every equation of every program lowered: its primitives, the
    # types of its operands' avals (a literal's is never a ref); then the nested jaxprs
    found = (any(is_ref_aval(v.aval) for v in (*jaxpr.invars, *jaxpr.constvars))
             or not _REF_PRIMITIVE_SET.isdisjoint(map(_primitive_of, eqns))
             or AbstractRef in set(map(type, map(_aval_of, chain.from_iterable(
                 map(_invars_of, eqns)) if operands is None else operands))))
    if not found:
        seen = set()  # an inner jaxpr called many times: asked once
        for eqn in eqns_with_subjaxprs(jaxpr):
            for sub in subjaxprs(eqn.params):
                if id(sub) not in seen:
                    seen.add(id(sub))
                    found = jaxpr_has_refs(sub)
                    if found:
                        break
            if found:
                break
    if len(_has_refs_memo) > 4096:
        _has_refs_memo.clear()
    _has_refs_memo[id(jaxpr)] = (jaxpr, found)
    return found


_has_refs_memo: dict = {}
_REF_PRIMITIVE_SET = frozenset(REF_PRIMITIVES)
_primitive_of = attrgetter("primitive")
_invars_of = attrgetter("invars")
_aval_of = attrgetter("aval")

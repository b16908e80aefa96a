"""``traxla.experimental.hijax``: the names of ``jax.experimental.hijax`` (JAX's
high-level types: user-defined types whose values are Python objects, with primitives of
their own that say how they lower to ordinary arrays).

An immutable high-level type (``HiType``) is staged as JAX stages it: inside ``jit`` a
value of the type is one jaxpr variable of that type (an argument, a result, or a
``VJPHiPrimitive``'s result), and the jaxpr becomes a program of arrays when it is
compiled (``traxla/api/hi_lowering.py``); ``grad`` differentiates with respect to such a
value (its ``to_tangent_aval``); ``lax.scan`` (``traxla/lax/hi_scan.py``) and
``shard_map`` with a ``HiPspec`` (``traxla/sharding/hi_shard_map.py``) run on the
values' arrays.

A ``HiPrimitive`` (the older kind, and mutable types') is always lowered where it is
bound: its ``to_lojax`` rule runs in the current trace (JAX does so eagerly, and when it
lowers a staged jaxpr before compiling). Inside ``jit`` a mutable hijax value is therefore
a Python object holding tracers: ``jit`` and ``eval_shape`` turn such an argument into its
low-level values (``read_loval``), rebuild it inside the trace (``new_from_loval``) and
write its final state back afterwards (``update_from_loval``), as JAX's ``jit`` does
(``traxla/api/hijax_args.py``). A mutable one that a staged function reaches from outside
becomes that function's state through array refs (below). ``register_hitype`` makes
``typeof`` of the type's values its abstract value."""
from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections import namedtuple
from typing import ClassVar

import numpy as np

from traxla import primitives as prims, tree_util
from traxla.api.hijax_args import own, owns
from traxla.autodiff import hi_primitive as _hp
from traxla.autodiff.ad import Zero, instantiate as instantiate_zeros  # noqa: F401
from traxla.autodiff.ad import is_undefined as is_undefined_primal  # noqa: F401
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive
from traxla.ir.rules.refs import AbstractRef  # noqa: F401
from traxla.sharding.specs import HiPspec
from traxla.state.ref import new_ref
# JAX's TransformedRef: a Ref seen through ``.at[...]`` indexers (traxla's view keeps them
# as its ``chain``); ``isinstance(r.at[1:3], TransformedRef)``, its shape, dtype, get, set
from traxla.state.ref import _RefView as TransformedRef  # noqa: F401
from traxla.tracer import DynamicJaxprTrace, EvalTrace, Tracer
from traxla.tracer.traces import _bottom, current_trace, set_current_trace
from traxla.tracer.values import hitype_avals

AbstractValue = ShapedArray


class _EffectTypeSet:
    """Effect types allowed inside control flow (``add_type``, ``contains``)."""

    def __init__(self):
        self._types: set = set()

    def add_type(self, effect_type) -> None:
        self._types.add(effect_type)

    def contains(self, eff) -> bool:
        return any(isinstance(eff, t) for t in self._types)


control_flow_allowed_effects = _EffectTypeSet()

# A property and a method of a high-level type's abstract value (JAX's ``core``
# namedtuples: a tracer of the type forwards the attribute to its value).
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])


def register_hitype(typ, to_aval) -> None:
    """``typeof(x)`` of an instance of ``typ`` is ``to_aval(x)``."""
    hitype_avals[typ] = to_aval


def cur_qdd(x):
    """The quasi-dynamic data (a mutable hijax value's current type state) of ``x``:
    ``x.cur_qdd()`` (a value is never a tracer here: see the module's docstring)."""
    return x.cur_qdd()


class HiType:
    """Base of the abstract values of immutable high-level types. A staged value of such
    a type is one jaxpr variable of that type (``b:q8[2,3]``); it becomes its ``lo_ty``
    arrays when the jaxpr is lowered (``traxla/api/hi_lowering.py``)."""

    is_high = True
    has_qdd = False
    # what the tracer machinery reads of an abstract value: a high-level one carries its
    # sharding, if any, in its own fields (its ``lo_ty`` consumes them)
    sharding_type = None
    memory_space = None
    weak_type = False
    vma = ()

    def strip_weak_type(self):
        return self

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return repr(self)

    def lo_ty(self):
        raise NotImplementedError(f"{type(self).__name__} must define lo_ty")

    def lower_val(self, hi_val):
        raise NotImplementedError(f"{type(self).__name__} must define lower_val")

    def raise_val(self, *lo_vals):
        raise NotImplementedError(f"{type(self).__name__} must define raise_val")

    def to_tangent_aval(self):
        raise NotImplementedError(f"{type(self).__name__} must define to_tangent_aval")

    def to_ct_aval(self):
        return self.to_tangent_aval()


class MutableHiType(HiType):
    """Base of the abstract values of mutable high-level types: their lowering depends on
    the value's current quasi-dynamic data (``cur_qdd``)."""

    has_qdd = True
    is_writer = False

    def lo_ty(self):
        raise AssertionError("mutable hitypes should use lo_ty_qdd instead")

    def lo_ty_qdd(self, state, /):
        raise NotImplementedError(f"{type(self).__name__} must define lo_ty_qdd")

    def new_from_loval(self, state, /, *lo_vals):
        raise NotImplementedError(f"{type(self).__name__} must define new_from_loval")

    def read_loval(self, state, val, /):
        raise NotImplementedError(f"{type(self).__name__} must define read_loval")

    def update_from_loval(self, state, val, /, *lo_vals) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define update_from_loval")


def _typeof_or_self(x):
    from traxla.api.device_arrays import typeof  # noqa: PLC0415  (same layer, loads later)
    try:
        return typeof(x)
    except Exception:  # noqa: BLE001  (an operand that is no value: is_high sees it as is)
        return x


class HiPrimitive(Primitive):
    """A primitive on high-level values. Binding it runs its ``to_lojax`` rule in the
    current trace (where ``is_high`` is true, the default); one that says it is not high
    runs its ``impl`` outside any transformation."""

    multiple_results = False

    def __init__(self, name: str):
        self.name = name  # (multiple_results: the subclass's class attribute)

    def is_high(self, *avals, **params) -> bool:
        return True

    def is_effectful(self, params) -> bool:
        return False

    def abstract_eval(self, *avals, **params):
        raise NotImplementedError(f"HiPrimitive '{self.name}' must define abstract_eval")

    def to_lojax(self, *args, **params):
        raise NotImplementedError(
            f"Primitive '{self.name}' has is_high=True but no to_lojax lowering rule.")

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError(f"HiPrimitive '{self.name}' must define jvp")

    def transpose(self, *args, **params):
        raise NotImplementedError(f"HiPrimitive '{self.name}' must define transpose")

    def bind(self, /, *args, **params):
        if not self.is_high(*map(_typeof_or_self, args), **params):
            impl = getattr(self, "impl", None)
            if impl is None:
                raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")
            return impl(*args, **params)
        if _syncing.depth:  # reading or writing a captured object's state (below)
            return self.to_lojax(*args, **params)
        boxes = _captured_boxes(args)
        for box in boxes:
            box.sync_in()
        out = self.to_lojax(*args, **params)
        for box in boxes:
            box.sync_out()
        for x in (out if self.multiple_results else (out,)):
            if type(x) in hitype_avals:  # made here: a staged function's own object
                own(x)
        return out


# -- mutable hijax objects captured by a staged function -------------------------------------
# A mutable hijax object that a staged function (a jit, a scan body) reaches from outside,
# not through its arguments, is state of that function, as JAX makes it an input and an
# output. Here its low-level values move into array refs (traxla.new_ref) when a staged
# function first touches it: the object's state is then its refs' (read before and written
# after every HiPrimitive on it, in the current trace), which jit and the control-flow
# primitives already thread through their programs as closed-over refs.

class _Syncing(threading.local):
    depth = 0


_syncing = _Syncing()
_boxes: dict = {}  # id(object) -> its _RefBox


class _RefBox:
    __slots__ = ("obj", "aval", "qdd", "refs", "seen")

    def __init__(self, obj, aval, qdd, refs):
        self.obj, self.aval, self.qdd, self.refs, self.seen = obj, aval, qdd, refs, ()

    def sync_in(self):
        """The object holds its refs' current values, read in the innermost staging (or
        the eager) trace: under grad or vmap inside a jit, state is the jit's."""
        with set_current_trace(_state_trace()):
            self.seen = tuple(r[...] for r in self.refs)
        with _sync():
            self.aval.update_from_loval(self.qdd, self.obj, *self.seen)

    def sync_out(self):
        """The refs hold the object's values, where an operation changed them."""
        qdd = self.obj.cur_qdd()
        if qdd != self.qdd:
            if isinstance(current_trace(), EvalTrace):
                # a new structure, set eagerly: the object's state is its own again (a
                # program traced before still reads and writes the old refs)
                del _boxes[id(self.obj)]
                return
            raise NotImplementedError(
                f"jax.experimental.hijax: the structure of a mutable {type(self.obj).__name__} "
                "captured by a staged function changed inside it; pass it as an argument")
        with _sync():
            vals = self.aval.read_loval(qdd, self.obj)
        state = _state_trace()
        for r, v, old in zip(self.refs, vals, self.seen):
            if v is not old:  # (a differentiated or batched value: the ref's own error)
                with set_current_trace(state if not isinstance(v, Tracer)
                                       or v._trace is state else current_trace()):
                    r[...] = v


def _state_trace():
    """The innermost staging trace (or the eager one) at or below the current trace."""
    trace = current_trace()
    while not isinstance(trace, (DynamicJaxprTrace, EvalTrace)) and hasattr(trace, "parent"):
        trace = trace.parent
    return trace


def _forget_dead_boxes():
    """Drops the boxes whose refs were made in a trace that has ended (objects a jit made
    and a scan inside it captured)."""
    for key in [k for k, b in _boxes.items()
                if any(isinstance(r, Tracer) and not r._trace.alive for r in b.refs)]:
        del _boxes[key]


@contextlib.contextmanager
def _sync():
    _syncing.depth += 1
    try:
        yield
    finally:
        _syncing.depth -= 1


def _captured_boxes(args) -> list:
    """The ref boxes of the mutable hijax operands, each made when a staged function first
    reaches an object from outside (its values are not the current trace's)."""
    trace, out = current_trace(), []
    for x in args:
        to_aval = hitype_avals.get(type(x))
        if to_aval is None:
            continue
        box = _boxes.get(id(x))
        if box is not None and box.obj is x:
            out.append(box)
            continue
        if not isinstance(trace, DynamicJaxprTrace):
            continue
        aval = to_aval(x)
        if not aval.has_qdd or owns(trace, x):
            continue
        qdd = x.cur_qdd()
        with _sync():
            vals = aval.read_loval(qdd, x)
        if any(isinstance(v, Tracer) and v._trace is trace for v in vals):
            continue  # made inside this function (or one of its arguments): its own
        _forget_dead_boxes()
        refs = []
        for v in vals:  # each ref made where its value lives (eagerly, or an outer trace)
            with set_current_trace(v._trace if isinstance(v, Tracer) else _bottom[0]):
                refs.append(new_ref(v))
        _boxes[id(x)] = box = _RefBox(x, aval, qdd, refs)
        out.append(box)
    return out


class VJPHiPrimitive:
    """JAX's new-style hijax primitive: a subclass sets ``in_avals`` (a tuple of pytrees of
    avals), ``out_aval`` (a pytree of avals) and ``params`` (static, hashable) in its
    ``__init__`` and defines ``expand`` (the implementation, in ordinary operations) and,
    as it needs them, the rules ``vjp_fwd``/``vjp_bwd_retval`` (or ``vjp_bwd`` with
    accumulators), ``jvp``, ``lin``/``linearized``, ``transpose``, ``batch`` or
    ``batch_dim_rule``. Calling an instance applies it (``call_hi_primitive``, see
    ``traxla/autodiff/hi_primitive.py``)."""

    effects: frozenset = frozenset()

    def __init__(self):
        for name in ("in_avals", "out_aval", "params"):
            if not hasattr(self, name):
                raise AttributeError(f"subclass __init__ should set `self.{name}`")
        if (type(self).vjp_bwd is not VJPHiPrimitive.vjp_bwd
                and type(self).vjp_bwd_retval is not VJPHiPrimitive.vjp_bwd_retval):
            raise AttributeError(f"subclass {type(self)} should not override both "
                                 "`vjp_bwd` and `vjp_bwd_retval`")
        self.in_avals_flat, self.in_tree = tree_util.tree_flatten(self.in_avals)
        self.out_avals_flat, self.out_tree = tree_util.tree_flatten(self.out_aval)
        self.__dict__.update(self.params)
        self.check(*self.in_avals)

    def expand(self, *args):
        raise NotImplementedError(f"subclass {type(self)} must implement `expand`")

    def vjp_fwd(self, nzs_in, /, *args):
        raise NotImplementedError(f"for grad support, subclass {type(self)} must "
                                  "implement `vjp_fwd`")

    def vjp_bwd(self, res, outgrad, /, *arg_accums):
        _hp.accumulate(self, arg_accums, self.vjp_bwd_retval(res, outgrad))

    def vjp_bwd_retval(self, res, outgrad, /):
        raise NotImplementedError(f"for grad support, subclass {type(self)} must "
                                  "implement `vjp_bwd` or `vjp_bwd_retval`")

    def jvp(self, primals, tangents):
        raise NotImplementedError(f"for jvp support, subclass {type(self)} must "
                                  "implement `jvp`")

    def lin(self, nzs_in, *primals):
        raise NotImplementedError(f"for linearize support, subclass {type(self)} "
                                  "must implement `lin` and `linearized`")

    def linearized(self, residuals, *tangents):
        raise NotImplementedError(f"for linearize support, subclass {type(self)} "
                                  "must implement `lin` and `linearized`")

    def transpose(self, out_ct, *maybe_accums):
        raise NotImplementedError(f"for transpose support, subclass {type(self)} "
                                  "must implement `transpose`")

    def batch(self, axis_data, args, dims):
        out_dim = self.batch_dim_rule(axis_data, dims)
        return VmapOf(self, axis_data, dims, out_dim)(*args), out_dim

    def batch_dim_rule(self, axis_data, dims, /):
        raise NotImplementedError(f"for vmap support, subclass {type(self)} must "
                                  "implement `batch` or `batch_dim_rule`")

    def dce(self, used_outs):
        used = tree_util.tree_leaves(used_outs)
        return (False, False, None) if not any(used) else (True, True, self)

    def remat(self, _policy, *args):
        return self(*args), self  # full remat by default

    def __call__(self, *args):
        args_flat = _hp.leaves_checked(self.in_tree, args)
        ans_flat = _hp.call_hi_primitive_p.bind(*args_flat, _prim=self)
        return tree_util.tree_unflatten(self.out_tree, list(ans_flat))

    def check(self, *arg_tys):
        return  # a subclass may check its input types here

    def __repr__(self):
        return f"{self.__class__.__name__}[{self.params}]"

    def __hash__(self):
        return hash((self.__class__.__name__, tuple(self.params.items()), self.effects))

    def __eq__(self, other):
        return (type(self) is type(other) and self.params == other.params
                and self.effects == other.effects)


def _unmapped(size, d, aval):
    if d is None:
        return aval
    shape = list(aval.shape)
    shape.insert(d, size)
    return aval.update(shape=tuple(shape))


def _mapped(d, aval):
    if d is None:
        return aval
    shape = list(aval.shape)
    del shape[d]
    return aval.update(shape=tuple(shape))


class VmapOf(VJPHiPrimitive):
    """A ``VJPHiPrimitive`` vmapped (``batch``'s default): its ``expand``, ``jvp`` and VJP
    rules are the primitive's, vmapped."""

    def __init__(self, prim, axis_data, in_dims, out_dim):
        size = axis_data.size
        self.in_avals = tree_util.tree_map(lambda a, d: _unmapped(size, d, a), prim.in_avals,
                                           in_dims)
        self.out_aval = tree_util.tree_map(lambda a, d: _unmapped(size, d, a), prim.out_aval,
                                           out_dim)
        self.params = dict(prim=prim, axis_data=axis_data, in_dims=in_dims, out_dim=out_dim)
        super().__init__()

    def _vmap(self, f, in_axes, out_axes):
        from traxla.batching import vmap
        return vmap(f, in_axes=in_axes, out_axes=out_axes, axis_size=self.axis_data.size,
                    axis_name=self.axis_data.name)

    def expand(self, *args):
        return self._vmap(self.prim.expand, self.in_dims, self.out_dim)(*args)

    def jvp(self, primals, tangents):
        return self._vmap(self.prim.jvp, (self.in_dims, self.in_dims),
                          (self.out_dim, self.out_dim))(primals, tangents)

    def vjp_fwd(self, in_nzs, *args):
        from traxla.batching.batch_trace import moveaxis, vmap_unrestricted
        args_flat = tree_util.tree_leaves(args)
        dims_flat = self.in_tree.flatten_up_to(self.in_dims)
        store = {}

        def fwd(*flat):
            out, res, *maybe_nzs = self.prim.vjp_fwd(
                in_nzs, *tree_util.tree_unflatten(self.in_tree, list(flat)))
            store["nzs"], (res_flat, store["res_tree"]) = (maybe_nzs,
                                                          tree_util.tree_flatten(res))
            out_flat = tree_util.tree_leaves(out)
            store["n_out"] = len(out_flat)
            return out_flat + res_flat

        outs, dims = vmap_unrestricted(fwd, args_flat, dims_flat, self.axis_data.size)
        n = store["n_out"]
        out_dims = self.out_tree.flatten_up_to(self.out_dim)
        outs_ = []
        for o, d, want in zip(outs[:n], dims[:n], out_dims):
            if want is None:
                outs_.append(o)
            elif d is None:
                outs_.append(prims.broadcast_in_dim(
                    o, tuple(np.insert(np.shape(o), want, self.axis_data.size)),
                    tuple(i for i in range(np.ndim(o) + 1) if i != want)))
            else:
                outs_.append(moveaxis(o, d, want))
        res = (tree_util.tree_unflatten(store["res_tree"], list(outs[n:])),
               _Static((store["res_tree"], tuple(dims[n:]))))
        return (tree_util.tree_unflatten(self.out_tree, outs_), res, *store["nzs"])

    def vjp_bwd_retval(self, res_, g):
        res, (res_tree, res_dims) = res_[0], res_[1].val
        size = self.axis_data.size
        g = tree_util.tree_map(
            lambda d, ct: Zero(_mapped(d, ct.aval)) if type(ct) is Zero else ct,
            self.out_dim, g, is_leaf=lambda x: x is None)
        in_dims_flat = self.in_tree.flatten_up_to(self.in_dims)

        def bwd(res_flat, g):
            cts = self.prim.vjp_bwd_retval(tree_util.tree_unflatten(res_tree, list(res_flat)), g)
            cts = [None if sub is None else sub for sub in cts]
            return [instantiate_zeros(c) if c is not None else
                    instantiate_zeros(Zero(a.to_tangent_aval() if hasattr(
                        a, "to_tangent_aval") else a))
                    for c, a in zip(_flat_cts(self.prim, cts), self.prim.in_avals_flat)]

        out = self._vmap(bwd, (list(res_dims), self.out_dim), 0)(list(tree_util.tree_leaves(res)), g)
        flat = [_lax().reduce_sum(c, (0,)) if d is None else _move(c, 0, d)
                for c, d in zip(out, in_dims_flat)]
        return tree_util.tree_unflatten(self.in_tree, flat)

    def batch_dim_rule(self, axis_data, in_dims):
        def fix(d, d_):
            return d if (d is None or d_ is None) else d - (d_ < d)
        in_dims_ = tree_util.tree_map(fix, in_dims, self.in_dims, is_leaf=lambda x: x is None)
        out_dim = self.prim.batch_dim_rule(axis_data, in_dims_)
        return tree_util.tree_map(lambda d, d_: d + (d_ < d), out_dim, self.out_dim)


class _Static:
    """A residual that is no array (JAX's ``Static``): a pytree node without leaves."""

    def __init__(self, val):
        self.val = val


tree_util.register_pytree_node(_Static, lambda s: ((), s.val), lambda val, _: _Static(val))


def _flat_cts(prim, cts):
    """One cotangent (or None) per flat input of ``prim``, from ``vjp_bwd_retval``'s tuple."""
    out = []
    for sub, avals in zip(cts, prim.in_avals):
        n = len(tree_util.tree_leaves(avals))
        out += [None] * n if sub is None else tree_util.tree_structure(avals).flatten_up_to(sub)
    return out


def _move(x, src, dst):
    from traxla.batching.batch_trace import moveaxis
    return moveaxis(x, src, dst)


@dataclasses.dataclass(frozen=True, slots=True)
class AvalQDD:
    """An abstract value with its (immutable) quasi-dynamic data."""

    aval: object
    qdd: object
    is_high: ClassVar[bool] = True
    has_qdd: ClassVar[bool] = True

    def lo_ty(self):
        return self.aval.lo_ty_qdd(self.qdd)

    def read_loval(self, val):
        return self.aval.read_loval(self.qdd, val)

    def new_from_loval(self, *lo_vals):
        return self.aval.new_from_loval(self.qdd, *lo_vals)

    def to_tangent_aval(self):
        return AvalQDD(self.aval.to_tangent_aval(), self.qdd and self.qdd.to_tangent_qdd())


@dataclasses.dataclass(frozen=True, slots=True)
class AvalMutableQDD:
    """An abstract value with quasi-dynamic data that typing rules update."""

    aval: object
    mutable_qdd: object


__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive",
           "HiPspec", "HiType", "MutableHiType", "ShapedArray", "VJPHiPrimitive", "Zero",
           "aval_method", "aval_property", "control_flow_allowed_effects", "cur_qdd",
           "instantiate_zeros", "is_undefined_primal", "register_hitype"]


def _lax():
    from traxla import lax
    return lax

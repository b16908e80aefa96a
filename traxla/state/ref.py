"""``traxla.ref``: array refs, JAX 0.10's mutable arrays (``jax.new_ref``, ``jax.ref``).

A ref is a mutable box around an array: ``ref[idx]`` reads, ``ref[idx] = v`` writes,
``ref[idx] += v`` reads, adds and writes, ``addupdate`` accumulates, ``freeze`` gives the
final value. Two representations, one semantics:

- while a function is being staged (``jit``, ``make_jaxpr``, a loop body), a ref is a
  tracer of type ``Ref{f32[3]}`` and each access is a ``get``/``swap``/``addupdate``
  equation, printed as JAX prints it; the state-discharge pass turns the jaxpr into a
  pure one (each ref's value threaded through) before it is lowered or transformed;
- everywhere else (eagerly, under ``grad`` or ``vmap`` outside a ``jit``) a ref is a
  :class:`Ref` object holding its current value: Python runs the accesses in program
  order, which is exactly the meaning of the mutations, and ``grad``/``vmap`` see the
  ordinary array operations they stand for.

A ``Ref`` passed to a ``jit``-compiled function is mutated in place, as in JAX.
"""
from __future__ import annotations

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.rules.refs import (AbstractRef, RefIndexer, addupdate_p, empty_ref_p, free_ref_p,
                            freeze_p, get_p, is_ref_aval, new_ref_p, swap_p)
from traxla.tracer import EvalTrace as _EvalTrace, Tracer, traces as trace_core
from traxla.ir.jaxpr import subjaxprs, Literal
from traxla.state import ref_chain
from traxla.ir.primitive import set_bind_hook
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.control_flow import cond_p, scan_p, while_p
from traxla.ir.rules.refs import jaxpr_has_refs
from traxla.tracer.interpret import eval_jaxpr as _eval_jaxpr
from traxla.tracer.staging import DynamicJaxprTrace, DynamicJaxprTracer
from traxla import primitives as prims
import traxla.api as _api
import traxla.autodiff.ad as _ad
from traxla.autodiff.custom import custom_vjp_call_p
from traxla.ir.dtypes import canonicalize
from traxla.runtime import to_array

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
           "new_ref", "set", "swap"]


class numpy_api:
    """``jnp.array``/``jnp.asarray``, which make a ref's value from what the user gives (lists,
    scalars with their weak types, NumPy arrays). ``traxla.numpy``, a layer above, installs
    them when it loads (as it installs the Array operators)."""
    array = asarray = None


def _staging() -> bool:
    return isinstance(trace_core.current_trace(), DynamicJaxprTrace)


def _is_staged_ref(x) -> bool:
    return isinstance(x, Tracer) and is_ref_aval(x.aval)


def is_ref(x) -> bool:
    """A ``Ref`` object or a ref-typed tracer."""
    return isinstance(x, Ref) or _is_staged_ref(x)


class Ref:
    """A mutable array reference outside staging (see the module docstring)."""

    __slots__ = ("_value", "_aval", "_trace", "_owned", "__weakref__")

    def __init__(self, value, aval: AbstractRef, owned: bool = False):
        self._value = value
        self._aval = aval
        self._trace = trace_core.current_trace()
        # ``_owned is _value`` when no one else holds that buffer: a jit call may then update
        # it in place (donate it). Handing the value out, or storing a value from outside,
        # ends that; the next such call copies first.
        self._owned = value if owned else None

    aval = property(lambda self: self._aval)
    is_array_ref = True  # vmap maps a Ref argument through its value (batching/core.py)

    def rebox(self, value):
        """A Ref holding ``value`` in the current trace (vmap's per-lane view of this one)."""
        aval = value.aval if isinstance(value, Tracer) else self._aval.inner_aval
        return Ref(value, AbstractRef(ShapedArray(aval.shape, aval.dtype),
                                      self._aval.memory_space, self._aval.kind))

    @property
    def value(self):  # what the discharge pass reads and writes (a cell's interface)
        self._owned = None
        return self._value

    @value.setter
    def value(self, new):
        self._value = new
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)

    def _checked_value(self):
        """The current value, handed out (so no longer updated in place). A ref made in an
        enclosing trace is readable anywhere below it (its value is a constant there);
        writes are checked by ``_check_write``."""
        self._owned = None
        return self._value

    def _donatable(self):
        """The current value as a buffer that only this ref holds (copied if it may be
        shared), for a compiled call that updates it in place."""
        if self._owned is not self._value:
            self._value = self._owned = prims.copy_p_bind(to_array(self._value))
        return self._value

    def _set_owned(self, value):
        self._value = self._owned = value

    def unsafe_buffer_pointer(self):
        return self._value.unsafe_buffer_pointer()

    def _check_write(self, value):
        _check_write_into(self._aval, self._trace, value)

    def __getitem__(self, idx):
        return get(self, idx)

    def __setitem__(self, idx, value):
        set(self, idx, value)

    @property
    def at(self):
        return _RefAt(self)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._checked_value(), dtype=dtype)

    def __repr__(self):
        value = self._value
        cached = getattr(value, "_npy", False)
        text = repr(value)
        if cached is None and self._owned is value:
            # the host copy of the buffer repr made is a view of it on CPU: kept, it would
            # stop the next jit call from updating the buffer in place
            value._npy = None
        return "Ref(" + text[len("Array("):] if text.startswith("Array(") else f"Ref({text})"

    def __hash__(self):
        return id(self)


def _check_write_into(aval, ref_trace, value, op="a set/swap"):
    """A value of a deeper trace (differentiated or batched inside grad/vmap) cannot be
    stored in a ref made outside it: the ref would outlive the tracer (JAX's errors, of
    JAX's bare ``Exception`` class)."""
    if not isinstance(value, Tracer) or value._trace is ref_trace:
        return
    kind = type(value._trace).__name__
    if "JVP" in kind or "Lineariz" in kind:
        raise Exception(  # noqa: TRY002  (JAX's class)
            "performing a set/swap operation with a differentiated value on a "
            f"non-differentiated array reference of type {aval}. Move the array "
            "reference to be an argument of the differentiated function?")
    if "Batch" in kind:
        raise Exception(  # noqa: TRY002  (JAX's class)
            f"performing {op} operation with vmapped value on an unbatched array "
            f"reference of type {aval}. Move the array reference to be an "
            "argument to the vmapped function?")
    raise ValueError(f"A value traced by {kind} cannot be stored in a Ref of type "
                     f"{aval} created outside that transformation.")


def _value_for(ref, value):
    """A final value computed for ``ref`` under transformations the ref was made outside:
    their tracers unwrapped down to the ref's own trace when they carry no derivative or
    batch; JAX's error when they do."""
    while isinstance(value, Tracer) and value._trace is not ref._trace:
        if hasattr(value, "tangent"):  # a JVP tracer
            if type(value.tangent).__name__ != "Zero":
                break
            value = value.primal
        elif hasattr(value, "batch_dim"):  # a batch tracer
            if value.batch_dim is not None:
                break
            value = value.val
        else:
            break
    _check_write_into(ref._aval, ref._trace, value)
    return value


class _RefAt:
    """``ref.at[idx]``: a view of part of a ref (JAX's transformed ref). It is read with
    ``get()``/``[...]``, written with ``set(v)``/``[...] = v``, and indexed further
    (``ref.at[i][j]``, ``ref.at[i].at[j]``): the indices compose into one index of the ref."""

    __slots__ = ("ref", "chain")

    def __init__(self, ref, chain=()):
        self.ref, self.chain = ref, chain

    def __getitem__(self, idx):
        return _RefView(self.ref, self.chain + (idx,))


_UNSET = object()


class _RefView:
    """``ref.at[i]...``: ``chain`` each ``.at`` index (or reshape) in turn, ``idx`` the one
    index of ``ref`` they compose to (see traxla/state/ref_chain.py)."""
    __slots__ = ("ref", "chain", "_idx")

    def __init__(self, ref, chain):
        self.ref, self.chain, self._idx = ref, chain, _UNSET

    @property
    def idx(self):
        """The composed index, traced when first needed (a DMA needs only ``chain``)."""
        if self._idx is _UNSET:
            self._idx = ref_chain.compose(self.ref, self.chain, _compose)
        return self._idx

    def get(self):
        return get(self)

    def set(self, value):
        set(self, None, value)

    def __getitem__(self, idx):
        return get(self, idx)

    def __setitem__(self, idx, value):
        set(self, idx, value)

    @property
    def at(self):
        return _RefAt(self.ref, self.chain)

    def reshape(self, *shape):
        """This view seen with another shape (JAX's ``RefReshaper``; a compiled Pallas TPU
        kernel's ``tpu.memref_reshape``)."""
        return _RefView(self.ref, self.chain + (ref_chain.reshape_link(self.shape, shape),))

    @property
    def shape(self):
        if self._idx is not _UNSET or len(self.chain) == 1:
            return get_aval(self.ref, self.idx).shape
        return ref_chain.chain_shape(self.ref.shape, self.chain, make_indexer)

    dtype = property(lambda self: self.ref.dtype)
    ndim = property(lambda self: len(self.shape))


def _whole(idx) -> bool:
    return idx is None or idx is Ellipsis or (type(idx) is tuple and not idx)


def _compose(ref, view_idx, idx):
    """The index of ``ref`` that ``ref.at[view_idx][idx]`` names: each axis the view keeps
    (a slice, or a single 1-D integer array, which keeps its place) indexed by the entry of
    ``idx`` for it; the view's scalar integer indices kept."""
    if _whole(idx):
        return view_idx
    tree, operands = make_indexer(ref.shape, view_idx)
    dims = tree.dims if not tree.trivial else [("slice", 0, n, 1) for n in ref.shape]
    shapes = [np.shape(o) for o in operands]
    if sum(bool(sh) for sh in shapes) > 1 or any(len(sh) > 1 for sh in shapes):
        raise NotImplementedError("Indexing further a view `ref.at[...]` taken with several "
                                  "or multidimensional integer arrays is not supported; "
                                  "index the ref directly.")
    kept, ops = [], iter(zip(operands, shapes))  # per view axis: (kind, data, size)
    for dim in dims:
        if dim[0] == "int":
            o, sh = next(ops)
            kept.append(("array", o, sh[0]) if sh else ("scalar", o, None))
        elif dim[0] == "dslice":  # a traced start: ("slice", start, size, stride) all the same
            _, size, stride = dim
            kept.append(("slice", ("slice", next(ops)[0], size, stride), size))
        else:
            kept.append(("slice", dim, dim[2]))
    view_shape = [size for kind, _, size in kept if kind != "scalar"]
    inner, inner_ops = make_indexer(view_shape, idx)
    inner_dims = iter(inner.dims if not inner.trivial
                      else [("slice", 0, n, 1) for n in view_shape])
    inner_ops, out = iter(inner_ops), []
    for kind, data, size in kept:
        if kind == "scalar":
            out.append(data)
            continue
        inner_dim = next(inner_dims)
        if inner_dim[0] == "int":
            i = next(inner_ops)
            if isinstance(i, (int, np.integer)) and i < 0:
                i += size
            if kind == "array":
                out.append(data[i])
            else:
                _, start, _, stride = data
                out.append(start + i * stride if isinstance(i, (int, np.integer))
                           else i * stride + start)
            continue
        if inner_dim[0] == "dslice":
            s2, (_, n2, st2) = next(inner_ops), inner_dim
            if kind == "array":
                raise NotImplementedError("A `pl.ds` slice of traced start into a view taken "
                                          "with an integer array is not supported.")
        else:
            _, s2, n2, st2 = inner_dim
        if kind == "array":
            out.append(data[s2:s2 + (n2 - 1) * st2 + 1 if n2 else s2:st2])
            continue
        _, start, _, stride = data
        first = start + s2 * stride
        if _static(first) is None:  # a traced start stays a dynamic slice
            out.append(_DSlice(first, n2, st2 * stride))
            continue
        out.append(slice(first, first + (n2 - 1) * st2 * stride + 1 if n2 else first,
                         st2 * stride))
    return tuple(out)


class _DSlice:
    """A slice with a traced start (what ``make_indexer`` reads from a ``pl.ds``)."""
    __slots__ = ("start", "size", "stride")

    def __init__(self, start, size, stride):
        self.start, self.size, self.stride = start, size, stride


# -- indexers ----------------------------------------------------------------------------

def make_indexer(shape, idx, what="ref"):
    """``(RefIndexer, integer operands)`` for ``ref[idx]`` (JAX's
    ``NDIndexer.from_indices_shape``): ``...``/``()``/``None`` select the whole ref."""
    if idx is None or idx is Ellipsis or (type(idx) is tuple and not idx):
        return RefIndexer((), tuple(shape)), []
    if type(idx) is not tuple:
        idx = (idx,)
    if sum(i is Ellipsis for i in idx) > 1:
        raise ValueError("Only one ellipsis is supported.")
    if Ellipsis in [i for i in idx if i is Ellipsis]:
        pos = next(k for k, i in enumerate(idx) if i is Ellipsis)
        idx = idx[:pos] + (slice(None),) * (len(shape) - len(idx) + 1) + idx[pos + 1:]
    if len(idx) > len(shape):
        raise ValueError(f"`indices` must not be longer than `shape`: indices={idx}, "
                         f"shape={tuple(shape)}")
    idx = tuple(idx) + (slice(None),) * (len(shape) - len(idx))
    dims, operands, int_positions = [], [], []
    for k, (i, size) in enumerate(zip(idx, shape)):
        if isinstance(i, slice):
            start, stop, step = i.indices(size)
            if step < 1:
                raise ValueError(f"slice must have a step >= 1 (found: {step})")
            dims.append(("slice", start, len(range(start, stop, step)), step))
            continue
        if _is_dynamic_slice(i):  # Pallas's pl.ds(start, size, stride): a static size
            dim, ops = _dynamic_slice_dim(i, size)
            dims.append(dim)
            operands += ops
            continue
        if i is None or isinstance(i, (bool, np.bool_)):
            raise TypeError(f"A {what} is indexed by integers, integer arrays and slices; got "
                            f"{i!r}. (np.newaxis and boolean masks are not supported.)")
        dtype = getattr(i, "dtype", None)
        if dtype is None:
            if not isinstance(i, (int, np.integer)):
                i = np.asarray(i)
                dtype = i.dtype
        if dtype is not None and not np.issubdtype(dtype, np.integer):
            raise TypeError(f"A {what} is indexed by integers, integer arrays and slices; got "
                            f"an index of dtype {dtype}.")
        dims.append(("int",))
        operands.append(i)
        int_positions.append(k)
    if int_positions and int_positions != list(range(int_positions[0], int_positions[-1] + 1)):
        if any(np.shape(o) for o in operands):
            raise NotImplementedError(
                f"Indexing a {what} with integer arrays separated by slices is not supported; "
                "index with adjacent integer arrays or read the whole value first.")
    return RefIndexer(tuple(dims), tuple(shape)), operands


def _is_dynamic_slice(i) -> bool:
    """A ``pl.ds``/``pl.Slice`` (duck-typed: ``start``, ``size`` and ``stride``)."""
    return (not isinstance(i, slice) and hasattr(i, "start") and hasattr(i, "size")
            and hasattr(i, "stride"))


def _static(x):
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, Tracer):
        return None
    try:  # a concrete array or NumPy scalar
        return int(np.asarray(x))
    except (TypeError, ValueError):
        return None


def _dynamic_slice_dim(i, dim_size):
    """``(dimension, its operands)``: ``("slice", start, size, stride)``, ``("dslice", size,
    stride)`` (a traced start) or ``("dsize", bound, static start or None)`` (traced size)."""
    size, stride = _static(i.size), i.stride
    if not isinstance(stride, (int, np.integer)) or stride < 1:
        raise ValueError(f"`pl.ds` stride must be a static integer >= 1 (found: {stride})")
    if size is None:  # (a DMA's view: its size an operand, the dimension its bound)
        if stride != 1:
            raise NotImplementedError("a `pl.ds` slice of traced size with a stride")
        start = _static(i.start)  # (a static start stays in the indexer, as JAX's)
        return ("dsize", dim_size, start), [i.start] * (start is None) + [i.size]
    start = _static(i.start)
    if start is not None:  # (JAX's NDIndexer checks and messages)
        if start and start >= dim_size:
            raise ValueError(f"Out of bound slice: start={start}, dim={dim_size}.")
        if start and size and start + (size - 1) * stride >= dim_size:
            raise ValueError(f"Out of bound slice: start={start}, size={size}, "
                             f"stride={stride}, dim={dim_size}.")
        if start < 0 or start + (size - 1) * stride >= dim_size + (size == 0):
            raise ValueError(f"Out of bound slice: start={start}, size={size}, "
                             f"stride={stride}, dim={dim_size}.")
        return ("slice", start, size, int(stride)), []
    dtype = getattr(i.start, "dtype", None)
    if dtype is not None and not np.issubdtype(dtype, np.integer):
        raise TypeError(f"The start of a `pl.ds` slice must be an integer; got {dtype}")
    return ("dslice", size, int(stride)), [i.start]


def numpy_index(tree: RefIndexer, operands):
    """The ``x[...]`` index that reads what ``ref[tree, operands]`` names in a value. With
    a dynamic slice (a traced start) it is an open mesh of integer arrays, one per sliced
    dimension (scalar integer indexers only), which gathers the same elements."""
    if tree.trivial:
        return ...
    if any(d[0] == "dslice" for d in tree.dims):
        return _mesh_index(tree, operands)
    out, it = [], iter(operands)
    for dim in tree.dims:
        if dim[0] == "int":
            out.append(next(it))
        else:
            _, start, size, stride = dim
            out.append(slice(start, start + (size - 1) * stride + 1 if size else start, stride))
    return tuple(out)


def _mesh_index(tree, operands):
    it = iter(operands)
    nsliced = sum(d[0] != "int" for d in tree.dims)
    out, k = [], 0
    for dim in tree.dims:
        if dim[0] == "int":
            o = next(it)
            if np.shape(o):
                raise NotImplementedError("Indexing a ref with both a `pl.ds` slice of traced "
                                          "start and an integer array is not supported.")
            out.append(o)
            continue
        shape = [1] * nsliced
        if dim[0] == "slice":
            _, start, size, stride = dim
            shape[k] = size
            out.append((start + np.arange(size, dtype=np.int32) * stride).reshape(shape))
        else:
            _, size, stride = dim
            shape[k] = size
            start = next(it)
            out.append(start + (np.arange(size, dtype=np.int32) * stride).reshape(shape))
        k += 1
    return tuple(out)


def _index_aval(x):
    return _api.typeof(x)


def get_aval(ref, idx) -> ShapedArray:
    tree, operands = make_indexer(ref.shape, idx)
    return get_p.abstract_eval(_ref_aval(ref), *map(_index_aval, operands), tree=tree)


def _ref_aval(ref):
    return ref._aval if isinstance(ref, Ref) else ref.aval


def _implicit_cast(dtype, value):
    """A weak float (int) value stored in a float (int) ref takes its dtype (JAX's same)."""
    value = value if isinstance(value, Tracer) or hasattr(value, "aval") else numpy_api.asarray(value)
    aval = value.aval
    # JAX's condition, operator precedence included: ``(weak and float->float) or int->int``
    if ((aval.weak_type and np.issubdtype(dtype, np.floating)
         and np.issubdtype(aval.dtype, np.floating))
            or (np.issubdtype(dtype, np.integer) and np.issubdtype(aval.dtype, np.integer))):
        return prims.convert_element_type(value, dtype)
    return value


def _check_ref(ref, name):
    if isinstance(ref, _RefView):
        raise NotImplementedError(f"`{name}` on a view `ref.at[...]`: index the ref directly.")
    if not (isinstance(ref, Ref) or _is_staged_ref(ref)):
        raise ValueError(f"Can only call `{name}` on a `Ref`: {ref!r}.")


# -- the operations ----------------------------------------------------------------------

def new_ref(init_val, *, memory_space=None, kind=None):
    """A mutable array reference holding a copy of ``init_val`` (``jax.new_ref``)."""
    if isinstance(init_val, (Ref, _RefView)) or _is_staged_ref(init_val):
        raise ValueError("Cannot store a Ref into another Ref. Did you forget to load from it "
                         "using `[...]`?")
    if _staging():
        return new_ref_p.bind(init_val, memory_space=memory_space, kind=kind)
    if memory_space is not None:
        raise NotImplementedError("array ref with memory space only works inside of a `jit`.")
    value = numpy_api.array(init_val, copy=True)
    aval = new_ref_p.abstract_eval(value.aval, memory_space=memory_space, kind=kind)
    if isinstance(value, Tracer):  # made under grad/vmap: a value of that trace
        return Ref(value, aval)
    if value is init_val:  # an Array (``array`` copies only what it converts): the ref's own
        value = prims.copy_p_bind(value)
    return Ref(value, aval, owned=True)


def empty_ref(ty, memory_space=None):
    """An uninitialised ref of type ``ty`` (``jax.empty_ref``); as in JAX, only inside a
    staged function (``jit``)."""
    aval = ShapedArray(tuple(ty.shape), canonicalize(ty.dtype))
    if not _staging():
        raise NotImplementedError("Evaluation rule for 'empty_ref' not implemented")
    return empty_ref_p.bind(ty=aval, memory_space=memory_space)


def get(ref, idx=None):
    """``ref[idx]`` (``jax.ref.get``)."""
    if isinstance(ref, _RefView):
        linked = _staging() and ref_chain.linked(ref.ref.shape, ref.chain, idx, make_indexer)
        if linked:
            return get_p.bind(ref.ref, *linked[1], tree=linked[0])
        return get(ref.ref, _compose(ref.ref, ref.idx, idx))
    _check_ref(ref, "ref_get")
    tree, operands = make_indexer(ref.shape, idx)
    ref_chain.check_static_sizes(tree)
    if isinstance(ref, Ref) and not _staging():
        get_aval(ref, idx)  # the same checks as the staged equation
        return _eager_get(ref, tree, operands)
    return get_p.bind(ref, *operands, tree=tree)


def swap(ref, idx, value, _function_name="ref_swap"):
    """Writes ``value`` at ``ref[idx]`` and returns what was there (``jax.ref.swap``)."""
    if isinstance(ref, _RefView):
        linked = _staging() and ref_chain.linked(ref.ref.shape, ref.chain, idx, make_indexer)
        if linked:
            return swap_p.bind(ref.ref, _implicit_cast(ref.dtype, value), *linked[1], tree=linked[0])
        return swap(ref.ref, _compose(ref.ref, ref.idx, idx), value, _function_name)
    _check_ref(ref, _function_name)
    if isinstance(value, Ref) or _is_staged_ref(value):
        raise ValueError("Cannot store a Ref into another Ref. Did you forget to load from it "
                         "using `[...]`?")
    value = _implicit_cast(ref.dtype, value)
    tree, operands = make_indexer(ref.shape, idx)
    ref_chain.check_static_sizes(tree)
    if isinstance(ref, Ref) and not _staging():
        swap_p.abstract_eval(ref._aval, value.aval, *map(_index_aval, operands), tree=tree)
        return _eager_swap(ref, value, tree, operands)
    if _is_staged_ref(ref) and not _staging():  # a jit's ref written under grad/vmap in it
        _check_write_into(ref.aval, ref._trace, value)
    return swap_p.bind(ref, value, *operands, tree=tree)


def set(ref, idx, value):  # noqa: A001  (JAX's name: jax.ref.set)
    """``ref[idx] = value`` (``jax.ref.set``)."""
    swap(ref, idx, value, "ref_set")


def addupdate(ref, idx, x):
    """``ref[idx] += x`` as one accumulation (``jax.ref.addupdate``)."""
    if isinstance(ref, _RefView):
        raise NotImplementedError("Only single indexer is supported.")  # (JAX's refusal)
    _check_ref(ref, "ref_addupdate")
    x = x if isinstance(x, Tracer) or hasattr(x, "aval") else numpy_api.asarray(x)
    x = x if x.aval.dtype == ref.dtype else _implicit_cast(ref.dtype, x)  # (a weak Ref stays weak)
    tree, operands = make_indexer(ref.shape, idx)
    ref_chain.check_static_sizes(tree)
    if isinstance(ref, Ref) and not _staging():
        addupdate_p.abstract_eval(ref._aval, x.aval, *map(_index_aval, operands), tree=tree)
        _eager_addupdate(ref, x, tree, operands)
        return None
    if _is_staged_ref(ref) and not _staging():
        _check_write_into(ref.aval, ref._trace, x, "an addupdate")
    addupdate_p.bind(ref, x, *operands, tree=tree)
    return None


# -- a Ref object's accesses, run in Python (in program order) -----------------------------

def _eager_get(ref, tree, operands):
    value = ref._checked_value() if tree.trivial else ref._value  # (a whole read hands it out)
    out = value[numpy_index(tree, operands)]
    if ref._aval.inner_aval.weak_type and not prims.aval_of(out).weak_type:
        # a read has the ref's type, weakness included (a stored value may have lost it)
        out = prims._convert_element_type(out, ref._aval.dtype, True)
    return out


def _eager_swap(ref, value, tree, operands):
    current = ref._value
    index = numpy_index(tree, operands)
    old = current[index]
    new = value if tree.trivial else current.at[index].set(value)
    ref._check_write(new)
    ref._value = new
    return old


def _eager_addupdate(ref, x, tree, operands):
    current = ref._value
    new = current + x if tree.trivial else current.at[numpy_index(tree, operands)].add(x)
    _check_write_into(ref._aval, ref._trace, new, "an addupdate")
    ref._value = new


def _operand_value(x):
    """A jaxpr operand as an array (a literal of a jaxpr run over a Ref object)."""
    if isinstance(x, Literal):
        return numpy_api.asarray(np.asarray(x.val, dtype=x.aval.dtype))
    return x


def _eager_ref_op(prim, args, params):
    """A ref primitive bound on a ``Ref`` object outside staging (a jaxpr evaluated over
    Refs, a JVP rule's access to a primal or tangent Ref): run as the functions run it."""
    ref, *rest = args
    if prim is freeze_p:
        return ref._checked_value()
    if prim is free_ref_p:
        return []
    tree = params["tree"]
    if prim is get_p:
        return _eager_get(ref, tree, rest)
    value, operands = _operand_value(rest[0]), rest[1:]
    if prim is swap_p:
        return _eager_swap(ref, value, tree, operands)
    _eager_addupdate(ref, value, tree, operands)
    return []


def freeze(ref):
    """The final value of ``ref``, which must not be used afterwards (``jax.freeze``)."""
    _check_ref(ref, "freeze")
    if isinstance(ref, Ref) and not _staging():
        return ref._checked_value()
    return freeze_p.bind(ref)


def free_ref(ref):
    """Invalidates ``ref`` (``jax.free_ref``)."""
    _check_ref(ref, "free_ref")
    if isinstance(ref, Ref) and not _staging():
        ref._checked_value()
        return ()
    free_ref_p.bind(ref)
    return ()


# -- staged refs: indexing a ``Ref{...}``-typed tracer reads and writes it ----------------

def install_on_tracer():
    """Called by ``traxla/__init__`` once ``traxla.numpy`` has installed array indexing."""
    array_getitem = Tracer.__getitem__
    array_at = Tracer.at
    array_setitem = Tracer.__setitem__

    def __getitem__(self, idx):
        if is_ref_aval(self.aval):
            return get(self, idx)
        return array_getitem(self, idx)

    def __setitem__(self, idx, value):
        if is_ref_aval(self.aval):
            return set(self, idx, value)
        return array_setitem(self, idx, value)  # JAX's immutability error

    def at(self):
        if is_ref_aval(self.aval):
            return _RefAt(self)
        return array_at.fget(self)

    Tracer.__getitem__ = __getitem__
    Tracer.__setitem__ = __setitem__
    Tracer.at = property(at)



# -- Ref objects met by a staged body or a call -------------------------------------------

def _lift(trace, ref: Ref):
    """A ``Ref`` object read inside a staged function (a loop body, a jit under grad):
    one ref-typed constant of that jaxpr, whose value the discharge pass threads."""
    return DynamicJaxprTracer(trace, trace._new_const(ref, ref._aval))


def _bind_method(prim, /, *args, **params):
    """``Primitive.bind``: every traced operation comes through here. With no ref among
    the operands and not a call that could carry refs in its jaxprs, straight to the
    current trace."""
    if not AbstractRef.ever_created:  # no ref exists anywhere yet: nothing to look for
        return _thread_state.trace.process_primitive(prim, args, params)
    for a in args:
        kind = type(a)
        if kind is Ref or (kind is DynamicJaxprTracer and type(a._var.aval) is AbstractRef):
            return _bind_with_refs(prim, args, params)
    if prim in _CALLS:
        return _bind_with_refs(prim, args, params)
    return _thread_state.trace.process_primitive(prim, args, params)


def _bind_with_refs(prim, args, params):
    """The bind hook: ``Ref`` objects become ref constants of a staged jaxpr; a loop, cond
    or jit that carries refs outside staging runs discharged, its refs updated in place."""
    has_box = staged_ref = False
    for a in args:
        kind = type(a)
        if kind is Ref:
            has_box = True
        elif kind is DynamicJaxprTracer and type(a._var.aval) is AbstractRef:
            staged_ref = True
    if staged_ref and prim not in _TAKES_REFS and not getattr(prim, "takes_refs", False):
        ref = next(a for a in args if type(a) is DynamicJaxprTracer and is_ref_aval(a.aval))
        raise _ref_operand_error(prim, ref)
    if has_box:
        if _staging():
            trace = trace_core.current_trace()
            inner = [a for a in args if type(a) is Ref and _made_within(a, trace)]
            if inner:
                return _bind_over_inner_refs(trace, prim, args, params, inner)
            args = [_lift(trace, a) if type(a) is Ref else a for a in args]
        elif prim in _CALLS:
            return _state_discharge.discharge_call(prim, args, params)
        elif prim in _REF_OPS and type(args[0]) is Ref:
            return _eager_ref_op(prim, args, params)
        elif prim is custom_vjp_call_p:  # a jaxpr evaluated over Refs (under grad...)
            if type(trace_core.current_trace()) is _EvalTrace:
                return _eval_jaxpr(params["call_jaxpr"], (), *args)
            return _base_bind(prim, args, params)
        else:
            raise _ref_operand_error(prim, next(a for a in args if type(a) is Ref))
    elif prim in _CALLS and not _staging() and any(
            jaxpr_has_refs(s) for s in subjaxprs(params)):
        return _state_discharge.discharge_call(prim, args, params)
    return _base_bind(prim, args, params)


def _made_within(ref, trace) -> bool:
    """Whether ``ref`` was made under a transformation running inside ``trace``."""
    t = ref._trace
    while t is not None and type(t) is not _EvalTrace:
        t = getattr(t, "parent", None)
        if t is trace:
            return True
    return False


def _bind_over_inner_refs(trace, prim, args, params, inner):
    """A staged operation on ``Ref`` objects made inside a transformation that runs within
    this staging (a ref made under grad inside a jit, met by a custom_vjp rule staged in
    the jit): such a Ref holds values of this trace and lives no longer than it, so it is
    staged as a fresh ref of its current value, and takes the final value back."""
    if prim in _REF_OPS and type(args[0]) is Ref and args[0] in inner:
        return _eager_ref_op(prim, args, params)
    staged = {id(box): trace.process_primitive(
        new_ref_p, [box._value], {"memory_space": None, "kind": None}) for box in inner}
    args = [staged[id(a)] if id(a) in staged else _lift(trace, a) if type(a) is Ref else a
            for a in args]
    outs = _base_bind(prim, args, params)
    for box in inner:
        box._value = trace.process_primitive(freeze_p, [staged[id(box)]], {})
    return outs


def _ref_operand_error(prim, ref):
    return ValueError(f"Attempting to pass a Ref {ref.aval} to a primitive: {prim.name} -- did "
                      "you forget to unpack ([...]) the ref?")


_base_bind = trace_core.bind
_thread_state = trace_core._state
_CALLS = frozenset({scan_p, while_p, cond_p, jit_p})
_REF_OPS = frozenset({get_p, swap_p, addupdate_p, freeze_p, free_ref_p})
_TAKES_REFS = _CALLS | _REF_OPS | {custom_vjp_call_p}  # (a custom_vjp function's Ref argument)
set_bind_hook(_bind_with_refs, _bind_method)
_ad.new_zeros_ref[0] = new_ref


import traxla.state.discharge as _state_discharge  # noqa: E402  (it imports this module: bound once both are defined)

"""Function-lifting helpers over ``vmap``: ``vectorize`` (with gufunc signatures and
``excluded``), ``frompyfunc`` (a ``ufunc`` object with ``reduce``/``accumulate``/``outer``
/``at``), ``apply_along_axis``, ``apply_over_axes``, ``fromfunction``, and the
signature-vectorized products ``matvec``, ``vecmat``, ``vecdot``."""
from __future__ import annotations

import functools
import operator
import re

import numpy as np

from traxla import lax
from traxla.batching import vmap
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import broadcast_shapes, check_arraylike, ensure_arraylike
from traxla.numpy._creation import asarray, arange
from traxla.numpy._shape import expand_dims, squeeze, moveaxis, broadcast_to, concatenate
from traxla.numpy._linalg import matmul, vdot
from traxla.numpy._ufuncs import conj, _where
from traxla.api.shape_dtype_struct import eval_shape
from traxla.numpy._indexing import take
from traxla.numpy._manipulation import append

_DIMENSION_NAME = r"\w+"
_CORE_DIMENSION_LIST = "(?:{0:}(?:,{0:})*)?".format(_DIMENSION_NAME)
_ARGUMENT = rf"\({_CORE_DIMENSION_LIST}\)"
_ARGUMENT_LIST = "{0:}(?:,{0:})*".format(_ARGUMENT)
_SIGNATURE = "^{0:}->{0:}$".format(_ARGUMENT_LIST)


def _parse_gufunc_signature(signature):
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    return ([tuple(re.findall(_DIMENSION_NAME, arg)) for arg in re.findall(_ARGUMENT, arg_list)]
            for arg_list in signature.split("->"))


def _update_dim_sizes(dim_sizes, shape, core_dims, error_context="", *, is_input):
    n = len(core_dims)
    if is_input and len(shape) < n:
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all "
                         f"core dimensions {core_dims!r} {error_context}")
    if not is_input and len(shape) != n:
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core_dims!r} "
                         f"{error_context}")
    core_shape = shape[-n:] if core_dims else ()
    for dim, size in zip(core_dims, core_shape):
        if dim not in dim_sizes:
            dim_sizes[dim] = size
        elif size != dim_sizes[dim]:
            raise ValueError(f"inconsistent size for core dimension {dim!r}: {size!r} vs "
                             f"{dim_sizes[dim]!r} {error_context}")


def _check_output_dims(func, dim_sizes, expected, error_context=""):
    def wrapped(*args):
        out = func(*args)
        out_shapes = list(map(np.shape, out if isinstance(out, tuple) else [out]))
        if len(expected) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, got: "
                            f"{out!r}\n{error_context}")
        if len(out_shapes) != len(expected):
            raise TypeError(f"wrong number of output arguments: expected {len(expected)!r}, got "
                            f"{len(out_shapes)!r} {error_context}")
        sizes = dict(dim_sizes)
        for shape, core_dims in zip(out_shapes, expected):
            _update_dim_sizes(sizes, shape, core_dims, error_context, is_input=False)
        return out
    return wrapped


def _apply_excluded(func, excluded, args, kwargs):
    if not excluded:
        return func, args, kwargs
    dynamic_args = [a for i, a in enumerate(args) if i not in excluded]
    dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}
    static_args = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
                   if i < len(args)]
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}

    def new_func(*args, **kwargs):
        args = list(args)
        for i, a in static_args:
            args.insert(i, a)
        return func(*args, **kwargs, **static_kwargs)
    return new_func, dynamic_args, dynamic_kwargs


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` lifted over leading (broadcast) axes with ``vmap``, as ``jnp.vectorize``."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        error_context = (f"on vectorized function with excluded={excluded!r} and "
                         f"signature={signature!r}")
        excluded_func, args, kwargs = _apply_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            input_core_dims, output_core_dims = _parse_gufunc_signature(signature)
        else:
            input_core_dims, output_core_dims = [()] * len(args), None
        none_args = {i for i, a in enumerate(args) if a is None}
        if none_args:
            if any(input_core_dims[i] != () for i in none_args):
                raise ValueError(f"Cannot pass None at locations {none_args} with "
                                 f"signature={signature!r}")
            excluded_func, args, _ = _apply_excluded(excluded_func, none_args, args, {})
            input_core_dims = [d for i, d in enumerate(input_core_dims) if i not in none_args]
        args = tuple(map(asarray, args))
        if len(args) != len(input_core_dims):
            raise TypeError(f"wrong number of positional arguments: expected "
                            f"{len(input_core_dims)!r}, got {len(args)!r} {error_context}")
        shapes, dim_sizes = [], {}
        for arg, core_dims in zip(args, input_core_dims):
            _update_dim_sizes(dim_sizes, arg.shape, core_dims, error_context, is_input=True)
            shapes.append(arg.shape[:arg.ndim - len(core_dims)])
        broadcast_shape = broadcast_shapes(*shapes)
        checked = excluded_func if output_core_dims is None else _check_output_dims(
            excluded_func, dim_sizes, output_core_dims, error_context)
        squeezed_args, rev_filled_shapes = [], []
        for arg, core_dims in zip(args, input_core_dims):
            noncore_shape = arg.shape[:arg.ndim - len(core_dims)]
            filled = (len(broadcast_shape) - len(noncore_shape)) * (1,) + noncore_shape
            rev_filled_shapes.append(filled[::-1])
            squeeze_indices = tuple(i for i, s in enumerate(noncore_shape) if s == 1)
            squeezed_args.append(squeeze(arg, axis=squeeze_indices))
        func, dims_to_expand = checked, []
        for negdim, axis_sizes in enumerate(zip(*rev_filled_shapes)):
            in_axes = tuple(None if s == 1 else 0 for s in axis_sizes)
            if all(a is None for a in in_axes):
                dims_to_expand.append(len(broadcast_shape) - 1 - negdim)
            else:
                func = vmap(func, in_axes)
        result = func(*squeezed_args)
        if not dims_to_expand:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, axis=dims_to_expand) for r in result)
        return expand_dims(result, axis=dims_to_expand)
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to 1-d slices of ``arr`` along ``axis`` (nested ``vmap``)."""
    check_arraylike("apply_along_axis", arr)
    num_dims = np.ndim(arr)
    if not -num_dims <= axis < num_dims:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
    axis = axis % num_dims

    def func(a):
        return func1d(a, *args, **kwargs)
    for i in range(1, num_dims - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied repeatedly over ``axes``, keeping dimensions."""
    a = ensure_arraylike("apply_over_axes", a)
    for axis in axes:
        b = func(a, axis=axis)
        if b.ndim == a.ndim:
            a = b
        elif b.ndim == a.ndim - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(*index_arrays)`` evaluated on the grid of ``shape`` (nested ``vmap``)."""
    shape = tuple(operator.index(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        function = vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(arange(s, dtype=dtype) for s in shape), **kwargs)


def _matvec(x1, x2, /):
    x1, x2 = ensure_arraylike("matvec", x1, x2)
    return vectorize(matmul, signature="(n,m),(m)->(n)")(x1, x2)


def _vecmat(x1, x2, /):
    x1, x2 = ensure_arraylike("matvec", x1, x2)
    return vectorize(matmul, signature="(n),(n,m)->(m)")(conj(x1), x2)


matvec = jit_named(_matvec, "matvec")
vecmat = jit_named(_vecmat, "vecmat")


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Conjugated dot products of vectors along ``axis``, broadcasting the rest."""
    x1_arr, x2_arr = ensure_arraylike("jnp.vecdot", x1, x2)
    if x1_arr.shape[axis] != x2_arr.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1_arr.shape} and {x2_arr.shape} with "
                         f"axis={axis}")
    x1_arr, x2_arr = moveaxis(x1_arr, axis, -1), moveaxis(x2_arr, axis, -1)
    return vectorize(functools.partial(vdot, precision=precision,
                                       preferred_element_type=preferred_element_type),
                     signature="(n),(n)->()")(x1_arr, x2_arr)


def _call_vectorized_impl(self, *args):
    return vectorize(self._func)(*args)


def _reduce_impl(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
    check_arraylike(f"{self.__name__}.reduce", a)
    if self.nin != 2:
        raise ValueError("reduce only supported for binary ufuncs")
    if self.nout != 1:
        raise ValueError("reduce only supported for functions returning a single value")
    if out is not None:
        raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
    if where is not None:
        if self.identity is None and initial is None:
            raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                             "so to use a where mask one has to specify 'initial'.")
        if lax.dtype_of(where) != bool:
            raise ValueError(f"where argument must have dtype=bool; got "
                             f"dtype={lax.dtype_of(where)}")
    reduce = self._custom["reduce"] or self._reduce_via_scan
    return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


_call_vectorized = jit_named(_call_vectorized_impl, "_call_vectorized", ("self",))
_reduce = jit_named(_reduce_impl, "reduce", ("self", "axis", "dtype", "out", "keepdims"))


class ufunc:
    """A ``jnp.ufunc``: an elementwise function of ``nin`` inputs with NumPy's ufunc methods
    (``outer``, ``reduce`` (a ``fori_loop``), ``accumulate``, ``at``, ``reduceat``), as JAX's
    generic implementation, or the fast ones given (``call``, ``reduce``, ...: ``jnp.add`` is
    one whose ``reduce`` is ``sum``). Hashable, so it can be a static argument (the fast
    implementations are not part of its identity, as in JAX)."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = func
        self.nin, self.nout = operator.index(nin), operator.index(nout)
        self.nargs = operator.index(nargs or nin)
        self.identity = identity
        self._custom_call = call
        self._custom = {"reduce": reduce, "accumulate": accumulate, "at": at,
                        "reduceat": reduceat}
        if call is not None and getattr(call, "__doc__", None):
            self.__doc__ = call.__doc__

    def _key(self):
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is None and where is None and self._custom_call is not None:
            return self._custom_call(*args)  # jnp.add & co: their own (eager) path and checks
        check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if self._custom_call is not None:
            return self._custom_call(*args)
        return _call_vectorized(self, *args)

    def _call(self, *args):
        return self(*args)

    def outer(self, A, B, /):
        if self.nin != 2:
            raise ValueError("outer only supported for binary ufuncs")
        A, B = asarray(A), asarray(B)
        f = vmap(vmap(self._call, (None, 0)), (0, None))
        return f(A.ravel(), B.ravel()).reshape(A.shape + B.shape)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return _reduce(self, a, axis, dtype, out, keepdims, initial, where)

    def _reduce_via_scan(self, arr, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        arr = lax._lift(lax._asarray(arr))
        if initial is None:
            initial = self.identity
        if dtype is None:
            dtype = eval_shape(self._func, lax._one(arr), lax._one(arr)).dtype
        if where is not None:
            where = broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr = arr.ravel()
            if where is not None:
                where = where.ravel()
            axis = 0
        else:
            axis = axis % arr.ndim
            final_shape = ((*arr.shape[:axis], 1, *arr.shape[axis + 1:]) if keepdims
                           else (*arr.shape[:axis], *arr.shape[axis + 1:]))
        if axis != 0:
            arr = moveaxis(arr, axis, 0)
            if where is not None:
                where = moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which "
                                 "has no identity")
            return lax.full(final_shape, initial, dtype)

        def body_fun(i, val):
            if where is None:
                return self(val, arr[i].astype(dtype))
            return _where(where[i], self(val, arr[i].astype(dtype)), val)
        if initial is None:
            start_index, start_value = 1, arr[0]
        else:
            start_index, start_value = 0, initial
        start_value = broadcast_to(lax._lift(lax._asarray(start_value)).astype(dtype), arr.shape[1:])
        result = lax.fori_loop(start_index, arr.shape[0], body_fun, start_value)
        if keepdims:
            result = result.reshape(final_shape)
        return result

    def accumulate(self, a, axis=0, dtype=None, out=None):
        if self.nin != 2 or self.nout != 1:
            raise ValueError("accumulate only supported for binary ufuncs with a single output")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        if self._custom["accumulate"] is not None:
            return self._custom["accumulate"](a, axis=axis, dtype=dtype)
        a = asarray(a if dtype is None else asarray(a, dtype=dtype))
        axis = axis % a.ndim
        moved = moveaxis(a, axis, 0)
        if moved.shape[0] == 0:
            return a

        def step(c, x):
            c = asarray(self._call(c, x)).astype(c.dtype)
            return c, c
        _, rest = lax.scan(step, moved[0], moved[1:])
        return moveaxis(concatenate([moved[:1], rest], 0), 0, axis)

    def at(self, a, indices, b=None, /, *, inplace=True):
        if inplace:
            raise NotImplementedError("jnp.ufunc.at: inplace=True is not supported; pass "
                                      "inplace=False")
        if self._custom["at"] is not None:
            at = self._custom["at"]
            return at(asarray(a), indices) if b is None else at(asarray(a), indices, b)
        a = asarray(a)
        if b is None:
            return a.at[indices].apply(self._call)
        idx_a = a.at[indices].get()
        new = asarray(self._call(idx_a, b)).astype(a.dtype)
        return a.at[indices].set(new)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions of ``a`` over the segments starting at ``indices`` along ``axis``
        (each starts from its first element, as JAX's scan-based version)."""
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        if self._custom["reduceat"] is not None:
            return self._custom["reduceat"](a, indices, axis=axis, dtype=dtype)
        a, indices = asarray(a), asarray(indices)
        if a.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={a.shape}")
        if indices.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got "
                             f"indices.shape={indices.shape}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = axis % a.ndim
        out_ = take(a, indices, axis=axis)
        ind = lax.expand_dims(append(indices, a.shape[axis]),
                              [d for d in range(out_.ndim) if d != axis])
        ind_start = lax.slice_in_dim(ind, 0, ind.shape[axis] - 1, axis=axis)
        ind_end = lax.slice_in_dim(ind, 1, ind.shape[axis], axis=axis)

        def loop_body(i, acc):
            return _where((i > ind_start) & (i < ind_end),
                          self(acc, take(a, lax.expand_dims(i, (0,)), axis=axis)), acc)
        return lax.fori_loop(0, a.shape[axis], loop_body, out_)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``jnp.ufunc`` from a scalar Python function of ``nin`` arguments."""
    return ufunc(func, nin, nout, identity=identity)

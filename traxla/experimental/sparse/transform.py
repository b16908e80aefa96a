"""``sparsify``: run a function written for dense arrays on BCOO arguments, as JAX's
``jax.experimental.sparse.sparsify``. The function is traced to a jaxpr with the dense avals
of its arguments, then the jaxpr is evaluated with sparse rules for the primitives that
see a sparse operand (JAX's default, interpreter-based implementation)."""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api_util import shaped_abstractify
from traxla.experimental.sparse import bcoo as _bcoo
from traxla.experimental.sparse._base import JAXSparse
from traxla.experimental.sparse.bcoo import BCOO
from traxla.experimental.sparse.bcoo_dot import bcoo_dot_general
from traxla.experimental.sparse.bcoo_index import bcoo_dynamic_slice, bcoo_gather, bcoo_slice
from traxla.experimental.sparse.bcoo_shape import (bcoo_broadcast_in_dim, bcoo_concatenate,
                                                   bcoo_reshape, bcoo_rev, bcoo_squeeze)
from traxla.ir.avals import ShapedArray
from traxla.numpy._indexing import rewriting_take
from traxla.ir.jaxpr import DropVar, Literal
from traxla.tracer import trace_to_jaxpr
from traxla.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

# primitive name -> rule(spenv, primitive, *spvalues, **params) -> list of spvalues
sparse_rules_bcoo: dict = {}

_zero_preserving_linear_unary_primitives = ["conj", "copy", "imag", "neg", "real"]
_zero_preserving_unary_primitives = [
    "abs", "asin", "asinh", "atan", "atanh", "bessel_i1e", "expm1", "log1p", "sign", "sin",
    "sinh", "sqrt", "square", "tan", "tanh", "convert_element_type"]
_densifying_primitives = ["acos", "acosh", "bessel_i0e", "cos", "cosh", "eq", "exp", "ge",
                          "gt", "le", "lt", "log", "ne", "xor"]


def _raise_unimplemented_primitive(primitive):
    if primitive.name in _densifying_primitives:
        raise NotImplementedError(
            f"sparse rule for {primitive} is not implemented because it would result in "
            "dense output. If this is your intent, use sparse.todense() to convert your "
            "arguments to dense matrices.")
    raise NotImplementedError(f"sparse rule for {primitive} is not implemented.")


class SparsifyEnv:
    """The buffers (arrays or tracers) that sparse and dense values point into, so that
    values sharing indices share one buffer (JAX's ``SparsifyEnv``)."""

    def __init__(self, bufs=()):
        self._buffers = list(bufs)

    def _push(self, arr) -> int:
        self._buffers.append(jnp.asarray(arr))
        return len(self._buffers) - 1

    def data(self, spvalue):
        if spvalue.data_ref is None:
            raise RuntimeError("Internal: requested data from spvalue with data_ref=None")
        return self._buffers[spvalue.data_ref]

    def indices(self, spvalue):
        if spvalue.indices_ref is None:
            raise RuntimeError("Internal: requested indices from spvalue with indices_ref=None")
        return self._buffers[spvalue.indices_ref]

    def dense(self, data):
        return SparsifyValue(np.shape(data), self._push(data))

    def sparse(self, shape, data=None, indices=None, *, data_ref=None, indices_ref=None,
               indices_sorted=False, unique_indices=False):
        if data is not None:
            data_ref = self._push(data)
        if indices is not None:
            indices_ref = self._push(indices)
        return SparsifyValue(tuple(shape), data_ref, indices_ref,
                             indices_sorted=indices_sorted, unique_indices=unique_indices)


class SparsifyValue(NamedTuple):
    shape: tuple
    data_ref: int | None
    indices_ref: int | None = None
    indptr_ref: int | None = None
    indices_sorted: bool | None = False
    unique_indices: bool | None = False

    @property
    def ndim(self):
        return len(self.shape)

    def is_sparse(self):
        return self.indices_ref is not None

    def is_dense(self):
        return self.indices_ref is None

    def is_bcoo(self):
        return self.is_sparse() and self.indptr_ref is None


_is_sparse_obj = lambda arg: isinstance(arg, BCOO)  # noqa: E731
_is_spvalue = lambda arg: isinstance(arg, SparsifyValue)  # noqa: E731


def _spvalue_of(spenv, arg):
    if not isinstance(arg, BCOO):
        return spenv.dense(arg)
    return spenv.sparse(arg.shape, arg.data, arg.indices, indices_sorted=arg.indices_sorted,
                        unique_indices=arg.unique_indices)


def _array_of(spenv, spvalue):
    if not spvalue.is_bcoo():
        return spenv.data(spvalue)
    return BCOO((spenv.data(spvalue), spenv.indices(spvalue)), shape=spvalue.shape,
                indices_sorted=spvalue.indices_sorted, unique_indices=spvalue.unique_indices)


def arrays_to_spvalues(spenv, args):
    """A pytree of (sparse) arrays as the equivalent pytree of spvalues."""
    return tree_map(functools.partial(_spvalue_of, spenv), args, is_leaf=_is_sparse_obj)


def spvalues_to_arrays(spenv, spvalues):
    """A pytree of spvalues as the equivalent pytree of (sparse) arrays."""
    return tree_map(functools.partial(_array_of, spenv), spvalues, is_leaf=_is_spvalue)


def spvalues_to_avals(spenv, spvalues):
    def spvalue_to_aval(spvalue):
        data = shaped_abstractify(spenv.data(spvalue))
        return ShapedArray(spvalue.shape, data.dtype, data.weak_type)
    return tree_map(spvalue_to_aval, spvalues, is_leaf=_is_spvalue)


def eval_sparse(jaxpr, consts, spvalues, spenv):
    """Evaluates ``jaxpr`` on spvalues: sparse rules where an operand is sparse, the
    primitive itself where all are dense."""
    env = {}

    def read(var):
        if isinstance(var, Literal):
            return spenv.dense(var.val)
        return env[var]

    def write(var, value):
        if not isinstance(var, DropVar):
            env[var] = value

    for v, c in zip(jaxpr.constvars, consts):
        write(v, spenv.dense(c))
    for v, s in zip(jaxpr.invars, spvalues):
        write(v, s)
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        invals = [read(v) for v in eqn.invars]
        if any(val.is_bcoo() for val in invals):
            rule = sparse_rules_bcoo.get(prim.name)
            if rule is None:
                _raise_unimplemented_primitive(prim)
            out = rule(spenv, prim, *invals, **eqn.params)
        else:
            bufs = prim.bind(*(spenv.data(val) for val in invals), **eqn.params)
            bufs = bufs if prim.multiple_results else [bufs]
            out = [None if isinstance(v, DropVar) else spenv.dense(b)
                   for b, v in zip(bufs, eqn.outvars)]
        for v, o in zip(eqn.outvars, out):
            write(v, o)
    return [read(v) for v in jaxpr.outvars]


def sparsify_raw(f):
    def wrapped(spenv, *spvalues, **params):
        spvalues_flat, in_tree = tree_flatten(spvalues, is_leaf=_is_spvalue)
        in_avals_flat = spvalues_to_avals(spenv, spvalues_flat)
        out_tree = []

        def flat_fun(*args_flat):
            out = f(*tree_unflatten(in_tree, list(args_flat)), **params)
            out_flat, tree = tree_flatten(out)
            out_tree.append(tree)
            return out_flat
        closed = trace_to_jaxpr(flat_fun, in_avals_flat)
        result = eval_sparse(closed.jaxpr, closed.consts, spvalues_flat, spenv)
        return result, out_tree[0]
    return wrapped


def sparsify(f, use_tracer=False):
    """Experimental sparsification transform: ``sparsify(f)`` accepts BCOO arrays where
    ``f`` takes dense ones. (traxla evaluates with the jaxpr interpreter in both modes;
    ``use_tracer`` is accepted for JAX's signature.)"""
    del use_tracer
    f_raw = sparsify_raw(f)

    @functools.wraps(f)
    def wrapped(*args, **params):
        if any(isinstance(a, JAXSparse) and not isinstance(a, BCOO)
               for a in tree_leaves(args, is_leaf=lambda x: isinstance(x, JAXSparse))):
            raise NotImplementedError("sparsify of BCSR arrays is not implemented in traxla "
                                      "(convert with .to_bcoo())")
        spenv = SparsifyEnv()
        spvalues = arrays_to_spvalues(spenv, args)
        spvalues_out, out_tree = f_raw(spenv, *spvalues, **params)
        out = spvalues_to_arrays(spenv, spvalues_out)
        return tree_unflatten(out_tree, out)
    return wrapped


# ----------------------------------------------------------------------------------------
# sparse rules

def _ensure_unique_indices(spenv, spvalue):
    if spvalue.is_dense() or spvalue.unique_indices:
        return spvalue
    arr = spvalues_to_arrays(spenv, spvalue)
    arr = arr.sum_duplicates(nse=arr.nse, remove_zeros=False)
    return arrays_to_spvalues(spenv, arr)


def _zero_preserving_unary_op(linear):
    def rule(spenv, prim, *spvalues, **params):
        spvalue = spvalues[0]
        if not linear:  # a non-linear op needs each position stored once
            spvalue = _ensure_unique_indices(spenv, spvalue)
        buf_out = prim.bind(spenv.data(spvalue), **params)
        return [spenv.sparse(spvalue.shape, buf_out, indices_ref=spvalue.indices_ref,
                             indices_sorted=spvalue.indices_sorted,
                             unique_indices=spvalue.unique_indices)]
    return rule


for _name in _zero_preserving_unary_primitives:
    sparse_rules_bcoo[_name] = _zero_preserving_unary_op(linear=False)
for _name in _zero_preserving_linear_unary_primitives:
    sparse_rules_bcoo[_name] = _zero_preserving_unary_op(linear=True)


def _standard_sparse_rule(sparse_op, multiple_results=False):
    def rule(spenv, prim, *spvalues, **params):
        result = sparse_op(*spvalues_to_arrays(spenv, spvalues), **params)
        return arrays_to_spvalues(spenv, result if multiple_results else [result])
    return rule


_BCOO_STANDARD_PRIMITIVES = {
    "broadcast_in_dim": bcoo_broadcast_in_dim,
    "concatenate": lambda *a, **k: bcoo_concatenate(a, **k),
    "dot_general": lambda lhs, rhs, *, dimension_numbers, preferred_element_type=None, **k:
        bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                         preferred_element_type=preferred_element_type),
    "reshape": bcoo_reshape,
    "rev": bcoo_rev,
    "squeeze": bcoo_squeeze,
    "slice": bcoo_slice,
    "dynamic_slice": lambda *a, **k: bcoo_dynamic_slice(a[0], a[1:], **k),
}
for _name, _op in _BCOO_STANDARD_PRIMITIVES.items():
    sparse_rules_bcoo[_name] = _standard_sparse_rule(_op)


def _gather_sparse(spenv, prim, *spvalues, dimension_numbers, slice_sizes, unique_indices,
                   indices_are_sorted, mode, fill_value):
    operand, start_indices = spvalues_to_arrays(spenv, spvalues)
    if isinstance(start_indices, BCOO):
        raise NotImplementedError(f"sparse rule for {prim} with sparse indices is not "
                                  "implemented.")
    return arrays_to_spvalues(spenv, [bcoo_gather(
        operand, start_indices, dimension_numbers=dimension_numbers, slice_sizes=slice_sizes,
        unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, mode=mode,
        fill_value=fill_value)])


sparse_rules_bcoo["gather"] = _gather_sparse


def _stack_sparse(spenv, prim, *spvalues, axis):
    arrays = spvalues_to_arrays(spenv, spvalues)
    base = arrays[0].shape
    new_shape = base[:axis] + (1,) + base[axis:]
    bdims = [d if d < axis else d + 1 for d in range(arrays[0].ndim)]
    expanded = [bcoo_broadcast_in_dim(x, shape=new_shape, broadcast_dimensions=bdims)
                for x in arrays]
    return arrays_to_spvalues(spenv, [bcoo_concatenate(expanded, dimension=axis)])


sparse_rules_bcoo["stack"] = _stack_sparse


def _integer_pow_sparse(spenv, prim, *spvalues, y):
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for {prim} with non-positive exponent {y} is not implemented "
            "because it would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your argument to a dense array.")
    return _zero_preserving_unary_op(False)(spenv, prim, *spvalues, y=y)


sparse_rules_bcoo["integer_pow"] = _integer_pow_sparse


def _transpose_sparse(spenv, prim, *spvalues, permutation):
    permutation = tuple(permutation)
    arg, = spvalues_to_arrays(spenv, spvalues)
    mat_t = _bcoo.bcoo_transpose(arg, permutation=permutation)
    n_batch, n_sparse, ndim = arg.n_batch, arg.n_sparse, arg.ndim
    batch_same = permutation[:n_batch] == tuple(range(n_batch))
    dense_same = permutation[n_batch + n_sparse:] == tuple(range(n_batch + n_sparse, ndim))
    sparse_same = permutation[n_batch:n_batch + n_sparse] == tuple(range(n_batch,
                                                                         n_batch + n_sparse))
    kwds = {}
    if batch_same and dense_same:
        kwds["data_ref"] = spvalues[0].data_ref
    else:
        kwds["data"] = mat_t.data
    if batch_same and sparse_same:
        kwds["indices_ref"] = spvalues[0].indices_ref
    else:
        kwds["indices"] = mat_t.indices
    return [spenv.sparse(mat_t.shape, indices_sorted=mat_t.indices_sorted,
                         unique_indices=mat_t.unique_indices, **kwds)]


sparse_rules_bcoo["transpose"] = _transpose_sparse


def _add_sparse(spenv, prim, *spvalues):
    X, Y = spvalues
    out_shape = lax.broadcast_shapes(X.shape, Y.shape)
    if X.is_sparse() and Y.is_sparse():
        if X.shape != Y.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if X.indices_ref == Y.indices_ref:
            out_data = lax.add(spenv.data(X), spenv.data(Y))
            return [spenv.sparse(X.shape, out_data, indices_ref=X.indices_ref,
                                 indices_sorted=X.indices_sorted,
                                 unique_indices=X.unique_indices)]
        if (spenv.indices(X).ndim != spenv.indices(Y).ndim
                or spenv.data(X).ndim != spenv.data(Y).ndim):
            raise NotImplementedError("Addition between sparse matrices with different "
                                      "batch/dense dimensions.")
        axis = spenv.indices(X).ndim - 2
        out_indices = lax.concatenate([spenv.indices(X), spenv.indices(Y)], dimension=axis)
        out_data = lax.concatenate([spenv.data(X), spenv.data(Y)], dimension=axis)
        return [spenv.sparse(X.shape, out_data, out_indices)]
    if Y.is_sparse():
        X, Y = Y, X
    if Y.shape != out_shape:
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when "
            "the output shape is larger than Y.shape. This is to prevent silent densification "
            "of a large sparse array. If this is your intent, you can explicitly cast the "
            "sparse array to a dense matrix.")
    X_arr, Y_arr = spvalues_to_arrays(spenv, (X, Y))
    return [spenv.dense(X_arr.todense() + Y_arr)]


sparse_rules_bcoo["add"] = _add_sparse


def _sub_sparse(spenv, prim, *spvalues):
    X, Y = spvalues
    if X.is_sparse() and Y.is_sparse():
        neg_y, = _zero_preserving_unary_op(True)(spenv, lax.neg_p, Y)
        return _add_sparse(spenv, prim, X, neg_y)
    raise NotImplementedError("Subtraction between sparse and dense array.")


sparse_rules_bcoo["sub"] = _sub_sparse


def _mul_sparse(spenv, prim, *spvalues):
    X, Y = spvalues
    if X.is_sparse() and Y.is_sparse():
        if X.indices_ref == Y.indices_ref and X.unique_indices:
            out_data = lax.mul(spenv.data(X), spenv.data(Y))
            return [spenv.sparse(X.shape, out_data, indices_ref=X.indices_ref,
                                 indices_sorted=X.indices_sorted, unique_indices=True)]
        X_arr, Y_arr = spvalues_to_arrays(spenv, spvalues)
        mat = _bcoo.bcoo_multiply_sparse(X_arr, Y_arr)
        return [spenv.sparse(mat.shape, mat.data, mat.indices)]
    if Y.is_sparse():
        X, Y = Y, X
    X_arr = spvalues_to_arrays(spenv, X)
    out_data = _bcoo.bcoo_multiply_dense(X_arr, spenv.data(Y))
    return [spenv.sparse(X.shape, out_data, indices_ref=X.indices_ref,
                         indices_sorted=X.indices_sorted, unique_indices=X.unique_indices)]


sparse_rules_bcoo["mul"] = _mul_sparse


def _div_sparse(spenv, prim, *spvalues):
    X, Y = spvalues
    if Y.is_sparse():
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to a dense array.")
    X_arr = spvalues_to_arrays(spenv, X)
    out_data = _bcoo.bcoo_multiply_dense(X_arr, 1. / spenv.data(Y))
    return [spenv.sparse(X.shape, out_data, indices_ref=X.indices_ref,
                         indices_sorted=X.indices_sorted, unique_indices=X.unique_indices)]


sparse_rules_bcoo["div"] = _div_sparse


def _reduce_sum_sparse(spenv, prim, *spvalues, axes, **params):
    X_arr = spvalues_to_arrays(spenv, spvalues[0])
    mat = _bcoo.bcoo_reduce_sum(X_arr, axes=axes)
    if mat.shape == ():
        return [spenv.dense(mat.data.sum())]
    return [spenv.sparse(mat.shape, mat.data, mat.indices)]


sparse_rules_bcoo["reduce_sum"] = _reduce_sum_sparse


def _jit_sparse(spenv, prim, *spvalues, jaxpr, **params):
    if params.get("name") == "_sparse_todense":  # sparse.todense of a traced value
        arrays = spvalues_to_arrays(spenv, spvalues)
        return [spenv.dense(a.todense() if isinstance(a, BCOO) else a) for a in arrays]
    # JAX re-stages the sparsified body as a new jit; traxla evaluates it inline (same
    # values, one call level fewer in the jaxpr).
    return eval_sparse(jaxpr.jaxpr, jaxpr.consts, spvalues, spenv)


sparse_rules_bcoo["jit"] = _jit_sparse


# ----------------------------------------------------------------------------------------
# BCOO methods derived from sparsify (as JAX defines them)

def _reshape(self, *args, **kwargs):
    """Returns an array containing the same data with a new shape."""
    return sparsify(lambda x: x.reshape(*args, **kwargs))(self)


def _sum(self, *args, **kwargs):
    """Sum array along axis."""
    return sparsify(lambda x: x.sum(*args, **kwargs))(self)


def _astype(self, *args, **kwargs):
    """Copy the array and cast to a specified dtype."""
    return sparsify(lambda x: x.astype(*args, **kwargs))(self)


def _bcoo_rewriting_take(arr, idx, indices_are_sorted=False, unique_indices=False,
                         mode=None, fill_value=None):
    # only the array is sparse; the index stays as given
    result = sparsify(functools.partial(
        rewriting_take, idx=idx, indices_are_sorted=indices_are_sorted, mode=mode,
        unique_indices=unique_indices, fill_value=fill_value))(arr)
    if not isinstance(result, BCOO) and np.size(result) == 0:
        result = BCOO.fromdense(result)
    return result


def _sparse_iter(arr):
    return iter(arr[i] for i in range(arr.shape[0]))


def _swap_args(f):
    return lambda a, b: f(b, a)


_bcoo_methods = {
    "astype": _astype,
    "reshape": _reshape,
    "sum": _sum,
    "__abs__": sparsify(jnp.abs),
    "__neg__": sparsify(jnp.negative),
    "__pos__": sparsify(jnp.positive),
    "__matmul__": sparsify(jnp.matmul),
    "__rmatmul__": sparsify(_swap_args(jnp.matmul)),
    "__mul__": sparsify(jnp.multiply),
    "__rmul__": sparsify(_swap_args(jnp.multiply)),
    "__truediv__": sparsify(jnp.divide),
    "__rtruediv__": sparsify(_swap_args(jnp.divide)),
    "__add__": sparsify(jnp.add),
    "__radd__": sparsify(_swap_args(jnp.add)),
    "__sub__": sparsify(jnp.subtract),
    "__rsub__": sparsify(_swap_args(jnp.subtract)),
    "__pow__": lambda x, y: sparsify(lambda x: jnp.power(x, y))(x),
    "__rpow__": sparsify(_swap_args(jnp.power)),
    "__getitem__": _bcoo_rewriting_take,
    "__iter__": _sparse_iter,
    "__gt__": sparsify(jnp.greater),
    "__ge__": sparsify(jnp.greater_equal),
    "__lt__": sparsify(jnp.less),
    "__le__": sparsify(jnp.less_equal),
    "__eq__": sparsify(jnp.equal),
    "__ne__": sparsify(jnp.not_equal),
}

for _method, _impl in _bcoo_methods.items():
    setattr(BCOO, _method, _impl)


# The other names of JAX's module (mostly its imports), as JAX's
from collections.abc import Callable
from collections.abc import Sequence
from traxla.base.sequences import safe_map
from traxla.base.sequences import safe_zip
from traxla.base.sequences import split_list
from traxla.experimental.sparse.bcoo import bcoo_multiply_dense
from traxla.experimental.sparse.bcoo import bcoo_multiply_sparse
from traxla.experimental.sparse.bcoo_shape import bcoo_squeeze as bcoo_impl
from traxla.experimental.sparse.bcsr import BCSR
from traxla.tracer.linear_util import flatten_fun_nokwargs
from typing import Any
from typing import Any as Array
from typing import Any as ArrayOrSparse
import traxla as jax
import traxla._src.api_util as api_util
import traxla._src.config as config
import traxla._src.core as core
import traxla._src.pjit as pjit
import traxla._src.tree_util as tree_util
import traxla.experimental.sparse as sparse
import traxla.interpreters.partial_eval as pe
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's sparse internals (its sparse primitives and their rules; traxla's sparse operations are compositions of lax operations)",
      functions='bcsr_impl impl lift_jvp sparsify_fun sparsify_subtrace',
      classes='SparseTrace SparseTracer',
      constants='prim sparse_rules_bcsr',
      modules='jnp_indexing lu pytree sharding_impls')
method = "__getitem__"  # JAX's module leaves its last loop variable at module level

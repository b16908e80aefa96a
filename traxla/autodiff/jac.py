"""Jacobians and Hessians as JAX builds them: ``jacfwd`` vmaps ``jvp`` over the standard
basis of the inputs, ``jacrev`` vmaps the ``vjp`` pullback over the standard basis of the
outputs, ``hessian = jacfwd(jacrev(f))``. Pytree inputs and outputs give pytree
Jacobians: one leaf per (output leaf, input leaf) pair, of shape ``out_shape + in_shape``."""
from __future__ import annotations

import functools

import numpy as np

from traxla.base.wrapping import wraps
from traxla import primitives as prims, tree_util
from traxla.ir import dtypes
from traxla.ir.traceback_util import api_boundary
from traxla.autodiff.ad import (_ensure_argnums, argnums_partial, check_input_dtype_revderiv,
                   check_output_dtype_revderiv, jvp, vjp)
from traxla.batching import vmap


def _check_input_dtype_jacfwd(holomorphic, x):
    dt = prims.aval_of(x).dtype
    if dtypes.is_extended(dt):
        raise TypeError(f"jacfwd with input element type {dt.name}")
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError("jacfwd with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dt.name}.")
    elif not dtypes.is_float(dt):
        raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                        f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
                        "holomorphic=True. For differentiation of non-holomorphic functions "
                        "involving complex inputs or integer inputs, use jax.jvp directly.")


def _check_output_dtype_jacfwd(holomorphic, x):
    dt = prims.aval_of(x).dtype
    if holomorphic and not dtypes.is_complex(dt):
        raise TypeError("jacfwd with holomorphic=True requires outputs with complex dtype, "
                        f"but got {dt.name}.")


def _std_basis(pytree):
    """The identity matrix over all of ``pytree``'s elements, unraveled along axis 1 into
    ``pytree``'s structure: leaf ``l`` gets shape ``(n,) + l.shape``."""
    leaves, _ = tree_util.tree_flatten(pytree)
    ndim = sum(int(np.prod(prims.shape_of(l), dtype=np.int64)) for l in leaves)
    dtype = dtypes.result_type_of(*(prims.typed(l) for l in leaves))[0]
    flat_basis = prims._eye(ndim, ndim, 0, dtype)
    return _unravel_array_into_pytree(pytree, 1, None, flat_basis)


def _unravel_array_into_pytree(pytree, axis, example, arr):
    """Splits ``arr`` along ``axis`` into ``pytree``'s leaves (each reshaped to ``arr.shape``
    with ``axis`` replaced by the leaf's shape) and casts each to ``example``'s dtype (or the
    leaf's own, when ``example`` is None)."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    arr_shape = prims.shape_of(arr)
    axis = axis % len(arr_shape)
    shapes = [arr_shape[:axis] + prims.shape_of(l) + arr_shape[axis + 1:] for l in leaves]
    sizes = [int(np.prod(prims.shape_of(l), dtype=np.int64)) for l in leaves]
    if getattr(getattr(arr, "dtype", None), "names", None) == ("float0",):
        # the cotangents of integer inputs (allow_int): zeros of each example's dtype
        out = [prims.full(shape, 0, prims.dtype_of(leaf if example is None else example))
               for shape, leaf in zip(shapes, leaves)]
        return tree_util.tree_unflatten(treedef, out)
    parts, start = [], 0
    for size in sizes:
        parts.append(prims.slice_in_dim(arr, start, start + size, 1, axis)
                     if len(leaves) > 1 else arr)
        start += size
    out = [_possible_downcast(prims.reshape(x, tuple(shape)), leaf if example is None else example)
           for x, shape, leaf in zip(parts, shapes, leaves)]
    return tree_util.tree_unflatten(treedef, out)


def _possible_downcast(x, example):
    aval = prims.aval_of(example)
    if dtypes.is_complex(prims.dtype_of(x)) and not dtypes.is_complex(aval.dtype):
        x = prims.real(x)
    return prims._lift(prims._convert_element_type(x, aval.dtype, aval.weak_type))


# The docstring JAX gives ``jacfwd(f)`` and ``jacrev(f)`` (``wraps``'s docstr).
_JAC_DOC = ("Jacobian of {fun} with respect to positional argument(s) {argnums}. Takes the same "
            "arguments as {fun} but returns the jacobian of the output with respect to the "
            "arguments at positions {argnums}.")


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` with respect to ``args[argnums]``, by forward mode."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    argnums = _ensure_argnums(argnums)

    @wraps(fun, docstr=_JAC_DOC, argnums=argnums)
    @api_boundary
    def jacfun(*args, **kwargs):
        f_partial, dyn_args = argnums_partial(fun, argnums, args, kwargs)
        tree_util.tree_map(functools.partial(_check_input_dtype_jacfwd, holomorphic), dyn_args)

        def pushfwd(tangents):
            return jvp(f_partial, dyn_args, tangents, has_aux=has_aux)

        if has_aux:
            y, jac, aux = vmap(pushfwd, out_axes=(None, -1, None))(_std_basis(dyn_args))
        else:
            y, jac = vmap(pushfwd, out_axes=(None, -1))(_std_basis(dyn_args))
            aux = None
        tree_util.tree_map(functools.partial(_check_output_dtype_jacfwd, holomorphic), y)
        example_args = dyn_args[0] if isinstance(argnums, int) else dyn_args
        jac_tree = tree_util.tree_map(
            lambda y_leaf, arr: _unravel_array_into_pytree(example_args, -1, y_leaf, arr), y, jac)
        return (jac_tree, aux) if has_aux else jac_tree

    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` with respect to ``args[argnums]``, by reverse mode."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    argnums = _ensure_argnums(argnums)

    @wraps(fun, docstr=_JAC_DOC, argnums=argnums)
    @api_boundary
    def jacfun(*args, **kwargs):
        f_partial, dyn_args = argnums_partial(fun, argnums, args, kwargs)
        # mapped over the trees, as JAX's: a custom node's unflatten sees None leaves
        tree_util.tree_map(
            lambda x: check_input_dtype_revderiv("jacrev", allow_int, x, holomorphic), dyn_args)
        if has_aux:
            y, pullback, aux = vjp(f_partial, *dyn_args, has_aux=True)
        else:
            y, pullback = vjp(f_partial, *dyn_args)
        tree_util.tree_map(lambda leaf: check_output_dtype_revderiv("jacrev", leaf, holomorphic),
                           y)
        jac = vmap(pullback)(_std_basis(y))
        jac = jac[0] if isinstance(argnums, int) else jac
        example_args = dyn_args[0] if isinstance(argnums, int) else dyn_args
        jac_tree = tree_util.tree_map(
            lambda x_leaf, arr: _unravel_array_into_pytree(y, 0, x_leaf, arr), example_args, jac)
        jac_tree = tree_util.tree_transpose(tree_util.tree_structure(example_args),
                                            tree_util.tree_structure(y), jac_tree)
        return (jac_tree, aux) if has_aux else jac_tree

    return jacfun


def jacobian(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Alias of :func:`jacrev`."""
    return jacrev(fun, argnums=argnums, has_aux=has_aux, holomorphic=holomorphic,
                  allow_int=allow_int)


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of ``fun``: ``jacfwd(jacrev(fun))``, with pytree blocks as JAX's."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
                  argnums, has_aux=has_aux, holomorphic=holomorphic)


__all__ = ["jacfwd", "jacrev", "jacobian", "hessian"]

"""``lax.custom_linear_solve`` and ``lax.custom_root`` (JAX's ``lax/control_flow/solves.py``):
solves whose derivatives come from implicit differentiation instead of differentiating
through the solver's iterations."""
from __future__ import annotations

from functools import partial

import numpy as np

from traxla import tree_util
from traxla.ir.rules.linalg import LinearSolveTuple, custom_linear_solve_p
from traxla.ir.traceback_util import api_boundary
from traxla.lax.control_flow import _trace
from traxla.lax import aval_of, neg, full_like
from traxla.api.vjp_tools import linear_transpose
from traxla.autodiff import custom_jvp, jvp, linearize
from traxla.tracer.interpret import eval_jaxpr


def _avals(leaves):
    return [aval_of(x) for x in leaves]


def _check_tree(func_name, expected_name, actual_tree, expected_tree, has_aux=False):
    if has_aux:
        children = tree_util.treedef_children(actual_tree) if hasattr(
            tree_util, "treedef_children") else None
        if children is None or len(children) != 2:
            raise TypeError(f"{func_name}() with has_aux=True must return a pair (value, aux)")
        actual_tree = children[0]
    if actual_tree != expected_tree:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, "
                        f"got {actual_tree} and {expected_tree}.")


def _check_shapes(func_name, expected_name, actual, expected):
    actual_shapes = [np.shape(x) for x in actual]
    expected_shapes = [np.shape(x) for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, got "
                         f"{actual_shapes} and {expected_shapes}")


def _shape_checked(fun, name, b_leaves, has_aux):
    def f(x):
        y = fun(x)
        _check_shapes(name, "b", tree_util.tree_leaves(y[0] if has_aux else y), b_leaves)
        return y
    return f


@api_boundary
def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """Solves ``matvec(x) = b`` with ``solve(matvec, b)``; derivatives by implicit
    differentiation, so the solver's own iterations are never differentiated."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_util.tree_flatten(b)
    b_avals = _avals(b_leaves)
    args_tree = tree_util.tree_structure((b,))

    matvec_jaxpr, matvec_consts, out_tree = _trace(
        _shape_checked(matvec, "matvec", b_leaves, False), args_tree, b_avals,
        "custom_linear_solve")
    _check_tree("matvec", "b", out_tree, tree)
    solve_jaxpr, solve_consts, out_tree = _trace(
        _shape_checked(partial(solve, matvec), "solve", b_leaves, has_aux), args_tree, b_avals,
        "custom_linear_solve solve")
    _check_tree("solve", "b", out_tree, tree, has_aux)
    if transpose_solve is None:
        vecmat_jaxpr = tr_solve_jaxpr = None
        vecmat_consts = tr_solve_consts = []
    else:
        if symmetric:
            vecmat = matvec
            vecmat_jaxpr, vecmat_consts = matvec_jaxpr, matvec_consts
        else:
            _vecmat = linear_transpose(matvec, b)
            vecmat = lambda ct: _vecmat(ct)[0]  # noqa: E731
            vecmat_jaxpr, vecmat_consts, _ = _trace(vecmat, args_tree, b_avals,
                                                     "custom_linear_solve transpose_solve")
        tr_solve_jaxpr, tr_solve_consts, out_tree = _trace(
            _shape_checked(partial(transpose_solve, vecmat), "transpose_solve", b_leaves,
                           has_aux), args_tree, b_avals, "custom_linear_solve transpose_solve")
        _check_tree("transpose_solve", "b", out_tree, tree, has_aux)
    all_consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
    const_lengths = LinearSolveTuple(*[len(c) for c in all_consts])
    jaxprs = LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr)
    out_flat = custom_linear_solve_p.bind(*[c for cs in all_consts for c in cs], *b_leaves,
                                          const_lengths=const_lengths, jaxprs=jaxprs)
    if has_aux:
        solve_out_tree = _trace(partial(solve, matvec), args_tree, b_avals,
                                "custom_linear_solve")[2]
        return tree_util.tree_unflatten(solve_out_tree, out_flat)
    return tree_util.tree_unflatten(tree, out_flat)


@api_boundary
def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """Finds a root of ``f`` with ``solve(f, initial_guess)``; derivatives through the
    implicit function theorem with ``tangent_solve(g, y)`` solving ``g(x) = y`` for the
    linearization ``g`` of ``f`` at the root."""

    guess_leaves, guess_tree = tree_util.tree_flatten(initial_guess)
    guess_avals = _avals(guess_leaves)
    args_tree = tree_util.tree_structure((initial_guess,))
    f_jaxpr, f_consts, out_tree = _trace(f, args_tree, guess_avals, "custom_root")
    _check_tree("f", "initial_guess", out_tree, guess_tree)
    solve_jaxpr, solve_consts, solution_tree = _trace(partial(solve, f), args_tree, guess_avals,
                                                      "custom_root solve")
    _check_tree("solve", "initial_guess", solution_tree, guess_tree, has_aux)

    def linearize_and_solve(x, b):
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    pair_tree = tree_util.tree_structure((initial_guess, initial_guess))
    ls_jaxpr, ls_consts, out_tree = _trace(lambda x, b: linearize_and_solve(x, b), pair_tree,
                                           guess_avals + guess_avals, "custom_root tangent_solve")
    _check_tree("tangent_solve", "x", out_tree, guess_tree)
    n_f, n_s = len(f_consts), len(solve_consts)
    n_sol = len(guess_leaves)

    def split(args):
        return args[:n_f], args[n_f:n_f + n_s], args[n_f + n_s:len(args) - n_sol], \
            args[len(args) - n_sol:]

    @custom_jvp
    def root(*args):
        _, sc, _, guess = split(list(args))
        return eval_jaxpr(solve_jaxpr, (), *sc, *guess)

    @root.defjvp
    def root_jvp(primals, tangents):
        fc, _, lc, _ = split(list(primals))
        fc_dot = split(list(tangents))[0]
        sol = root(*primals)
        solution, aux = sol[:n_sol], sol[n_sol:]

        def f_at_solution(*consts):
            return eval_jaxpr(f_jaxpr, (), *consts, *solution)

        _, rhs = jvp(f_at_solution, list(fc), list(fc_dot))
        sol_dot = [neg(t) for t in eval_jaxpr(ls_jaxpr, (), *lc, *solution, *rhs)]
        return list(solution) + list(aux), sol_dot + [full_like(a, 0) for a in aux]

    out = root(*f_consts, *solve_consts, *ls_consts, *guess_leaves)
    return tree_util.tree_unflatten(solution_tree, out)


__all__ = ["custom_linear_solve", "custom_root"]

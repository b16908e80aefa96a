"""jax.scipy.optimize.minimize: BFGS (and the experimental L-BFGS)."""
from __future__ import annotations

Array = object
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from traxla import numpy as jnp
from traxla.scipy.optimize.bfgs import minimize_bfgs
from traxla.scipy.optimize._lbfgs import _minimize_lbfgs


class OptimizeResults(NamedTuple):
  """Object holding optimization results."""
  x: Array
  success: bool | Array
  status: int | Array
  fun: Array
  jac: Array
  hess_inv: Array | None
  nfev: int | Array
  njev: int | Array
  nit: int | Array


def minimize(
    fun: Callable,
    x0: Array,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
  """Minimization of scalar function of one or more variables."""
  if options is None:
    options = {}

  if not isinstance(args, tuple):
    msg = "args argument to jax.scipy.optimize.minimize must be a tuple, got {}"
    raise TypeError(msg.format(args))

  fun_with_args = lambda x: fun(x, *args)

  if method.lower() == 'bfgs':
    results = minimize_bfgs(fun_with_args, x0, **options)
    return _optimize_results(results, hess_inv=results.H_k)

  if method.lower() == 'l-bfgs-experimental-do-not-rely-on-this':
    results = _minimize_lbfgs(fun_with_args, x0, **options)
    return _optimize_results(results, hess_inv=None)

  raise ValueError(f"Method {method} not recognized")


def _optimize_results(results, hess_inv) -> OptimizeResults:
  """A BFGS or L-BFGS run's results as ``OptimizeResults``."""
  success = results.converged & jnp.logical_not(results.failed)
  return OptimizeResults(x=results.x_k,
                         success=success,
                         status=results.status,
                         fun=results.f_k,
                         jac=results.g_k,
                         hess_inv=hess_inv,
                         nfev=results.nfev,
                         njev=results.ngev,
                         nit=results.k)

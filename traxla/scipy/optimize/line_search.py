"""Wolfe line search (zoom with cubic/quadratic interpolation), as jax.scipy.optimize's."""
from __future__ import annotations

Array = object
from typing import NamedTuple
from collections.abc import Callable
from functools import partial

from traxla import autodiff as api, lax, numpy as jnp
from traxla.ir import dtypes
from traxla.numpy._promotion import promote_dtypes_inexact


_dot = partial(jnp.dot, precision=getattr(getattr(lax, "Precision", None), "HIGHEST", None))


def _cubicmin(a, fa, fpa, b, fb, c, fc):
  dtype = jnp.result_type(a, fa, fpa, b, fb, c, fc)
  C = fpa
  db = b - a
  dc = c - a
  denom = (db * dc) ** 2 * (db - dc)
  d1 = jnp.array([[dc ** 2, -db ** 2],
                  [-dc ** 3, db ** 3]], dtype=dtype)
  d2 = jnp.array([fb - fa - C * db, fc - fa - C * dc], dtype=dtype)
  A, B = _dot(d1, d2) / denom

  radical = B * B - 3. * A * C
  xmin = a + (-B + jnp.sqrt(radical)) / (3. * A)

  return xmin


def _quadmin(a, fa, fpa, b, fb):
  D = fa
  C = fpa
  db = b - a
  B = (fb - D - C * db) / (db ** 2)
  xmin = a - C / (2. * B)
  return xmin


def _replace_where(replace_bit, state, new_dict, keys=None, **updates):
  """``state`` with the fields of ``new_dict`` (those in ``keys``) taken where ``replace_bit``
  holds (JAX's ``_binary_replace``), and ``updates`` set outright (computed before the
  selects, as JAX orders them)."""
  original_dict = state._asdict()
  return state._replace(**updates, **{key: jnp.where(replace_bit, new_dict[key], original_dict[key])
                                      for key in (new_dict.keys() if keys is None else keys)})


# The fields a zoom's result hands to the line search's state.
_STAR_KEYS = ['a_star', 'phi_star', 'dphi_star', 'g_star']


class _ZoomState(NamedTuple):
  done: bool | Array
  failed: bool | Array
  j: int | Array
  a_lo: float | Array
  phi_lo: float | Array
  dphi_lo: float | Array
  a_hi: float | Array
  phi_hi: float | Array
  dphi_hi: float | Array
  a_rec: float | Array
  phi_rec: float | Array
  a_star: float | Array
  phi_star: float | Array
  dphi_star: float | Array
  g_star: float | Array
  nfev: int | Array
  ngev: int | Array


ConditionFn = Callable[..., Array]


def _zoom(restricted_func_and_grad, wolfe_one: ConditionFn, wolfe_two: ConditionFn, a_lo, phi_lo,
          dphi_lo, a_hi, phi_hi, dphi_hi, g_0, pass_through):
  """Implementation of zoom. Algorithm 3.6 from Wright and Nocedal, 'Numerical"""
  state = _ZoomState(
      done=False,
      failed=False,
      j=0,
      a_lo=a_lo,
      phi_lo=phi_lo,
      dphi_lo=dphi_lo,
      a_hi=a_hi,
      phi_hi=phi_hi,
      dphi_hi=dphi_hi,
      a_rec=(a_lo + a_hi) / 2.,
      phi_rec=(phi_lo + phi_hi) / 2.,
      a_star=1.,
      phi_star=phi_lo,
      dphi_star=dphi_lo,
      g_star=g_0,
      nfev=0,
      ngev=0,
  )
  delta1 = 0.2
  delta2 = 0.1

  def body(state):
    # Body of zoom algorithm. We use boolean arithmetic to avoid using jax.cond
    # so that it works on GPU/TPU.
    dalpha = (state.a_hi - state.a_lo)
    a = jnp.minimum(state.a_hi, state.a_lo)
    b = jnp.maximum(state.a_hi, state.a_lo)
    cchk = delta1 * dalpha
    qchk = delta2 * dalpha

    # This will cause the line search to stop, and since the Wolfe conditions
    # are not satisfied the minimization should stop too.
    threshold = jnp.where((dtypes.finfo(dalpha.dtype).bits < 64), 1e-5, 1e-10)
    state = state._replace(failed=state.failed | (dalpha <= threshold))

    # Cubmin is sometimes nan, though in this case the bounds check will fail.
    a_j_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                          state.phi_hi, state.a_rec, state.phi_rec)
    use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
    a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
    use_quad = (~use_cubic) & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
    a_j_bisection = (state.a_lo + state.a_hi) / 2.
    use_bisection = (~use_cubic) & (~use_quad)

    a_j = jnp.where(use_cubic, a_j_cubic, state.a_rec)
    a_j = jnp.where(use_quad, a_j_quad, a_j)
    a_j = jnp.where(use_bisection, a_j_bisection, a_j)

    # TODO(jakevdp): should we use some sort of fixed-point approach here instead?
    phi_j, dphi_j, g_j = restricted_func_and_grad(a_j)
    phi_j = phi_j.astype(state.phi_lo.dtype)
    dphi_j = dphi_j.astype(state.dphi_lo.dtype)
    g_j = g_j.astype(state.g_star.dtype)
    state = state._replace(nfev=state.nfev + 1,
                           ngev=state.ngev + 1)

    hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
    star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
    hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.) & (~hi_to_j) & (~star_to_j)
    lo_to_j = (~hi_to_j) & (~star_to_j)

    state = _replace_where(hi_to_j, state, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
                                                a_rec=state.a_hi, phi_rec=state.phi_hi))

    # for termination
    state = _replace_where(star_to_j, state,
                           dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j),
                           done=star_to_j | state.done)
    state = _replace_where(hi_to_lo, state,
                           dict(a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo,
                                a_rec=state.a_hi, phi_rec=state.phi_hi))
    state = _replace_where(lo_to_j & ~hi_to_lo, state,
                           dict(a_rec=state.a_lo, phi_rec=state.phi_lo))
    state = _replace_where(lo_to_j, state, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j))
    state = state._replace(j=state.j + 1)
    # Choose higher cutoff for maxiter than Scipy as Jax takes longer to find
    # the same value - possibly floating point issues?
    state = state._replace(failed= state.failed | (state.j >= 30))
    return state

  state = lax.while_loop(lambda state: (~state.done) & (~pass_through) & (~state.failed),
                         body,
                         state)

  return state


class _LineSearchState(NamedTuple):
  done: Array
  failed: Array
  i: int | Array
  a_i1: float | Array
  phi_i1: float | Array
  dphi_i1: float | Array
  nfev: int | Array
  ngev: int | Array
  a_star: float | Array
  phi_star: Array
  dphi_star: Array
  g_star: Array


class _LineSearchResults(NamedTuple):
  """Results of line search."""
  failed: bool | Array
  nit: int | Array
  nfev: int | Array
  ngev: int | Array
  k: int | Array
  a_k: int | Array
  f_k: Array
  g_k: Array
  status: bool | Array


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4,
                c2=0.9, maxiter=20):
  """Inexact line search that satisfies strong Wolfe conditions."""
  xk, pk = promote_dtypes_inexact(xk, pk)
  def restricted_func_and_grad(t):
    t = jnp.array(t, dtype=pk.dtype)
    phi, g = api.value_and_grad(f)(xk + t * pk)
    dphi = jnp.real(_dot(g, pk))
    return phi, dphi, g

  if old_fval is None or gfk is None:
    phi_0, dphi_0, gfk = restricted_func_and_grad(0)
  else:
    phi_0 = old_fval
    dphi_0 = jnp.real(_dot(gfk, pk))
  if old_old_fval is not None:
    candidate_start_value = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
    start_value = jnp.where(candidate_start_value > 1, 1.0, candidate_start_value)
  else:
    start_value = 1

  def wolfe_one(a_i, phi_i) -> Array:
    # actually negation of W1
    return phi_i > phi_0 + c1 * a_i * dphi_0

  def wolfe_two(dphi_i) -> Array:
    return jnp.abs(dphi_i) <= -c2 * dphi_0

  state = _LineSearchState(
      done=jnp.array(False, dtype=bool),
      failed=jnp.array(False, dtype=bool),
      # algorithm begins at 1 as per Wright and Nocedal, however Scipy has a
      # bug and starts at 0. See https://github.com/scipy/scipy/issues/12157
      i=1,
      a_i1=0.,
      phi_i1=phi_0,
      dphi_i1=dphi_0,
      nfev=1 if (old_fval is None or gfk is None) else 0,
      ngev=1 if (old_fval is None or gfk is None) else 0,
      a_star=0.,
      phi_star=phi_0,
      dphi_star=dphi_0,
      g_star=gfk,
  )

  def body(state) -> _LineSearchState:
    # no amax in this version, we just double as in scipy.
    # unlike original algorithm we do our next choice at the start of this loop
    a_i = jnp.where(state.i == 1, start_value, state.a_i1 * 2.)

    phi_i, dphi_i, g_i = restricted_func_and_grad(a_i)
    state = state._replace(nfev=state.nfev + 1,
                           ngev=state.ngev + 1)

    star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
    star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
    star_to_zoom2 = (dphi_i >= 0.) & (~star_to_zoom1) & (~star_to_i)

    zoom1 = _zoom(restricted_func_and_grad,
                  wolfe_one,
                  wolfe_two,
                  state.a_i1,
                  state.phi_i1,
                  state.dphi_i1,
                  a_i,
                  phi_i,
                  dphi_i,
                  gfk,
                  ~star_to_zoom1)

    state = state._replace(nfev=state.nfev + zoom1.nfev,
                           ngev=state.ngev + zoom1.ngev)

    zoom2 = _zoom(restricted_func_and_grad,
                  wolfe_one,
                  wolfe_two,
                  a_i,
                  phi_i,
                  dphi_i,
                  state.a_i1,
                  state.phi_i1,
                  state.dphi_i1,
                  gfk,
                  ~star_to_zoom2)

    state = state._replace(nfev=state.nfev + zoom2.nfev,
                           ngev=state.ngev + zoom2.ngev)

    state = _replace_where(star_to_zoom1, state, zoom1._asdict(), _STAR_KEYS,
                           done=star_to_zoom1 | state.done,
                           failed=(star_to_zoom1 & zoom1.failed) | state.failed)
    state = _replace_where(star_to_i, state,
                           dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i),
                           done=star_to_i | state.done)
    state = _replace_where(star_to_zoom2, state, zoom2._asdict(), _STAR_KEYS,
                           done=star_to_zoom2 | state.done,
                           failed=(star_to_zoom2 & zoom2.failed) | state.failed)
    state = state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)
    return state

  state: _LineSearchState = lax.while_loop(
    lambda state: (~state.done) & (state.i <= maxiter) & (~state.failed),
    body,
    state)

  status = jnp.where(
      state.failed,
      jnp.array(1),  # zoom failed
          jnp.where(
              state.i > maxiter,
              jnp.array(3),  # maxiter reached
              jnp.array(0),  # passed (should be)
          ),
  )
  # Step sizes which are too small causes the optimizer to get stuck with a
  # direction of zero in <64 bit mode - avoid with a floor on minimum step size.
  alpha_k = jnp.asarray(state.a_star)
  alpha_k = jnp.where((dtypes.finfo(alpha_k.dtype).bits != 64)
                    & (jnp.abs(alpha_k) < 1e-8),
                      jnp.sign(alpha_k) * 1e-8,
                      alpha_k)
  results = _LineSearchResults(
      failed=state.failed | (~state.done),
      nit=state.i - 1,  # because iterations started at 1
      nfev=state.nfev,
      ngev=state.ngev,
      k=state.i,
      a_k=alpha_k,
      f_k=state.phi_star,
      g_k=state.g_star,
      status=status,
  )
  return results

"""More of ``jax.scipy.special``: the exponential integrals ``expi``/``exp1``, ``spence``,
``dawsn`` and ``bessel_jn`` (Cephes' rational approximations and JAX's recurrences, with JAX's
custom derivatives)."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.autodiff import custom_jvp
from traxla.batching.batch_trace import vmap
from traxla.ir import dtypes
from traxla.numpy._promotion import (promote_args_inexact_arrays as promote_args_inexact,
                                     promote_dtypes_inexact)
from traxla.scipy._special_integrals import expn

__all__ = ["expi", "exp1", "spence", "dawsn", "bessel_jn"]


def _lax_const(x, value):
    return np.array(value, lax.dtype_of(x))


def _concrete_or_error(convert, value, context):
    try:
        return convert(value)
    except TypeError:
        raise TypeError(f"{context} must be a concrete value, got {value!r}.") from None


_DAWSN_AN = np.array([
    1.13681498971755972054e-11,
    8.49262267667473811108e-10,
    1.94434204175553054283e-8,
    9.53151741254484363489e-7,
    3.07828309874913200438e-6,
    3.52513368520288738649e-4,
    -8.50149846724410912031e-4,
    4.22618223005546594270e-2,
    -9.17480371773452345351e-2,
    9.99999999999999994612e-1,
])
_DAWSN_AD = np.array([
    2.40372073066762605484e-11,
    1.48864681368493396752e-9,
    5.21265281010541664570e-8,
    1.27258478273186970203e-6,
    2.32490249820789513991e-5,
    3.25524741826057911661e-4,
    3.48805814657162590916e-3,
    2.79448531198828973716e-2,
    1.58874241960120565368e-1,
    5.74918629489320327824e-1,
    1.00000000000000000539e0,
])
_DAWSN_BN = np.array([
    5.08955156417900903354e-1,
    -2.44754418142697847934e-1,
    9.41512335303534411857e-2,
    -2.18711255142039025206e-2,
    3.66207612329569181322e-3,
    -4.23209114460388756528e-4,
    3.59641304793896631888e-5,
    -2.14640351719968974225e-6,
    9.10010780076391431042e-8,
    -2.40274520828250956942e-9,
    3.59233385440928410398e-11,
])
_DAWSN_BD = np.array([
    1.00000000000000000000e0,
    -6.31839869873368190192e-1,
    2.36706788228248691528e-1,
    -5.31806367003223277662e-2,
    8.48041718586295374409e-3,
    -9.47996768486665330168e-4,
    7.81025592944552338085e-5,
    -4.55875153252442634831e-6,
    1.89100358111421846170e-7,
    -4.91324691331920606875e-9,
    7.18466403235734541950e-11,
])
_DAWSN_CN = np.array([
    -5.90592860534773254987e-1,
    6.29235242724368800674e-1,
    -1.72858975380388136411e-1,
    1.64837047825189632310e-2,
    -4.86827613020462700845e-4,
])
_DAWSN_CD = np.array([
    1.00000000000000000000e0,
    -2.69820057197544900361e0,
    1.73270799045947845857e0,
    -3.93708582281939493482e-1,
    3.44278924041233391079e-2,
    -9.73655226040941223894e-4,
])


def dawsn(x: ArrayLike) -> Array:
  x, = promote_args_inexact("dawsn", x)
  if dtypes.is_complex(x.dtype):
    raise ValueError("dawsn does not support complex-valued inputs.")
  return _dawsn(x)
@custom_jvp
def _dawsn(x: Array) -> Array:
  if x.dtype in [np.float32, np.float64]:
    return _dawsn_impl(x)
  else:  # float16, bfloat16 — upcast to float32
    return _dawsn_impl(x.astype(np.float32)).astype(x.dtype)
def _dawsn_impl(x: Array) -> Array:
  sign = jnp.sign(x)
  ax = lax.abs(x)
  AN = np.array(_DAWSN_AN, dtype=x.dtype)
  AD = np.array(_DAWSN_AD, dtype=x.dtype)
  BN = np.array(_DAWSN_BN, dtype=x.dtype)
  BD = np.array(_DAWSN_BD, dtype=x.dtype)
  CN = np.array(_DAWSN_CN, dtype=x.dtype)
  CD = np.array(_DAWSN_CD, dtype=x.dtype)
  ax2 = lax.square(ax)
  t = _lax_const(x, 1.) / ax2
  safe_ax_r1 = lax.select(ax < _lax_const(x, 3.25), ax, lax.full_like(ax, 1.))
  safe_ax2_r1 = lax.square(safe_ax_r1)
  val_r1 = safe_ax_r1 * jnp.polyval(AN, safe_ax2_r1) / jnp.polyval(AD, safe_ax2_r1)
  safe_t_r2 = lax.select(
      (ax >= _lax_const(x, 3.25)) & (ax < _lax_const(x, 6.25)),
      t, lax.full_like(t, 1.))
  safe_ax_r2 = lax.select(
      (ax >= _lax_const(x, 3.25)) & (ax < _lax_const(x, 6.25)),
      ax, lax.full_like(ax, 1.))
  val_r2 = (_lax_const(x, 0.5) / safe_ax_r2) * (
      _lax_const(x, 1.)
      + safe_t_r2 * jnp.polyval(BN, safe_t_r2) / jnp.polyval(BD, safe_t_r2))
  safe_t_r3 = lax.select(ax >= _lax_const(x, 6.25), t, lax.full_like(t, 1.))
  safe_ax_r3 = lax.select(ax >= _lax_const(x, 6.25), ax, lax.full_like(ax, 1.))
  val_r3 = (_lax_const(x, 0.5) / safe_ax_r3) * (
      _lax_const(x, 1.)
      + safe_t_r3 * jnp.polyval(CN, safe_t_r3) / jnp.polyval(CD, safe_t_r3))
  result = lax.select(ax < _lax_const(x, 3.25), val_r1,
                      lax.select(ax < _lax_const(x, 6.25), val_r2, val_r3))
  return sign * result
def _bessel_jn_scan_body_fun(carry, k):
  f0, f1, bs, z = carry
  f = 2.0 * (k + 1.0) * f1 / z - f0
  def true_fn_update_bs(u):
    bs, f = u
    return bs + 2.0 * f
  def false_fn_update_bs(u):
    bs, _ = u
    return bs
  bs = lax.cond(jnp.mod(k, 2) == 0, true_fn_update_bs,
                false_fn_update_bs, operand=(bs, f))
  f0 = f1
  f1 = f
  return (f0, f1, bs, z), f
def _bessel_jn(z: ArrayLike, *, v: int, n_iter: int=50) -> Array:
  f0 = _lax_const(z, 0.0)
  f1 = _lax_const(z, 1E-16)
  f = _lax_const(z, 0.0)
  bs = _lax_const(z, 0.0)
  (_, _, bs, _), j_vals = lax.scan(
      f=_bessel_jn_scan_body_fun, init=(f0, f1, bs, z),
      xs=lax.iota(lax.dtype_of(z), n_iter+1), reverse=True)
  f = j_vals[0]  # Use the value at the last iteration.
  j_vals = j_vals[:v+1]
  j_vals = j_vals / (bs - f)
  return j_vals
@partial(jit, static_argnames=["v", "n_iter"])
def bessel_jn(z: ArrayLike, *, v: int, n_iter: int=50) -> Array:
  z = jnp.asarray(z)
  z, = promote_dtypes_inexact(z)
  z_dtype = lax.dtype_of(z)
  if dtypes.is_complex(z_dtype):
    raise ValueError("complex input not supported.")
  v = _concrete_or_error(operator.index, v, 'Argument v of bessel_jn.')
  n_iter = _concrete_or_error(int, n_iter, 'Argument n_iter of bessel_jn.')
  bessel_jn_fun = partial(_bessel_jn, v=v, n_iter=n_iter)
  for _ in range(z.ndim):
    bessel_jn_fun = vmap(bessel_jn_fun)
  return jnp.moveaxis(bessel_jn_fun(z), -1, 0)
def _expint1(x: Array) -> Array:
  A = np.array([
    -5.350447357812542947283e0,
    2.185049168816613393830e2,
    -4.176572384826693777058e3,
    5.541176756393557601232e4,
    -3.313381331178144034309e5,
    1.592627163384945414220e6,
  ], dtype=x.dtype)
  B = np.array([
    1.0,
    -5.250547959112862969197e1,
    1.259616186786790571525e3,
    -1.756549581973534652631e4,
    1.493062117002725991967e5,
    -7.294949239640527645655e5,
    1.592627163384945429726e6,
  ], dtype=x.dtype)
  f = jnp.polyval(A, x) / jnp.polyval(B, x)
  return x * f + np.euler_gamma + jnp.log(x)
def _eval_expint_k(A: ArrayLike, B: ArrayLike, x: Array) -> Array:
  one = _lax_const(x, 1.0)
  w = one / x
  f = jnp.polyval(A, w) / jnp.polyval(B, w)
  f = w * f + one
  return jnp.exp(x) * w * f


# Cephes' rational approximations of expi on the intervals after (0, 2]: the numerator A and
# the denominator B of ``_eval_expint_k`` for (2, 4], (4, 8], ..., (32, 64] and (64, inf).
_EXPINT_K_COEFFS = (
  (  # (2, 4]
    [1.981808503259689673238e-2,
     -1.271645625984917501326e0,
     -2.088160335681228318920e0,
     2.755544509187936721172e0,
     -4.409507048701600257171e-1,
     4.665623805935891391017e-2,
     -1.545042679673485262580e-3,
     7.059980605299617478514e-5],
    [1.0,
     1.476498670914921440652e0,
     5.629177174822436244827e-1,
     1.699017897879307263248e-1,
     2.291647179034212017463e-2,
     4.450150439728752875043e-3,
     1.727439612206521482874e-4,
     3.953167195549672482304e-5],
  ),
  (  # (4, 8]
    [-1.373215375871208729803e0,
     -7.084559133740838761406e-1,
     1.580806855547941010501e0,
     -2.601500427425622944234e-1,
     2.994674694113713763365e-2,
     -1.038086040188744005513e-3,
     4.371064420753005429514e-5,
     2.141783679522602903795e-6],
    [1.0,
     8.585231423622028380768e-1,
     4.483285822873995129957e-1,
     7.687932158124475434091e-2,
     2.449868241021887685904e-2,
     8.832165941927796567926e-4,
     4.590952299511353531215e-4,
     -4.729848351866523044863e-6,
     2.665195537390710170105e-6],
  ),
  (  # (8, 16]
    [-2.106934601691916512584e0,
     1.732733869664688041885e0,
     -2.423619178935841904839e-1,
     2.322724180937565842585e-2,
     2.372880440493179832059e-4,
     -8.343219561192552752335e-5,
     1.363408795605250394881e-5,
     -3.655412321999253963714e-7,
     1.464941733975961318456e-8,
     6.176407863710360207074e-10],
    [1.0,
     -2.298062239901678075778e-1,
     1.105077041474037862347e-1,
     -1.566542966630792353556e-2,
     2.761106850817352773874e-3,
     -2.089148012284048449115e-4,
     1.708528938807675304186e-5,
     -4.459311796356686423199e-7,
     1.394634930353847498145e-8,
     6.150865933977338354138e-10],
  ),
  (  # (16, 32]
    [-2.458119367674020323359e-1,
     -1.483382253322077687183e-1,
     7.248291795735551591813e-2,
     -1.348315687380940523823e-2,
     1.342775069788636972294e-3,
     -7.942465637159712264564e-5,
     2.644179518984235952241e-6,
     -4.239473659313765177195e-8],
    [1.0,
     -1.044225908443871106315e-1,
     -2.676453128101402655055e-1,
     9.695000254621984627876e-2,
     -1.601745692712991078208e-2,
     1.496414899205908021882e-3,
     -8.462452563778485013756e-5,
     2.728938403476726394024e-6,
     -4.239462431819542051337e-8],
  ),
  (  # (32, 64]
    [1.212561118105456670844e-1,
     -5.823133179043894485122e-1,
     2.348887314557016779211e-1,
     -3.040034318113248237280e-2,
     1.510082146865190661777e-3,
     -2.523137095499571377122e-5],
    [1.0,
     -1.002252150365854016662e0,
     2.928709694872224144953e-1,
     -3.337004338674007801307e-2,
     1.560544881127388842819e-3,
     -2.523137093603234562648e-5],
  ),
  (  # (64, inf)
    [-7.657847078286127362028e-1,
     6.886192415566705051750e-1,
     -2.132598113545206124553e-1,
     3.346107552384193813594e-2,
     -3.076541477344756050249e-3,
     1.747119316454907477380e-4,
     -6.103711682274170530369e-6,
     1.218032765428652199087e-7,
     -1.086076102793290233007e-9],
    [1.0,
     -1.888802868662308731041e0,
     1.066691687211408896850e0,
     -2.751915982306380647738e-1,
     3.930852688233823569726e-2,
     -3.414684558602365085394e-3,
     1.866844370703555398195e-4,
     -6.345146083130515357861e-6,
     1.239754287483206878024e-7,
     -1.086076102793126632978e-9],
  ),
)


def _expint_k(A, B, x: Array) -> Array:
  return _eval_expint_k(np.array(A, dtype=x.dtype), np.array(B, dtype=x.dtype), x)


# One function a piece of ``_expi_pos``, made once so that ``piecewise``'s cache keeps hitting.
_EXPI_POS_PIECES = [_expint1] + [partial(_expint_k, A, B) for A, B in _EXPINT_K_COEFFS]


def _expi_pos(x: Array) -> Array:
  _c = _lax_const
  conds = [(_c(x, 0) < x) & (x <= _c(x, 2))] + [
    (_c(x, 2 ** i) < x) & (x <= _c(x, 2 ** (i + 1))) for i in range(1, 6)
  ]
  return jnp.piecewise(
    x,
    conds,
    _EXPI_POS_PIECES,
  )
def _expi_neg(x: Array) -> Array:
  return -exp1(-x)
@custom_jvp
@jit
def expi(x: ArrayLike) -> Array:
  x_arr, = promote_args_inexact("expi", x)
  if dtypes.is_complex(x_arr.dtype):
    raise ValueError("expi does not support complex-valued inputs.")
  return jnp.piecewise(x_arr, [x_arr < 0], [_expi_neg, _expi_pos])
@expi.defjvp
@jit
def expi_jvp(primals, tangents):
  (x,) = primals
  (x_dot,) = tangents
  return expi(x), jnp.exp(x) / x * x_dot
def exp1(x: ArrayLike) -> Array:
  x, = promote_args_inexact("exp1", x)
  if dtypes.is_complex(x.dtype):
    raise ValueError("exp1 does not support complex-valued inputs.")
  # imported here: _special_integrals imports special.py, which imports this module
  return expn(1, x)


def _spence_poly(w: Array) -> Array:
  A = jnp.array([4.65128586073990045278E-5,
                  7.31589045238094711071E-3,
                  1.33847639578309018650E-1,
                  8.79691311754530315341E-1,
                  2.71149851196553469920E0,
                  4.25697156008121755724E0,
                  3.29771340985225106936E0,
                  1.00000000000000000126E0,
                  ], dtype=w.dtype)
  B = jnp.array([6.90990488912553276999E-4,
                  2.54043763932544379113E-2,
                  2.82974860602568089943E-1,
                  1.41172597751831069617E0,
                  3.63800533345137075418E0,
                  5.03278880143316990390E0,
                  3.54771340985225096217E0,
                  9.99999999999999998740E-1,
                  ],dtype=w.dtype)
  return -w * jnp.polyval(A, w) / jnp.polyval(B, w)
def _spence_calc(x: Array) -> Array:
  x2_bool = x > 2.0
  x = jnp.piecewise(x, [x2_bool],
                    [lambda x: 1.0 / x, lambda x: x])
  x1_5_bool = x > 1.5
  x_5_bool = x < 0.5
  x2_bool = x2_bool | x1_5_bool
  w = jnp.piecewise(x,
                    [x1_5_bool, x_5_bool],
                    [lambda x: 1.0 / x - 1.0,
                      lambda x: -x,
                      lambda x: x - 1.0])
  y = _spence_poly(w)
  y_flag_one = np.pi ** 2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y
  y = jnp.where(x_5_bool, y_flag_one, y)
  y_flag_two = -0.5 * jnp.log(x) ** 2 - y
  return jnp.where(x2_bool, y_flag_two, y)
def _spence(x: Array) -> Array:
  return jnp.piecewise(x,
                       [x < 0.0, x == 1.0, x == 0.0],
                       [np.nan, 0, np.pi ** 2 / 6, _spence_calc])
def spence(x: Array) -> Array:
  x = jnp.asarray(x)
  dtype = lax.dtype_of(x)
  if dtype not in (np.float32, np.float64):
    raise TypeError(
      f"x.dtype={dtype} is not supported, see docstring for supported types.")
  return _spence(x)


_dawsn.defjvps(
    lambda g, ans, x: g * (_lax_const(x, 1.) - _lax_const(x, 2.) * x * ans))

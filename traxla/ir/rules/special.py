"""Special functions, complex-number primitives and ``tile``: ``lgamma``, ``digamma``,
``erfc``, ``square``, ``real``, ``imag``, ``conj``, ``complex`` and ``tile``, typed as
JAX types them (``jax/_src/lax/lax.py`` and ``special.py``).

The elementwise ones are also entered in ``elementwise.P`` so that rules keyed by
name there (autodiff's ``square``) find them."""
from __future__ import annotations

import operator

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules import elementwise as _elementwise, indexing as _indexing
from traxla.ir.rules._util import FLOAT, broadcast_shapes, check_dtype, check_same_dtypes

COMPLEX_ELEM = ("float32", "float64")  # JAX's _complex_elem_types


def _complex_of(dtype):
    return np.dtype(np.complex128) if np.dtype(dtype) == np.float64 else np.dtype(np.complex64)


def _real_of(dtype):
    return np.dtype(np.float64) if np.dtype(dtype) == np.complex128 else np.dtype(np.float32)


def _check_complex_elem(name, dtype, position=None):
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        where = "" if position is None else f" at position {position}"
        raise TypeError(f"{name} does not accept dtype {dtype}{where}. Accepted dtypes{where} "
                        "are subtypes of float32, float64.")


def _same(name, categories):
    def rule(x):
        check_dtype(name, categories, x.dtype)
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return rule


def _real_imag(name):
    def rule(x):
        check_dtype(name, ("complexfloating",), x.dtype)
        return ShapedArray(x.shape, _real_of(x.dtype), x.weak_type)
    return rule


def _conj_rule(x, *, input_dtype):
    if not dtypes.is_complex(x.dtype):
        _check_complex_elem("conj", x.dtype)
    return ShapedArray(x.shape, _complex_of(x.dtype) if not dtypes.is_complex(x.dtype)
                       else x.dtype, x.weak_type)


def _complex_rule(x, y):
    _check_complex_elem("complex", x.dtype, 0)
    _check_complex_elem("complex", y.dtype, 1)
    check_same_dtypes("complex", (x, y))
    shape = broadcast_shapes("complex", (x.shape, y.shape))
    return ShapedArray(shape, _complex_of(x.dtype), x.weak_type and y.weak_type)


def _tile_rule(x, *, reps):
    if x.ndim != len(reps):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                        f"and x.ndim={x.ndim}.")
    return ShapedArray(tuple(d * operator.index(r) for d, r in zip(x.shape, reps)), x.dtype,
                       x.weak_type)


P: dict[str, Primitive] = {}
UNARY_SPECIAL = {"lgamma": FLOAT, "digamma": FLOAT, "erfc": FLOAT,
                 "square": ("integer", "floating", "complexfloating")}
for _name, _cats in UNARY_SPECIAL.items():
    P[_name] = def_typing(Primitive(_name), _same(_name, _cats))
for _name in ("real", "imag"):
    P[_name] = def_typing(Primitive(_name), _real_imag(_name))
P["conj"] = def_typing(Primitive("conj"), _conj_rule)
P["complex"] = def_typing(Primitive("complex"), _complex_rule)
P["tile"] = def_typing(Primitive("tile"), _tile_rule)
# JAX's scatter-sub (``x.at[i].subtract``), typed as the other scatters.
P["scatter-sub"] = def_typing(Primitive("scatter-sub"), _indexing._scatter_rule)
scatter_sub_p = P["scatter-sub"]

lgamma_p, digamma_p, erfc_p, square_p = P["lgamma"], P["digamma"], P["erfc"], P["square"]
real_p, imag_p, conj_p, complex_p, tile_p = P["real"], P["imag"], P["conj"], P["complex"], P["tile"]

for _name in ("lgamma", "digamma", "erfc", "square", "real", "imag", "conj", "complex"):
    _elementwise.P.setdefault(_name, P[_name])


# -- special functions of two or three float operands (JAX's ``standard_naryop([_float, ...])``)
# and the Bessel functions: same float dtype everywhere, lax's implicit broadcasting.

def _float_nary(name):
    def rule(*args):
        for i, a in enumerate(args):
            check_dtype(name, FLOAT, a.dtype, i)
        check_same_dtypes(name, args)
        shape = broadcast_shapes(name, [a.shape for a in args])
        return ShapedArray(shape, args[0].dtype, all(a.weak_type for a in args))
    return rule


NARY_SPECIAL = {"igamma": 2, "igammac": 2, "igamma_grad_a": 2, "polygamma": 2, "zeta": 2,
                "regularized_incomplete_beta": 3}
for _name in NARY_SPECIAL:
    P[_name] = def_typing(Primitive(_name), _float_nary(_name))
for _name in ("bessel_i0e", "bessel_i1e"):
    P[_name] = def_typing(Primitive(_name), _same(_name, FLOAT))
    _elementwise.P.setdefault(_name, P[_name])

igamma_p, igammac_p, igamma_grad_a_p = P["igamma"], P["igammac"], P["igamma_grad_a"]
polygamma_p, zeta_p = P["polygamma"], P["zeta"]
regularized_incomplete_beta_p = P["regularized_incomplete_beta"]
bessel_i0e_p, bessel_i1e_p = P["bessel_i0e"], P["bessel_i1e"]

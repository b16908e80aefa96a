"""``convolve`` and ``correlate`` (1-D, modes full/same/valid) as one-dimensional
``conv_general_dilated``, staged as JAX stages them (``jit`` of ``convolve`` around a
``jit`` of ``_conv``)."""
from __future__ import annotations

import builtins

from traxla import lax
from traxla.lax.convolution import conv_general_dilated
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes, promote_dtypes_inexact
from traxla.numpy._shape import flip
from traxla.numpy import conj


def _conv_impl(x, y, mode, op, precision, preferred_element_type=None):
    if len(lax.shape_of(x)) != 1 or len(lax.shape_of(y)) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    nx, ny = lax.shape_of(x)[0], lax.shape_of(y)[0]
    if nx == 0 or ny == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {lax.shape_of(x)} and "
                         f"{lax.shape_of(y)}.")
    out_order = builtins.slice(None)
    if op == "correlate":
        y = conj(y)
        if nx < ny:
            x, y = y, x
            out_order = builtins.slice(None, None, -1)
    elif op == "convolve":
        if nx < ny:
            x, y = y, x
        y = flip(y)
    n = lax.shape_of(y)[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(n // 2, n - n // 2 - 1)]
    elif mode == "full":
        padding = [(n - 1, n - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    result = conv_general_dilated(x[None, None, :], y[None, None, :], (1,), padding,
                                  precision=precision,
                                  preferred_element_type=preferred_element_type)
    return result[0, 0, out_order]


_conv = jit_named(_conv_impl, "_conv",
                  static_argnames=("mode", "op", "precision", "preferred_element_type"))


def _convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    a, v = ensure_arraylike("convolve", a, v)
    return _conv(a, v, mode=mode, op="convolve", precision=precision,
                 preferred_element_type=preferred_element_type)


def _correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    a, v = ensure_arraylike("correlate", a, v)
    return _conv(a, v, mode=mode, op="correlate", precision=precision,
                 preferred_element_type=preferred_element_type)


convolve = jit_named(_convolve, "convolve",
                     static_argnames=("mode", "precision", "preferred_element_type"))
correlate = jit_named(_correlate, "correlate",
                      static_argnames=("mode", "precision", "preferred_element_type"))
convolve.__doc__ = "Discrete linear convolution of two 1-D arrays (``numpy.convolve``)."
correlate.__doc__ = "Cross-correlation of two 1-D arrays (``numpy.correlate``)."

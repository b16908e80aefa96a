"""Convolutions (JAX's lax/convolution.py): ``conv_general_dilated`` and its wrappers,
dimension numbers and padding helpers."""
from __future__ import annotations

import enum
import math
import operator
import typing

import numpy as np

from traxla.ir import dtypes
from traxla.ir.rules.conv import (ConvDimensionNumbers, conv_general_dilated_p, conv_shape_tuple,
                             dilate_shape)
from traxla.lax import (add, _asarray as asarray, broadcast_in_dim, broadcasted_iota, eq, _convert_element_type, reshape,
               rev, shape_of, transpose)
from traxla.lax.precision import Precision, canonicalize_precision  # noqa: F401  (lax.Precision)
from traxla.lax import dot_general, _type_sharding
from traxla.ir.shape_poly import is_symbolic, max_dim
from traxla.ir.sharding import ShardingType
from traxla.sharding import NamedSharding, PartitionSpec

ConvGeneralDilatedDimensionNumbers = typing.Union[tuple[str, str, str], ConvDimensionNumbers, None]


# -- padding ----------------------------------------------------------------------------------

class PaddingType(enum.Enum):
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """'SAME' / 'SAME_LOWER' / 'VALID' as explicit (low, high) pairs per dimension."""
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError as err:
            raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.") from err
    if padding in (PaddingType.SAME, PaddingType.SAME_LOWER):
        pads = []
        for size, window, stride in zip(in_shape, window_shape, window_strides):
            size, window, stride = (d if is_symbolic(d) else int(d)
                                    for d in (size, window, stride))
            out = -((-size) // stride)
            total = max_dim((out - 1) * stride + window - size, 0)
            lo, hi = total // 2, total - total // 2
            pads.append((lo, hi) if padding is PaddingType.SAME else (hi, lo))
        return pads
    if padding is PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    raise TypeError(f"Unknown padding type: {padding}.")


# -- dimension numbers ------------------------------------------------------------------------

def conv_general_permutations(dimension_numbers):
    """The (lhs, rhs, out) permutations named by three layout strings such as
    ('NHWC', 'HWIO', 'NHWC')."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {dimension_numbers[i]}.")
    if not (set(lhs_spec) - set(charpairs[0]) == set(rhs_spec) - set(charpairs[1])
            == set(out_spec) - set(charpairs[2])):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(dimension_numbers)}.")

    def getperm(spec, charpair):
        spatial = [i for i, c in enumerate(spec) if c not in charpair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(charpair[0]), spec.index(charpair[1])) + tuple(spatial)

    return tuple(getperm(s, c) for s, c in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, three layout strings, or ConvDimensionNumbers) in the
    canonical ``ConvDimensionNumbers`` form."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                            f"{len(dimension_numbers)}.")
        if not all(isinstance(e, str) for e in dimension_numbers):
            raise TypeError("convolution dimension_numbers elements must be strings, got "
                            f"{tuple(map(type, dimension_numbers))}.")
        for i, e in enumerate(dimension_numbers):
            if len(e) != len(lhs_shape):
                raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to "
                                f"the ndim of lhs and rhs, got {len(e)} for lhs and rhs shapes "
                                f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
        return ConvDimensionNumbers(*conv_general_permutations(tuple(dimension_numbers)))
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers)}.")


# -- reshaping helpers of the transpose and batching rules -----------------------------------

def reshape_axis_into(src, dst, x):
    """Merges axis ``src`` into axis ``dst`` (numbered after ``src`` is removed), as the
    major part of the merged axis."""
    shape = shape_of(x)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [int(d) for i, d in enumerate(shape) if i != src]
    new_shape[dst] *= int(shape[src])
    return reshape(x, new_shape, perm)


def reshape_axis_out_of(src, size1, x):
    """Splits axis ``src`` into (size1, rest)."""
    shape = [int(d) for d in shape_of(x)]
    size2, ragged = divmod(shape[src], size1)
    assert not ragged
    shape[src:src + 1] = [size1, size2]
    return reshape(x, shape)


# -- the primitive's wrappers -------------------------------------------------------------------

def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-dimensional convolution with optional dilation (XLA's ConvGeneralDilated)."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    if out_sharding is not None:  # (a P: against the mesh of set_mesh, as JAX)
        out_sharding = _param_sharding(out_sharding, len(lhs_shape))
    if lhs_dilation is None:
        lhs_dilation = (1,) * (len(lhs_shape) - 2)
    elif isinstance(padding, str) and not len(lhs_dilation) == list(lhs_dilation).count(1):
        raise ValueError("String padding is not implemented for transposed convolution using "
                         "this op. Please either exactly specify the required padding or use "
                         "conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * (len(rhs_shape) - 2)
    if isinstance(padding, str):
        rhs_spatial = [rhs_shape[i] for i in dnums.rhs_spec][2:]
        effective = dilate_shape(rhs_spatial, rhs_dilation)
        padding = padtype_to_pads([lhs_shape[i] for i in dnums.lhs_spec][2:], effective,
                                  window_strides, padding)
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError("padding argument to conv_general_dilated should be a string or a "
                             f"sequence of (low, high) pairs, got {padding}") from e
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize(dtypes.to_dtype(preferred_element_type))
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(int(s) for s in window_strides),
        padding=tuple(tuple(p if is_symbolic(p) else int(p) for p in pair)
                      for pair in padding),
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation), dimension_numbers=dnums,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def _param_sharding(out_sharding, ndim):
    """``out_sharding`` as the primitive's param: the sharding type with the spec as long
    as it was written (JAX prints ``P('X',)`` as given; the rule pads it to the rank)."""
    if isinstance(out_sharding, NamedSharding):
        mesh = out_sharding.mesh
        if getattr(mesh, "abstract_mesh", mesh).empty:
            return None
    elif not isinstance(out_sharding, (PartitionSpec, ShardingType)):
        # (JAX's canonicalize_sharding, which conv calls with dot_general's name)
        raise TypeError("`out_sharding` argument of dot_general only supports instances of "
                        f"`NamedSharding` or `PartitionSpec`. Got {out_sharding} of type: "
                        f"{type(out_sharding)}")
    typed = _type_sharding(out_sharding, ndim)
    given = getattr(out_sharding, "spec", out_sharding)
    if typed is None or not isinstance(given, tuple) or len(given) >= ndim:
        return typed
    spec = tuple(typed.spec)
    if any(p is not None for p in spec[len(given):]):
        return typed
    return typed.with_spec(spec[:len(given)])


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with NCHW/OIHW layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with NCHW/OIHW layouts."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a = pads[0]
        pad_len = sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """A fractionally strided convolution (the gradient-shaped "deconvolution")."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    assert len(lhs_shape) == len(rhs_shape) and len(lhs_shape) >= 2
    ndims = len(lhs_shape)
    one = (1,) * (ndims - 2)
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if ndims not in defaults:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = defaults[ndims]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    k_sdims = np.take(rhs_shape, dn.rhs_spec)[2:]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndims - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
        effective = [0 if k == 0 else 1 + r * (k - 1) for k, r in zip(k_sdims, rhs_dilation)]
        replicated = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = tuple(_conv_transpose_padding(int(k), int(s), p)
                     for k, s, p in zip(effective, strides, replicated))
    else:
        pads = padding
    if transpose_kernel:
        for axis in dn.rhs_spec[2:]:  # one flip per axis, as np.flip on each
            rhs = rev(rhs, (int(axis),))
        perm = list(range(ndims))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, one, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with ``filter_shape`` would see, stacked along the output
    feature dimension (channel-major: ``c * prod(filter_shape) + spatial index``)."""
    lhs = asarray(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    lhs_shape = shape_of(lhs)
    dn = conv_dimension_numbers(lhs_shape, (1, 1) + filter_shape, dimension_numbers)
    spatial_size = math.prod(filter_shape)
    n_channels = lhs_shape[dn.lhs_spec[1]]
    dtype = lhs.dtype if hasattr(lhs, "dtype") else dtypes.to_dtype(lhs)
    size = (spatial_size, spatial_size)
    eye = _convert_element_type(eq(add(broadcasted_iota(np.int32, size, 0), np.int32(0)),
                                   broadcasted_iota(np.int32, size, 1)), dtype, False)
    rhs = broadcast_in_dim(eye, (n_channels, spatial_size, spatial_size), (1, 2))
    rhs = reshape(rhs, (n_channels * spatial_size, 1) + filter_shape)
    perm = [d for d in range(len(lhs_shape)) if d not in (0, 1)]
    order = sorted([(dn.rhs_spec[0], 0), (dn.rhs_spec[1], 1)])
    for dst, src in order:
        perm.insert(dst, src)
    if (dn.rhs_spec[0], dn.rhs_spec[1]) != (0, 1):
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=n_channels, preferred_element_type=preferred_element_type)


# -- shape helpers ------------------------------------------------------------------------------

def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_trans, rhs_trans = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = padtype_to_pads(lhs_trans[2:], rhs_trans[2:], window_strides, padding)
    out_trans = conv_shape_tuple(lhs_trans, rhs_trans, window_strides, padding)
    return tuple(int(d) for d in np.take(out_trans, np.argsort(out_perm)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_trans, rhs_trans = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(int(k), int(s), padding)
                   for k, s in zip(rhs_trans[2:], window_strides)]
    padding = [int(np.sum(p)) for p in padding]
    unpad = [(i - 1) * s - k + 2 for i, k, s in zip(lhs_trans[2:], rhs_trans[2:], window_strides)]
    out_space = [int(u + p) for u, p in zip(unpad, padding)]
    out_trans = (int(lhs_trans[0]), int(rhs_trans[0])) + tuple(out_space)
    return tuple(int(d) for d in np.take(out_trans, np.argsort(out_perm)))


def _conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    return conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """An unshared ("locally connected") convolution: every output position has its own
    filter, ``rhs`` holding (input features x filter size, output features) per position
    at ``rhs``'s spatial dimensions (the patches of ``conv_general_dilated_patches``
    contracted position by position)."""
    lhs = asarray(lhs)
    c_precision = canonicalize_precision(precision)
    lhs_precision = c_precision[0] if isinstance(c_precision, tuple) else None
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers, precision=lhs_precision)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        shape_of(lhs), (1, 1) + tuple(filter_shape), dimension_numbers)
    lhs_c_dims, rhs_c_dims = [out_spec[1]], [rhs_spec[1]]
    lhs_b_dims = out_spec[2:]
    rhs_b_dims = rhs_spec[2:]
    rhs_b_dims = [rhs_b_dims[i] for i in sorted(range(len(rhs_b_dims)),
                                                key=lambda k: lhs_b_dims[k])]
    lhs_b_dims = sorted(lhs_b_dims)
    out = dot_general(patches, rhs, ((lhs_c_dims, rhs_c_dims), (lhs_b_dims, rhs_b_dims)),
                      precision=precision)
    ndim = len(shape_of(out))
    src, dst = (ndim - 2, ndim - 1), (out_spec[0], out_spec[1])
    if src != dst:
        perm = [i for i in range(ndim) if i not in src]
        for d, s in sorted(zip(dst, src)):
            perm.insert(d, s)
        out = transpose(out, tuple(perm))
    return out

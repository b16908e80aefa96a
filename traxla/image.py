"""``traxla.image``: image resampling (``resize``, ``scale_and_translate``) as
``jax.image`` computes it: each spatial dimension is contracted with a dense weight matrix
built from the resampling kernel (nearest neighbour is a gather)."""
from __future__ import annotations

import enum
import math
import operator

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.numpy._promotion import promote_dtypes_inexact
from traxla.tracer import Tracer


def _fill_lanczos_kernel(radius, x):
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    out = jnp.where(x > 0.001, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return jnp.where(x > radius, 0.0, out)


def _fill_keys_cubic_kernel(x):
    out = (1.5 * x - 2.5) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _fill_opencv_cubic_kernel(x):
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _fill_triangle_kernel(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


_area_kernel = object()


def compute_weight_mat(input_size, output_size, scale, translation, kernel, antialias,
                       edge_padding, radius):
    """The (input_size, output_size) resampling matrix of one dimension."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
                - translation * inv_scale - 0.5)
    if edge_padding:
        if antialias:
            if isinstance(scale, Tracer):
                raise TypeError("Antialiasing with edge padding requires a static scale.")
            k = math.ceil(radius * max(1.0 / float(np.asarray(scale)), 1.0))
        else:
            k = radius
    else:
        k = 0
    expanded = jnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is _area_kernel:
        left_i = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right_i = left_i + inv_scale
        left_j = jnp.arange(input_size, dtype=dtype)
        right_j = left_j + 1.0
        weights = jnp.maximum(0.0, jnp.minimum(right_i[None, :], right_j[:, None])
                              - jnp.maximum(left_i[None, :], left_j[:, None]))
    else:
        x = jnp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale
        weights = kernel(x)
    eps = 1000.0 * float(np.finfo(np.float32).eps)
    if edge_padding:
        clamped = jnp.clip(expanded.astype(jnp.int32), 0, input_size - 1)
        out_idx = lax.broadcast_in_dim(jnp.arange(output_size), (lax.shape_of(expanded)[0],
                                                                   output_size), (1,))
        weight_mat = jnp.zeros((input_size, output_size), dtype=dtype)
        weight_mat = weight_mat.at[clamped[:, None], out_idx].add(weights)
        total = jnp.sum(weight_mat, axis=0, keepdims=True)
        return jnp.where(jnp.abs(total) > eps,
                         jnp.divide(weight_mat, jnp.where(total != 0, total, 1)), 0)
    total = jnp.sum(weights, axis=0, keepdims=True)
    weights = jnp.where(jnp.abs(total) > eps, jnp.divide(weights, jnp.where(total != 0, total, 1)),
                        0)
    inside = jnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(x, output_shape, spatial_dims, scale, translation, kernel, antialias,
                         precision, edge_padding=False, radius=None):
    input_shape = lax.shape_of(x)
    ndim = len(input_shape)
    assert len(input_shape) == len(output_shape)
    assert len(spatial_dims) == len(scale) == len(translation)
    if len(spatial_dims) == 0:
        return x
    contractions = []
    in_indices = list(range(len(output_shape)))
    out_indices = list(range(len(output_shape)))
    for i, d in enumerate(spatial_dims):
        d = operator.index(d) % ndim
        w = compute_weight_mat(input_shape[d], output_shape[d], scale[i], translation[i], kernel,
                               antialias, edge_padding=edge_padding, radius=radius)
        contractions.append(w.astype(lax.dtype_of(x)))
        contractions.append([d, len(output_shape) + i])
        out_indices[d] = len(output_shape) + i
    contractions.append(out_indices)
    # one einsum over every resampled dimension, as jax.image stages it
    return jnp.einsum(x, in_indices, *contractions, precision=precision)


class ResizeMethod(enum.Enum):
    """Resampling methods of ``resize`` and ``scale_and_translate``."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
                 "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
                 "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
                 "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
                 "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return ResizeMethod[names[s]]


_kernels = {
    ResizeMethod.LINEAR: (1, _fill_triangle_kernel),
    ResizeMethod.LANCZOS3: (3, lambda x: _fill_lanczos_kernel(3.0, x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _fill_lanczos_kernel(5.0, x)),
    ResizeMethod.CUBIC: (2, _fill_keys_cubic_kernel),
    ResizeMethod.CUBIC_PYTORCH: (2, _fill_opencv_cubic_kernel),
    ResizeMethod.AREA: (1, _area_kernel),
}


def _canonical_shape(shape):
    return tuple(operator.index(d) for d in shape)


def _checked_method(image, shape, method):
    """``method`` as a ``ResizeMethod``, once ``shape`` is known to give every dimension of
    ``image`` a size."""
    if len(shape) != len(lax.shape_of(image)):
        raise ValueError("shape must have length equal to the number of dimensions of x;  "
                         f"{shape} vs {lax.shape_of(image)}")
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True,
                        precision=lax.Precision.HIGHEST):
    """Resamples ``image`` to ``shape``: output sample ``o`` of dimension ``d`` reads input
    position ``(o + 0.5 - translation) / scale - 0.5`` through the method's kernel."""
    shape = _canonical_shape(shape)
    method = _checked_method(image, shape, method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _kernels[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    image, = promote_dtypes_inexact(jnp.asarray(image))
    scale, translation = promote_dtypes_inexact(jnp.asarray(scale), jnp.asarray(translation))
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, kernel,
                                antialias, precision, edge_padding=edge_padding, radius=radius)


def _resize_nearest(x, output_shape):
    input_shape = lax.shape_of(x)
    for d in (i for i in range(len(input_shape)) if input_shape[i] != output_shape[i]):
        m, n = input_shape[d], output_shape[d]
        offsets = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
        offsets = jnp.floor(offsets.astype(np.float32)).astype(np.int32)
        indices = [slice(None)] * len(input_shape)
        indices[d] = offsets
        x = x[tuple(indices)]
    return x


def _resize_impl(image, shape, method, antialias, precision):
    image = jnp.asarray(image)
    method = _checked_method(image, shape, method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image, = promote_dtypes_inexact(image)
    in_shape = lax.shape_of(image)
    spatial_dims = tuple(i for i in range(len(shape)) if in_shape[i] != shape[i])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _kernels[method]
    scale = [1.0 if shape[d] == 0 else shape[d] / in_shape[d] for d in spatial_dims]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    return _scale_and_translate(image, shape, spatial_dims, scale, [0.0] * len(spatial_dims),
                                kernel, antialias, precision, edge_padding=edge_padding,
                                radius=radius)


_resize_impl.__name__ = "_resize"
_resize = jit(_resize_impl, static_argnums=(1, 2, 3, 4))


def resize(image, shape, method, antialias=True, precision=lax.Precision.HIGHEST):
    """Resizes ``image`` to ``shape`` with ``method`` ('nearest', 'linear', 'cubic',
    'lanczos3', 'lanczos5', 'cubic-pytorch', 'area'); ``antialias`` widens the kernel when
    downsampling."""
    return _resize(image, _canonical_shape(shape), method, antialias, precision)

"""Calling a native kernel from traxla through XLA's FFI: RMS normalisation written in C++
(examples/ffi/kernels/rms_norm.cc), built by the project's CMakeLists.txt, registered at run
time, and used under jit, vmap and grad (through custom_vjp).

    cmake -S . -B build && cmake --build build
    python examples/ffi/rms_norm.py build

The same file runs under JAX by changing the two traxla imports to jax.
"""
from __future__ import annotations

import ctypes
import functools
import os
import sys

import numpy as np

import traxla as jax
import traxla.numpy as jnp

TARGETS = {"rms_norm": "RmsNorm", "rms_norm_fwd": "RmsNormFwd", "rms_norm_bwd": "RmsNormBwd"}


def register_kernels(build_dir: str) -> None:
    lib = ctypes.cdll.LoadLibrary(os.path.join(build_dir, "libtraxla_ffi_examples.so"))
    for name, symbol in TARGETS.items():
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(lib, symbol)), platform="cpu")


def rms_norm(x, eps=1e-5):
    # vmap_method="broadcast_all": the kernel treats leading axes as rows, so a batch is one call
    return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype),
                            vmap_method="broadcast_all")(x, eps=np.float32(eps))


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def rms_norm_differentiable(x, eps=1e-5):
    return rms_norm(x, eps)


def _fwd(x, eps):
    y, scale = jax.ffi.ffi_call(
        "rms_norm_fwd",
        (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)),
        vmap_method="broadcast_all")(x, eps=np.float32(eps))
    return y, (scale, x)


def _bwd(eps, residuals, ct):
    scale, x = residuals
    return (jax.ffi.ffi_call("rms_norm_bwd", jax.ShapeDtypeStruct(x.shape, x.dtype),
                             vmap_method="broadcast_all")(scale, x, ct),)


rms_norm_differentiable.defvjp(_fwd, _bwd)


def reference(x, eps=1e-5):
    return x / jnp.sqrt(jnp.mean(x ** 2, axis=-1, keepdims=True) + eps)


def main(build_dir: str) -> dict:
    register_kernels(build_dir)
    x = jnp.asarray(np.random.RandomState(0).randn(4, 8).astype(np.float32))
    loss = lambda f: (lambda x: jnp.sum(f(x) * jnp.arange(8.0)))
    results = {
        "jit": float(jnp.max(jnp.abs(jax.jit(rms_norm)(x) - reference(x)))),
        "vmap": float(jnp.max(jnp.abs(jax.vmap(rms_norm)(x) - reference(x)))),
        "grad": float(jnp.max(jnp.abs(jax.jit(jax.grad(loss(rms_norm_differentiable)))(x)
                                      - jax.grad(loss(reference))(x)))),
    }
    for name, err in results.items():
        print(f"{name:5s} max |native - reference| = {err:.2e}")
    return results


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build")

"""traxla.export vs jax.export on one MLP (a few seconds): export, serialize, deserialize
and first-call times, artifact sizes, and the cross-library round trips' agreement.

    python benchmarks/export_roundtrip.py
"""
import time

import numpy as np


def _ms(fn, n=5):
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best * 1e3


def main():
    import jax
    import jax.numpy as jnp
    import traxla
    import traxla.numpy as tnp
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((64, 128)).astype(np.float32), np.zeros(128, np.float32)),
              (rng.standard_normal((128, 10)).astype(np.float32), np.zeros(10, np.float32))]
    x = rng.standard_normal((32, 64)).astype(np.float32)

    def mlp(np_mod):
        def f(params, x):
            for w, b in params[:-1]:
                x = np_mod.tanh(x @ w + b)
            w, b = params[-1]
            return x @ w + b
        return f

    # both backends started (and a trivial program run) before any timing
    np.asarray(jax.jit(lambda v: v + 1)(np.ones(2, np.float32)))
    np.asarray(traxla.jit(lambda v: v + 1)(np.ones(2, np.float32)))
    rows = []
    for name, lib, export_mod, np_mod in (("traxla", traxla, traxla.export, tnp),
                                          ("jax", jax, jax.export, jnp)):
        jitted = lib.jit(mlp(np_mod))
        exp, t_export = _ms(lambda: export_mod.export(jitted)(params, x))
        blob, t_ser = _ms(lambda: exp.serialize())
        back, t_de = _ms(lambda: export_mod.deserialize(blob))
        t = time.perf_counter()
        np.asarray(back.call(params, x))
        t_call = (time.perf_counter() - t) * 1e3
        rows.append((name, t_export, t_ser, t_de, t_call, len(blob),
                     len(exp.mlir_module_serialized), blob))
    print(f"{'':8s}{'export':>10s}{'serialize':>11s}{'deserialize':>13s}{'1st call':>10s}"
          f"{'bytes':>8s}{'module':>8s}")
    for name, *vals, blob in rows:
        print(f"{name:8s}{vals[0]:8.2f}ms{vals[1]:9.2f}ms{vals[2]:11.2f}ms{vals[3]:8.1f}ms"
              f"{vals[4]:8d}{vals[5]:8d}")
    want = mlp(np)(params, x)
    t_in_jax = np.asarray(jax.export.deserialize(rows[0][-1]).call(params, x))
    j_in_t = np.asarray(traxla.export.deserialize(rows[1][-1]).call(params, x))
    print(f"traxla bytes run by JAX: max |err| {np.abs(t_in_jax - want).max():.2e}; "
          f"JAX bytes run by traxla: max |err| {np.abs(j_in_t - want).max():.2e}")


if __name__ == "__main__":
    main()

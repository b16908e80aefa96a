"""traxla builds on jaxlib alone: importing it and running a jit never imports jax."""
import subprocess
import sys
import textwrap


def test_traxla_never_imports_jax():
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import traxla, traxla.numpy as jnp
        from traxla import lax
        f = traxla.jit(lambda x, w: jnp.tanh(x @ w).sum())
        out = f(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
        assert abs(float(out) - 8 * np.tanh(3.0)) < 1e-5
        x = jnp.arange(4.0).astype(jnp.bfloat16)          # bf16 readback path
        print(np.asarray(x * 2), traxla.make_jaxpr(lambda y: lax.exp(y))(1.0))
        traxla.jit(lambda y: y + 1.0).lower(np.ones(3, np.float32)).compile().as_text()
        from traxla.experimental import pallas as pl          # a Mosaic kernel, for the TPU
        def k(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0
        call = lambda x: pl.pallas_call(k, out_shape=traxla.ShapeDtypeStruct(x.shape, x.dtype))(x)
        traxla.export.export(traxla.jit(call), platforms=("tpu",))(np.ones((8, 128), np.float32))
        assert 'jax' not in sys.modules, sorted(m for m in sys.modules if m.startswith('jax'))
        print("OK")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("OK")

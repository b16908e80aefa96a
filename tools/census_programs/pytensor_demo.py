"""pytensor (jax extra) quick start: a graph compiled with mode="JAX", its gradient, a scan."""
import numpy as np
import pytensor
import pytensor.tensor as pt
from _out import emit

x = pt.vector("x")
w = pt.matrix("w")
y = pt.tanh(w @ x).sum() + (x ** 2).sum()
g = pytensor.grad(y, x)
f = pytensor.function([x, w], [y, g], mode="JAX")
res = f(np.arange(3.0, dtype=pytensor.config.floatX),
        np.ones((2, 3), dtype=pytensor.config.floatX) * 0.1)
emit({"y": res[0], "g": res[1]}, tol=1e-5)

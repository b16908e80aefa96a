"""lineax quick start: solve Ax=b with LU, a least-squares QR, CG on a PSD operator."""
import jax
import jax.numpy as jnp
import lineax as lx
from _out import emit

A = jax.random.normal(jax.random.PRNGKey(0), (4, 4)) + 4 * jnp.eye(4)
b = jnp.arange(4.0)
op = lx.MatrixLinearOperator(A)
x = lx.linear_solve(op, b).value
x_qr = lx.linear_solve(lx.MatrixLinearOperator(A[:, :3]), b, solver=lx.QR()).value
S = A @ A.T
x_cg = lx.linear_solve(lx.MatrixLinearOperator(S, lx.positive_semidefinite_tag), b,
                       solver=lx.CG(rtol=1e-6, atol=1e-6)).value
emit({"lu": x, "qr": x_qr, "cg": x_cg}, tol=1e-3)

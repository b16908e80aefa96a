"""diffrax quick start: dy/dt = -y with Tsit5 + a PID controller, saved at points; an SDE."""
import diffrax
import jax
import jax.numpy as jnp
from _out import emit

term = diffrax.ODETerm(lambda t, y, args: -args * y)
sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0, t1=3, dt0=0.1, y0=jnp.array([1.0, 2.0]),
                          args=0.5, saveat=diffrax.SaveAt(ts=jnp.linspace(0, 3, 4)),
                          stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5))
bm = diffrax.VirtualBrownianTree(0.0, 1.0, tol=1e-3, shape=(), key=jax.random.PRNGKey(0))
sde = diffrax.MultiTerm(diffrax.ODETerm(lambda t, y, a: -y),
                        diffrax.ControlTerm(lambda t, y, a: 0.1, bm))
sol2 = diffrax.diffeqsolve(sde, diffrax.Euler(), 0.0, 1.0, 0.05, 1.0)
emit({"ys": sol.ys, "steps": int(sol.stats["num_steps"]), "sde": sol2.ys}, tol=1e-4)

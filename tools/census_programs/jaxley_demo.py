"""jaxley quick start: a Hodgkin-Huxley compartment with a step current, integrated."""
import jax.numpy as jnp
import jaxley as jx
from jaxley.channels import HH
from _out import emit

comp = jx.Compartment()
comp.insert(HH())
comp.record("v")
current = jx.step_current(i_delay=1.0, i_dur=2.0, i_amp=0.1, delta_t=0.025, t_max=5.0)
comp.stimulate(current)
v = jx.integrate(comp, delta_t=0.025)
emit({"v": v[0, ::20], "max": v.max()}, tol=1e-3)

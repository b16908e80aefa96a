"""jax-md quick start: Lennard-Jones energy in a periodic box, FIRE minimisation, NVE steps."""
import jax
import jax.numpy as jnp
from jax_md import energy, minimize, quantity, simulate, space
from _out import emit

box = 6.0
displacement, shift = space.periodic(box)
R = jnp.array([[1.0, 1.0], [2.2, 1.1], [1.1, 2.3], [3.5, 3.5], [4.6, 3.4], [3.4, 4.7]])
energy_fn = energy.lennard_jones_pair(displacement)
e0 = energy_fn(R)
init, apply = minimize.fire_descent(energy_fn, shift, dt_start=1e-3)
st = init(R)
for _ in range(50):
    st = jax.jit(apply)(st)
init_nve, step_nve = simulate.nve(energy_fn, shift, 1e-3)
s2 = init_nve(jax.random.PRNGKey(0), st.position, kT=0.1)
step_nve = jax.jit(step_nve)
for _ in range(20):
    s2 = step_nve(s2)
emit({"e0": e0, "e_min": energy_fn(st.position),
      "ke": quantity.kinetic_energy(momentum=s2.momentum, mass=s2.mass),
      "pos": s2.position[:2], "forces": quantity.force(energy_fn)(R)[:2]}, tol=1e-3)

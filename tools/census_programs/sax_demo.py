"""sax quick start: an MZI circuit from two couplers and two waveguides, its S-parameters."""
import jax.numpy as jnp
import sax
from _out import emit

mzi, _ = sax.circuit(
    netlist={
        "instances": {"lft": "coupler", "top": "straight", "btm": "straight", "rgt": "coupler"},
        "connections": {"lft,out0": "btm,in0", "btm,out0": "rgt,in0",
                        "lft,out1": "top,in0", "top,out0": "rgt,in1"},
        "ports": {"in0": "lft,in0", "in1": "lft,in1", "out0": "rgt,out0", "out1": "rgt,out1"},
    },
    models={"coupler": sax.models.coupler_ideal, "straight": sax.models.straight},
)
wl = jnp.linspace(1.51, 1.59, 5)
s = mzi(wl=wl, top={"length": 25.0}, btm={"length": 15.0})
emit({"t": jnp.abs(s["in0", "out0"]) ** 2, "c": jnp.abs(s["in0", "out1"]) ** 2}, tol=1e-4)

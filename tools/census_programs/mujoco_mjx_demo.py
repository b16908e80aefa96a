"""mujoco-mjx quick start: put a pendulum model on device, step it under jit."""
import jax
import jax.numpy as jnp
import mujoco
from mujoco import mjx
from _out import emit

XML = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body pos="0 0 1">
      <joint type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""
m = mujoco.MjModel.from_xml_string(XML)
mx = mjx.put_model(m)
d = mjx.make_data(mx)
d = d.replace(qpos=jnp.array([0.3]))
step = jax.jit(mjx.step)
qs = []
for _ in range(20):
    d = step(mx, d)
    qs.append(d.qpos[0])
emit({"qpos": qs[::4], "qvel": d.qvel, "time": d.time}, tol=1e-4)

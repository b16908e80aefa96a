"""orbax-checkpoint quick start: save a pytree of arrays with a CheckpointManager, restore it."""
import os
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
from _out import emit

tree = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(3, jnp.int32), "n": jnp.float32(2.5)}
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "ckpt")
    ckptr = ocp.StandardCheckpointer()
    ckptr.save(path, tree)
    ckptr.wait_until_finished()
    restored = ckptr.restore(path, jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct,
                                                          tree))
    with ocp.CheckpointManager(os.path.join(d, "mgr"),
                               options=ocp.CheckpointManagerOptions(max_to_keep=2)) as mngr:
        for step in range(3):
            mngr.save(step, args=ocp.args.StandardSave({"x": tree["w"] * step}))
        mngr.wait_until_finished()
        steps = sorted(mngr.all_steps())
        last = mngr.restore(mngr.latest_step(),
                            args=ocp.args.StandardRestore({"x": tree["w"]}))
emit({"w": restored["w"], "b": restored["b"], "n": restored["n"], "steps": steps,
      "last": last["x"], "types": [type(restored["w"]).__name__ in ("ArrayImpl", "Array")]})

"""Run by tests/test_lax_collectives_extra.py as ``python this.py jax|traxla`` on 8 CPU
devices: prints the results of all_to_all, pswapaxes, pshuffle and axis_size as JSON."""
import sys, json
import numpy as np
if sys.argv[1] == 'jax':
    import jax as ns, jax.numpy as jnp
else:
    import traxla as ns, traxla.numpy as jnp
from functools import partial
ns.config.update('jax_num_cpu_devices' if sys.argv[1] == 'jax' else 'num_cpu_devices', 8)
lax = ns.lax
P = ns.sharding.PartitionSpec
m = ns.make_mesh((4, 2), ('x', 'y'), axis_types=(ns.sharding.AxisType.Auto,) * 2)
res = {}
x = np.arange(4 * 8 * 6, dtype=np.float32).reshape(4 * 4, 2 * 6)  # blocks (4, 6) per device
def body(a):  # a: (4, 6)
    b = lax.all_to_all(a, 'x', 0, 0, tiled=True)
    c = lax.pswapaxes(a, 'x', 0)
    d = lax.all_to_all(a, 'x', 0, 1)
    e = lax.pshuffle(a, 'x', [1, 2, 3, 0])
    n = lax.axis_size('x') + lax.axis_size(('x', 'y'))
    return b, c, d, e * n
f = ns.shard_map(body, mesh=m, in_specs=P('x', 'y'), out_specs=(P('x', 'y'), P('x', 'y'), P('x', 'y'), P('x', 'y')))
outs = ns.jit(f)(x)
res['vals'] = [np.asarray(o).tolist() for o in outs]
res['jaxpr'] = str(ns.make_jaxpr(f)(x))
def gbody(a):
    return ns.grad(lambda z: jnp.sum(jnp.sin(lax.pswapaxes(z, 'x', 0) * jnp.arange(4.0)[:, None])))(a)
g = ns.jit(ns.shard_map(gbody, mesh=m, in_specs=P('x', 'y'), out_specs=P('x', 'y')))(x)
res['grad'] = np.asarray(g).tolist()
try:
    ns.shard_map(lambda a: lax.all_to_all(a, 'x', 1, 0), mesh=m, in_specs=P('x', 'y'), out_specs=P('x','y'))(x)
except Exception as e:
    res['err'] = f"{type(e).__name__}: {e}"
try: lax.pshuffle(x, 'x', [0, 0])
except Exception as e: res['perm'] = str(e)
s = ns.sharding.NamedSharding(m, P('x', 'y'))
w = ns.jit(lambda a: lax.with_sharding_constraint(a * 2, s) + 1)
res['wsc_jaxpr'] = str(ns.make_jaxpr(w)(x))
res['wsc'] = np.asarray(w(x)).tolist()
res['wsc_grad'] = np.asarray(ns.grad(lambda a: jnp.sum(lax.with_sharding_constraint(a * a, s)))(x)).tolist()
res['wsc_text'] = 'sdy.sharding_constraint' in w.lower(x).as_text()
print(json.dumps(res))

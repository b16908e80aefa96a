"""jraph quick start: a GraphsTuple, batch/unbatch, a GraphNetwork and a GCN layer."""
import jax
import jax.numpy as jnp
import jraph
from _out import emit

g = jraph.GraphsTuple(nodes=jnp.arange(8.0).reshape(4, 2), edges=jnp.ones((3, 1)),
                      senders=jnp.array([0, 1, 2]), receivers=jnp.array([1, 2, 3]),
                      n_node=jnp.array([4]), n_edge=jnp.array([3]), globals=jnp.zeros((1, 1)))
b = jraph.batch([g, g])
net = jraph.GraphNetwork(update_edge_fn=lambda e, s, r, gl: e + s.sum(-1, keepdims=True),
                         update_node_fn=lambda n, s, r, gl: n * 2 + r.sum(-1, keepdims=True),
                         update_global_fn=lambda n, e, gl: n.sum(-1, keepdims=True))
out = jax.jit(net)(b)
gcn = jraph.GraphConvolution(update_node_fn=lambda n: n * 0.5, add_self_edges=True)(g)
padded = jraph.pad_with_graphs(g, n_node=6, n_edge=5)
emit({"nodes": out.nodes, "edges": out.edges, "globals": out.globals, "gcn": gcn.nodes,
      "pad": padded.n_node, "unb": len(jraph.unbatch(b)),
      "seg": jraph.segment_mean(jnp.arange(4.0), jnp.array([0, 0, 1, 1]), 2)})

"""Run by tests/test_pmap.py as ``python this.py jax|traxla`` on 8 CPU devices: prints, as
JSON, each pmap case's results (values, dtypes, shapes, the mesh and mapped dims of their
shardings), printed jaxpr and error."""
import json
import sys

import numpy as np

if sys.argv[1] == "jax":
    import jax as ns
    ns.config.update("jax_num_cpu_devices", 8)
else:
    import traxla as ns
    ns.config.update("num_cpu_devices", 8)
lax, jnp = ns.lax, ns.numpy

X = np.arange(4.0, dtype=np.float32)
M = np.arange(12.0, dtype=np.float32).reshape(3, 4)
RING = [(0, 1), (1, 2), (2, 3), (3, 0)]


def describe(leaf):
    sharding = getattr(leaf, "sharding", None)
    spec = None
    if sharding is not None and hasattr(sharding, "spec"):
        spec = [list(s) if isinstance(s, tuple) else s for s in sharding.spec]
        spec = [str(sharding.mesh), spec]
    return {"value": np.asarray(leaf).tolist(), "dtype": str(np.asarray(leaf).dtype),
            "shape": list(np.shape(leaf)), "sharding": spec,
            "array": type(leaf).__name__ in ("ArrayImpl", "Array")}


def run(fn, *args, jaxpr=True, **kwargs):
    out = {}
    try:
        result = fn(*args, **kwargs)
        out["leaves"] = [describe(leaf) for leaf in ns.tree_util.tree_leaves(result)]
    except Exception as e:  # noqa: BLE001 - the error is the result
        out["error"] = [type(e).__name__, str(e).split("\n")[0]]
    if jaxpr and "error" not in out:
        out["jaxpr"] = str(ns.make_jaxpr(fn)(*args, **kwargs))
    return out


pmap = ns.pmap


def vmap_name_inside_shard_map():
    # one psum over a mesh axis and a vmapped axis together (positional + named axes)
    mesh = ns.sharding.Mesh(np.array(ns.devices()[:2]), ("x",))
    body = ns.vmap(lambda r: lax.psum(r, ("x", "v")) + lax.axis_index("v") * 100
                   + lax.axis_index("x") * 1000, axis_name="v")
    spec = ns.sharding.PartitionSpec("x")
    return run(ns.jit(ns.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec,
                                   check_vma=False)), np.arange(8.0, dtype=np.float32),
               jaxpr=False)


def shard_map_derivatives():
    # pmap's derivatives are shard_map's: here on a 4x2 mesh, JAX's default check_vma=True,
    # an input replicated over 'i' and an output summed over it
    P = ns.sharding.PartitionSpec
    mesh = ns.sharding.Mesh(np.array(ns.devices()[:8]).reshape(4, 2), ("i", "j"))
    x = np.arange(16.0, dtype=np.float32).reshape(8, 2) / 10
    w = np.array([1.5, -0.5], np.float32)

    def body(a, w):
        h = jnp.tanh(a * w)
        return h, lax.psum(jnp.sum(h ** 2, 0), "i")
    f = ns.shard_map(body, mesh=mesh, in_specs=(P("i", "j"), P("j")),
                     out_specs=(P("i", "j"), P("j")))

    def loss(x, w):
        h, s = f(x, w)
        return jnp.sum(jnp.sin(h)) + jnp.sum(s * jnp.arange(2.0))
    g = ns.shard_map(lambda w: w * 3.0, mesh=mesh, in_specs=P(), out_specs=P())
    outs = [ns.jit(ns.grad(loss, argnums=(0, 1)))(x, w),
            ns.grad(lambda w: jnp.sum(g(w) ** 2))(w),
            ns.jvp(lambda x: f(x, w), (x,), (np.ones_like(x),))[1]]
    return [np.round(np.asarray(leaf), 5).tolist() for leaf in ns.tree_util.tree_leaves(outs)]


def traces_once_per_static_value():
    calls = []

    def g(a, n):
        calls.append(n)
        return a * n
    pg = pmap(g, static_broadcasted_argnums=1, in_axes=(0, None))
    out = [np.asarray(pg(X, 2)).tolist(), np.asarray(pg(X, 2)).tolist(),
           np.asarray(pg(X, 3)).tolist()]
    return {"out": out, "traces": calls}


cases = {
    "psum_named": lambda: run(pmap(lambda x: x / lax.psum(x, "i"), axis_name="i"), X),
    "no_axis_name": lambda: run(pmap(lambda x: x * 2), X),
    "in_axes_none": lambda: run(pmap(lambda x, y: (x + y, y * 2.0), in_axes=(0, None)),
                                X[:2], 4.0),
    "in_axes_1": lambda: run(pmap(lambda x: x.sum(0), in_axes=1), M),
    "out_axes_1": lambda: run(pmap(lambda x: x * 2, out_axes=1), M.T),
    "out_axes_none": lambda: run(pmap(lambda x: lax.psum(x, "i"), axis_name="i",
                                      out_axes=None), X),
    "nested_axes": lambda: run(pmap(
        lambda x, y: ((x, x * y), {"s": x.sum(), "t": lax.psum(x, "i")}), axis_name="i",
        in_axes=(0, None), out_axes=((0, 1), {"s": 0, "t": None})), M.T, 2.0),
    "dict_in_axes": lambda: run(pmap(lambda d: d["a"] + d["b"],
                                     in_axes=({"a": 0, "b": None},)), {"a": X, "b": 1.0}),
    "kwargs_mapped": lambda: run(pmap(lambda x, y: x + y), X, y=X),
    "static_broadcasted": lambda: run(pmap(lambda x, n: x * n, static_broadcasted_argnums=1),
                                      X, 3, jaxpr=False),
    "devices": lambda: run(pmap(lambda x: lax.psum(x, "i"), axis_name="i",
                                devices=ns.devices()[2:4]), X[:2]),
    "axis_size_given": lambda: run(pmap(lambda x: x + 1, axis_size=4), X),
    "int_input": lambda: run(pmap(lambda x: x + 1), np.arange(4, dtype=np.int32)),
    "pytree_out": lambda: run(pmap(lambda x: {"a": x, "b": (x * 2, lax.axis_index("i"))},
                                   axis_name="i"), X),
    "all_gather": lambda: run(pmap(lambda x: lax.all_gather(x, "i"), axis_name="i"), X),
    "all_gather_tiled": lambda: run(pmap(lambda x: lax.all_gather(x, "i", tiled=True),
                                         axis_name="i"), M.T),
    "ppermute": lambda: run(pmap(lambda x: lax.ppermute(x, "i", RING), axis_name="i"), X),
    "psum_scatter": lambda: run(pmap(lambda x: lax.psum_scatter(x, "i"), axis_name="i"),
                                np.arange(16.0, dtype=np.float32).reshape(4, 4)),
    "all_to_all": lambda: run(pmap(lambda x: lax.all_to_all(x, "i", 0, 0), axis_name="i"),
                              np.arange(16.0, dtype=np.float32).reshape(4, 4)),
    "pmax_pmin": lambda: run(pmap(lambda x: (lax.pmax(x, "i"), lax.pmin(x, "i")),
                                  axis_name="i"), X),
    "axis_index_groups": lambda: run(pmap(
        lambda x: lax.psum(x, "i", axis_index_groups=[[0, 1], [2, 3]]), axis_name="i"), X),
    "all_gather_groups": lambda: run(pmap(lambda x: lax.all_gather(
        x, "i", axis_index_groups=[[0, 1], [2, 3]], tiled=True), axis_name="i"), M.T.copy()),
    "psum_scatter_groups": lambda: run(pmap(lambda x: lax.psum_scatter(
        x[:2], "i", axis_index_groups=[[0, 2], [1, 3]]), axis_name="i"), M.T.copy()),
    "pmax_groups": lambda: run(pmap(lambda x: lax.pmax(x, "i", axis_index_groups=[[0, 1], [2, 3]]),
                                    axis_name="i"), X),
    "grad_all_gather_groups": lambda: run(ns.grad(lambda x: jnp.sum(jnp.sin(pmap(
        lambda a: lax.all_gather(a, "i", axis_index_groups=[[0, 1], [2, 3]]) * a[0],
        axis_name="i")(x)))), M.T.copy(), jaxpr=False),
    "jit_of_pmap": lambda: run(ns.jit(pmap(lambda x: x * 2)), X),
    "vmap_of_pmap": lambda: run(ns.vmap(pmap(lambda x: lax.psum(x, "i"), axis_name="i")), M),
    "pmap_of_named_vmap": lambda: run(pmap(ns.vmap(lambda x: lax.psum(x, ("i", "j")),
                                                   axis_name="j"), axis_name="i"), M.T),
    "grad_of_pmap": lambda: run(ns.grad(lambda x: pmap(
        lambda y: jnp.sin(y) * lax.psum(y, "i"), axis_name="i")(x).sum()), X, jaxpr=False),
    "grad_broadcast_arg": lambda: run(ns.grad(lambda w, x: pmap(
        lambda w, a: lax.pmean(jnp.sum((a * w) ** 2), "b"), axis_name="b",
        in_axes=(None, 0))(w, x).sum()), 2.0, M.T.copy(), jaxpr=False),
    "jit_grad_out_axes_none": lambda: run(ns.jit(ns.grad(lambda x: pmap(
        lambda a: jnp.sum(a ** 2), in_axes=1, out_axes=None)(x))), M, jaxpr=False),
    "pmap_of_grad": lambda: run(pmap(ns.grad(lambda y: jnp.sin(y) * 2.0)), X),
    "jvp_of_pmap": lambda: run(lambda x, t: ns.jvp(pmap(lambda a: jnp.sin(a) * lax.psum(a, "q"),
                                                        axis_name="q"), (x,), (t,)),
                               X, np.ones(4, np.float32), jaxpr=False),
    # closures over an enclosing trace's values, second derivatives, loops in the body
    "closure_in_jit": lambda: run(ns.jit(lambda s, x: pmap(lambda a: a * s)(x)), 2.0, X,
                                  jaxpr=False),
    "closure_in_grad": lambda: run(ns.grad(lambda s, x: pmap(lambda a: a * s)(x).sum()), 2.0,
                                   X, jaxpr=False),
    "closure_in_vmap": lambda: run(ns.vmap(lambda s, x: pmap(lambda a: a * s)(x),
                                           in_axes=(0, None)), np.arange(3.0, dtype=np.float32),
                                   X, jaxpr=False),
    "hessian": lambda: run(ns.hessian(lambda x: pmap(
        lambda a: jnp.sin(a) * lax.psum(a, "i"), axis_name="i")(x).sum()), X, jaxpr=False),
    "scan_in_body": lambda: run(pmap(lambda a: lax.scan(
        lambda c, y: (c + lax.psum(y, "i"), c), 0.0, a)[0], axis_name="i"), M.T.copy()),
    "donate": lambda: run(pmap(lambda x: x + 1, donate_argnums=0), jnp.arange(4.0), jaxpr=False),
    "vmap_name_inside_shard_map": vmap_name_inside_shard_map,
    "shard_map_derivatives": shard_map_derivatives,
    "traces_once_per_static_value": traces_once_per_static_value,
    "lower": lambda: {"stablehlo": "stablehlo" in pmap(lambda a: a + 1).lower(X).as_text()},
    # errors
    "too_many_slices": lambda: run(pmap(lambda x: x ** 2), np.arange(9.0, dtype=np.float32)),
    "negative_in_axes": lambda: run(pmap(lambda x: x, in_axes=-1), M),
    "nothing_mapped": lambda: run(pmap(lambda x: x, in_axes=None), X),
    "scalar_argument": lambda: run(pmap(lambda x: x ** 2), 3.0),
    "static_too_few_args": lambda: run(pmap(lambda x, n: x * n,
                                            static_broadcasted_argnums=(1,)), X),
    "static_traced": lambda: run(lambda x: pmap(lambda x, n: x * n,
                                                static_broadcasted_argnums=1)(x, x), X),
    "in_axes_not_prefix": lambda: run(pmap(lambda x, y: x, in_axes=(0, 0, 0)), X, X),
    "axis_size_mismatch": lambda: run(pmap(lambda x: x, axis_size=3), X),
    "nested_pmap": lambda: run(pmap(pmap(lambda x: lax.psum(x, ("i", "j")), axis_name="j"),
                                    axis_name="i"), M[:2, :4]),
    "in_axes_float": lambda: run(lambda: pmap(lambda x: x, in_axes=1.0)),
    "out_axes_float": lambda: run(lambda: pmap(lambda x: x, out_axes=1.0)),
    "empty_devices": lambda: run(lambda: pmap(lambda x: x, devices=[])),
    "not_callable": lambda: run(lambda: pmap(3)),
}
res = {name: case() for name, case in cases.items()}
print(json.dumps(res))

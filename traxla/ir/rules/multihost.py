"""``host_local_array_to_global_array`` and ``global_array_to_host_local_array``
(``jax.experimental.multihost_utils``): the conversions between a process's local data and
a global Array on a mesh, with ``global_mesh`` and ``pspec`` as params. traxla converts
within one process (the API refuses several), where local and global values have the same
type: the typing rule keeps shape and dtype (as JAX's, it drops weak type and sharding)."""
from __future__ import annotations

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing

host_local_array_to_global_array_p = Primitive("host_local_array_to_global_array")
global_array_to_host_local_array_p = Primitive("global_array_to_host_local_array")


def _same_shape(aval, *, global_mesh, pspec):
    return ShapedArray(aval.shape, aval.dtype)


def_typing(host_local_array_to_global_array_p, _same_shape)
def_typing(global_array_to_host_local_array_p, _same_shape)

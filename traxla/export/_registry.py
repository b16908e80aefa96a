"""The pytree-node serialization registry of ``traxla.export`` (JAX's
``register_pytree_node_serialization``), kept apart from the flatbuffer code so that
importing ``traxla.export`` needs no ``flatbuffers`` until something is serialized."""
from __future__ import annotations

import json

import collections

from traxla import tree_util

# serialized name -> (type, deserialize_auxdata, from_children); type -> (name, serialize)
serialization_registry: dict = {}
deserialization_registry: dict = {}


def register_pytree_node_serialization(nodetype, *, serialized_name: str, serialize_auxdata,
                                       deserialize_auxdata, from_children=None):
    """Registers how a custom pytree node's auxdata is written into an exported artifact's
    ``in_tree``/``out_tree`` (JAX's ``jax.export.register_pytree_node_serialization``)."""
    if nodetype in serialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. Previous "
            f"registration was with serialized_name `{serialization_registry[nodetype][0]}`.")
    if serialized_name in deserialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for serialized_name `{serialized_name}`. "
            f"Previous registration was for type "
            f"`{deserialization_registry[serialized_name][0]}`.")
    if from_children is None:
        entry = tree_util._custom.get(nodetype)
        if entry is None:
            raise ValueError(f"If `from_children` is not present, you must call first"
                             f"`traxla.tree_util.register_pytree_node` for `{nodetype}`")
        from_children = entry.unflatten
    serialization_registry[nodetype] = (serialized_name, serialize_auxdata)
    deserialization_registry[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Registers a ``collections.namedtuple`` type for serialization (its field names are
    the auxdata, as JAX writes them)."""
    if not (issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        raise ValueError("Use `traxla.export.register_pytree_node_serialization` for types "
                         "other than `collections.namedtuple`.")
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda _: json.dumps(nodetype._fields).encode("utf-8"),
        deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
        from_children=lambda keys, children: nodetype(**dict(zip(keys, children))))


def _register_ordered_dict():

    def keys(aux):
        if all(isinstance(k, str) for k in aux):
            return json.dumps(list(aux)).encode("utf-8")
        raise NotImplementedError("Serialization of collections.OrderedDict is supported only "
                                  f"when the keys are strings. Found keys: {aux}.")
    if collections.OrderedDict in tree_util._custom:
        register_pytree_node_serialization(
            collections.OrderedDict, serialized_name="collections.OrderedDict",
            serialize_auxdata=keys, deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")))


_register_ordered_dict()

"""``jax._src.shard_map``: ``shard_map`` by its private path (JAX's all_gather kernel imports
it from here), traxla's ``sharding.shard_map``."""
from traxla.sharding.shard_map import shard_map  # noqa: F401

__all__ = ["shard_map"]

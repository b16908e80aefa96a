"""``jax._src.util``: JAX's list helpers that user code imports (the custom-interpreter
notebook's ``safe_map``): checked ``safe_map``/``safe_zip``, ``unzip2``/``unzip3``,
``split_list``, ``partition_list``/``merge_lists``, ``subvals``, ``concatenate``,
``HashablePartial`` (optree)."""
from traxla.base.sequences import (ceil_of_ratio, concatenate, merge_lists,  # noqa: F401
                                   partition_list, safe_map, safe_zip, split_list, subvals,
                                   unzip2, unzip3)
from traxla.numpy._shape import canonicalize_axis  # noqa: F401

flatten = concatenate


class HashablePartial:
    """JAX's ``HashablePartial``: ``f`` with ``args``/``kwargs`` bound, equal (and hashing
    alike) to another of the same code and arguments, so it can key a cache."""

    def __init__(self, f, *args, **kwargs):
        self.f = f
        self.args = args
        self.kwargs = kwargs

    def __eq__(self, other):
        return (type(other) is HashablePartial and self.f.__code__ == other.f.__code__ and
                self.args == other.args and self.kwargs == other.kwargs)

    def __hash__(self):
        kwargs = tuple(sorted(self.kwargs.items(), key=lambda kv: kv[0]))
        return hash((self.f.__code__, self.args, kwargs))

    def __call__(self, *args, **kwargs):
        return self.f(*self.args, *args, **self.kwargs, **kwargs)

"""``jax._src.util``: JAX's list helpers that user code imports (the custom-interpreter
notebook's ``safe_map``): checked ``safe_map``/``safe_zip``, ``unzip2``/``unzip3``,
``split_list``, ``partition_list``/``merge_lists``, ``subvals``, ``concatenate``."""
from traxla.base.sequences import (ceil_of_ratio, concatenate, merge_lists,  # noqa: F401
                                   partition_list, safe_map, safe_zip, split_list, subvals,
                                   unzip2, unzip3)
from traxla.numpy._shape import canonicalize_axis  # noqa: F401

flatten = concatenate

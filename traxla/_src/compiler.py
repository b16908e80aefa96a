"""``jax._src.compiler``: this name is ``traxla.runtime.compiler`` itself (the module object,
so that a wrapper set on ``backend_compile_and_load`` here sees every compilation)."""
import sys

from traxla.runtime import compiler as _compiler

sys.modules[__name__] = _compiler

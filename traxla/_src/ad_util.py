"""``jax._src.ad_util``: the names libraries import from it (lineax registers a transpose
rule for ``stop_gradient_p``): the ``stop_gradient`` primitive that ``lax.stop_gradient``
binds, the symbolic ``Zero`` and ``SymbolicZero``, ``instantiate``."""
from traxla.autodiff.ad import Zero, instantiate  # noqa: F401
from traxla.autodiff.symbolic_zeros import SymbolicZero  # noqa: F401
from traxla.lax import stop_gradient_p  # noqa: F401

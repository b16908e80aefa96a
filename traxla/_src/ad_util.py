"""``jax._src.ad_util``: the ``stop_gradient`` primitive (lineax gives it a transpose rule
through ``jax.interpreters.ad.primitive_transposes``), the symbolic ``Zero`` and
``instantiate``, as traxla's own."""
from traxla.autodiff.ad import Zero, instantiate  # noqa: F401
from traxla.ir.rules.elementwise import P as _P

stop_gradient_p = _P["stop_gradient"]

"""``traxla.experimental``: ``io_callback``, ``checkify``, ``cur_qdd`` and
``primal_tangent_dtype``."""
from traxla.api.callback import io_callback  # noqa: F401
from traxla.experimental import checkify  # noqa: F401
from traxla.experimental.hijax import cur_qdd  # noqa: F401  (flax's hijax Variables)
from traxla._src.earray import EArray  # noqa: F401
from traxla.experimental._primal_tangent import primal_tangent_dtype  # noqa: F401

__all__ = ["io_callback", "checkify", "cur_qdd"]

"""``jax._src.test_util`` by its private path (JAX's Mosaic GPU kernels import it as
``jtu``): traxla's ``test_util`` (``check_grads``, ``check_jvp``, ``check_vjp``)."""
from traxla.test_util import *  # noqa: F401,F403
from traxla.test_util import __all__  # noqa: F401

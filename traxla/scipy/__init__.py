"""``traxla.scipy``: as ``jax.scipy`` (special, stats, linalg, fft, signal, optimize,
integrate, ndimage, interpolate, cluster, sparse; spatial on import)."""
from . import fft, signal  # noqa: F401,E402  (scipy.fft: dct family; scipy.signal)
from . import special, stats  # noqa: F401
from . import linalg  # noqa: F401,E402  (scipy.linalg on lax.linalg)
from . import integrate, ndimage, optimize  # noqa: F401,E402
from . import cluster  # noqa: F401,E402  (scipy.cluster.vq)
from . import interpolate  # noqa: F401,E402  (RegularGridInterpolator)
from . import sparse  # noqa: F401,E402  (scipy.sparse.linalg: cg, bicgstab, gmres)

"""``traxla.scipy``: as ``jax.scipy`` (special, stats, linalg, fft, signal, optimize,
integrate, ndimage, interpolate, cluster, sparse; spatial on import)."""
from traxla.scipy import fft, signal  # noqa: F401,E402  (scipy.fft: dct family; scipy.signal)
from traxla.scipy import special, stats  # noqa: F401
from traxla.scipy import linalg  # noqa: F401,E402  (scipy.linalg on lax.linalg)
from traxla.scipy import integrate, ndimage, optimize  # noqa: F401,E402
from traxla.scipy import cluster  # noqa: F401,E402  (scipy.cluster.vq)
from traxla.scipy import interpolate  # noqa: F401,E402  (RegularGridInterpolator)
from traxla.scipy import sparse  # noqa: F401,E402  (scipy.sparse.linalg: cg, bicgstab, gmres)

"""``jax._src.lax.control_flow``: JAX's package of loops, conditionals and solves (pytensor's
JAX backend imports ``scan`` from here); traxla's own ``traxla.lax`` operations and primitives."""
from traxla.lax import (associative_scan, cond, cond_p, cumlogsumexp, cumlogsumexp_p,  # noqa: F401
                        cummax, cummax_p, cummin, cummin_p, cumprod, cumprod_p, cumsum, cumsum_p,
                        custom_linear_solve, custom_root, fori_loop, linear_solve_p, map,
                        optimization_barrier_p, platform_dependent, scan, scan_p, switch,
                        while_loop, while_p)

"""``jax.extend.core.primitives``: every primitive JAX lists there, as traxla's own objects
(the ones ``traxla.lax``, ``traxla.numpy``, ``traxla.random``... bind), so
``prim.bind(...)`` works eagerly and under every transformation and equations print as
JAX's. ``call_p`` and ``closed_call_p`` bind a function: ``bind(*args, subfuns=(f,))`` with
``f`` from ``linear_util.wrap_init`` (or ``prim.get_bind_params(eqn.params)``)."""
import traxla as _traxla  # noqa: F401  (each family registers its primitives at import)
from traxla.ir.primitive import ALL_PRIMITIVES as _ALL

# JAX's attribute name (less ``_p``) -> the primitive's name, where they differ
_RENAMED = {"add_jaxvals": "add_any", "linear_solve": "custom_linear_solve",
            "remat": "remat2", "scatter_add": "scatter-add", "scatter_max": "scatter-max",
            "scatter_min": "scatter-min", "scatter_mul": "scatter-mul"}

_NAMES = """
abs acos acosh add_jaxvals add after_all all_gather all_to_all and approx_top_k argmax argmin
asin asinh atan2 atan atanh axis_index bessel_i0e bessel_i1e bitcast_convert_type
broadcast_in_dim call cbrt ceil cholesky clamp closed_call clz complex concatenate cond conj
conv_general_dilated convert_element_type copy cos cosh create_token cumlogsumexp cummax cummin
cumprod cumsum custom_jvp_call custom_lin custom_vjp_call device_put digamma div dot_general
dynamic_slice dynamic_update_slice eig eigh empty2 eq eq_to erf_inv erf erfc exp2 exp expm1 fft
floor gather ge get gt hessenberg householder_product igamma_grad_a igamma igammac imag
integer_pow iota is_finite jit le le_to lgamma linear_solve log1p log logistic lt lt_to lu max
min mul name ne neg nextafter not or pad pmax pmin polygamma population_count pow ppermute psum
qr ragged_all_to_all random_bits random_fold_in random_gamma random_seed random_split real
reduce_and reduce_max reduce_min reduce_or reduce reduce_precision reduce_prod reduce_sum
reduce_window_max reduce_window_min reduce_window reduce_window_sum reduce_xor
regularized_incomplete_beta rem remat reshape rev rng_bit_generator rng_uniform round rsqrt scan
scatter_add scatter_max scatter_min scatter_mul scatter schur select_and_gather_add
select_and_scatter_add select_and_scatter select_n sharding_constraint shift_left
shift_right_arithmetic shift_right_logical sign sin sinh slice sort sqrt square squeeze
stop_gradient sub svd swap tan tanh threefry2x32 top_k transpose triangular_solve tridiagonal
tridiagonal_solve while xor zeta
""".split()

globals().update({n + "_p": _ALL[_RENAMED.get(n, n)] for n in _NAMES})

__all__ = [n + "_p" for n in _NAMES]

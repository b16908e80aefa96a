"""The linalg functions whose op multisets are not yet within 5% of JAX's, with their
current figure (tests/test_linalg_ops_vs_jax.py; kept apart so that editing it leaves
that module's stored JAX outputs valid)."""

# (name, platform) -> the current op-multiset difference in percent, where above TARGET
# The CPU figures of expm_frechet, grad_lu and grad_slogdet are those of a clean-clone
# `-n 2` run: there JAX's own CPU module had two private functions more than in a process of
# this file alone (17 against 15 for expm_frechet), an unexplained difference of JAX's side.
KNOWN = {
    ("expm", "cpu"): 10.3,
    ("expm_frechet", "tpu"): 16.3, ("expm_frechet", "cpu"): 14.5,
    ("inv", "cpu"): 26.7,
    ("det", "tpu"): 8.1, ("det", "cpu"): 36.7,
    ("slogdet", "tpu"): 8.5, ("slogdet", "cpu"): 37.8,
    ("solve", "cpu"): 29.6,
    ("lstsq", "tpu"): 15.3, ("lstsq", "cpu"): 24.0,
    ("pinv", "tpu"): 15.1,
    ("matrix_rank", "tpu"): 18.0,
    ("norm2", "tpu"): 18.5, ("norm2", "cpu"): 5.6,
    ("cond", "tpu"): 18.4, ("cond", "cpu"): 5.3,
    ("svd", "tpu"): 16.2,
    ("grad_svd", "tpu"): 12.6,
    ("grad_cholesky", "tpu"): 7.1,
    ("grad_lu", "tpu"): 11.6, ("grad_lu", "cpu"): 22.4,
    ("grad_det", "tpu"): 11.8, ("grad_det", "cpu"): 17.6,
    ("grad_slogdet", "tpu"): 134.5, ("grad_slogdet", "cpu"): 81.7,
    ("grad_inv", "cpu"): 20.2,
    ("grad_solve", "cpu"): 22.1,
    ("grad_norm2", "tpu"): 14.3,
    ("grad_expm", "tpu"): 6.1, ("grad_expm", "cpu"): 8.8,
    ("grad_pinv", "tpu"): 14.2,
}

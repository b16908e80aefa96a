"""The linalg functions whose op multisets are not yet within 5% of JAX's, with their
current figure (tests/test_linalg_ops_vs_jax.py; kept apart so that editing it leaves
that module's stored JAX outputs valid)."""

# (name, platform) -> the current op-multiset difference in percent, where above TARGET
# The CPU figures of expm_frechet, grad_lu and grad_slogdet are those of a clean-clone
# `-n 2` run: there JAX's own CPU module had two private functions more than in a process of
# this file alone (17 against 15 for expm_frechet), an unexplained difference of JAX's side.
KNOWN = {
    ("expm_frechet", "tpu"): 11.5, ("expm_frechet", "cpu"): 9.5,
}

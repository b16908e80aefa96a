"""Linear-algebra programs for the differential run on an accelerator (tools/tpu_diff.py):
every function and gradient of tests/test_linalg_ops_vs_jax.py, plus the realistic programs
of issue #43 that disagreed with JAX on the TPU (``scipy.linalg.expm``, the gradient of
``eigh`` in a PCA, of a spectral norm, of a Gaussian-process marginal likelihood and of a
multivariate-normal log-likelihood). ``corpus(Case)`` returns ``{name: Case}`` whose
``build(np_, lax_, jit_)`` works for ``jax.numpy`` and ``traxla.numpy``."""
from __future__ import annotations

import sys

import numpy as np

_rng = np.random.default_rng(43)
X = _rng.standard_normal((32, 8)).astype(np.float32)          # data: 32 points, 8 features
M = (0.3 * _rng.standard_normal((8, 8))).astype(np.float32)
Y = np.sin(X[:, 0]).astype(np.float32)
PARAMS = np.array([0.1, 0.2, -1.0], np.float32)               # log length scale, amplitude, noise


def _namespaces(np_):
    """(numpy, scipy.linalg, top-level module) of JAX or traxla, from its numpy module."""
    if np_.__name__.startswith("jax"):
        import jax
        import jax.scipy.linalg as sl
        return np_, sl, jax
    import traxla
    import traxla.scipy.linalg as sl
    return np_, sl, traxla


def _pca_loss(np_, top):
    def loss(w):
        xc = X @ w
        xc = xc - xc.mean(0)
        cov = xc.T @ xc / X.shape[0]
        vals, vecs = np_.linalg.eigh(cov)
        top2 = vecs[:, -2:]
        return vals[-2:].sum() + (top2 ** 2 * np_.arange(8.0)[:, None]).sum()
    return top.grad(loss)


def _spectral_norm(np_, top):
    return top.grad(lambda w: np_.linalg.norm(w @ w.T + np_.eye(8), ord=2))


def _gp_nll(np_, sl, top):
    def nll(params):
        ls, amp, noise = np_.exp(params[0]), np_.exp(params[1]), np_.exp(params[2])
        d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        k = amp * np_.exp(-0.5 * d2 / ls ** 2) + (noise + 1e-3) * np_.eye(X.shape[0])
        chol = np_.linalg.cholesky(k)
        alpha = sl.cho_solve((chol, True), Y)
        return 0.5 * Y @ alpha + np_.log(np_.diagonal(chol)).sum()
    return top.value_and_grad(nll)


def _mvn_loglik(np_, sl, top):
    def loglik(mean, scale):
        cov = scale @ scale.T + np_.eye(8)
        chol = np_.linalg.cholesky(cov)
        z = sl.solve_triangular(chol, (X - mean).T, lower=True)
        return -0.5 * (z ** 2).sum() - X.shape[0] * np_.log(np_.diagonal(chol)).sum()
    return top.grad(loglik, argnums=(0, 1))


def corpus(case_type, rtol=2e-4):
    from test_linalg_ops_vs_jax import cases
    import traxla.numpy as tnp
    out = {}
    for name in cases(*_namespaces(tnp)):
        def build(np_, lax_, jit_, name=name):
            return cases(*_namespaces(np_))[name][0]
        out[f"linalg_{name}"] = case_type(f"linalg_{name}", build,
                                          tuple(cases(*_namespaces(tnp))[name][1]), rtol)
    programs = {
        "program_expm": (lambda np_, sl, top: sl.expm, (M * 4,)),
        "program_pca_eigh_grad": (lambda np_, sl, top: _pca_loss(np_, top), (np.eye(8, dtype=np.float32) + M,)),
        "program_spectral_norm_grad": (lambda np_, sl, top: _spectral_norm(np_, top), (M,)),
        "program_gp_marginal_likelihood_grad": (_gp_nll, (PARAMS,)),
        "program_mvn_loglik_grad": (_mvn_loglik, (X.mean(0), M)),
    }
    for name, (make, args) in programs.items():
        def build(np_, lax_, jit_, make=make):
            return make(*_namespaces(np_))
        out[name] = case_type(name, build, args, rtol)
    return out


if __name__ == "__main__":  # the programs' values, JAX against traxla on this machine
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import jax.numpy as jnp
    import traxla.numpy as tnp
    from test_jaxpr_vs_jax import Case
    import jax
    import traxla
    for name, case in corpus(Case).items():
        want = jax.tree_util.tree_leaves(jax.jit(case.build(jnp, None, None))(*case.args))
        got = traxla.tree_util.tree_leaves(traxla.jit(case.build(tnp, None, None))(*case.args))
        err = max(float(np.abs(np.asarray(g) - np.asarray(w)).max() / max(1.0, np.abs(w).max()))
                  for g, w in zip(got, want))
        print(f"{name:40s} relative max diff {err:.2e}")

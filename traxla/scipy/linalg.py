"""``traxla.scipy.linalg``: the 40 names of ``jax.scipy.linalg``, on ``traxla.lax.linalg`` and
``traxla.numpy.linalg``, with JAX's signatures (SciPy's ``overwrite_*``/``check_finite``
accepted and ignored, as JAX does).

Where JAX uses an algorithm tied to its own internals the result is the same matrix computed
another way, said at the function: ``eigh_tridiagonal`` (the dense tridiagonal matrix's
``eigh`` rather than bisection and inverse iteration), ``rsf2csf`` (the complex Schur form of ``T``), ``solve_sylvester`` (Bartels-Stewart column by
column)."""
from __future__ import annotations

import warnings

import numpy as np

from traxla import lax, numpy as jnp
from traxla.autodiff import jvp
from traxla.ir import dtypes
from traxla.lax import linalg as lax_linalg, custom_linear_solve
from traxla.numpy import linalg as jnp_linalg
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import promote_dtypes_inexact
from traxla.scipy._linalg_util import asarray as _asarray, complex_dtype as _complex_dtype, vectorize as _vectorize
from traxla.batching import vmap

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm",
           "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel",
           "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu",
           "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur",
           "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz"]


def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


# -- factorizations -----------------------------------------------------------------------------

def _cholesky_impl(a, lower):
    a, = promote_dtypes_inexact(_asarray(a))
    low = lax_linalg.cholesky(a if lower else _mH(a), symmetrize_input=False)
    return low if lower else _mH(low)


_cholesky = jit_named(_cholesky_impl, "_cholesky", ("lower",))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _cholesky(a, lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _b_core_rank(name, squeeze_hint, a, b):
    """The rank of one right-hand side in ``b``: 1 when ``b`` is a vector or a batch of them
    matching ``a`` (JAX's deprecated batched 1D solve, which warns), else 2."""
    if b.ndim == 1 or (a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]):
        if b.ndim > 1:
            warnings.warn(f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are "
                          "deprecated, and in the future will be treated as a batched 2D solve. "
                          f"Use {squeeze_hint} to avoid this warning.", category=FutureWarning)
        return 1
    return 2


def _cho_solve_impl(c, b, lower):
    c, b = promote_dtypes_inexact(_asarray(c), _asarray(b))
    core = _b_core_rank("cho_solve", "cho_solve(c_and_lower, b[..., None]).squeeze(-1)", c, b)

    def one(c, b):
        b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower,
                                        transpose_a=not lower, conjugate_a=not lower)
        return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower,
                                           transpose_a=lower, conjugate_a=lower)
    return _vectorize(one, (2, core))(c, b)


_cho_solve = jit_named(_cho_solve_impl, "_cho_solve", ("lower",))


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(c, b, lower)


def _svd_impl(a, *, full_matrices, compute_uv):
    a, = promote_dtypes_inexact(_asarray(a))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


_svd = jit_named(_svd_impl, "_svd", ("full_matrices", "compute_uv"))


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    del overwrite_a, check_finite, lapack_driver
    return _svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def det(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return jnp_linalg.det(a)


def _eigh_impl(a, b, lower, eigvals_only, eigvals, type):  # noqa: A002
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    a, = promote_dtypes_inexact(_asarray(a))
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


_eigh = jit_named(_eigh_impl, "_eigh", ("lower", "eigvals_only", "eigvals", "type"))


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):  # noqa: A002
    del overwrite_a, overwrite_b, turbo, check_finite
    return _eigh(a, b, lower, eigvals_only, eigvals, type)


def _schur_impl(a, output):
    a = _asarray(a)
    if output == "complex":
        a = a.astype(_complex_dtype(a.dtype))
    return lax_linalg.schur(a)


_schur = jit_named(_schur_impl, "_schur", ("output",))


def schur(a, output="real"):
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got output={output!r}.")
    return _schur(a, output)


def inv(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return jnp_linalg.inv(a)


def _lu_factor_impl(a, overwrite_a=False, check_finite=True):
    a, = promote_dtypes_inexact(_asarray(a))
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


lu_factor = jit_named(_lu_factor_impl, "lu_factor", ("overwrite_a", "check_finite"))


def _lu_solve_impl(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu_, pivots = lu_and_piv
    lu_, b = promote_dtypes_inexact(_asarray(lu_), _asarray(b))
    m = lu_.shape[-2]
    perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
    core = _b_core_rank("lu_solve", "lu_solve(lu_and_piv, b[..., None]).squeeze(-1)", lu_, b)
    return _vectorize(lambda l, p, x: lax_linalg.lu_solve(l, p, x, trans=trans),
                      (2, 1, core))(lu_, perm, b)


lu_solve = jit_named(_lu_solve_impl, "lu_solve", ("trans", "overwrite_b", "check_finite"))


def _lu_impl(a, permute_l):
    a, = promote_dtypes_inexact(_asarray(a))
    lu_, _, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    m, n = a.shape[-2:]
    p = (permutation[..., None, :] == jnp.arange(m, dtype=permutation.dtype)[:, None]).astype(dtype)
    k = min(m, n)
    low = jnp.tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=dtype)
    up = jnp.triu(lu_)[..., :k, :]
    if permute_l:
        return jnp.matmul(p, low), up
    return p, low, up


def _lu_wrapper(a, permute_l=False, overwrite_a=False, check_finite=True):
    return _lu_impl(a, permute_l)


lu = jit_named(_lu_wrapper, "lu", ("permute_l", "overwrite_a", "check_finite"))


def _qr_impl(a, mode, pivoting):
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    a, = promote_dtypes_inexact(_asarray(a))
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, p[0]) if pivoting else (r,)
    return (q, r, p[0]) if pivoting else (q, r)


_qr = jit_named(_qr_impl, "_qr", ("mode", "pivoting"))


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    del overwrite_a, lwork, check_finite
    return _qr(a, mode, pivoting)


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    del overwrite_a, overwrite_c
    a, c = promote_dtypes_inexact(_asarray(a), _asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left":
        if c.shape[-2] != k:
            raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                             f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                             f"rows (expected {k}).")
    elif c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} columns "
                         f"(expected {m}).")
    batch = tuple(np.broadcast_shapes(a.shape[:-2], c.shape[:-2]))
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    p = None
    if pivoting:
        jpvt = jnp.zeros(a.shape[:-2] + (n,), dtype=np.int32)
        r, p, taus = lax_linalg.geqp3(a, jpvt)
        p = p - 1
    else:
        r, taus = lax_linalg.geqrf(a)
    if m > n and mode == "left":
        zeros = jnp.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], dtype=c.dtype)
        c = jnp.concatenate([c, zeros], axis=-2)
    if conjugate:
        c = jnp.swapaxes(c, -1, -2)
    left = (mode == "left") != conjugate
    cq = lax_linalg.ormqr(r, taus, c, left=left, transpose=conjugate)
    if conjugate:
        cq = jnp.swapaxes(cq, -1, -2)
    if mode == "right":
        cq = cq[..., :k]
    if onedim:
        cq = cq.ravel()
    r = jnp.triu(r[..., :k, :])
    return (cq, r, p) if pivoting else (cq, r)


def _solve_impl(a, b, assume_a, lower):
    if assume_a != "pos":
        return jnp_linalg.solve(a, b)
    a, b = promote_dtypes_inexact(_asarray(a), _asarray(b))
    lax_linalg._check_solve_shapes(a, b)
    factors = cho_factor(lax.stop_gradient(a), lower=lower)

    def custom_solve(b):
        # implicit differentiation through one Cholesky factorization (symmetric operator)
        return custom_linear_solve(lambda x: lax_linalg._broadcasted_matvec(a, x), b,
                                   solve=lambda _, x: cho_solve(factors, x), symmetric=True)
    if a.ndim == b.ndim + 1:
        return custom_solve(b)
    return vmap(custom_solve, b.ndim - 1, max(a.ndim, b.ndim) - 1)(b)


_solve = jit_named(_solve_impl, "_solve", ("assume_a", "lower"))


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    return _solve(a, b, assume_a, lower)


def _solve_triangular_impl(a, b, trans, lower, unit_diagonal):
    if trans == 0 or trans == "N":
        transpose_a, conjugate_a = False, False
    elif trans == 1 or trans == "T":
        transpose_a, conjugate_a = True, False
    elif trans == 2 or trans == "C":
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = promote_dtypes_inexact(_asarray(a), _asarray(b))
    core = _b_core_rank("solve_triangular", "solve_triangular(a, b[..., None]).squeeze(-1)", a, b)
    return _vectorize(lambda a, b: lax_linalg.triangular_solve(
        a, b, left_side=True, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal), (2, core))(a, b)


_solve_triangular = jit_named(_solve_triangular_impl, "_solve_triangular",
                              ("trans", "lower", "unit_diagonal"))


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    del overwrite_b, debug, check_finite
    return _solve_triangular(a, b, trans, lower, unit_diagonal)


def _hessenberg_impl(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    a = _asarray(a)
    n = a.shape[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    a_out, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(a_out, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    batch = a_out.shape[:-2]
    top = jnp.concatenate([jnp.ones(batch + (1, 1), a_out.dtype),
                           jnp.zeros(batch + (1, n - 1), a_out.dtype)], axis=-1)
    bottom = jnp.concatenate([jnp.zeros(batch + (n - 1, 1), a_out.dtype), q], axis=-1)
    return h, jnp.concatenate([top, bottom], axis=-2)


hessenberg = jit_named(_hessenberg_impl, "hessenberg", ("calc_q", "check_finite", "overwrite_a"))


def _polar_2d(a, side, method, eps, max_iterations):
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = lax_linalg.qdwh(a, is_hermitian=False, eps=eps,
                                                    max_iterations=max_iterations)
        elif m < n and side == "left":
            unitary, posdef, _, _ = lax_linalg.qdwh(_mH(a), is_hermitian=False, eps=eps,
                                                    max_iterations=max_iterations)
            posdef, unitary = _mH(posdef), _mH(unitary)
        else:
            raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n where "
                                      f"side='right' and m >= n side='left', got {a.shape} with "
                                      f"side={side!r}")
        return unitary, posdef
    if method != "svd":
        raise ValueError(f"Unknown polar decomposition method {method}.")
    u_svd, s_svd, vh_svd = lax_linalg.svd(a, full_matrices=False)
    s_svd = s_svd.astype(u_svd.dtype)
    unitary = u_svd @ vh_svd
    if side == "right":
        posdef = (_mH(vh_svd) * s_svd[None, :]) @ vh_svd
    else:
        posdef = (u_svd * s_svd[None, :]) @ _mH(u_svd)
    return unitary, posdef


def _polar_impl(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    arr = _asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    arr, = promote_dtypes_inexact(arr)
    return _vectorize(lambda x: _polar_2d(x, side, method, eps, max_iterations), (2,))(arr)


polar = jit_named(_polar_impl, "polar", ("side", "method"))


# -- matrix functions -------------------------------------------------------------------------

_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}


def _precise_dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _pade(order):
    """JAX's ``_pade{order}``: ``(U, V)`` from the even powers ``A2, A4, ...`` (each one more
    HIGHEST-precision product), ``U = A @ (odd terms)``, ``V = even terms``."""
    b = _PADE[order]

    def pade(a):
        ident = jnp.eye(*a.shape, dtype=a.dtype)
        a2 = _precise_dot(a, a)
        if order == 13:
            a4 = _precise_dot(a2, a2)
            a6 = _precise_dot(a4, a2)
            u = _precise_dot(a, _precise_dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
            v = _precise_dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 \
                + b[4] * a4 + b[2] * a2 + b[0] * ident
            return u, v
        powers = [a2]
        if order >= 5:
            powers.append(_precise_dot(a2, a2))
        while 2 * len(powers) < order - 1:
            powers.append(_precise_dot(powers[-1], a2))

        def poly(first):  # JAX's order of the sums: the highest power first
            acc = b[order - 1 + first] * powers[-1]
            for i in range(len(powers) - 2, -1, -1):
                acc = acc + b[2 * i + 2 + first] * powers[i]
            return acc + b[first] * ident
        u = _precise_dot(a, poly(1))
        return u, poly(0)
    return pade


def _calc_p_q_impl(a):
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected A to be a square matrix")
    a_l1 = jnp_linalg.norm(a, 1)
    if a.dtype in (np.float64, np.complex128):
        maxnorm, conds, orders = 5.371920351148152, (1.495585217958292e-002,
                                                     2.539398330063230e-001,
                                                     9.504178996162932e-001,
                                                     2.097847961257068e+000), (3, 5, 7, 9, 13)
    elif a.dtype in (np.float32, np.complex64):
        maxnorm, conds, orders = 3.925724783138660, (4.258730016922831e-001,
                                                     1.880152677804762e+000), (3, 5, 7)
    else:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(a_l1 / maxnorm)))
    a = a / 2 ** n_squarings.astype(a.dtype)
    idx = jnp.digitize(a_l1, jnp.array(conds, dtype=a_l1.dtype))
    u, v = lax.switch(idx, [_pade(o) for o in orders], a)
    return u + v, -u + v, n_squarings


_calc_p_q = jit_named(_calc_p_q_impl, "_calc_P_Q")


def _squaring_impl(r, n_squarings, max_squarings):
    def body(c, i):
        return lax.cond(i < n_squarings, lambda x: _precise_dot(x, x), lambda x: x, c), None
    res, _ = lax.scan(body, r, jnp.arange(max_squarings, dtype=n_squarings.dtype))
    return res


_squaring = jit_named(_squaring_impl, "_squaring", ("max_squarings",))


def _expm_impl(A, *, upper_triangular=False, max_squarings=16):  # noqa: N803
    """JAX's ``expm``: scaling and squaring with a Padé approximant whose degree
    (3, 5, 7 for 32-bit; up to 13 for 64-bit) is chosen from the 1-norm by ``digitize``."""
    A, = promote_dtypes_inexact(_asarray(A))
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape!r}.")
    if A.ndim > 2:
        return jnp.vectorize(lambda x: expm(x, upper_triangular=upper_triangular,
                                            max_squarings=max_squarings),
                             signature="(n,n)->(n,n)")(A)
    p, q, n_squarings = _calc_p_q(jnp.asarray(A))

    def compute(args):
        _, p, q = args
        r = solve_triangular(q, p) if upper_triangular else jnp_linalg.solve(q, p)
        return _squaring(r, n_squarings, max_squarings)

    return lax.cond(n_squarings > max_squarings, lambda args: jnp.full_like(args[0], np.nan),
                    compute, (A, p, q))


expm = jit_named(_expm_impl, "expm", ("upper_triangular", "max_squarings"))


def _expm_frechet_impl(A, E, *, method=None, compute_expm=True):  # noqa: N803
    a, e = _asarray(A), _asarray(E)
    if a.ndim < 2 or a.shape[-2] != a.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={a.shape} "
                         f"E.shape={e.shape}")
    expm_a, frechet = jvp(lambda x: expm(x, upper_triangular=False, max_squarings=16), (a,), (e,))
    return (expm_a, frechet) if compute_expm else frechet


expm_frechet = jit_named(_expm_frechet_impl, "expm_frechet", ("method", "compute_expm"))


def _sqrtm_triu(t):
    """The upper-triangular square root of an upper-triangular ``T`` (Björck-Hammarling),
    column by column: ``U[i, j] = (T[i, j] - U[i, i+1:j] @ U[i+1:j, j]) / (U[i, i] + U[j, j])``."""
    n = t.shape[0]
    diag = jnp.sqrt(jnp.diagonal(t))
    u = jnp.zeros_like(t) + jnp.eye(n, dtype=t.dtype) * diag[None, :]
    idx = jnp.arange(n)
    for j in range(1, n):
        for i in range(j - 1, -1, -1):
            mask = (idx > i) & (idx < j)
            s = jnp.sum(jnp.where(mask, u[i, :] * u[:, j], 0))
            value = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (diag[i] + diag[j]))
            u = u.at[i, j].set(value)
    return u


def _sqrtm_impl(A):  # noqa: N803
    t, z = schur(A, output="complex")
    return (z @ _sqrtm_triu(t)) @ _mH(z)


_sqrtm = jit_named(_sqrtm_impl, "_sqrtm")


def sqrtm(A, blocksize=1):  # noqa: N803
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


def funm(A, func, disp=True):  # noqa: N803
    """``func`` of a matrix by the Schur-Parlett recurrence (Golub & Van Loan 11.1.1)."""
    a = _asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(a)
    t, z = rsf2csf(t, z)
    n = t.shape[0]
    f = jnp.eye(n, dtype=t.dtype) * func(jnp.diagonal(t))[None, :]
    minden = jnp.abs(t[0, 0])
    idx = jnp.arange(n)
    for p in range(1, n):
        for i in range(1, n - p + 1):
            j = i + p
            s = t[i - 1, j - 1] * (f[j - 1, j - 1] - f[i - 1, i - 1])
            ind = (idx >= i) & (idx < j - 1)
            s = s + (jnp.where(ind, t[i - 1], 0) @ jnp.where(ind, f[:, j - 1], 0)
                     - jnp.where(ind, f[i - 1], 0) @ jnp.where(ind, t[:, j - 1], 0))
            den = t[j - 1, j - 1] - t[i - 1, i - 1]
            s = jnp.where(den != 0, s / den, s)
            f = f.at[i - 1, j - 1].set(s)
            minden = jnp.minimum(minden, jnp.abs(den))
    f = (z @ f) @ _mH(z)
    if disp:
        return f
    tol = float(np.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf,
                    jnp.minimum(1, jnp.maximum(tol, (tol / minden)
                                               * jnp_linalg.norm(jnp.triu(t, 1), 1))))
    return f, err


def rsf2csf(T, Z, check_finite=True):  # noqa: N803
    """A complex Schur form ``(T', Z')`` with ``Z' T' Z'^H = Z T Z^H``: the complex Schur
    decomposition of the real Schur form ``T`` composed with ``Z``."""
    del check_finite
    t, z = _asarray(T), _asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    cdt = _complex_dtype(jnp.result_type(t, z))
    t, z = t.astype(cdt), z.astype(cdt)
    t_c, w = lax_linalg.schur(t)
    return jnp.triu(t_c), z @ w


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):  # noqa: N803
    """``X`` with ``A X + X B = C`` (Bartels-Stewart: complex Schur forms of ``A`` and
    ``B^H``, then one triangular solve per column)."""
    A, B, C = promote_dtypes_inexact(_asarray(A), _asarray(B), _asarray(C))  # noqa: N806
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\n"
                         f"B: {B.shape}\nC: {C.shape}")
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         '"schur" or "eigen".')
    r, u = schur(A, output="complex")
    s, v = schur(_mH(B), output="complex")
    s = _mH(s)                       # B = V S V^H with S lower triangular
    f = _mH(u) @ C.astype(r.dtype) @ v
    eye = jnp.eye(m, dtype=r.dtype)
    # R Y + Y S = F with S lower triangular: column j needs the columns after it
    cols = {}
    for j in reversed(range(n)):
        rhs = f[:, j]
        for k in range(j + 1, n):
            rhs = rhs - cols[k] * s[k, j]
        cols[j] = lax_linalg.triangular_solve(r + s[j, j] * eye, rhs, left_side=True,
                                              lower=False)
    y = jnp.stack([cols[j] for j in range(n)], axis=1) if n else jnp.zeros((m, n), r.dtype)
    x = u @ y @ _mH(v)
    if not dtypes.is_complex(C.dtype):
        x = x.real
    bad = jnp.any(jnp.abs(jnp_linalg.eigvals(A)[:, None] + jnp_linalg.eigvals(B)[None, :]) < tol)
    return jnp.where(bad, np.nan, x)


def _eigh_tridiagonal_impl(d, e, *, eigvals_only=False, select="a", select_range=None,
                           tol=None, key=None):
    alpha, beta = _asarray(d), _asarray(e)
    supported = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported or beta.dtype not in supported:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        return jnp.real(alpha) if eigvals_only else (jnp.real(alpha), jnp.eye(n, dtype=alpha.dtype))
    if select == "a":
        lo, hi = 0, n
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        lo, hi = int(select_range[0]), int(select_range[1]) + 1
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    # eigh reads the lower triangle only: the diagonal and the sub-diagonal
    idx = jnp.arange(n)
    sub = jnp.concatenate([beta, beta[:1]])[None, :]
    dense = (jnp.where(idx[:, None] == idx[None, :], alpha[None, :], 0)
             + jnp.where(idx[:, None] == idx[None, :] + 1, sub, 0)).astype(alpha.dtype)
    v, w = lax_linalg.eigh(dense, lower=True, symmetrize_input=False)
    w, v = w[lo:hi], v[:, lo:hi]
    return w if eigvals_only else (w, v)


eigh_tridiagonal = jit_named(_eigh_tridiagonal_impl, "eigh_tridiagonal",
                             ("eigvals_only", "select", "select_range"))


from traxla.scipy._linalg_special import (block_diag, circulant, companion, convolution_matrix, dft,  # noqa: E402,F401
                              fiedler, fiedler_companion, hadamard, hankel, helmert, hilbert,
                              invhilbert, invpascal, leslie, pascal, toeplitz)

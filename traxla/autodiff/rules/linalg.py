"""JVP and transpose rules of the linear-algebra primitives, the formulas of JAX's
``lax/linalg.py`` (``cholesky``: Murray 2016; ``eigh``/``eig``: nondegenerate perturbation
theory; ``svd``: Townsend's notes; ``qr``: Townsend; ``lu``: De Hoog, Anderssen and Lukas).
Tangent expressions use only primitives with transpose rules (dot_general,
triangular_solve in its right-hand side, elementwise ops), so ``vjp`` and ``grad`` follow by
transposition. Primitives JAX does not differentiate (``geqrf``, ``householder_product``,
``schur``, ``hessenberg``, ``tridiagonal``) have no JVP rule here either: differentiating them
raises the error naming the primitive."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.rules import linalg as L
from traxla.lax import linalg as LL
from traxla.lax.linalg import (HIGHEST, _H, _T, _construct_diagonal, _extract_diagonal, _eye, _matmul, _tril,
                           _triu, symmetrize, triangular_solve)
from traxla.autodiff.ad import (Zero, add_tangents, instantiate, is_undefined, jvp_rules, transpose_rules,
                                zero_of, jvp as _jvp)
from traxla.autodiff.rules._util import defjvp_zero
from traxla.numpy import take_along_axis
from traxla.batching import vmap
from traxla.lax.linalg import _lu_solve_impl as _lu_solve, _solve_linear
from traxla.tracer.interpret import eval_jaxpr


def _real_part(x):
    return lax.real(x) if dtypes.is_complex(lax.dtype_of(x)) else x


def _as(x, dtype):
    if dtypes.is_complex(dtype) and not dtypes.is_complex(lax.dtype_of(x)):
        return lax.complex(lax._convert_element_type(x, _real(dtype), False),
                           lax.full_like(lax._convert_element_type(x, _real(dtype), False), 0))
    return lax._convert_element_type(x, np.dtype(dtype), False)


def _real(dtype):
    return {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}.get(np.dtype(dtype), np.dtype(dtype))


def _bcast_eye(x, n):
    return lax.broadcast(_eye(lax.dtype_of(x), (n, n)), lax.shape_of(x)[:-2])


def _expand(x, axis):
    return lax.expand_dims(x, (axis % (len(lax.shape_of(x)) + 1),))


def _col(x):   # [..., n] -> [..., 1, n]  (JAX's x[..., None, :])
    return _expand(x, -2)


def _row(x):   # [..., n] -> [..., n, 1]  (JAX's x[..., None])
    return _expand(x, -1)


def _broadcasting(op):
    """The binary ``op`` with NumPy broadcasting of size-1 dims (operands of equal rank)."""
    def broadcasting_op(a, b):
        shape = tuple(max(p, q) for p, q in zip(lax.shape_of(a), lax.shape_of(b)))
        return op(lax.broadcast_to(a, shape), lax.broadcast_to(b, shape))
    return broadcasting_op


_bmul, _bdiv, _bsub, _badd = map(_broadcasting, (lax.mul, lax.div, lax.sub, lax.add))


# -- cholesky ----------------------------------------------------------------------------------

def _cholesky_jvp(primals, tangents):
    x, = primals
    sigma_dot = instantiate(tangents[0])
    l_factor = _tril(L.cholesky_p.bind(x))
    n = lax.shape_of(x)[-1]

    def phi(m):
        lower = _tril(m)
        return lax.div(lower, lax.add(lax.full_like(lower, 1), _bcast_eye(lower, n)))

    tmp = triangular_solve(l_factor, sigma_dot, left_side=False, transpose_a=True,
                           conjugate_a=True, lower=True)
    l_dot = _matmul(l_factor, phi(triangular_solve(l_factor, tmp, left_side=True,
                                                   transpose_a=False, lower=True)),
                    precision=HIGHEST)
    return l_factor, l_dot


jvp_rules[L.cholesky_p] = _cholesky_jvp


# -- triangular_solve: nonlinear in a, linear in b ---------------------------------------------

def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    g_a, g_b = tangents
    ans = L.triangular_solve_p.bind(a, b, **params)
    out = None
    if type(g_b) is not Zero:
        out = L.triangular_solve_p.bind(a, g_b, **params)
    if type(g_a) is not Zero:
        left_side, lower = params["left_side"], params["lower"]
        m, n = lax.shape_of(b)[-2:]
        k = 1 if params["unit_diagonal"] else 0
        g = _tril(g_a, -k) if lower else _triu(g_a, k)
        g = lax.neg(g)
        g = _T(g) if params["transpose_a"] else g
        g = lax.conj(g) if params["conjugate_a"] and dtypes.is_complex(lax.dtype_of(g)) else g

        def a_inverse(rhs):
            return L.triangular_solve_p.bind(a, rhs, **params)

        if left_side:
            da = a_inverse(_matmul(g, ans, HIGHEST)) if m > n else \
                _matmul(a_inverse(g), ans, HIGHEST)
        else:
            da = a_inverse(_matmul(ans, g, HIGHEST)) if m < n else \
                _matmul(ans, a_inverse(g), HIGHEST)
        out = da if out is None else lax.add(out, da)
    return ans, out


def _triangular_solve_transpose(ct, a, b, **params):
    assert not is_undefined(a) and is_undefined(b)
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    params = dict(params, transpose_a=not params["transpose_a"])
    return [None, L.triangular_solve_p.bind(a, ct, **params)]


jvp_rules[L.triangular_solve_p] = _triangular_solve_jvp
transpose_rules[L.triangular_solve_p] = _triangular_solve_transpose


# -- lu ------------------------------------------------------------------------------------------

def _take_rows_2d(x, permutation):
    """``x[permutation]`` as JAX's indexing makes it: the indices wrapped, then a gather of
    whole rows."""
    m, n = lax.shape_of(x)
    index = lax.select(lax.lt(permutation, np.int32(0)), lax.add(permutation, np.int32(m)),
                       permutation)
    index = lax.broadcast_in_dim(index, (lax.shape_of(index)[0], 1), (0,))
    dnums = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                       start_index_map=(0,))
    return lax.gather(x, index, dnums, (1, n), mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _take_rows(x, permutation):
    """``x[..., permutation, :]`` for batched ``x`` and ``permutation`` (JAX's jvp is
    vmapped over the batch dimensions)."""
    fn = _take_rows_2d
    for _ in lax.shape_of(permutation)[:-1]:
        fn = vmap(fn)
    return fn(x, permutation)


def _slice_to(x, limits):
    """``x[..., :limits[-2], :limits[-1]]``: no equation when it is all of ``x`` (as
    JAX's indexing)."""
    if tuple(limits) == tuple(lax.shape_of(x)):
        return x
    return lax.slice(x, (0,) * len(limits), limits)


def _lu_jvp(primals, tangents):
    a, = primals
    a_dot = instantiate(tangents[0])
    lu, pivots, permutation = L.lu_p.bind(a)
    *batch, m, n = lax.shape_of(a)
    batch = tuple(batch)
    dtype = lax.dtype_of(a)
    k = min(m, n)
    nb = len(batch)
    zero = lax._const(lu, 0)
    l_part = _slice_to(lu, batch + (m, k))
    l_mat = lax.pad(_tril(l_part, -1), zero, [(0, 0, 0)] * (nb + 1) + [(0, m - k, 0)])
    l_mat = lax.add(l_mat, lax.broadcast(_eye(dtype, (m, m)), batch))
    u_eye = lax.pad(_eye(dtype, (n - k, n - k)), zero, ((k, 0, 0), (k, 0, 0)))
    u_part = _slice_to(lu, batch + (k, n))
    u_mat = lax.pad(_triu(u_part), zero, [(0, 0, 0)] * nb + [(0, n - k, 0), (0, 0, 0)])
    u_mat = lax.add(u_mat, lax.broadcast(u_eye, batch))
    la = triangular_solve(l_mat, _take_rows(a_dot, permutation), left_side=True,
                          transpose_a=False, lower=True, unit_diagonal=True)
    lau = triangular_solve(u_mat, la, left_side=False, transpose_a=False, lower=False)
    l_dot = _matmul(l_mat, _tril(lau, -1), HIGHEST, dtype)  # (jnp.matmul under "highest")
    u_dot = _matmul(_triu(lau), u_mat, HIGHEST, dtype)
    lu_dot = lax.add(l_dot, u_dot)
    return [lu, pivots, permutation], [lu_dot, zero_of(pivots), zero_of(permutation)]


jvp_rules[L.lu_p] = _lu_jvp
defjvp_zero(L.lu_pivots_to_permutation_p)


# -- eigh ----------------------------------------------------------------------------------------

def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    a, = primals
    n = lax.shape_of(a)[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    a_dot = instantiate(tangents[0])
    v, w_real = L.eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                              subset_by_index=subset_by_index, algorithm=algorithm)
    dtype = lax.dtype_of(a)
    w = _as(w_real, dtype)
    eye_n = _eye(dtype, (n, n))
    diffs = _bsub(_col(w), _row(w))
    fmat = lax.sub(lax.integer_pow(_badd(lax.broadcast(eye_n, lax.shape_of(diffs)[:-2]), diffs),
                                   -1), lax.broadcast(eye_n, lax.shape_of(diffs)[:-2]))
    vdag_adot_v = _matmul(_matmul(_H(v), a_dot, HIGHEST), v, HIGHEST)
    dv = _matmul(v, lax.mul(fmat, vdag_adot_v), HIGHEST)
    dw = _extract_diagonal(_real_part(vdag_adot_v))
    return [v, w_real], [dv, dw]


jvp_rules[L.eigh_p] = _eigh_jvp


# -- svd -----------------------------------------------------------------------------------------

def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm=None):
    a, = primals
    da = instantiate(tangents[0])
    s, u, vt = L.svd_p.bind(a, full_matrices=False, compute_uv=True,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    m, n = lax.shape_of(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices")
    dtype = lax.dtype_of(a)

    def mm(x, y):  # JAX's ``@`` under default_matmul_precision("float32")
        return _matmul(x, y, HIGHEST, dtype)
    ut, v = _H(u), _H(vt)
    s_dim = _col(s)
    ds_mat = mm(mm(ut, da), v)
    ds = _extract_diagonal(_real_part(ds_mat))
    if not compute_uv:
        return [s], [ds]
    k = lax.shape_of(s)[-1]
    s_diffs = lax.mul(_badd(s_dim, _T(s_dim)), _bsub(s_dim, _T(s_dim)))
    zeros_eye = lax.broadcast(_eye(lax.dtype_of(s), (k, k)), lax.shape_of(s_diffs)[:-2])
    f = lax.sub(lax.div(lax.full_like(s_diffs, 1), lax.add(s_diffs, zeros_eye)), zeros_eye)
    s_dim_c = _as(s_dim, dtype)
    dss = _bmul(s_dim_c, ds_mat)
    sds = _bmul(_T(s_dim_c), ds_mat)
    s_zeros = lax._convert_element_type(lax.eq(s, lax.full_like(s, 0)), lax.dtype_of(s), False)
    s_inv = lax.sub(lax.div(lax.full_like(s, 1), lax.add(s, s_zeros)), s_zeros)
    s_inv_mat = _construct_diagonal(s_inv)
    half = lax._const(ds_mat, 0.5)
    dudv_diag = lax.mul(lax.mul(lax.broadcast(half, lax.shape_of(ds_mat)),
                                lax.sub(ds_mat, _H(ds_mat))), _as(s_inv_mat, dtype))
    f_c = _as(f, dtype)
    du = mm(u, lax.add(lax.mul(f_c, lax.add(dss, _H(dss))), dudv_diag))
    dv = mm(v, lax.mul(f_c, lax.add(sds, _H(sds))))
    if m > n:
        dav = mm(da, v)
        du = lax.add(du, _bdiv(lax.sub(dav, mm(u, mm(ut, dav))), s_dim_c))
    if n > m:
        dahu = mm(_H(da), u)
        dv = lax.add(dv, _bdiv(lax.sub(dahu, mm(v, mm(vt, dahu))), s_dim_c))
    return [s, u, vt], [ds, du, _H(dv)]


jvp_rules[L.svd_p] = _svd_jvp


# -- qr ------------------------------------------------------------------------------------------

def _qr_mm(x, y):  # JAX's ``@`` (jnp.matmul: the operands' dtype as preferred type)
    return _matmul(x, y, None, lax.dtype_of(x))


def _thin_qr_jvp(q, r, dx):
    dx_rinv = triangular_solve(r, dx)  # right-side solve
    qt_dx_rinv = _qr_mm(_H(q), dx_rinv)
    lower = _tril(qt_dx_rinv, -1)
    do = lax.sub(lower, _H(lower))
    dtype = lax.dtype_of(do)
    # the correction for complex inputs, computed for real ones too (as JAX does: x - x)
    n = lax.shape_of(r)[-1]
    eye = _eye(dtype, (n, n))
    batch = lax.shape_of(do)[:-2]
    eye = lax.broadcast(eye, batch) if batch else eye
    real = _as(lax.real(qt_dx_rinv), dtype) if dtypes.is_complex(dtype) else qt_dx_rinv
    do = lax.add(do, lax.mul(eye, lax.sub(qt_dx_rinv, real)))
    dq = lax.add(_qr_mm(q, lax.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _qr_mm(lax.sub(qt_dx_rinv, do), r)
    return dq, dr


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
    x, = primals
    dx = instantiate(tangents[0])
    q, r, *p = L.qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    extra_primal, extra_tangent = ([p[0]], [zero_of(p[0])]) if pivoting else ([], [])
    if pivoting:  # the columns of x in pivot order: x[..., p] = q r
        dx = take_along_axis(dx, lax.expand_dims(p[0], (len(lax.shape_of(p[0])) - 1,)), axis=-1)
    *batch, m, n = lax.shape_of(x)
    batch = tuple(batch)
    nb = len(batch)
    z = (0,) * nb
    if m < n:
        x2 = lax.slice(x, z + (0, m), batch + (m, n))
        dx1 = lax.slice(dx, z + (0, 0), batch + (m, m))
        dx2 = lax.slice(dx, z + (0, m), batch + (m, n))
        r1 = lax.slice(r, z + (0, 0), batch + (m, m))
        dq, dr1 = _thin_qr_jvp(q, r1, dx1)
        if pivoting:
            x2 = lax.slice(_qr_mm(q, r), z + (0, m), batch + (m, n))
        dr2 = lax.add(_qr_mm(_H(dq), x2), _qr_mm(_H(q), dx2))
        return [q, r] + extra_primal, [dq, lax.concatenate([dr1, dr2], nb + 1)] + extra_tangent
    if not full_matrices or m == n:
        dq, dr = _thin_qr_jvp(q, r, dx)
        return [q, r] + extra_primal, [dq, dr] + extra_tangent
    # full matrices of a tall x (arXiv:2409.13374, eqs. 32-33, as JAX)
    q_mn = lax.slice(q, z + (0, 0), batch + (m, n))
    r_nn = lax.slice(r, z + (0, 0), batch + (n, n))
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    q_nn = lax.slice(q_mn, z + (0, 0), batch + (n, n))
    q_pn = lax.slice(q_mn, z + (n, 0), batch + (m, n))
    q_mp = lax.slice(q, z + (0, n), batch + (m, m))
    dq_nn = lax.slice(dq_mn, z + (0, 0), batch + (n, n))
    dq_pn = lax.slice(dq_mn, z + (n, 0), batch + (m, n))
    eye_n = lax.broadcast(_eye(lax.dtype_of(q), (n, n)), batch)
    lu_factor, _, perm = L.lu_p.bind(lax.sub(q_nn, eye_n))
    z_pn_h = _lu_solve(lu_factor, perm, _H(q_pn), trans=2)
    z_pn = _H(z_pn_h)
    dq_mp = lax.sub(_qr_mm(dq_mn, z_pn_h),
                    _qr_mm(lax.add(q_mn, _qr_mm(q_mp, z_pn)),
                            _H(lax.sub(dq_pn, _qr_mm(z_pn, dq_nn)))))
    dq = lax.concatenate([dq_mn, dq_mp], nb + 1)
    dr = lax.concatenate([dr_nn, lax.full(batch + (m - n, n), 0, lax.dtype_of(dr_nn))], nb)
    return [q, r] + extra_primal, [dq, dr] + extra_tangent


jvp_rules[L.qr_p] = _qr_jvp


# -- eig (eigenvalues; eigenvectors with enable_eigvec_derivs) -------------------------------------

def _eig_vec_jvp(w, v, da):
    """Nondegenerate perturbation theory with LAPACK's normalization of each eigenvector
    (unit 2-norm, real largest-magnitude component), as JAX's ``_eig_vec_jvp``."""
    n = lax.shape_of(w)[-1]
    nd = len(lax.shape_of(v))
    eye_n = lax.broadcast(_eye(lax.dtype_of(w), (n, n)), lax.shape_of(w)[:-1])
    fmat = lax.sub(lax.div(lax.full_like(eye_n, 1), _badd(eye_n, _bsub(_col(w), _row(w)))), eye_n)
    p = _matmul(_solve_linear(v, da), v, HIGHEST)
    dw = _extract_diagonal(p)
    u = _matmul(v, lax.mul(fmat, p), HIGHEST)
    k = lax.argmax(lax.abs(v), nd - 2, np.int32)
    mask = lax._convert_element_type(
        lax.eq(lax.broadcasted_iota(np.int32, lax.shape_of(v), nd - 2),
               lax.broadcast_in_dim(k, lax.shape_of(v), tuple(i for i in range(nd) if i != nd - 2))),
        lax.dtype_of(v), False)
    re = lax.neg(lax.real(lax.reduce_sum(lax.mul(lax.conj(v), u), (nd - 2,))))
    im = lax.div(lax.neg(lax.imag(lax.reduce_sum(lax.mul(mask, u), (nd - 2,)))),
                 lax.real(lax.reduce_sum(lax.mul(mask, v), (nd - 2,))))
    c = lax.complex(re, im)
    return dw, lax.add(u, _bmul(v, _col(c)))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
    a, = primals
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            'Derivatives of non-symmetric eigenvectors are only valid under assumptions on '
            'the input that JAX cannot check (see the enable_eigvec_derivs argument to '
            'jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to '
            'opt in. See https://github.com/jax-ml/jax/issues/2748 for discussion.')
    outs = L.eig_p.bind(a, compute_left_eigenvectors=compute_left_eigenvectors,
                        compute_right_eigenvectors=True,
                        enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)
    w, vr = outs[0], outs[-1]
    da = _as(instantiate(tangents[0]), lax.dtype_of(vr))
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        # dw_j = (V^{-1} dA V)_jj
        dw = lax.reduce_sum(lax.mul(_solve_linear(vr, da), _T(vr)),
                            (len(lax.shape_of(vr)) - 1,))
        return [w], [dw]
    dw, dvr = _eig_vec_jvp(w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        _, dvl = _eig_vec_jvp(lax.conj(w), outs[1], _H(da))
        primal_out.append(outs[1])
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


jvp_rules[L.eig_p] = _eig_jvp


# -- symmetric_product: alpha A A^T + beta C -----------------------------------------------------

def _symmetric_product_jvp(primals, tangents, *, alpha, beta):
    a, c = primals
    da, dc = tangents
    out = L.symmetric_product_p.bind(a, c, alpha=alpha, beta=beta)
    parts = []
    if type(da) is not Zero:
        cross = _matmul(da, _T(a))
        parts.append(lax.mul(lax._const(cross, alpha), lax.add(cross, _T(cross))))
    if type(dc) is not Zero:
        parts.append(lax.mul(lax._const(dc, beta), dc))
    return out, parts[0] if len(parts) == 1 else lax.add(*parts)


jvp_rules[L.symmetric_product_p] = _symmetric_product_jvp


# -- tridiagonal_solve: linear in b --------------------------------------------------------------

def _tridiagonal_product(dl, d, du, b):
    y = lax.mul(_row(d), b)
    nb = len(lax.shape_of(b))
    m = lax.shape_of(b)[-2]
    zero = lax._const(b, 0)
    # y[:-1] += du[:-1] * b[1:];  y[1:] += dl[1:] * b[:-1]
    pad_up = [(0, 0, 0)] * (nb - 2) + [(0, 1, 0), (0, 0, 0)]
    pad_dn = [(0, 0, 0)] * (nb - 2) + [(1, 0, 0), (0, 0, 0)]
    b_next = lax.pad(lax.slice_in_dim(b, 1, m, axis=nb - 2), zero, pad_up)
    b_prev = lax.pad(lax.slice_in_dim(b, 0, m - 1, axis=nb - 2), zero, pad_dn)
    y = lax.add(y, _bmul(_row(du), b_next))
    return lax.add(y, _bmul(_row(dl), b_prev))


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    dl, d, du, b = primals
    tdl, td, tdu, tb = tangents
    x = L.tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)
    if all(type(t) is Zero for t in (tdl, td, tdu)):
        rhs = instantiate(tb)
    else:
        prod = _tridiagonal_product(instantiate(tdl), instantiate(td), instantiate(tdu), x)
        rhs = lax.sub(instantiate(tb), prod) if type(tb) is not Zero else lax.neg(prod)
    return x, L.tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    assert is_undefined(b) and not any(is_undefined(v) for v in (dl, d, du))
    if type(ct) is Zero:
        return [None, None, None, Zero(b.aval)]
    m = lax.shape_of(d)[-1]
    nb = len(lax.shape_of(d))
    zero = lax._const(d, 0)
    # the transposed tridiagonal matrix: its sub-diagonal is du shifted down, its
    # super-diagonal dl shifted up
    dl_t = lax.pad(lax.slice_in_dim(du, 0, m - 1, axis=nb - 1), zero,
                   [(0, 0, 0)] * (nb - 1) + [(1, 0, 0)])
    du_t = lax.pad(lax.slice_in_dim(dl, 1, m, axis=nb - 1), zero,
                   [(0, 0, 0)] * (nb - 1) + [(0, 1, 0)])
    return [None, None, None, L.tridiagonal_solve_p.bind(dl_t, d, du_t, ct,
                                                         perturb_singular=perturb_singular)]


jvp_rules[L.tridiagonal_solve_p] = _tridiagonal_solve_jvp
transpose_rules[L.tridiagonal_solve_p] = _tridiagonal_solve_transpose

del LL


# -- custom_linear_solve: implicit differentiation through the user's solvers ---------------------

def _custom_linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    kwargs = dict(const_lengths=const_lengths, jaxprs=jaxprs)
    x = L.custom_linear_solve_p.bind(*primals, **kwargs)
    params, _ = L.split_linear_solve_args(primals, const_lengths)
    params_dot, b_dot = L.split_linear_solve_args(tangents, const_lengths)
    n_b = len(b_dot)
    x_leaves = x[:n_b]
    if all(type(p) is Zero for p in params_dot.matvec):
        rhs = [instantiate(t) for t in b_dot]
    else:
        # d(matvec)(x) for the constants' tangents: the JVP of matvec in its constants at x
        matvec = jaxprs.matvec
        n_mv = len(params.matvec)

        def matvec_of_consts(*consts):
            return eval_jaxpr(matvec, (), *consts, *x_leaves)

        _, mv_dot = _jvp(matvec_of_consts, list(params.matvec[:n_mv]),
                         [instantiate(t) for t in params_dot.matvec])
        # JAX's ``add_tangents(b_dot, -matvec_tangents)``
        rhs = [add_tangents(bd, lax.neg(md)) for bd, md in zip(b_dot, mv_dot)]
    flat_params = [p for ps in params for p in ps]
    x_dot = L.custom_linear_solve_p.bind(*flat_params, *rhs, **kwargs)
    aux_dot = [zero_of(a) for a in x[n_b:]]
    return x, list(x_dot[:n_b]) + aux_dot


def _custom_linear_solve_transpose(cts, *primals, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation "
                        "of custom_linear_solve")
    params, b = L.split_linear_solve_args(primals, const_lengths)
    if any(is_undefined(p) for ps in params for p in ps):
        raise NotImplementedError("custom_linear_solve: transposing with respect to the "
                                  "solver's constants is not supported (as in JAX)")
    cts = list(cts) if isinstance(cts, (list, tuple)) else [cts]
    x_ct = [instantiate(c) if type(c) is Zero else c for c in cts[:len(b)]]
    t_params = params.transpose()
    out = L.custom_linear_solve_p.bind(*[p for ps in t_params for p in ps], *x_ct,
                                       const_lengths=const_lengths.transpose(),
                                       jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(out[:len(b)])


jvp_rules[L.custom_linear_solve_p] = _custom_linear_solve_jvp
transpose_rules[L.custom_linear_solve_p] = _custom_linear_solve_transpose

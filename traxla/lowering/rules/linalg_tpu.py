"""Lowering of the linear-algebra primitives for TPU, as JAX 0.10.2 lowers them there (its
default rules plus those registered with ``platform='tpu'``):

* ``cholesky`` -> ``stablehlo.cholesky`` (lower); ``triangular_solve`` ->
  ``stablehlo.triangular_solve``;
* ``lu`` -> the ``LuDecomposition`` custom call; ``geqrf`` -> ``Qr``; ``householder_product``
  -> ``ProductOfElementaryHouseholderReflectors``; ``eigh`` with the Jacobi algorithm ->
  ``Eigh`` (backend config ``"lower,sort,100,1e-6"``): XLA's TPU expanders implement these;
* ``eigh`` (default: QDWH), ``svd`` (QDWH polar + eigh), ``ormqr`` (Householder reflections
  in a loop) and ``tridiagonal_solve`` (a scan, Thomas' algorithm): JAX's Python
  implementations, handed down by the layers that can trace them
  (``linalg.register_decomposition(..., platform="tpu")``);
* ``eig``, ``schur``, ``hessenberg``, ``tridiagonal``, ``geqp3``: JAX has no TPU lowering and
  refuses them with the same error.
"""
from __future__ import annotations

from traxla.ir.rules import linalg as L
from traxla.lowering.mlir import aval_type, chlo, hlo, ir
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.ffi import custom_call
from traxla.lowering.rules.linalg import _decompositions, lower_decomposition

_TPU = "tpu"


def _cholesky(ctx, x):
    return hlo.cholesky(x, lower=ir.BoolAttr.get(True))


def _triangular_solve(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    if conjugate_a and not transpose_a:
        a = chlo.conj(a)
        conjugate_a = False
    if not transpose_a:
        transpose = "NO_TRANSPOSE"
    else:
        transpose = "ADJOINT" if conjugate_a else "TRANSPOSE"
    return hlo.triangular_solve(a, b, ir.BoolAttr.get(left_side), ir.BoolAttr.get(lower),
                                ir.BoolAttr.get(unit_diagonal),
                                hlo.TransposeAttr.get(transpose))


def _lu(ctx, x):
    op = custom_call("LuDecomposition", result_types=[aval_type(a) for a in ctx.avals_out],
                     operands=[x])
    return list(op.results)


def _geqrf(ctx, x):
    op = custom_call("Qr", result_types=[aval_type(a) for a in ctx.avals_out], operands=[x],
                     api_version=1)
    return list(op.results)


def _householder_product(ctx, a, taus):
    op = custom_call("ProductOfElementaryHouseholderReflectors",
                     result_types=[aval_type(ctx.aval_out)], operands=[a, taus], api_version=1)
    return op.results[0]


def _algorithm_name(algorithm):
    return None if algorithm is None else str(getattr(algorithm, "name", algorithm)).upper()


def _eigh(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    name = _algorithm_name(algorithm) or "QDWH"
    if name == "QR":
        raise NotImplementedError("QR algorithm is not supported on TPU")
    if name == "JACOBI":
        aval, = ctx.avals_in
        if aval.shape[-1] == 0:
            reshaped = hlo.reshape(aval_type(aval.update(shape=aval.shape[:-1])), x)
            return [x, hlo.real(reshaped)]
        op = custom_call("Eigh", result_types=[aval_type(a) for a in ctx.avals_out],
                         operands=[x], api_version=1,
                         backend_config=f"{int(lower)},{int(sort_eigenvalues)},100,1e-6")
        return list(op.results)
    if name != "QDWH":
        raise ValueError(f"Unknown algorithm: {algorithm}")
    return lower_decomposition(ctx, (L.eigh_p, _TPU),
                               (("lower", lower), ("sort_eigenvalues", sort_eigenvalues),
                                ("subset_by_index", subset_by_index)),
                               [x], list(ctx.avals_in))


def _svd(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm=None):
    aval, = ctx.avals_in
    m, n = aval.shape[-2:]
    if _algorithm_name(algorithm) not in (None, "DEFAULT", "POLAR"):
        raise NotImplementedError("Only the POLAR (which is also DEFAULT on TPU) SVD algorithm "
                                  "is supported on TPU.")
    if m == 0 or n == 0:
        return lower_decomposition(ctx, "empty_svd", (("compute_uv", compute_uv),
                                                      ("full_matrices", full_matrices)),
                                   [x], [aval])
    return lower_decomposition(ctx, (L.svd_p, _TPU),
                               (("full_matrices", full_matrices), ("compute_uv", compute_uv),
                                ("subset_by_index", subset_by_index)), [x], [aval])


def _decomposed(prim, *param_names):
    """A rule emitting the TPU decomposition registered for ``prim`` (JAX's ``lower_fun``)."""
    def rule(ctx, *operands, **params):
        if (prim, _TPU) not in _decompositions:
            raise NotImplementedError(f"traxla has no TPU lowering of '{prim.name}'")
        args = tuple((k, params[k]) for k in param_names)
        outs = lower_decomposition(ctx, (prim, _TPU), args, list(operands), list(ctx.avals_in))
        return outs if prim.multiple_results else outs[0]
    return rule


def _no_tpu_rule(prim):
    def rule(ctx, *operands, **params):
        raise NotImplementedError(
            f"MLIR translation rule for primitive '{prim.name}' not found for platform tpu")
    return rule


register_lowering(L.cholesky_p, _cholesky, platform=_TPU)
register_lowering(L.triangular_solve_p, _triangular_solve, platform=_TPU)
register_lowering(L.lu_p, _lu, platform=_TPU)
register_lowering(L.geqrf_p, _geqrf, platform=_TPU)
register_lowering(L.householder_product_p, _householder_product, platform=_TPU)
register_lowering(L.eigh_p, _eigh, platform=_TPU)
register_lowering(L.svd_p, _svd, platform=_TPU)
register_lowering(L.ormqr_p, _decomposed(L.ormqr_p, "left", "transpose"), platform=_TPU)
register_lowering(L.tridiagonal_solve_p, _decomposed(L.tridiagonal_solve_p, "perturb_singular"),
                  platform=_TPU)
for _prim in (L.eig_p, L.schur_p, L.hessenberg_p, L.tridiagonal_p, L.geqp3_p):
    register_lowering(_prim, _no_tpu_rule(_prim), platform=_TPU)

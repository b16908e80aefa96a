"""Lowering of the linear-algebra primitives (``ir/rules/linalg.py``) to jaxlib's LAPACK
typed-FFI kernels, as JAX 0.10.2 lowers them on CPU: the same targets
(``lapack_{s,d,c,z}<routine>_ffi``), attributes (u8 characters such as ``uplo = 76``),
column-major layouts, ``num_batch_dims`` frontend attribute and operand/output aliasing. Each
kernel's ``info`` output turns a failed factorization into NaNs with a ``select``, never
garbage.

Primitives JAX lowers through a Python implementation (``mlir.lower_fun``: ``qr``,
``lu_pivots_to_permutation``, ``cholesky_update``) get theirs from ``lax.linalg`` through
``register_decomposition``: the lowering layer cannot trace, so the layer that can hands
its function down, and this module traces it once per operand types and emits the jaxpr."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.rules import linalg as L
from traxla.lowering.mlir import aval_type, broadcast_to, constant, hlo, ir, tensor_type
from traxla.lowering.module import const_value, emit_jaxpr
from traxla.lowering.registry import custom_call_libraries, register_lowering
from traxla.lowering.rules.elementwise import compare

_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
           np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def lapack_target(routine: str, dtype) -> str:
    """``lapack_<s|d|c|z><routine>``, as ``jaxlib.lapack.prepare_lapack_call`` names it; using
    one asks the runtime to register jaxlib's LAPACK kernels before compiling."""
    prefix = _PREFIX.get(np.dtype(dtype))
    if prefix is None:
        raise NotImplementedError(f"LAPACK has no {routine} kernel for dtype {np.dtype(dtype)}: "
                                  "use float32, float64, complex64 or complex128.")
    custom_call_libraries.add("lapack")
    return f"lapack_{prefix}{routine}"


def _check_cpu(ctx, name):
    platform = getattr(ctx.module, "platform", "cpu")
    if platform != "cpu":
        raise NotImplementedError(
            f"traxla lowers the linear-algebra primitive '{name}' to LAPACK on CPU only; "
            f"the module is being lowered for '{platform}'. Run it on the CPU backend.")


def _u8(value) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), int(value))


def _char(c: str) -> ir.Attribute:
    return _u8(ord(c))


def _i32(value) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))


def _layout(ndim: int, column_major: bool):
    if column_major:  # the matrix dims minor-most, in Fortran order; batch dims major
        return (ndim - 2, ndim - 1) + tuple(range(ndim - 3, -1, -1))
    return tuple(range(ndim - 1, -1, -1))


def _dense_index(values) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(np.atleast_1d(np.asarray(values, dtype=np.int64)),
                                       type=ir.IndexType.get())


def ffi_call(target, operands, avals_in, avals_out, aliases=None, num_non_batch_dims=2,
             column_major=True, **attrs):
    """A ``stablehlo.custom_call`` to a typed-FFI LAPACK target, built as JAX's
    ``_linalg_ffi_lowering`` builds it. Returns the result values."""
    max_ndim = max(len(a.shape) for a in avals_in)
    op_layouts = [_layout(len(a.shape), column_major and len(a.shape) == max_ndim)
                  for a in avals_in]
    res_layouts = [_layout(len(a.shape), column_major and len(a.shape) == max_ndim)
                   for a in avals_out]
    result_types = [aval_type(a) for a in avals_out]
    attributes = {
        "call_target_name": ir.StringAttr.get(target),
        "has_side_effect": ir.BoolAttr.get(False),
        "backend_config": ir.StringAttr.get(""),
        # api_version 1 with the typed-FFI attributes in ``mhlo.backend_config``: JAX's spelling
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "called_computations": ir.ArrayAttr.get([]),
        "operand_layouts": ir.ArrayAttr.get([_dense_index(l) for l in op_layouts]),
        "result_layouts": ir.ArrayAttr.get([_dense_index(l) for l in res_layouts]),
        "mhlo.frontend_attributes": ir.DictAttr.get(
            {"num_batch_dims": ir.StringAttr.get(str(max_ndim - num_non_batch_dims))}),
    }
    if aliases:
        attributes["output_operand_aliases"] = ir.ArrayAttr.get([
            hlo.OutputOperandAlias.get(
                output_tuple_indices=[out] if len(result_types) > 1 else [],
                operand_index=inp, operand_tuple_indices=[])
            for inp, out in aliases.items()])
    op = hlo.CustomCallOp.build_generic(results=result_types, operands=list(operands),
                                        attributes=attributes)
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(attrs)
    return list(op.results)


def _full(value, aval):
    """JAX's ``mlir.full_like_aval``: a constant broadcast to ``aval`` (a rank-0 one too)."""
    dtype = np.dtype(aval.dtype)
    scalar = constant(np.array(value, dtype), dtype)
    if aval.shape == ():
        return hlo.broadcast_in_dim(tensor_type((), dtype), scalar, [])
    return broadcast_to(scalar, ShapedArray((), dtype), aval.shape)


def _info_ok(info, batch_dims, direction="EQ"):
    aval = ShapedArray(tuple(batch_dims), np.dtype(np.int32))
    return compare(info, _full(0, aval), direction, np.dtype(np.int32))


def replace_not_ok_with_nan(batch_dims, ok, x, x_aval):
    """JAX's ``_replace_not_ok_with_nan``: NaN wherever the factorization failed."""
    batch_dims = tuple(batch_dims)
    extra = len(x_aval.shape) - len(batch_dims)
    select_shape = batch_dims + (1,) * extra
    which = hlo.broadcast_in_dim(tensor_type(select_shape, np.bool_), ok,
                                 list(range(len(batch_dims))))
    nan = np.nan + np.nan * 1j if dtypes.is_complex(x_aval.dtype) else np.nan
    nans = _full(nan, x_aval)
    which = hlo.broadcast_in_dim(tensor_type(x_aval.shape, np.bool_), which,
                                 list(range(len(x_aval.shape))))
    return hlo.select(which, x, nans)


# -- decompositions handed down by lax.linalg (JAX's mlir.lower_fun) -------------------------

_decompositions: dict = {}   # primitive -> (python fn(*operands, **params), tracer)
_traced: dict = {}


def register_decomposition(prim, fn, tracer, platform=None):
    """``tracer(fn, avals_in) -> ClosedJaxpr``, supplied by the layer that can trace.
    ``platform``: the decomposition serves modules lowered for that platform only (JAX's
    ``register_lowering(prim, mlir.lower_fun(fn), platform=)``)."""
    name = prim if platform is None else (prim, platform)
    _decompositions[name] = (fn, tracer)
    register_lowering(prim, _lower_decomposition(prim, name), platform=platform)


def add_decomposition(name, fn, tracer):
    """A decomposition that rules emit through ``lower_decomposition(ctx, name, ...)``."""
    _decompositions[name] = (fn, tracer)


def _lower_decomposition(prim, name):
    def rule(ctx, *operands, **params):
        fn, tracer = _decompositions[name]
        key = (name, tuple(ctx.avals_in), tuple(sorted(params.items(), key=lambda kv: kv[0])))
        closed = _traced.get(key)
        if closed is None:
            closed = _traced[key] = tracer(lambda *xs: fn(*xs, **params), list(ctx.avals_in))
        consts = [const_value(v.aval, c) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
        outs = emit_jaxpr(ctx.module, closed.jaxpr, consts, list(operands))
        return outs if prim.multiple_results else outs[0]
    return rule


def lower_decomposition(ctx, prim_key, fn_args, operands, avals_in):
    """Emits a registered decomposition for operand types other than the equation's."""
    fn, tracer = _decompositions[prim_key]
    key = ("sub", prim_key, tuple(avals_in), fn_args)
    closed = _traced.get(key)
    if closed is None:
        closed = _traced[key] = tracer(lambda *xs: fn(*xs, **dict(fn_args)), list(avals_in))
    consts = [const_value(v.aval, c) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
    return emit_jaxpr(ctx.module, closed.jaxpr, consts, list(operands))


# -- the LAPACK-backed primitives ---------------------------------------------------------------

def _batch(aval):
    return tuple(aval.shape[:-2])


def _info_aval(batch_dims):
    return ShapedArray(tuple(batch_dims), np.dtype(np.int32))


def _cholesky(ctx, x):
    _check_cpu(ctx, "cholesky")
    aval, = ctx.avals_in
    batch = _batch(aval)
    target = lapack_target("potrf_ffi", aval.dtype)
    result, info = ffi_call(target, [x], [aval], [aval, _info_aval(batch)], {0: 0},
                            uplo=_char("L"))
    return replace_not_ok_with_nan(batch, _info_ok(info, batch), result, ctx.aval_out)


def _triangular_solve(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    _check_cpu(ctx, "triangular_solve")
    a_aval, b_aval = ctx.avals_in
    if conjugate_a and not transpose_a:
        a = hlo.complex(hlo.real(a), hlo.negate(hlo.imag(a))) \
            if dtypes.is_complex(a_aval.dtype) else a
        conjugate_a = False
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    target = lapack_target("trsm_ffi", a_aval.dtype)
    out, = ffi_call(target, [a, b], [a_aval, b_aval], [ctx.aval_out], {1: 0},
                    side=_char("L" if left_side else "R"), uplo=_char("L" if lower else "U"),
                    trans_x=_char(trans), diag=_char("U" if unit_diagonal else "N"))
    return out


def _lu(ctx, x):
    _check_cpu(ctx, "lu")
    aval, = ctx.avals_in
    out_aval, pivot_aval, perm_aval = ctx.avals_out
    batch = _batch(aval)
    target = lapack_target("getrf_ffi", aval.dtype)
    lu, pivot, info = ffi_call(target, [x], [aval], [out_aval, pivot_aval, _info_aval(batch)],
                               {0: 0})
    pivot = hlo.subtract(pivot, _full(1, pivot_aval))  # LAPACK's pivots are 1-based
    lu = replace_not_ok_with_nan(batch, _info_ok(info, batch, "GE"), lu, out_aval)
    perm, = lower_decomposition(ctx, L.lu_pivots_to_permutation_p,
                                (("permutation_size", aval.shape[-2]),), [pivot], [pivot_aval])
    return [lu, pivot, perm]


def _eigh(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    _check_cpu(ctx, "eigh")
    aval, = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    n = aval.shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    if algorithm is not None and str(getattr(algorithm, "name", algorithm)).upper() != "QR":
        raise NotImplementedError(f"eigh algorithm {algorithm} is not supported on CPU")
    batch = _batch(aval)
    routine = "heevd_ffi" if dtypes.is_complex(aval.dtype) else "syevd_ffi"
    v, w, info = ffi_call(lapack_target(routine, aval.dtype), [x], [aval],
                          [v_aval, w_aval, _info_aval(batch)], {0: 0},
                          mode=_char("V"), uplo=_char("L" if lower else "U"))
    ok = _info_ok(info, batch)
    return [replace_not_ok_with_nan(batch, ok, v, v_aval),
            replace_not_ok_with_nan(batch, ok, w, w_aval)]


def _svd(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    _check_cpu(ctx, "svd")
    aval, = ctx.avals_in
    m, n = aval.shape[-2:]
    batch = _batch(aval)
    if not (subset_by_index is None or tuple(subset_by_index) == (0, min(m, n))):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if m == 0 or n == 0:
        return lower_decomposition(ctx, "empty_svd", (("compute_uv", compute_uv),
                                                      ("full_matrices", full_matrices)),
                                   [x], [aval])
    name = str(getattr(algorithm, "name", algorithm)).upper()
    if algorithm is None or name in ("DEFAULT", "DIVIDE_AND_CONQUER"):
        routine = "gesdd_ffi"
    elif name == "QR":
        routine = "gesvd_ffi"
    else:
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    mode = ("A" if full_matrices else "S") if compute_uv else "N"
    s_aval = ctx.avals_out[0]
    k = min(m, n)
    if compute_uv:
        u_aval, vt_aval = ctx.avals_out[1:]
    else:
        u_aval = ShapedArray(batch + (m, m if full_matrices else k), aval.dtype)
        vt_aval = ShapedArray(batch + (n if full_matrices else k, n), aval.dtype)
    _, s, u, vt, info = ffi_call(lapack_target(routine, aval.dtype), [x], [aval],
                                 [aval, s_aval, u_aval, vt_aval, _info_aval(batch)], {0: 0},
                                 mode=_char(mode))
    ok = _info_ok(info, batch)
    out = [replace_not_ok_with_nan(batch, ok, s, s_aval)]
    if compute_uv:
        out += [replace_not_ok_with_nan(batch, ok, u, u_aval),
                replace_not_ok_with_nan(batch, ok, vt, vt_aval)]
    return out


def _geqrf(ctx, x):
    _check_cpu(ctx, "geqrf")
    aval, = ctx.avals_in
    return ffi_call(lapack_target("geqrf_ffi", aval.dtype), [x], [aval], list(ctx.avals_out),
                    {0: 0})


def _householder_product(ctx, a, taus):
    _check_cpu(ctx, "householder_product")
    a_aval, _ = ctx.avals_in
    routine = "ungqr_ffi" if dtypes.is_complex(a_aval.dtype) else "orgqr_ffi"
    out, = ffi_call(lapack_target(routine, a_aval.dtype), [a, taus], list(ctx.avals_in),
                    [ctx.aval_out], {0: 0})
    return out


def _ormqr(ctx, a, taus, c, *, left, transpose):
    _check_cpu(ctx, "ormqr")
    a_aval = ctx.avals_in[0]
    routine = "unmqr_ffi" if dtypes.is_complex(a_aval.dtype) else "ormqr_ffi"
    out, = ffi_call(lapack_target(routine, a_aval.dtype), [a, taus, c], list(ctx.avals_in),
                    [ctx.aval_out], {2: 0}, left=ir.BoolAttr.get(bool(left)),
                    transpose=ir.BoolAttr.get(bool(transpose)))
    return out


def _geqp3(ctx, a, jpvt, *, use_magma=None):
    _check_cpu(ctx, "geqp3")
    a_aval = ctx.avals_in[0]
    return ffi_call(lapack_target("geqp3_ffi", a_aval.dtype), [a, jpvt], list(ctx.avals_in),
                    list(ctx.avals_out), {0: 0, 1: 1})


def _eig(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors,
         enable_eigvec_derivs=False, implementation=None):
    _check_cpu(ctx, "eig")
    aval, = ctx.avals_in
    batch = _batch(aval)
    n = aval.shape[-1]
    complex_dtype = ctx.avals_out[0].dtype
    vec_aval = ShapedArray(batch + (n, n), complex_dtype)
    info_aval = _info_aval(batch)
    attrs = dict(compute_left=_char("V" if compute_left_eigenvectors else "N"),
                 compute_right=_char("V" if compute_right_eigenvectors else "N"))
    target = lapack_target("geev_ffi", aval.dtype)
    if dtypes.is_complex(aval.dtype):
        w, vl, vr, info = ffi_call(target, [x], [aval],
                                   [ShapedArray(batch + (n,), complex_dtype), vec_aval, vec_aval,
                                    info_aval], **attrs)
    else:
        real_w = ShapedArray(batch + (n,), aval.dtype)
        wr, wi, vl, vr, info = ffi_call(target, [x], [aval],
                                        [real_w, real_w, vec_aval, vec_aval, info_aval], **attrs)
        w = hlo.complex(wr, wi)
    ok = _info_ok(info, batch)
    out = [replace_not_ok_with_nan(batch, ok, w, ctx.avals_out[0])]
    if compute_left_eigenvectors:
        out.append(replace_not_ok_with_nan(batch, ok, vl, vec_aval))
    if compute_right_eigenvectors:
        out.append(replace_not_ok_with_nan(batch, ok, vr, vec_aval))
    return out


def _schur(ctx, x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    _check_cpu(ctx, "schur")
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    aval, = ctx.avals_in
    batch = _batch(aval)
    info_aval = _info_aval(batch)
    eigvals = ShapedArray(tuple(aval.shape[:-1]), aval.dtype)
    if dtypes.is_complex(aval.dtype):
        avals_out = [aval, aval, eigvals, info_aval, info_aval]
    else:
        avals_out = [aval, aval, eigvals, eigvals, info_aval, info_aval]
    schur_form, vectors, *_, info = ffi_call(
        lapack_target("gees_ffi", aval.dtype), [x], [aval], avals_out, {0: 0},
        mode=_char("V" if compute_schur_vectors else "N"), sort=_char("N"))
    ok = _info_ok(info, batch)
    out = [replace_not_ok_with_nan(batch, ok, schur_form, ctx.avals_out[0])]
    if compute_schur_vectors:
        out.append(replace_not_ok_with_nan(batch, ok, vectors, ctx.avals_out[1]))
    return out


def _hessenberg(ctx, x):
    _check_cpu(ctx, "hessenberg")
    aval, = ctx.avals_in
    batch = _batch(aval)
    n = aval.shape[-1]
    a, taus, info = ffi_call(lapack_target("gehrd_ffi", aval.dtype), [x], [aval],
                             [*ctx.avals_out, _info_aval(batch)], {0: 0},
                             high=_i32(n), low=_i32(1))
    ok = _info_ok(info, batch)
    return [replace_not_ok_with_nan(batch, ok, a, ctx.avals_out[0]),
            replace_not_ok_with_nan(batch, ok, taus, ctx.avals_out[1])]


def _tridiagonal(ctx, x, *, lower):
    _check_cpu(ctx, "tridiagonal")
    aval, = ctx.avals_in
    batch = _batch(aval)
    routine = "hetrd_ffi" if dtypes.is_complex(aval.dtype) else "sytrd_ffi"
    a, d, e, taus, info = ffi_call(lapack_target(routine, aval.dtype), [x], [aval],
                                   [*ctx.avals_out, _info_aval(batch)], {0: 0},
                                   uplo=_char("L" if lower else "U"))
    ok = _info_ok(info, batch)
    return [replace_not_ok_with_nan(batch, ok, v, av)
            for v, av in zip((a, d, e, taus), ctx.avals_out)]


def _tridiagonal_solve(ctx, dl, d, du, b, *, perturb_singular):
    _check_cpu(ctx, "tridiagonal_solve")
    if perturb_singular:
        custom_call_libraries.add("lapack")
        out, = ffi_call("tridiagonal_solve_perturbed_ffi", [dl, d, du, b], list(ctx.avals_in),
                        [ctx.aval_out])
        return out
    b_aval = ctx.avals_in[3]
    batch = _batch(b_aval)
    avals_out = [*ctx.avals_in, _info_aval(batch)]
    *_, b_out, info = ffi_call(lapack_target("gtsv_ffi", b_aval.dtype), [dl, d, du, b],
                               list(ctx.avals_in), avals_out, {0: 0, 1: 1, 2: 2, 3: 3})
    return replace_not_ok_with_nan(batch, _info_ok(info, batch), b_out, ctx.aval_out)


register_lowering(L.cholesky_p, _cholesky)
register_lowering(L.triangular_solve_p, _triangular_solve)
register_lowering(L.lu_p, _lu)
register_lowering(L.eigh_p, _eigh)
register_lowering(L.svd_p, _svd)
register_lowering(L.geqrf_p, _geqrf)
register_lowering(L.householder_product_p, _householder_product)
register_lowering(L.eig_p, _eig)
register_lowering(L.ormqr_p, _ormqr)
register_lowering(L.geqp3_p, _geqp3)
register_lowering(L.schur_p, _schur)
register_lowering(L.hessenberg_p, _hessenberg)
register_lowering(L.tridiagonal_p, _tridiagonal)
register_lowering(L.tridiagonal_solve_p, _tridiagonal_solve)


def _custom_linear_solve(ctx, *args, const_lengths, jaxprs):
    """The ``solve`` function's jaxpr, inlined (as JAX's impl does)."""
    params, b = L.split_linear_solve_args(args, const_lengths)
    solve = jaxprs.solve
    consts = [const_value(v.aval, c) for v, c in zip(solve.jaxpr.constvars, solve.consts)]
    return emit_jaxpr(ctx.module, solve.jaxpr, consts, list(params.solve) + list(b))


register_lowering(L.custom_linear_solve_p, _custom_linear_solve)

"""vmap of ``custom_jvp``/``custom_vjp`` functions, as JAX's ``BatchTrace`` does it: the
function and its rules are batched over the inputs that are batched, and each output is
batched only where the function (or the rule that ran) batches it, so an output that does
not depend on the batched inputs (a loop counter, a flag) stays unbatched.

``custom.py`` binds the batched function and rules built here in the enclosing trace and
reads the outputs' batch dims from the ``OutDims`` they share: whichever of them ran last
set them (JAX's ``merge_linear_aux``); a rule run later, from a staged equation whose
outputs are already typed, puts its outputs where the function put them."""
from __future__ import annotations

from traxla.autodiff.ad import Zero, has_float0_tangent, instantiate
from traxla.batching.batch_trace import matchaxis, moveaxis, vmap_unrestricted
from traxla.ir.avals import ShapedArray


class OutDims:
    """The batch dims (0 or None) of the outputs: ``fun`` those of the function once it
    has run, ``last`` those of whichever of the function and rules ran last."""

    __slots__ = ("fun", "last")

    def __init__(self):
        self.fun = None
        self.last = None


def _front(dims):
    return [None if d is None else 0 for d in dims]


def _merged(out_dims, *more):
    """Batched where any of the dims is (JAX's ``_merge_bdims``), at 0."""
    return [0 if any(m[i] is not None for m in (out_dims, *more)) else None
            for i in range(len(out_dims))]


def _to(xs, dims, targets, size, sum_match=False):
    return [x if x is None else matchaxis(x, d, t, size, sum_match)
            for x, d, t in zip(xs, dims, targets)]


def _unbatched_zero(z, d):
    """A symbolic zero of a batched value, as the zero of one example."""
    if d is None:
        return z
    shape = list(z.aval.shape)
    del shape[d]
    return Zero(ShapedArray(tuple(shape), z.aval.dtype, z.aval.weak_type))



def _batched(fun, args, dims, size):
    """``fun`` (flat in, a list out, Nones kept) batched over ``args`` at ``dims``:
    (outputs, their dims), each batched one at 0."""
    where = []

    def flat(*xs):
        outs = list(fun(*xs))
        where[:] = [o is not None for o in outs]
        return [o for o in outs if o is not None]

    vals, ds = vmap_unrestricted(flat, list(args), list(dims), size)
    vals = [v if d in (None, 0) else moveaxis(v, d, 0) for v, d in zip(vals, ds)]
    vals, ds = iter(vals), iter(_front(ds))
    outs, out_dims = [], []
    for present in where:
        outs.append(next(vals) if present else None)
        out_dims.append(next(ds) if present else None)
    return outs, out_dims


def front_inputs(vals, dims):
    """The batched inputs with their batch axis moved to the front."""
    vals = [v if d in (None, 0) else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    return vals, _front(dims)


def batched_fun(size, fun, dims, out: OutDims):
    """``fun`` batched over ``dims``: each output batched (at 0) only where it must be."""
    def bfun(*xs):
        outs, od = _batched(fun, xs, dims, size)
        if out.fun is not None:  # retraced for another trace: the outputs as typed before
            outs, od = _to(outs, od, out.fun, size), out.fun
        out.fun = out.last = od
        return outs
    return bfun


def batched_jvp(size, jvp, dims, out: OutDims):
    """``jvp(primals, tangents)`` batched: the tangent of a batched input is batched like
    it; primal and tangent outputs batched alike, where the function batches them once
    it has run, else where the rule does."""
    def bjvp(primals, tangents):
        n = len(primals)
        t_dims = [None if t is None or type(t) is Zero else d for t, d in zip(tangents, dims)]
        tangents = [_unbatched_zero(t, d) if type(t) is Zero else t
                    for t, d in zip(tangents, dims)]

        def one(*a):
            outs, touts = jvp(list(a[:n]), list(a[n:]))
            touts = [None if t is None or has_float0_tangent(o) else instantiate(t)
                     for o, t in zip(outs, touts)]
            return list(outs) + touts
        flat, fd = _batched(one, list(primals) + list(tangents), list(dims) + t_dims, size)
        m = len(flat) // 2
        outs, touts, od, td = flat[:m], flat[m:], fd[:m], fd[m:]
        targets = out.fun if out.fun is not None else _merged(od, td)
        out.last = targets
        return _to(outs, od, targets, size), _to(touts, td, targets, size)
    return bjvp


def batched_fwd(size, fwd, dims, out: OutDims):
    """``fwd`` batched: outputs as ``batched_fun``'s, every residual batched at 0 (what
    ``bwd`` gets back, whatever trace it runs in)."""
    def bfwd(*xs):
        n_out = []

        def one(*a):
            outs, res = fwd(*a)
            n_out[:] = [len(outs)]
            return list(outs) + list(res)
        flat, fd = _batched(one, xs, dims, size)
        k = n_out[0]
        outs, od = flat[:k], fd[:k]
        targets = out.fun if out.fun is not None else od
        out.last = targets
        res = _to(flat[k:], fd[k:], [0] * (len(flat) - k), size)
        return _to(outs, od, targets, size), res
    return bfwd


def batched_bwd(size, bwd, dims, out: OutDims):
    """``bwd(res, cts)`` batched: residuals at 0, each cotangent batched like its output;
    the input cotangents batched like the inputs (summed over the batch where an input is
    not batched, as JAX's ``batch_custom_vjp_bwd``)."""
    def bbwd(res, cts):
        ct_dims = [None if c is None or type(c) is Zero or d is None else 0
                   for c, d in zip(cts, out.last)]
        cts = [_unbatched_zero(c, d) if type(c) is Zero else c for c, d in zip(cts, out.last)]
        r = len(res)
        in_cts, cd = _batched(lambda *a: bwd(list(a[:r]), list(a[r:])), list(res) + list(cts),
                              [0] * r + ct_dims, size)
        return _to(in_cts, cd, dims, size, sum_match=True)
    return bbwd

"""Mosaic lowering rules for the equations of a Pallas kernel: ref reads and writes,
elementwise arithmetic and math, comparisons and selects, casts, broadcasts and
reshapes, reductions and ``dot_general`` (``tpu.matmul``); control flow is in
``control_flow.py``. Each rule emits the operations JAX 0.10.2's Pallas
TPU lowering emits for the same equation (the tests compare the two modules)."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.lowering.mosaic.dialects import arith, ir, math, memref, tpu, vector
from traxla.ir.rules.refs import RefChain
from traxla.lowering.mosaic.kernel import (Lit, constant, element_type, ensure_value,
                                           register, value_type)
from traxla.lowering.mosaic.memory import transformed


def _is_float(dtype):
    return dtypes.is_float(np.dtype(dtype))


def _is_int(dtype):
    return np.issubdtype(np.dtype(dtype), np.integer)


def _is_unsigned(dtype):
    return np.issubdtype(np.dtype(dtype), np.unsignedinteger)


# -- refs ---------------------------------------------------------------------------------

def _index(x):
    if isinstance(x, Lit):
        return constant(x.val, ir.IndexType.get())
    if isinstance(x, int):
        return constant(x, ir.IndexType.get())
    if isinstance(x.type, ir.IndexType):
        return x
    return arith.index_cast(ir.IndexType.get(), x)


def _starts(ctx, ref, ref_aval, idx, tree):
    """Per dimension of the memref: its start (an index value), size, whether the
    kernel's value lacks it (an integer indexer, or a squeezed block dimension), and its
    stride."""
    if tree.trivial:
        dims = [("slice", 0, n, 1) for n in ref_aval.shape]
    else:
        dims = list(tree.dims)
    squeezed = ctx.squeezed_dims(ref) or ()
    operands, dims = iter(idx), iter(dims)
    out = []
    for k in range(len(squeezed) or len(ref_aval.shape)):
        if squeezed and squeezed[k]:
            out.append((_index(0), 1, True, 1))
            continue
        d = next(dims)
        if d[0] == "int":
            out.append((_index(next(operands)), 1, True, 1))
        elif d[0] == "dslice":  # pl.ds(i, n, stride): a traced start
            _, size, stride = d
            out.append((_index(next(operands)), size, False, stride))
        else:
            _, start, size, stride = d
            out.append((_index(start), size, False, stride))
    return out


def _memory_element(dtype) -> ir.Type:
    """The element type of a value of ``dtype`` in a memref (a boolean is an int32)."""
    return element_type(np.int32 if np.dtype(dtype) == np.bool_ else dtype)


def _loaded_to_bool(aval, value):
    """JAX's ``_maybe_cast_load_to_bool``: an int32 read for a boolean is ``!= 0``."""
    if np.dtype(aval.dtype) != np.bool_:
        return value
    i32 = ir.IntegerType.get_signless(32)
    ne = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)
    zero = ir.IntegerAttr.get(i32, 0)
    if aval.shape:
        t = ir.VectorType.get(list(aval.shape), i32)
        return arith.cmpi(ne, value, arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(
            t, zero)).result)
    return arith.cmpi(ne, value, arith.ConstantOp(i32, zero).result)


def _bool_to_stored(aval, value):
    """JAX's ``_maybe_cast_store_to_memref_type``: a boolean is stored as an int32."""
    if np.dtype(aval.dtype) != np.bool_:
        return value
    i32 = ir.IntegerType.get_signless(32)
    return arith.extui(ir.VectorType.get(list(aval.shape), i32) if aval.shape else i32, value)


def _require_vmem(space: str, what: str, stored_aval=None) -> None:
    """JAX's errors for a vector load or store outside VMEM (SMEM handled by the caller),
    and for a scalar stored to VMEM."""
    if space != "#tpu.memory_space<vmem>":
        extra = (" ANY memory space can only be accessed using async_copy."
                 if space == "#tpu.memory_space<any>" else "")
        raise ValueError(f"{what} only allowed on VMEM and SMEM references." + extra)
    if stored_aval is not None and not stored_aval.shape:
        raise ValueError("Cannot store scalars to VMEM")


def _space(ref_value) -> str:
    return str(ir.MemRefType(ref_value.type).memory_space)


@register("get")
def _get(ctx, ref, *idx, tree):
    ref_aval = ctx.avals_in[0]
    if isinstance(tree, RefChain):  # (a reshaped view: its links, then the indexer)
        ref, idx, tree = transformed(ctx, ref, idx, tree)
        ref_aval = ShapedArray(tuple(ir.MemRefType(ref.type).shape), ref_aval.dtype)
    aval_out = ctx.avals_out[0]
    starts = _starts(ctx, ref, ref_aval, idx, tree)
    indices = [s[0] for s in starts]
    strides = [s[3] for s in starts]
    space = _space(ref)
    if space == "#tpu.memory_space<smem>":
        if aval_out.shape:
            raise ValueError("Can only load scalars from SMEM")
        return _loaded_to_bool(aval_out, memref.load(ref, indices))
    _require_vmem(space, "Loads are")
    sizes = [s[1] for s in starts]
    elt = _memory_element(aval_out.dtype)
    load_type = ir.VectorType.get(sizes, elt)
    if any(st != 1 for st in strides):
        loaded = tpu.strided_load(load_type, ref, indices, strides)
    else:
        loaded = vector.load(load_type, ref, indices)
    if tuple(sizes) != tuple(aval_out.shape):
        if aval_out.shape:
            loaded = vector.shape_cast(ir.VectorType.get(list(aval_out.shape), elt), loaded)
        else:
            loaded = vector.extract(loaded, [], [0] * len(sizes))
    return _loaded_to_bool(aval_out, loaded)


@register("swap")
def _swap(ctx, ref, val, *idx, tree):
    ref_aval, val_aval = ctx.avals_in[:2]
    if isinstance(tree, RefChain):  # (a reshaped view: its links, then the indexer)
        ref, idx, tree = transformed(ctx, ref, idx, tree)
        ref_aval = ShapedArray(tuple(ir.MemRefType(ref.type).shape), ref_aval.dtype)
    aval_out = ctx.avals_out[0]
    val = ensure_value(val, val_aval)
    starts = _starts(ctx, ref, ref_aval, idx, tree)
    indices = [s[0] for s in starts]
    strides = [s[3] for s in starts]
    strided = any(st != 1 for st in strides)
    space = _space(ref)
    if space == "#tpu.memory_space<smem>":
        if val_aval.shape:
            raise ValueError("Can only store scalars to SMEM")
        old = _loaded_to_bool(val_aval, memref.load(ref, indices))
        memref.store(_bool_to_stored(val_aval, val), ref, indices)
        return old
    _require_vmem(space, "Loads and stores are", val_aval)
    mem_shape = [s[1] for s in starts]
    elt = _memory_element(aval_out.dtype)
    mem_type = ir.VectorType.get(mem_shape, elt)
    if strided:
        old = tpu.strided_load(mem_type, ref, indices, strides)
    else:
        old = vector.load(mem_type, ref, indices)
    val = _bool_to_stored(val_aval, val)
    if tuple(mem_shape) != tuple(aval_out.shape):
        old = vector.shape_cast(ir.VectorType.get(list(aval_out.shape), elt), old)
        val = vector.shape_cast(mem_type, val)
    old = _loaded_to_bool(val_aval, old)
    if strided:
        tpu.strided_store(val, ref, indices, strides)
    else:
        tpu.vector_store(val, ref, indices, strides=[])
    return old


# -- elementwise --------------------------------------------------------------------------

def _bcast(ctx, x, y):
    """JAX's ``_bcast``: literals become constants of the other side's type (a weak
    operand takes the other's dtype), then each side is broadcast to the result's shape."""
    x_aval, y_aval = ctx.avals_in[:2]
    out = ctx.avals_out[0]
    x_dtype, y_dtype = x_aval.dtype, y_aval.dtype
    if y_aval.weak_type:
        y_dtype = x_aval.dtype
    elif x_aval.weak_type:
        x_dtype = y_aval.dtype
    if isinstance(x, Lit):
        x = constant(x.val, y.type if isinstance(getattr(y, "type", None), ir.IndexType)
                     else element_type(x_dtype))
    if isinstance(y, Lit):
        y = constant(y.val, x.type if isinstance(x.type, ir.IndexType)
                     else element_type(y_dtype))
    if tuple(x_aval.shape) != tuple(out.shape):
        x = vector.broadcast(ir.VectorType.get(list(out.shape), element_type(x_dtype)), x)
    if tuple(y_aval.shape) != tuple(out.shape):
        y = vector.broadcast(ir.VectorType.get(list(out.shape), element_type(y_dtype)), y)
    return x, y


def _binary(int_op, float_op, uint_op=None):
    def rule(ctx, x, y, **_):
        x, y = _bcast(ctx, x, y)
        dtype = ctx.avals_out[0].dtype
        if float_op is None and np.dtype(dtype) == np.bool_:  # and, or, xor of booleans
            return int_op(x, y)
        if _is_int(dtype):
            return (uint_op if uint_op is not None and _is_unsigned(dtype) else int_op)(x, y)
        if _is_float(dtype):
            if float_op is None:
                raise NotImplementedError(f"{ctx.eqn.primitive.name} of {dtype}")
            return float_op(x, y)
        raise NotImplementedError(f"{ctx.eqn.primitive.name} of {dtype}")
    return rule


register("add", "add_any")(_binary(arith.addi, arith.addf))
register("sub")(_binary(arith.subi, arith.subf))
register("mul")(_binary(arith.muli, arith.mulf))
register("div")(_binary(arith.divsi, arith.divf, arith.divui))
register("rem")(_binary(arith.remsi, arith.remf, arith.remui))
register("max")(_binary(arith.maxsi, arith.maximumf, arith.maxui))
register("min")(_binary(arith.minsi, arith.minimumf, arith.minui))
register("and")(_binary(arith.andi, None))
register("or")(_binary(arith.ori, None))
register("xor")(_binary(arith.xori, None))


@register("neg")
def _neg(ctx, x):
    x_aval = ctx.avals_in[0]
    zero = constant(0, element_type(x_aval.dtype))
    x = ensure_value(x, x_aval)
    if x_aval.shape:
        zero = vector.broadcast(value_type(x_aval), zero)
    return (arith.subi if _is_int(x_aval.dtype) else arith.subf)(zero, x)


def _unary(op):
    def rule(ctx, x, accuracy=None, **_):
        if accuracy is not None:
            raise NotImplementedError("Not implemented: accuracy")
        return op(ensure_value(x, ctx.avals_in[0]))
    return rule


for _name, _op in [("exp", math.exp), ("log", math.log), ("tanh", math.tanh),
                   ("sqrt", math.sqrt), ("rsqrt", math.rsqrt), ("sin", math.sin),
                   ("cos", math.cos), ("tan", math.tan), ("log1p", math.log1p),
                   ("exp2", math.exp2), ("erf", math.erf), ("floor", math.floor),
                   ("ceil", math.ceil)]:
    register(_name)(_unary(_op))


@register("abs")
def _abs(ctx, x):
    x = ensure_value(x, ctx.avals_in[0])
    return (math.absi if _is_int(ctx.avals_out[0].dtype) else math.absf)(x)


@register("square")
def _square(ctx, x):
    x = ensure_value(x, ctx.avals_in[0])
    return (arith.muli if _is_int(ctx.avals_in[0].dtype) else arith.mulf)(x, x)


@register("logistic")
def _logistic(ctx, x, accuracy=None):
    x = ensure_value(x, ctx.avals_in[0])
    out = ctx.avals_out[0]
    exp_neg = math.exp(arith.negf(x))
    one = constant(1.0, element_type(out.dtype))
    if out.shape:
        one = vector.broadcast(value_type(out), one)
    return arith.divf(one, arith.addf(one, exp_neg))


_CMPI = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5}
_CMPUI = {"eq": 0, "ne": 1, "lt": 6, "le": 7, "gt": 8, "ge": 9}
_CMPF = {"eq": 1, "ne": 6, "lt": 4, "le": 5, "gt": 2, "ge": 3}


def _compare(ctx, x, y):
    name = ctx.eqn.primitive.name
    x, y = _bcast(ctx, x, y)
    dtype = ctx.avals_in[0].dtype
    i64 = ir.IntegerType.get_signless(64)
    if _is_int(dtype):
        table = _CMPUI if _is_unsigned(dtype) else _CMPI
        return arith.cmpi(ir.IntegerAttr.get(i64, table[name]), x, y)
    if _is_float(dtype):
        return arith.cmpf(ir.IntegerAttr.get(i64, _CMPF[name]), x, y)
    raise NotImplementedError(f"Unsupported dtype in cmp: {dtype}")


for _name in _CMPI:
    register(_name)(_compare)


@register("select_n")
def _select_n(ctx, pred, x, *rest):
    if len(rest) > 1:
        raise NotImplementedError("select_n only supported with <= 2 arguments")
    if np.dtype(ctx.avals_in[0].dtype) != np.bool_:
        raise NotImplementedError("select_n with an integer predicate")
    if not rest:
        return ensure_value(x, ctx.avals_in[1])
    # (literal operands become constants in operand order, as JAX's lowering makes them)
    pred, x, y = (ensure_value(v, a) for v, a in zip((pred, x, rest[0]), ctx.avals_in))
    return arith.select(pred, y, x)


@register("convert_element_type")
def _convert(ctx, x, *, new_dtype, **_):
    in_aval, out = ctx.avals_in[0], ctx.avals_out[0]
    x = ensure_value(x, in_aval)
    old, new = np.dtype(in_aval.dtype), np.dtype(new_dtype)
    if old == new:
        return x
    if new.itemsize == 8:
        raise NotImplementedError("64-bit types are not supported")
    t = value_type(out)
    if _is_float(old) and _is_float(new):
        return (arith.extf if old.itemsize < new.itemsize else arith.truncf)(t, x)
    if _is_int(old) and _is_int(new):
        if old.itemsize < new.itemsize:
            return (arith.extui if _is_unsigned(old) else arith.extsi)(t, x)
        if old.itemsize > new.itemsize:
            return arith.trunci(t, x)
        return x
    if _is_float(old) and _is_int(new):
        return (arith.fptoui if _is_unsigned(new) else arith.fptosi)(t, x)
    if _is_int(old) and _is_float(new):
        return (arith.uitofp if _is_unsigned(old) else arith.sitofp)(t, x)
    if old == np.bool_ and _is_int(new):
        return arith.extui(t, x)
    raise NotImplementedError(f"Unsupported cast: {old} -> {new}")


# -- shapes -------------------------------------------------------------------------------

@register("broadcast_in_dim")
def _broadcast_in_dim(ctx, x, *, shape, broadcast_dimensions, **_):
    in_aval, out = ctx.avals_in[0], ctx.avals_out[0]
    x = ensure_value(x, in_aval)
    if tuple(in_aval.shape) == tuple(shape):
        return x
    if broadcast_dimensions:
        mid = [1] * len(shape)
        for i, s in zip(broadcast_dimensions, in_aval.shape):
            mid[i] = s
        x = vector.shape_cast(ir.VectorType.get(mid, element_type(out.dtype)), x)
        if tuple(mid) == tuple(out.shape):
            return x
    return vector.broadcast(value_type(out), x)


@register("reshape")
def _reshape(ctx, x, *, new_sizes, dimensions=None, **_):
    if dimensions is not None:
        raise NotImplementedError("reshape with dimensions")
    in_aval, out = ctx.avals_in[0], ctx.avals_out[0]
    x = ensure_value(x, in_aval)
    if not in_aval.shape:
        return vector.broadcast(value_type(out), x)
    if not out.shape:
        return vector.extract(x, [], [0] * len(in_aval.shape))
    return vector.shape_cast(value_type(out), x)


@register("squeeze")
def _squeeze(ctx, x, *, dimensions):
    in_aval, out = ctx.avals_in[0], ctx.avals_out[0]
    x = ensure_value(x, in_aval)
    if not out.shape:
        return vector.extract(x, [], [0] * len(in_aval.shape))
    return vector.shape_cast(value_type(out), x)


@register("transpose")
def _transpose(ctx, x, *, permutation):
    x = ensure_value(x, ctx.avals_in[0])
    return tpu.transpose(value_type(ctx.avals_out[0]), x, list(permutation))


@register("iota")
def _iota(ctx, *, dtype, shape, dimension, **_):
    if np.dtype(dtype) != np.int32:
        raise NotImplementedError("Only 32-bit integer iota is supported")
    i32 = ir.IntegerType.get_signless(32)
    return tpu.iota(ir.VectorType.get(list(shape), i32),
                    dimensions=ir.DenseI32ArrayAttr.get([dimension]))


# -- reductions ---------------------------------------------------------------------------

_KINDS = {"reduce_sum": ("ADD", "ADD", 0.0, 0),
          "reduce_max": ("MAXIMUMF", "MAXSI", float("-inf"), np.iinfo(np.int32).min),
          "reduce_min": ("MINIMUMF", "MINSI", float("inf"), np.iinfo(np.int32).max)}


@register("reduce_sum", "reduce_max", "reduce_min")
def _reduce(ctx, x, *, axes, **_):
    x_aval, out = ctx.avals_in[0], ctx.avals_out[0]
    return _reduce_values(ensure_value(x, x_aval), x_aval, out, ctx.eqn.primitive.name, axes)


def _reduce_values(x, x_aval, out, name, axes):
    fkind, ikind, fid, iid = _KINDS[name]
    if _is_float(x_aval.dtype):
        kind, ident = fkind, ir.FloatAttr.get(element_type(x_aval.dtype), fid)
    elif np.dtype(x_aval.dtype) == np.int32:
        kind, ident = ikind, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(iid))
    else:
        raise NotImplementedError(f"Reductions over {x_aval.dtype} not implemented.")
    axes = list(axes)
    scalar = not out.shape
    if scalar:  # JAX: through a leading unit axis, kept (keepdims), then squeezed
        elt = element_type(x_aval.dtype)
        x = vector.shape_cast(ir.VectorType.get([1, *x_aval.shape], elt), x)
        axes = [a + 1 for a in axes]
        out_type = ir.VectorType.get([1], elt)
    else:
        out_type = value_type(out)
    acc = arith.ConstantOp(out_type, ir.DenseElementsAttr.get_splat(out_type, ident)).result
    result = vector.multi_reduction(getattr(vector.CombiningKind, kind), x, acc, axes)
    if scalar:
        rank = len(x_aval.shape) + 1
        kept = vector.shape_cast(ir.VectorType.get([1] * rank, elt), result)
        return vector.extract(kept, [], [0] * rank)
    return result


# -- matmul -------------------------------------------------------------------------------

def _tpu_dot_dims(dimension_numbers, lhs_rank, rhs_rank) -> ir.Attribute:
    (lc, rc), (lb, rb) = dimension_numbers
    lnc = sorted(set(range(lhs_rank)) - set(lc) - set(lb))
    rnc = sorted(set(range(rhs_rank)) - set(rc) - set(rb))
    order = [x for d in lb for x in (0, d)] + [x for d in lnc for x in (0, d)] + \
        [x for d in rnc for x in (1, d)]
    fmt = lambda ds: "[" + ", ".join(str(d) for d in ds) + "]"  # noqa: E731
    parts = [lc, rc, lnc, rnc, order, lb, rb]
    return ir.Attribute.parse(f"#tpu.dot_dimension_numbers<{','.join(map(fmt, parts))}>")


@register("dot_general")
def _dot_general(ctx, x, y, *, dimension_numbers, precision=None,
                 preferred_element_type=None, **_):
    lhs, rhs = ctx.avals_in
    out = ctx.avals_out[0]
    for a in (lhs, rhs):
        if _is_unsigned(a.dtype):
            raise NotImplementedError(
                f"Unsigned integer dtype {a.dtype} is not supported for dot_general (matmul)")
    (lc, rc), _ = dimension_numbers
    x, y = ensure_value(x, lhs), ensure_value(y, rhs)
    out_type = value_type(out)
    elt = element_type(out.dtype)
    zero = (ir.IntegerAttr.get(elt, 0) if isinstance(elt, ir.IntegerType)
            else ir.FloatAttr.get(elt, 0.0))
    if (tuple(lc) == (1,) and tuple(rc) == (1,) and rhs.shape[0] == 1 and len(lhs.shape) == 2
            and len(rhs.shape) == 2 and (np.dtype(lhs.dtype) != np.float32
                                         or np.dtype(rhs.dtype) != np.float32)):
        return _matrix_vector(lhs, rhs, out, x, y, preferred_element_type, zero)
    if precision is not None and not isinstance(precision, tuple):
        precision = (precision, precision)
    if precision is not None:
        if precision[0] != precision[1]:
            raise NotImplementedError("Per-operand dot precision unsupported")
        precision = precision[0]
    name = getattr(precision, "name", precision)
    kwargs = {}
    if name in ("HIGHEST", "highest", "float32", "fp32"):
        kwargs["precision"] = ir.Attribute.parse("#tpu.contract_precision<fp32>")
    elif name not in (None, "DEFAULT", "default", "bfloat16", "fastest"):
        raise NotImplementedError(f"Unsupported dot precision: {precision}")
    acc = arith.ConstantOp(out_type, ir.DenseElementsAttr.get_splat(out_type, zero)).result
    return tpu.matmul(out_type, x, y, acc, False,
                      dimension_numbers=_tpu_dot_dims(dimension_numbers, len(lhs.shape),
                                                      len(rhs.shape)), **kwargs)


def _matrix_vector(lhs, rhs, out, x, y, preferred_element_type, zero):
    """JAX's rule for a matrix-vector product that looks like a matrix product (the rhs
    one row, contracted on the last axes, not both f32): a multiply and a row sum."""
    shape = tuple(np.broadcast_shapes(lhs.shape, out.shape))
    if tuple(lhs.shape) != tuple(rhs.shape):
        t = ir.VectorType.get(list(shape), element_type(out.dtype))
        if tuple(lhs.shape) != shape:
            x = vector.broadcast(t, x)
        if tuple(rhs.shape) != shape:
            y = vector.broadcast(t, y)
    red = np.dtype(preferred_element_type) if preferred_element_type else np.dtype(lhs.dtype)
    for aval, side in ((lhs, 0), (rhs, 1)):
        if np.dtype(aval.dtype) != red:
            if red != np.float32:
                raise NotImplementedError(
                    f"Unsupported preferred_element_type={preferred_element_type}")
            t = ir.VectorType.get(list(aval.shape), element_type(red))
            if side == 0:
                x = arith.extf(t, x)
            else:
                y = arith.extf(t, y)
    red_type = ir.VectorType.get([lhs.shape[0]], element_type(red))
    acc = arith.ConstantOp(red_type, ir.DenseElementsAttr.get_splat(red_type, zero)).result
    reduced = vector.multi_reduction(vector.CombiningKind.ADD, arith.mulf(x, y), acc, [1])
    return vector.shape_cast(value_type(out), reduced)


@register("stop_gradient", "optimization_barrier_identity")
def _identity(ctx, x):
    return ensure_value(x, ctx.avals_in[0])


@register("integer_pow")
def _integer_pow(ctx, x, *, y):
    """JAX's ``_integer_pow`` (binary powering), lowered op by op as JAX lowers it."""
    aval = ctx.avals_in[0]
    x = ensure_value(x, aval)
    mul = arith.muli if _is_int(aval.dtype) else arith.mulf

    def ones():
        one = constant(1, element_type(aval.dtype))
        return vector.broadcast(value_type(aval), one) if aval.shape else one

    if y == 0:
        return ones()
    reciprocal, y = y < 0, abs(y)
    acc = None
    while y > 0:
        if y & 1:
            acc = x if acc is None else mul(acc, x)
        y >>= 1
        if y > 0:
            x = mul(x, x)
    if reciprocal:
        return (arith.divsi if _is_int(aval.dtype) else arith.divf)(ones(), acc)
    return acc


@register("concatenate")
def _concatenate(ctx, *xs, dimension):
    xs = [ensure_value(x, a) for x, a in zip(xs, ctx.avals_in)]
    return tpu.concatenate(xs, dimension=dimension)


@register("pow")
def _pow(ctx, x, y):
    out = ctx.avals_out[0]
    y_aval = ctx.avals_in[1]
    if _is_int(y_aval.dtype):
        y = ensure_value(y, y_aval)
        y = (arith.uitofp if _is_unsigned(y_aval.dtype) else arith.sitofp)(
            value_type(y_aval.update(dtype=out.dtype) if hasattr(y_aval, "update")
                       else ShapedArray(y_aval.shape, out.dtype)), y)
    if isinstance(x, Lit) and float(x.val) == 2.0:
        return math.exp2(ensure_value(y, y_aval))
    x, y = _bcast(ctx, x, y)
    return math.powf(x, y)


register("shift_left")(_binary(arith.shli, None))
register("shift_right_arithmetic")(_binary(arith.shrsi, None))
register("shift_right_logical")(_binary(arith.shrui, None))


@register("not")
def _not(ctx, x):
    out = ctx.avals_out[0]
    x = ensure_value(x, ctx.avals_in[0])
    elt = element_type(out.dtype)
    if not out.shape:
        return arith.xori(x, constant(-1, elt))
    t = value_type(out)
    ones = arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(elt, -1)))
    return arith.xori(x, ones.result)


@register("slice")
def _slice(ctx, x, *, start_indices, limit_indices, strides=None):
    x = ensure_value(x, ctx.avals_in[0])
    strides = list(strides) if strides is not None else [1] * len(start_indices)
    sizes = [int(b) - int(a) for a, b in zip(start_indices, limit_indices)]
    return vector.extract_strided_slice(value_type(ctx.avals_out[0]), x, list(start_indices),
                                        sizes, strides)


@register("clamp")
def _clamp(ctx, lo, x, hi):
    """JAX lowers ``clamp`` as ``minimum(maximum(x, lo), hi)`` (traced jnp functions)."""
    lo_aval, x_aval, hi_aval = ctx.avals_in
    out = ctx.avals_out[0]

    lo, x, hi = (ensure_value(v, a) for v, a in zip((lo, x, hi), ctx.avals_in))

    def both(a, a_aval, b, b_aval, int_op, uint_op, float_op):
        if tuple(a_aval.shape) != tuple(out.shape):
            a = vector.broadcast(value_type(out), a)
        if tuple(b_aval.shape) != tuple(out.shape):
            b = vector.broadcast(value_type(out), b)
        if _is_float(out.dtype):
            return float_op(a, b)
        return (uint_op if _is_unsigned(out.dtype) else int_op)(a, b)

    res = both(x, x_aval, lo, lo_aval, arith.maxsi, arith.maxui, arith.maximumf)
    return both(res, out, hi, hi_aval, arith.minsi, arith.minui, arith.minimumf)


def _reduce_index(kind):
    def rule(ctx, x, *, axes, index_dtype):
        x_aval, out = ctx.avals_in[0], ctx.avals_out[0]
        if np.dtype(x_aval.dtype) != np.float32:
            raise NotImplementedError("Only float32 is supported")
        if len(axes) != 1:
            raise NotImplementedError("Only single axis reduction supported")
        if np.dtype(index_dtype) != np.int32:
            raise NotImplementedError("Only index_dtype=int32 is supported")
        x = ensure_value(x, x_aval)
        axis = axes[0]
        one_d = len(x_aval.shape) == 1
        out_type = value_type(out)
        if one_d:  # (Mosaic reduces 2-D values: through a leading unit axis, as JAX does)
            x = vector.shape_cast(ir.VectorType.get([1, *x_aval.shape],
                                                    element_type(x_aval.dtype)), x)
            out_type = ir.VectorType.get([1, *out.shape], element_type(out.dtype))
            axis += 1
        result = tpu.reduce_index(out_type, x, axis,
                                  ir.Attribute.parse(f"#tpu.reduction_kind<{kind}>"))
        return vector.extract(result, [], [0]) if one_d else result
    return rule


register("argmax")(_reduce_index("arg_max"))
register("argmin")(_reduce_index("arg_min"))


@register("bitcast_convert_type")
def _bitcast_convert_type(ctx, x, *, new_dtype):
    in_aval, out = ctx.avals_in[0], ctx.avals_out[0]
    if np.dtype(in_aval.dtype).itemsize != np.dtype(new_dtype).itemsize:
        raise NotImplementedError("Changing bitwidths not supported.")
    x = ensure_value(x, in_aval)
    if in_aval.shape:
        return tpu.bitcast(value_type(out), x)
    return arith.bitcast(value_type(out), x)


def _bool_reduce(name):
    """JAX's proxy for ``reduce_and``/``reduce_or``: ``where(x, 1.0, 0.0)``, reduced with
    ``min``/``max``, then ``> 0.0``."""
    def rule(ctx, x, *, axes):
        x_aval, out = ctx.avals_in[0], ctx.avals_out[0]
        x = ensure_value(x, x_aval)
        f32 = ir.F32Type.get()
        one, zero = constant(1.0, f32), constant(0.0, f32)
        if x_aval.shape:
            t = ir.VectorType.get(list(x_aval.shape), f32)
            one, zero = vector.broadcast(t, one), vector.broadcast(t, zero)
        as_float = arith.select(x, one, zero)
        reduced = _reduce_values(as_float, ShapedArray(x_aval.shape, np.dtype(np.float32)),
                                 ShapedArray(out.shape, np.dtype(np.float32)), name, axes)
        zero = constant(0.0, f32)
        if out.shape:
            zero = vector.broadcast(ir.VectorType.get(list(out.shape), f32), zero)
        return arith.cmpf(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _CMPF["gt"]),
                          reduced, zero)
    return rule


register("reduce_and")(_bool_reduce("reduce_min"))
register("reduce_or")(_bool_reduce("reduce_max"))


# -- TPU operations ------------------------------------------------------------------------

@register("roll")
def _roll(ctx, x, shift, *, axis, stride, stride_axis):
    x = ensure_value(x, ctx.avals_in[0])
    shift = ensure_value(shift, ctx.avals_in[1])
    return tpu.dynamic_rotate(x, shift, axis, stride=stride, stride_dimension=stride_axis)


@register("bitcast")
def _tpu_bitcast(ctx, x, *, ty):
    return tpu.bitcast(value_type(ctx.avals_out[0]), ensure_value(x, ctx.avals_in[0]))


@register("tile")
def _tile(ctx, x, *, reps):
    """JAX's rule: per axis repeated, a ``tpu.concatenate`` of that many copies."""
    x = ensure_value(x, ctx.avals_in[0])
    for axis, repeats in enumerate(reps):
        if repeats > 1:
            x = tpu.concatenate([x] * repeats, dimension=axis)
    return x


@register("num_programs")
def _num_programs(ctx, *, axis):
    """A grid axis of traced size: its bound at run time (JAX's rule)."""
    return tpu.iteration_bound(axis)


@register("atan2")
def _atan2(ctx, x, y, accuracy=None):
    if accuracy is not None:
        raise NotImplementedError("Not implemented: accuracy")
    return math.atan2(*_bcast(ctx, x, y))


@register("round")
def _round(ctx, x, *, rounding_method):
    x = ensure_value(x, ctx.avals_in[0])
    method = int(getattr(rounding_method, "value", rounding_method))
    if method == 0:  # away from zero
        return math.round(x)
    if method == 1:  # to nearest even
        return math.roundeven(x)
    raise NotImplementedError(f"Unsupported rounding method: {rounding_method}")


@register("clz")
def _clz(ctx, x):
    return math.ctlz(ensure_value(x, ctx.avals_in[0]))


@register("population_count")
def _population_count(ctx, x):
    if not ctx.avals_out[0].shape:
        raise ValueError("Population count is not supported on scalars")
    return math.ctpop(ensure_value(x, ctx.avals_in[0]))


@register("is_finite")
def _is_finite(ctx, x):
    """``not(tpu.weird(x))`` (JAX's rule: weird is NaN or infinite)."""
    out = ctx.avals_out[0]
    return _not(ctx, tpu.weird(value_type(out), ensure_value(x, ctx.avals_in[0])))

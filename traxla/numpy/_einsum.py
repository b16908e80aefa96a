"""``einsum`` and ``tensordot``: subscripts parsed into a contraction path, each step a
``reduce_sum`` / diagonal mask / ``dot_general``, as ``jax.numpy.einsum`` does.

The contraction path follows opt_einsum's ``contract_path(optimize="auto")`` (which
JAX calls): its ``optimal`` search for up to four operands, its branch-and-bound search
(all branches up to six operands, two up to eight, one beyond; opt_einsum switches to
its greedy search beyond fourteen operands)."""
from __future__ import annotations

import collections
import contextlib
import itertools
import operator

import numpy as np

import heapq
from collections import defaultdict
import bisect

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.shape_poly import is_symbolic
from traxla.numpy._promotion import check_arraylike, result_type
from traxla.numpy._creation import placed
from traxla.tracer import EvalTrace, Tracer, current_trace
from traxla.api import jit
from traxla.api.named_scopes import named_scope

_SYMBOLS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _get_symbol(i: int) -> str:
    if i < 52:
        return _SYMBOLS[i]
    if i >= 55296:
        return chr(i + 2048)
    return chr(i + 140)


def _gen_unused_symbols(used: str, n: int):
    i = cnt = 0
    while cnt < n:
        s = _get_symbol(i)
        i += 1
        if s in used:
            continue
        yield s
        cnt += 1


def _find_output_str(subscripts: str) -> str:
    tmp = subscripts.replace(",", "")
    return "".join(s for s in sorted(set(tmp)) if tmp.count(s) == 1)


def _shape(x):
    return tuple(lax.shape_of(x)) if hasattr(x, "aval") or hasattr(x, "__traxla_array__") \
        else tuple(np.shape(x))


def _convert_interleaved(operands):
    tmp = list(operands)
    operand_list, subscript_list = [], []
    for _ in range(len(operands) // 2):
        operand_list.append(tmp.pop(0))
        subscript_list.append(tmp.pop(0))
    output_list = tmp[-1] if len(tmp) else None
    try:
        symbol_set = set(itertools.chain.from_iterable(subscript_list))
        symbol_set.discard(Ellipsis)
        symbol_map = {s: _get_symbol(i) for i, s in enumerate(sorted(symbol_set))}
    except TypeError:
        raise TypeError("einsum: in the interleaved form, subscript lists must contain Ellipsis "
                        "or hashable and comparable objects (e.g. int, str).") from None

    def convert(sub):
        return "".join("..." if s is Ellipsis else symbol_map[s] for s in sub)

    subscripts = ",".join(convert(sub) for sub in subscript_list)
    if output_list is not None:
        subscripts += "->" + convert(output_list)
    return subscripts, tuple(operand_list)


def _parse_einsum_input(operands):
    if len(operands) == 0:
        raise ValueError("einsum: no input operands")
    if isinstance(operands[0], str):
        subscripts = operands[0].replace(" ", "")
        operands = operands[1:]
    else:
        subscripts, operands = _convert_interleaved(operands)
    shapes = [_shape(o) for o in operands]
    if "-" in subscripts or ">" in subscripts:
        invalid = subscripts.count("-") > 1 or subscripts.count(">") > 1
        if invalid or subscripts.count("->") != 1:
            raise ValueError(f"einsum: subscripts {subscripts!r} can only contain one '->'.")
    # (any other character is a subscript, digits included, as opt_einsum's parser)
    if "." in subscripts:
        used = subscripts.replace(".", "").replace(",", "").replace("->", "")
        ellipse_inds = "".join(_gen_unused_symbols(used, max((len(s) for s in shapes),
                                                             default=0)))
        longest = 0
        if "->" in subscripts:
            input_tmp, output_sub = subscripts.split("->")
            split = input_tmp.split(",")
            out_sub = True
        else:
            split = subscripts.split(",")
            out_sub = False
        if len(split) != len(shapes):
            raise ValueError(f"einsum: {len(split)} subscript terms in {subscripts!r} for "
                             f"{len(shapes)} operands (shapes {shapes}).")
        for num, sub in enumerate(split):
            if "." in sub:
                if sub.count(".") != 3 or sub.count("...") != 1:
                    raise ValueError(f"einsum: invalid ellipsis in subscript {sub!r}.")
                count = 0 if shapes[num] == () else max(len(shapes[num]), 1) - (len(sub) - 3)
                longest = max(longest, count)
                if count < 0:
                    raise ValueError(f"einsum: subscript {sub!r} has more indices than operand "
                                     f"{num} of shape {shapes[num]} has dimensions.")
                split[num] = sub.replace("...", "" if count == 0 else ellipse_inds[-count:])
        subscripts = ",".join(split)
        out_ellipse = "" if longest == 0 else ellipse_inds[-longest:]
        if out_sub:
            subscripts += "->" + output_sub.replace("...", out_ellipse)
        else:
            output_subscript = _find_output_str(subscripts)
            normal = "".join(sorted(set(output_subscript) - set(out_ellipse)))
            subscripts += "->" + out_ellipse + normal
    if "->" in subscripts:
        input_subscripts, output_subscript = subscripts.split("->")
    else:
        input_subscripts, output_subscript = subscripts, _find_output_str(subscripts)
    for char in output_subscript:
        if output_subscript.count(char) != 1:
            raise ValueError(f"einsum: output character {char!r} appeared more than once in the "
                             f"output {output_subscript!r}.")
        if char not in input_subscripts:
            raise ValueError(f"einsum: output character {char!r} did not appear in the inputs "
                             f"{input_subscripts!r}.")
    if len(input_subscripts.split(",")) != len(operands):
        raise ValueError(f"einsum: the number of subscript terms, "
                         f"{len(input_subscripts.split(','))} in {input_subscripts!r}, must equal "
                         f"the number of operands, {len(operands)} (shapes {shapes}).")
    return input_subscripts, output_subscript, list(operands), shapes


def _size(indices, size_dict):
    n = 1
    for i in indices:
        n *= size_dict[i]
    return n


def _flop_count(idx_contraction, inner, num_terms, size_dict):
    factor = max(1, num_terms - 1) + (1 if inner else 0)
    return _size(idx_contraction, size_dict) * factor


def _contract_pair(inputs, remaining, i, j, output, size_dict):
    """Contracting ``inputs[i]`` with ``inputs[j]``: the indices the result keeps (those the
    output or another remaining input needs) and the flops it costs."""
    k1, k2 = inputs[i], inputs[j]
    either, shared = k1 | k2, k1 & k2
    keep = frozenset.union(output, *map(inputs.__getitem__, remaining - {i, j}))
    return either & keep, _flop_count(either, bool(shared - keep), 2, size_dict)


def _optimal(inputs, output, size_dict):
    """opt_einsum's ``optimal`` path search (SSA path converted to linear ids)."""
    inputs_set = tuple(map(frozenset, inputs))
    output_set = frozenset(output)
    best = {"flops": float("inf"), "ssa_path": (tuple(range(len(inputs))),)}
    cache = {}

    def iterate(path, remaining, inputs, flops):
        if len(remaining) == 1:
            best["flops"] = flops
            best["ssa_path"] = path
            return
        for i, j in itertools.combinations(remaining, 2):
            if i > j:
                i, j = j, i
            key = (inputs[i], inputs[j])
            if key not in cache:
                cache[key] = _contract_pair(inputs, remaining, i, j, output_set, size_dict)
            k12, flops12 = cache[key]
            new_flops = flops + flops12
            if new_flops >= best["flops"]:
                continue
            iterate(path + ((i, j),), remaining - {i, j} | {len(inputs)}, inputs + (k12,),
                    new_flops)

    iterate((), set(range(len(inputs))), inputs_set, 0)
    return _ssa_to_linear(best["ssa_path"])


def _branch(inputs, output, size_dict, nbranch=None, cutoff_flops_factor=4):
    """opt_einsum's ``BranchBound`` (minimize flops, cost = memory removed): depth-first over
    pairwise contractions, best candidates first, pruned against the best path so far."""
    inputs = tuple(map(frozenset, inputs))
    output = frozenset(output)
    best = {"flops": float("inf"), "size": float("inf"), "ssa_path": None}
    best_progress = defaultdict(lambda: float("inf"))
    size_cache = {k: _size(k, size_dict) for k in inputs}
    result_cache = {}

    def iterate(path, inputs, remaining, flops, size):
        if len(remaining) == 1:
            best.update(size=size, flops=flops, ssa_path=path)
            return

        def assess(k1, k2, i, j):
            if (k1, k2) not in result_cache:
                result_cache[k1, k2] = _contract_pair(inputs, remaining, i, j, output, size_dict)
            k12, flops12 = result_cache[k1, k2]
            if k12 not in size_cache:
                size_cache[k12] = _size(k12, size_dict)
            size12 = size_cache[k12]
            new_flops, new_size = flops + flops12, max(size, size12)
            if not (new_flops, new_size) < (best["flops"], best["size"]):
                return None
            if new_flops < best_progress[len(inputs)]:
                best_progress[len(inputs)] = new_flops
            elif new_flops > cutoff_flops_factor * best_progress[len(inputs)]:
                return None
            cost = size12 - size_cache[inputs[i]] - size_cache[inputs[j]]
            return cost, flops12, new_flops, new_size, (i, j), k12

        candidates = []
        for outer in (False, True):
            for i, j in itertools.combinations(remaining, 2):
                if i > j:
                    i, j = j, i
                k1, k2 = inputs[i], inputs[j]
                if not outer and k1.isdisjoint(k2):
                    continue
                candidate = assess(k1, k2, i, j)
                if candidate:
                    heapq.heappush(candidates, candidate)
            if candidates:
                break
        bi = 0
        while (nbranch is None or bi < nbranch) and candidates:
            _, _, new_flops, new_size, (i, j), k12 = heapq.heappop(candidates)
            iterate(path + ((i, j),), inputs + (k12,), (remaining - {i, j}) | {len(inputs)},
                    new_flops, new_size)
            bi += 1

    iterate((), inputs, set(range(len(inputs))), 0, 0)
    return _ssa_to_linear(best["ssa_path"])


def _ssa_to_linear(ssa_path):
    n = sum(map(len, ssa_path)) - len(ssa_path) + 1
    ids = list(range(n))
    path, ssa = [], n
    for scon in ssa_path:
        con = sorted(bisect.bisect_left(ids, s) for s in scon)
        for j in reversed(con):
            ids.pop(j)
        ids.append(ssa)
        path.append(tuple(con))
        ssa += 1
    return path


def contract_path(*operands):
    """(operands, contractions): each contraction ``(operand positions, removed indices,
    einsum string)`` as opt_einsum's ``contract_path(einsum_call=True)`` lists them."""
    input_subscripts, output_subscript, operands, shapes = _parse_einsum_input(operands)
    input_list = input_subscripts.split(",")
    input_sets = [frozenset(x) for x in input_list]
    output_set = frozenset(output_subscript)
    size_dict = {}
    for tnum, term in enumerate(input_list):
        sh = shapes[tnum]
        if len(sh) != len(term):
            raise ValueError(f"einsum: subscript {term!r} has {len(term)} indices but operand "
                             f"{tnum} has shape {sh} ({len(sh)} dimensions); subscripts "
                             f"{input_subscripts}->{output_subscript} for operand shapes "
                             f"{shapes}.")
        for cnum, char in enumerate(term):
            # a symbolic dimension plans as 8, as JAX's _einsum_contract_path does (the
            # schedule only; the contractions check the real shapes)
            dim = 8 if is_symbolic(sh[cnum]) else int(sh[cnum])
            if char in size_dict:
                if size_dict[char] == 1:
                    size_dict[char] = dim
                elif dim not in (1, size_dict[char]):
                    raise ValueError(f"einsum: size of label {char!r} for operand {tnum} ({dim}, "
                                     f"shape {sh}) does not match previous terms "
                                     f"({size_dict[char]}); subscripts "
                                     f"{input_subscripts}->{output_subscript} for operand "
                                     f"shapes {shapes}.")
            else:
                size_dict[char] = dim
    num_ops = len(input_list)
    if num_ops <= 2:
        path = [tuple(range(num_ops))]
    elif num_ops <= 4:
        path = _optimal(input_sets, output_set, size_dict)
    else:  # opt_einsum's "auto": branch_all up to 6 operands, branch_2 up to 8, then branch_1
        path = _branch(input_sets, output_set, size_dict,
                       nbranch=None if num_ops <= 6 else 2 if num_ops <= 8 else 1)
    contractions = []
    input_shapes = list(shapes)
    for cnum, contract_inds in enumerate(path):
        contract_inds = tuple(sorted(contract_inds, reverse=True))
        remaining = list(input_sets)
        picked = [remaining.pop(i) for i in sorted(contract_inds, reverse=True)]
        idx_contract = frozenset.union(*picked)
        idx_remain = output_set.union(*remaining)
        out_inds = idx_remain & idx_contract
        idx_removed = idx_contract - out_inds
        remaining.append(out_inds)
        input_sets = remaining
        tmp_inputs = [input_list.pop(x) for x in contract_inds]
        tmp_shapes = [input_shapes.pop(x) for x in contract_inds]
        if cnum - len(path) == -1:
            idx_result = output_subscript
        else:
            all_input_inds = "".join(tmp_inputs)
            idx_result = "".join(sorted(out_inds, key=all_input_inds.find))
        shp_result = tuple(max(shape[loc] for shape, loc in
                               zip(tmp_shapes, [x.find(c) for x in tmp_inputs]) if loc >= 0)
                           for c in idx_result)
        input_list.append(idx_result)
        input_shapes.append(shp_result)
        contractions.append((contract_inds, frozenset(idx_removed),
                             ",".join(tmp_inputs) + "->" + idx_result))
    return operands, tuple(contractions)


def _removechars(s, chars):
    return s.translate(str.maketrans(dict.fromkeys(chars)))


def _einsum(operands, contractions, precision, preferred_element_type, _dot_general=None,
            out_sharding=None):
    operands = list(operands)
    dot_general = lax.dot_general if _dot_general is None else _dot_general
    if preferred_element_type is None:
        preferred_element_type, output_weak_type = result_type(*operands)
    else:
        preferred_element_type = dtypes.to_dtype(preferred_element_type)
        output_weak_type = False

    def sum_(x, axes):
        aval = lax.aval_of(x)
        if dtypes.result_type_of((aval.dtype, aval.weak_type),
                                 (preferred_element_type, False))[0] != aval.dtype:
            x = lax._convert_element_type(x, preferred_element_type, False)
        if lax.dtype_of(x) == np.bool_:
            return lax.reduce_or(x, tuple(axes))
        return lax.reduce_sum(x, tuple(axes))

    def sum_uniques(operand, names, uniques):
        if uniques:
            axes = [names.index(name) for name in uniques]
            operand = sum_(operand, axes)
            names = _removechars(names, uniques)
        return operand, names

    def sum_repeats(operand, names, counts, keep_names):
        for name, count in counts.items():
            if count > 1:
                axes = [i for i, n in enumerate(names) if n == name]
                eye = lax._delta(np.dtype("bool"), lax.shape_of(operand), axes)
                operand = lax.select(eye, operand, lax.full_like(operand, 0))
                if name not in keep_names:
                    operand = sum_(operand, axes)
                    names = names.replace(name, "")
                else:
                    operand = sum_(operand, axes[:-1])
                    names = names.replace(name, "", count - 1)
        return operand, names

    def filter_singleton_dims(operand, names, other_shape, other_names):
        shape = lax.shape_of(operand)
        keep = [shape[i] != 1 or j == -1 or other_shape[j] == 1
                for i, j in enumerate(map(other_names.find, names))]
        sqez = [i for i, k in enumerate(keep) if not k]
        kept = [i for i, k in enumerate(keep) if k]
        return lax.squeeze(operand, tuple(sqez)), "".join(names[i] for i in kept)

    for operand_indices, contracted_names_set, einstr in contractions:
        contracted_names = sorted(contracted_names_set)
        input_str, result_names = einstr.split("->")
        input_names = input_str.split(",")
        if len(operand_indices) == 1:
            operand = operands.pop(operand_indices[0])
            names, = input_names
            counts = collections.Counter(names)
            uniques = [name for name in contracted_names if counts[name] == 1]
            operand, names = sum_uniques(operand, names, uniques)
            operand, names = sum_repeats(operand, names, counts, result_names)
        elif len(operand_indices) == 2:
            lhs, rhs = map(operands.pop, operand_indices)
            lhs_names, rhs_names = input_names
            lhs, lhs_names = filter_singleton_dims(lhs, lhs_names, lax.shape_of(rhs), rhs_names)
            rhs, rhs_names = filter_singleton_dims(rhs, rhs_names, lax.shape_of(lhs), lhs_names)
            lhs_counts = collections.Counter(lhs_names)
            rhs_counts = collections.Counter(rhs_names)
            lhs_uniques = [n for n in contracted_names if lhs_counts[n] == 1 and rhs_counts[n] == 0]
            lhs, lhs_names = sum_uniques(lhs, lhs_names, lhs_uniques)
            rhs_uniques = [n for n in contracted_names if rhs_counts[n] == 1 and lhs_counts[n] == 0]
            rhs, rhs_names = sum_uniques(rhs, rhs_names, rhs_uniques)
            lhs, lhs_names = sum_repeats(lhs, lhs_names, lhs_counts, result_names + rhs_names)
            rhs, rhs_names = sum_repeats(rhs, rhs_names, rhs_counts, result_names + lhs_names)
            either = set(lhs_names) | set(rhs_names)
            contracted_names = [x for x in contracted_names if x in either]
            both = set(lhs_names) & set(rhs_names)
            batch_names = [x for x in result_names if x in both]
            lhs_batch = tuple(lhs_names.find(n) for n in batch_names)
            rhs_batch = tuple(rhs_names.find(n) for n in batch_names)
            lhs_shape, rhs_shape = lax.shape_of(lhs), lax.shape_of(rhs)
            for name in contracted_names:
                if (name not in lhs_names or name not in rhs_names or
                        lhs_shape[lhs_names.index(name)] != rhs_shape[rhs_names.index(name)]):
                    raise ValueError(f"einsum: incompatible reduction dimensions: "
                                     f"lhs.shape={lhs_shape} lhs_names={lhs_names} "
                                     f"rhs.shape={rhs_shape} rhs_names={rhs_names}")
            batch_names_str = "".join(batch_names)
            lhs_cont = tuple(lhs_names.index(n) for n in contracted_names)
            rhs_cont = tuple(rhs_names.index(n) for n in contracted_names)
            deleted = batch_names_str + "".join(contracted_names)
            rem_lhs = _removechars(lhs_names, deleted)
            rem_rhs = _removechars(rhs_names, deleted)
            names = batch_names_str + rem_rhs + rem_lhs
            if names == result_names:
                extra = {} if out_sharding is None else {"out_sharding": out_sharding}
                operand = dot_general(rhs, lhs, ((rhs_cont, lhs_cont), (rhs_batch, lhs_batch)),
                                      precision, preferred_element_type=preferred_element_type,
                                      **extra)
            else:
                names = batch_names_str + rem_lhs + rem_rhs
                extra = ({} if out_sharding is None else
                         {"out_sharding": _inverse_sharding(out_sharding, names, result_names)})
                operand = dot_general(lhs, rhs, ((lhs_cont, rhs_cont), (lhs_batch, rhs_batch)),
                                      precision, preferred_element_type=preferred_element_type,
                                      **extra)
        else:
            raise NotImplementedError("jax.numpy.einsum does not support simultaneous "
                                      "contraction of 3 or more operands.")
        if names != result_names:
            perm = tuple(names.index(name) for name in result_names)
            operand = lax.transpose(operand, perm)
        operands.append(operand)
    return lax._lift(lax._convert_element_type(operands[0], preferred_element_type,
                                               output_weak_type))


def _typed(out_sharding) -> bool:
    """Whether an out_sharding is one of the type (all its mesh axes Explicit, or unreduced
    or reduced ones): the contraction's dot_general takes it, as JAX's."""
    from traxla.sharding import to_named
    named = to_named(out_sharding)
    spec = named.spec
    return bool(spec.unreduced or spec.reduced
                or getattr(named.mesh.abstract_mesh, "are_all_axes_explicit", False))


def _inverse_sharding(out_sharding, names, result_names):
    """The out_sharding of the contraction whose result's dims are ``names``, so that its
    transpose to ``result_names`` is laid out as ``out_sharding`` (JAX's)."""
    from traxla.sharding import to_named
    named = to_named(out_sharding)
    spec = named.spec
    entries = tuple(spec) + (None,) * (len(result_names) - len(spec))
    inverse = tuple(entries[result_names.index(n)] for n in names)
    return type(named)(named.mesh, spec.update(partitions=inverse), named.memory_kind)


_einsum_jit = None


def _is_traced(x):
    return isinstance(x, Tracer) or not isinstance(current_trace(), EvalTrace)


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    if out_sharding is not None:
        ops, contractions = contract_path(subscripts, *operands)
        if len(contractions) == 1 and len(contractions[0][0]) == 2 and _typed(out_sharding):
            # one pairwise contraction: its dot_general takes the out_sharding (JAX's), so
            # that a contraction over a sharded dimension can say how (or that it is
            # unreduced)
            check_arraylike("einsum", *ops)
            arrays = [lax._asarray(o) for o in ops]
            pet = (None if preferred_element_type is None
                   else dtypes.to_dtype(preferred_element_type))
            with named_scope(subscripts) if isinstance(subscripts, str) else contextlib.nullcontext():
                return _einsum(arrays, contractions, precision, pet, _dot_general,
                               out_sharding=out_sharding)
        return placed(einsum(subscripts, *operands, out=out, optimize=optimize,
                             precision=precision, preferred_element_type=preferred_element_type,
                             _dot_general=_dot_general), out_sharding)
    """Einstein summation: ``einsum('ij,jk->ik', a, b)``; also the interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. ``_dot_general`` (JAX's private override)
    replaces ``lax.dot_general`` for the pairwise contractions."""
    global _einsum_jit
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    operands, contractions = contract_path(subscripts, *operands)
    check_arraylike("einsum", *operands)
    operand_arrays = [lax._asarray(o) for o in operands]
    if preferred_element_type is not None:
        preferred_element_type = dtypes.to_dtype(preferred_element_type)
    if any(_is_traced(o) for o in operand_arrays):
        # JAX's einsum is an inline jit: under a trace its equations are inlined, recorded
        # under the subscripts as a named scope (JAX's ``named_call(..., name=spec)``)
        if isinstance(subscripts, str):
            with named_scope(subscripts):
                return _einsum(operand_arrays, contractions, precision,
                               preferred_element_type, _dot_general)
        return _einsum(operand_arrays, contractions, precision, preferred_element_type,
                       _dot_general)
    if _einsum_jit is None:
        _einsum_jit = jit(_einsum, static_argnums=(1, 2, 3, 4))
    return _einsum_jit(operand_arrays, contractions, precision, preferred_element_type,
                       _dot_general)


def einsum_path(subscripts, /, *operands, optimize="auto"):
    _, contractions = contract_path(subscripts, *operands)
    return [c[0] for c in contractions], contractions


# -- tensordot ---------------------------------------------------------------------------------

def _canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"tensordot: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Sum of products over ``axes``: an int N (last N of ``a`` with first N of ``b``) or a
    pair of axis sequences."""
    check_arraylike("tensordot", a, b)
    a, b = lax._asarray(a), lax._asarray(b)
    a_ndim, b_ndim = len(lax.shape_of(a)), len(lax.shape_of(b))
    if preferred_element_type is None:
        preferred_element_type, output_weak_type = result_type(a, b)
    else:
        preferred_element_type = dtypes.to_dtype(preferred_element_type)
        output_weak_type = False
    if type(axes) is int:
        if axes > min(a_ndim, b_ndim):
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                            f"({lax.shape_of(a)} and {lax.shape_of(b)})")
        contracting_dims = tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            contracting_dims = ((_canonicalize_axis(ax1, a_ndim),),
                                (_canonicalize_axis(ax2, b_ndim),))
        elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError(f"tensordot requires axes lists to have equal length, got {ax1} "
                                f"and {ax2}.")
            contracting_dims = (tuple(_canonicalize_axis(i, a_ndim) for i in ax1),
                                tuple(_canonicalize_axis(i, b_ndim) for i in ax2))
        else:
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists, got {ax1} and {ax2}")
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                        "lists/tuples of ints.")
    sa, sb = lax.shape_of(a), lax.shape_of(b)
    for i, j in zip(*contracting_dims):
        if sa[i] != sb[j]:
            raise TypeError(f"tensordot: contracting dimension {i} of a (shape {sa}) has size "
                            f"{sa[i]} but dimension {j} of b (shape {sb}) has size {sb[j]}")
    result = lax.dot_general(a, b, (contracting_dims, ((), ())), precision=precision,
                             preferred_element_type=preferred_element_type,
                             out_sharding=out_sharding)
    return lax._lift(lax._convert_element_type(result, preferred_element_type, output_weak_type))

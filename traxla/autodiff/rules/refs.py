"""Forward-mode rules of the ref primitives (JAX's ``jax/_src/state/primitives.py``): a ref
differentiated as a primal input of ``jvp``/``linearize``/``vjp`` has a ref as its tangent;
reads and writes of the primal ref are mirrored on the tangent ref. Transposing a read of a
linear ref is JAX's error: its cotangent would have to be a ref."""
from __future__ import annotations

from traxla.autodiff.ad import Zero, instantiate, jvp_rules, tangent_aval, transpose_rules
from traxla.ir.rules.refs import addupdate_p, get_p, is_ref_aval, swap_p
from traxla.state import ref as _ref
from traxla.tracer import Tracer


def _is_ref(x) -> bool:
    return isinstance(x, _ref.Ref) or (isinstance(x, Tracer) and is_ref_aval(x.aval))


def _check_tangent_ref(t, op):
    if type(t) is not Zero and not _is_ref(t):
        raise ValueError(f"`{op}` must be called on `Ref` types: "
                         f"{_ref._index_aval(t).str_short(short_dtypes=False)}.")


def _get_jvp(primals, tangents, *, tree):
    ref, *idx = primals
    ref_dot = tangents[0]
    _check_tangent_ref(ref_dot, "get")
    out = get_p.bind(ref, *idx, tree=tree)
    if type(ref_dot) is Zero:
        return out, Zero(tangent_aval(_ref._index_aval(out)))
    return out, get_p.bind(ref_dot, *idx, tree=tree)


def _non_differentiated_ref_error(ref):
    return Exception(  # noqa: TRY002  (JAX's class)
        "performing a set/swap operation with a differentiated value on a non-differentiated "
        f"array reference of type {_ref._ref_aval(ref)}. Move the array reference to be an "
        "argument of the differentiated function?")


def _swap_jvp(primals, tangents, *, tree):
    ref, x, *idx = primals
    ref_dot, x_dot = tangents[0], tangents[1]
    _check_tangent_ref(ref_dot, "swap")
    out = swap_p.bind(ref, x, *idx, tree=tree)
    if type(ref_dot) is Zero and type(x_dot) is Zero:
        return out, Zero(tangent_aval(_ref._index_aval(out)))
    if type(ref_dot) is Zero:
        raise _non_differentiated_ref_error(ref)
    return out, swap_p.bind(ref_dot, instantiate(x_dot), *idx, tree=tree)


def _addupdate_jvp(primals, tangents, *, tree):
    ref, x, *idx = primals
    ref_dot, x_dot = tangents[0], tangents[1]
    _check_tangent_ref(ref_dot, "addupdate")
    addupdate_p.bind(ref, x, *idx, tree=tree)
    if type(ref_dot) is Zero:
        if type(x_dot) is not Zero:
            raise _non_differentiated_ref_error(ref)
    else:
        addupdate_p.bind(ref_dot, instantiate(x_dot), *idx, tree=tree)
    return [], []


def _get_transpose(ct, ref, *idx, tree):
    # JAX accumulates the cotangent into the ref's, which must then be a ref: its error
    got = ct.aval if type(ct) is Zero else _ref._index_aval(ct).str_short(short_dtypes=False)
    raise ValueError(f"Expected cotangent type {ref.aval} but got {got}")


def _write_transpose(ct, ref, x, *idx, tree):
    # JAX 0.10.2 fails here too (``'ValAccum' object has no attribute 'ref'``): a write into
    # a ref given as a primal input of vjp is not transposable
    raise AttributeError("'ValAccum' object has no attribute 'ref'")


jvp_rules[get_p] = _get_jvp
jvp_rules[swap_p] = _swap_jvp
jvp_rules[addupdate_p] = _addupdate_jvp
transpose_rules[get_p] = _get_transpose
transpose_rules[swap_p] = _write_transpose
transpose_rules[addupdate_p] = _write_transpose

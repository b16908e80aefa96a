"""Bugs the random-program fuzzer found, each pinned against JAX."""
import re

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _same(ours, theirs):
    assert type(ours).__name__ == "ArrayImpl"  # a device array, not a NumPy value
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert ours.weak_type == theirs.weak_type
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


class _Stored:
    """JAX's result as stored (tests/_jax_stored.py): its values and its weak type."""

    def __init__(self, values, weak_type):
        self.values, self.weak_type = values, weak_type

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def _jax(jax_side, thunk):
    """JAX's result of ``thunk()``, stored (JAX is pinned): each compiles its own programs."""
    def run():
        out = thunk()
        return np.asarray(out), bool(out.weak_type)
    return _Stored(*jax_side(run))


@pytest.mark.parametrize("value", [np.bool_(True), np.array([1, 2], np.uint8)])
def test_abs_of_bool_or_unsigned_numpy_returns_an_array(value, jax_side):
    # jnp.abs handed the NumPy input back unchanged (no .weak_type, not an Array)
    _same(tnp.abs(value), _jax(jax_side, lambda: jnp.abs(value)))


def test_vmap_of_a_function_returning_its_numpy_input_returns_an_array(jax_side):
    x = np.array([8, 16], np.uint8)
    _same(traxla.vmap(tnp.abs)(x), _jax(jax_side, lambda: jax.vmap(jnp.abs)(x)))


def test_grad_of_a_weak_input_is_weak(jax_side):
    # the transpose of broadcasting lost the weak type of a Python-float input
    def f(api, m):
        v1 = np.array([0.5, -1.0, 2.0], np.float32)
        return api.grad(lambda x: m.sum(m.sqrt(m.square(v1) + m.square(x))))(1.5)
    _same(f(traxla, tnp), _jax(jax_side, lambda: f(jax, jnp)))


@pytest.mark.parametrize("make", [
    lambda m: m.equal(1.5, 1.5),
    lambda m: m.greater(2, 1),
    lambda m: m.asarray(1.0) > 0,
    lambda m: m.isfinite(1.0),
    lambda m: m.logical_not(1.5),
    lambda m: m.logical_and(1.0, 2.0),
    lambda m: m.equal(m.float32(1), 1.0),
])
def test_comparisons_of_weak_operands_are_weak_booleans(make, jax_side):
    _same(make(tnp), _jax(jax_side, lambda: make(jnp)))


def test_astype_of_a_concrete_scalar_is_an_array(jax_side):
    # returned an internal Literal (np.asarray of it gave an object array)
    _same(tnp.asarray(np.int32(3)).astype(tnp.float32),
          _jax(jax_side, lambda: jnp.asarray(np.int32(3)).astype(jnp.float32)))
    _same(tnp.asarray(np.array(3, np.int32)).astype(tnp.float32),
          _jax(jax_side, lambda: jnp.asarray(np.array(3, np.int32)).astype(jnp.float32)))


@pytest.mark.parametrize("make", [
    lambda m: m.transpose(0.377),
    lambda m: m.transpose(2),
    lambda m: m.sum(np.float16(0.3772)),
    lambda m: m.mean(np.float16(0.3772)),
    lambda m: m.prod(np.float16(1.5)),
    lambda m: m.dot(1.5, 2.5),
    lambda m: m.vdot(1.5, 2.0),
    lambda m: m.broadcast_arrays(1.5, 2)[0],
])
def test_constant_folded_scalars_come_back_as_arrays(make, jax_side):
    # these returned traxla's internal Literal instead of an Array
    _same(make(tnp), _jax(jax_side, lambda: make(jnp)))


def test_zero_gradient_of_a_weak_input_is_weak(jax_side):
    # the instantiated symbolic zero was strongly typed
    _same(traxla.grad(lambda x, y: tnp.abs(y))(1.5, np.float32(2)),
          _jax(jax_side, lambda: jax.grad(lambda x, y: jnp.abs(y))(1.5, np.float32(2))))


def test_arithmetic_on_weak_booleans_is_strongly_typed(jax_side):
    # two weak booleans (comparisons of Python floats) skipped promotion and stayed weak
    _same(tnp.add(tnp.equal(0.5, 0.5), tnp.equal(0.5, 0.5)),
          _jax(jax_side, lambda: jnp.add(jnp.equal(0.5, 0.5), jnp.equal(0.5, 0.5))))


# -- found by the differential fuzzer (tools/fuzz_differential.py), each against JAX ----------

def _same_jaxpr(make, *args):
    """make(api, lax) -> a function; its jaxprs print the same in traxla and JAX."""
    ours = str(traxla.make_jaxpr(make(traxla, traxla.lax))(*args))
    theirs = str(jax.make_jaxpr(make(jax, jax.lax))(*args))
    assert ours == theirs, f"traxla:\n{ours}\njax:\n{theirs}"


def _same_error(make):
    """make(api, lax) raises the same exception class, with the same first line, in both."""
    errors = []
    for api in (traxla, jax):
        with pytest.raises(Exception) as info:
            make(api, api.lax)
        # (JAX's params print as np.int64(1) or 1 depending on which of its caches served
        # the call before: a NumPy integer and a Python int read the same here)
        first_line = re.sub(r"np\.int64\((-?\d+)\)", r"\1", str(info.value).splitlines()[0])
        errors.append((type(info.value).__name__, first_line))
    assert errors[0] == errors[1]


def test_grad_of_nextafter_is_refused_as_in_jax():
    # traxla had a JVP rule for nextafter, which JAX does not define
    _same_error(lambda api, lax: api.grad(lambda x: lax.nextafter(x, 2.0))(1.0))


@pytest.mark.parametrize("make", [
    lambda lax, w: lax.pad(w, np.float32(0), [(1, 1, 0)]),
    lambda lax, w: lax.clamp(np.float32(0), w, np.float32(1)),
    lambda lax, w: lax.dynamic_update_slice(w, np.ones(1, np.float32), (0,)),
    lambda lax, w: lax.dynamic_update_slice(w, w[:1], (np.int32(0),)),
])
def test_weak_operand_with_a_strong_one_gives_a_strong_result(make, jax_side):
    # pad, clamp and dynamic_update_slice kept the weak type of their first operand alone
    def run(lax):
        return make(lax, lax.broadcast_in_dim(lax.add(1.5, 2.0), (3,), ()))
    _same(run(traxla.lax), _jax(jax_side, lambda: run(jax.lax)))


def test_reshape_dimensions_under_vmap_print_as_ints():
    # the batching rule's np.int64 dimensions printed as np.int64(2)
    x = np.zeros((2, 3, 2), np.float32)
    _same_jaxpr(lambda api, lax: api.vmap(lambda a: lax.reshape(a, (6,), dimensions=(1, 0)),
                                          in_axes=2), x)


def test_weak_dynamic_index_is_made_strong_before_normalizing():
    # JAX adds the axis size to a weak index through NumPy promotion (a convert_element_type)
    b = np.ones(3, bool)
    _same_jaxpr(lambda api, lax: lambda i, x: x[i], 2, b)
    _same_jaxpr(lambda api, lax: lambda i, x: lax.dynamic_slice(x, (i,), (1,)), 2, b)
    _same_jaxpr(lambda api, lax: lambda i, x: lax.dynamic_slice(x, (i,), (1,)), np.int32(2), b)


def test_float0_tangent_of_an_integer_output_is_staged_as_a_broadcast():
    # the instantiated float0 zero tangent was a constvar instead of broadcast_in_dim
    def make(api, lax):
        def f(x):
            return api.jvp(lambda y: (lax.convert_element_type(y, np.int32),
                                      lax.convert_element_type(lax.broadcast_in_dim(y, (2,), ()),
                                                               np.int32)), (x,), (1.0,))
        return f
    _same_jaxpr(make, 1.5)
    _same_jaxpr(lambda api, lax: api.jit(make(api, lax)), 1.5)


def test_grad_of_cumlogsumexp_names_its_custom_jvp_logaddexp():
    x = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    _same_jaxpr(lambda api, lax: api.grad(
        lambda v: lax.reduce_sum(lax.cumlogsumexp(v), (0,))), x)


@pytest.mark.parametrize("make", [
    lambda lax: lax.concatenate([np.ones((2, 3)), np.ones((0, 1, 0))], 1),
    lambda lax: lax.concatenate([np.ones((2, 3), np.float32)] * 2, -7),
    lambda lax: lax.concatenate([np.float32(1), np.float32(2)], 0),
    lambda lax: lax.concatenate([np.ones(2, np.float32), np.ones((2,), np.int32)], 0),
    lambda lax: lax.argmax(np.ones((2, 3), np.float32), -6, np.int32),
    lambda lax: lax.argmin(np.ones((2, 0), np.float32), 1, np.int32),
])
def test_shape_errors_have_jax_messages(make):
    _same_error(lambda api, lax: make(lax))


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
def test_jvp_of_sorting_an_empty_array(shape, jax_side):
    # the tangent's gather had slice size 1 on an empty axis: refused by the typing rule
    # (JAX skips that bound without indices) and by StableHLO when lowered
    x = np.zeros(shape, np.float16)

    def run(api):
        f = lambda v: api.jvp(lambda y: api.lax.sort(y, dimension=0), (v,), (np.ones_like(x),))
        return f(x), api.jit(f)(x)
    theirs = jax_side(lambda: [(np.asarray(o), bool(o.weak_type))
                               for o in jax.tree_util.tree_leaves(run(jax))])
    for ours, theirs in zip(jax.tree_util.tree_leaves(run(traxla)),
                            [_Stored(*t) for t in theirs], strict=True):
        _same(ours, theirs)


@pytest.mark.parametrize("make", [
    lambda lax: lax.argmax(np.ones(3, np.float32), 0, np.complex64),
    lambda lax: lax.expand_dims(np.ones(3, np.float32), (6,)),
    lambda lax: lax.expand_dims(np.ones(3, np.float32), (0, -3)),
    lambda lax: lax.squeeze(np.ones((1, 3), np.float32), (4,)),
    lambda lax: lax.round(np.ones(3, np.float32), lax.RoundingMethod(4)),
    lambda lax: lax.convert_element_type(1 + 2j, np.float32),
    lambda lax: lax.convert_element_type(1 + 2j, np.int32),
    lambda lax: lax.sort(np.float32(1.5)),
    lambda lax: lax.top_k(np.float32(1.5), 1),
    lambda lax: lax.bitcast_convert_type(np.ones(3, np.float32), np.bool_),
    lambda lax: lax.bitcast_convert_type(np.ones(3, np.complex64), np.int32),
    lambda lax: lax.select_n(np.ones((2, 3), np.float32), np.ones(1, np.float32),
                             np.ones(1, np.float32)),
    lambda lax: lax.select_n(np.ones(3, bool), np.ones(3, np.float32), np.ones(3, np.float32),
                             np.ones(3, np.float32)),
    lambda lax: lax.dynamic_slice(np.ones(3, np.float32), (np.ones((4, 2), np.float32),), (1,)),
    lambda lax: lax.dynamic_slice(np.ones(3, np.float32), (np.float32(1),), (1,)),
    lambda lax: lax.dynamic_update_slice(np.ones(3, np.float32), np.ones(2, np.float32),
                                         (np.float32(0),)),
    lambda lax: lax.dynamic_update_slice(np.ones(3, np.float32), np.ones((1, 2), np.float32),
                                         (0,)),
    lambda lax: lax.broadcast_in_dim(np.ones(3, np.float32), (3, 0), (5,)),
    lambda lax: lax.broadcast_in_dim(np.ones((3, 3), np.float32), (3, 3), (0, 0)),
    lambda lax: lax.broadcasted_iota(np.int32, (1,), -7),
])
def test_invalid_arguments_raise_jax_errors(make):
    # each was accepted (wrong value or a lowering crash) or raised another class or message
    _same_error(lambda api, lax: make(lax))


def test_broadcast_in_dim_accepts_dimensions_out_of_order(jax_side):
    # JAX requires distinct broadcast_dimensions, not increasing ones
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    _same(traxla.lax.broadcast_in_dim(x, (3, 4, 2), (2, 0)),
          _jax(jax_side, lambda: jax.lax.broadcast_in_dim(x, (3, 4, 2), (2, 0))))


@pytest.mark.parametrize("name", ["reduce_and", "reduce_or", "reduce_xor"])
def test_logical_reductions_strip_the_weak_type(name, jax_side):
    _same(getattr(traxla.lax, name)(traxla.lax.add(1, 2), ()),
          _jax(jax_side, lambda: getattr(jax.lax, name)(jax.lax.add(1, 2), ())))


def test_gradient_through_pad_is_strongly_typed(jax_side):
    # pad's transpose padded with a weak zero: the gradient of a Python float came out weak
    def f(api):
        return api.grad(lambda x: api.lax.cos(api.lax.pad(x, 2.0, [])))(1.5)
    _same(f(traxla), _jax(jax_side, lambda: f(jax)))


def test_broadcast_in_dim_of_a_python_scalar_to_rank_0_is_an_array(jax_side):
    # the identity shortcut handed the Python float back (float64 on the host, not weak f32)
    _same(traxla.lax.broadcast_in_dim(1.5, (), ()),
          _jax(jax_side, lambda: jax.lax.broadcast_in_dim(1.5, (), ())))


def test_broadcast_in_dim_to_rank_0_of_a_tracer_is_not_staged():
    # JAX hands a rank-0 array back unchanged; traxla staged a broadcast_in_dim
    _same_jaxpr(lambda api, lax: lambda x: lax.mul(lax.broadcast_in_dim(x, (), ()), 2.0), 1.5)
    _same_jaxpr(lambda api, lax: lambda x: api.jvp(
        lambda y: lax.sin(lax.broadcast_in_dim(y, (), ())), (x,), (1.0,)), 1.5)


@pytest.mark.parametrize("x", [1.5, np.float16(1.5), np.float32(1.5)])
def test_jvp_constants_of_a_weak_scalar_keep_their_python_value(x, jax_side):
    # erfc's JVP constant -2/sqrt(pi) printed rounded to float32 (-1.128379225730896), where
    # JAX's _const keeps the Python float for a weak scalar (-1.1283791670955126)
    _same_jaxpr(lambda api, lax: api.grad(lambda v: lax.erfc(v)), x)
    _same(traxla.grad(traxla.lax.erfc)(x), _jax(jax_side, lambda: jax.grad(jax.lax.erfc)(x)))


@pytest.mark.parametrize("dims", [(5,), (0, 0)])
def test_rev_errors_have_jax_messages(dims):
    _same_error(lambda api, lax: lax.rev(np.ones(3, np.float32), dims))


@pytest.mark.parametrize("make", [
    lambda lax: lax.transpose(np.ones((2, 3), np.float32), (0,)),
    lambda lax: lax.rev(np.ones(3, np.float32), (-3,)),
    lambda lax: lax.rev(np.float32(1), (0,)),
])
def test_transpose_and_rev_refuse_bad_axes_as_jax(make):
    # transpose handed back an operand whose rank its "identity" permutation did not match
    _same_error(lambda api, lax: make(lax))


def test_transpose_of_a_python_scalar_is_an_array(jax_side):
    # the identity shortcut handed the Python complex back (complex128 on the host)
    _same(traxla.lax.transpose(1 + 2j, ()), _jax(jax_side, lambda: jax.lax.transpose(1 + 2j, ())))


@pytest.mark.parametrize("make", [
    lambda lax: lax.broadcasted_iota(np.bool_, (2, 0), 0),  # was a LoweringError ("traxla bug")
    lambda lax: lax.iota(np.bool_, 3),
    lambda lax: lax.broadcasted_iota(np.int32, (2, -1), 0),
])
def test_iota_refuses_what_jax_refuses(make):
    _same_error(lambda api, lax: make(lax))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float16, "bfloat16", np.complex64])
def test_iota_of_numeric_dtypes(dtype, jax_side):
    _same(traxla.lax.broadcasted_iota(dtype, (2, 3), 1),
          _jax(jax_side, lambda: jax.lax.broadcasted_iota(dtype, (2, 3), 1)))


def test_integer_pow_3_of_complex_is_bit_identical_to_jax():
    # traxla emitted x * (x * x) where JAX emits (x * x) * x: complex products differ in the
    # last bit
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(2, 2, 3)) + 1j * rng.normal(size=(2, 2, 3))).astype(np.complex64)
    for make in (lambda api: api.lax.integer_pow(x, 3),
                 lambda api: api.jit(lambda v: api.lax.integer_pow(v, 3))(x)):
        assert np.asarray(make(traxla)).tobytes() == np.asarray(make(jax)).tobytes()


def test_sort_of_complex_under_jit():
    # the comparator compared complex keys with TOTALORDER, which the HLO verifier refuses
    # (a JaxRuntimeError when compiling); JAX sorts by the real part, then the imaginary part
    rng = np.random.default_rng(0)
    x = (rng.integers(-2, 3, (4, 3)) + 1j * rng.integers(-2, 3, (4, 3))).astype(np.complex64)
    x[0, 0] = np.nan
    for api_wrap in (lambda api, f: f, lambda api, f: api.jit(f)):
        ours = api_wrap(traxla, lambda v: traxla.lax.sort(v, dimension=0))(x)
        theirs = api_wrap(jax, lambda v: jax.lax.sort(v, dimension=0))(x)
        assert np.asarray(ours).tobytes() == np.asarray(theirs).tobytes()


def test_float_array_scalar_to_unsigned_saturates_as_xla(jax_side):
    # a concrete Array scalar was converted by NumPy (-1.5 -> uint8 wrapped to 254); JAX binds
    # convert_element_type, and XLA saturates (0)
    for make in (lambda lax: lax.convert_element_type(lax.neg(np.float32(1.5)), np.uint8),
                 lambda lax: lax.convert_element_type(lax.neg(np.float32(1e10)), np.int32),
                 lambda lax: lax.convert_element_type(lax.neg(np.float32(1.5)), np.bool_)):
        _same(make(traxla.lax), _jax(jax_side, lambda: make(jax.lax)))


@pytest.mark.parametrize("x", [[[-np.inf], [-np.inf], [1.0]], [[np.inf], [np.inf], [np.nan]]])
def test_cumlogsumexp_of_infinities(x, jax_side):
    # logaddexp(-inf, -inf) was NaN in the lowering of cumlogsumexp (JAX: -inf)
    x = np.asarray(x, np.float32)
    for wrap in (lambda api, f: f, lambda api, f: api.jit(f)):
        _same(wrap(traxla, lambda v: traxla.lax.cumlogsumexp(v, axis=0, reverse=True))(x),
              _jax(jax_side, lambda: wrap(jax, lambda v: jax.lax.cumlogsumexp(v, axis=0,
                                                                              reverse=True))(x)))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cumlogsumexp"])
@pytest.mark.parametrize("axis", [4, -1])
def test_cumulative_reductions_refuse_bad_axes_as_jax(name, axis):
    # under grad the JVP's associative scan indexed the shape with the axis: an IndexError
    x = np.ones(3, np.float32)
    _same_error(lambda api, lax: getattr(lax, name)(x, axis=axis))
    if axis >= 0:  # (a negative axis is fine under grad in JAX: the JVP never binds the primitive)
        _same_error(lambda api, lax: api.grad(
            lambda v: lax.reduce_sum(getattr(lax, name)(v, axis=axis), (0,)))(x))


@pytest.mark.parametrize("make", [
    lambda lax: lax.bitcast_convert_type(np.ones(2, np.bool_), np.int32),
    lambda lax: lax.bitcast_convert_type(np.ones(3, np.uint8), np.float32),
    lambda lax: lax.bitcast_convert_type(np.uint8(1), np.int32),
])
def test_bitcast_to_a_wider_type_refuses_as_jax(make):
    # traxla raised TypeError with its own message; JAX's shape rule raises ValueError
    _same_error(lambda api, lax: make(lax))


@pytest.mark.parametrize("make", [
    lambda lax: lax.pad(np.ones((1, 3), np.int32), np.int32(7), [(0, 0, 0)]),
    lambda lax: lax.pad(np.ones(3, np.float32), np.float32(0), [(0, 0, -1)]),
    lambda lax: lax.pad(np.ones(3, np.float32), np.float32(0), [(-3, -1, 0)]),
    lambda lax: lax.pad(np.ones(3, np.float32), np.ones(2, np.float32), [(0, 0, 0)]),
    lambda lax: lax.pad(np.ones(3, np.float32), np.int32(0), [(0, 0, 0)]),
])
def test_pad_refuses_as_jax(make):
    # the shape errors were TypeErrors; JAX's pad shape rule raises ValueError
    _same_error(lambda api, lax: make(lax))


def test_pad_negative_and_interior_padding_values(jax_side):
    x = np.arange(4, dtype=np.float32)
    _same(traxla.lax.pad(x, np.float32(-1), [(-1, 2, 1)]),
          _jax(jax_side, lambda: jax.lax.pad(x, np.float32(-1), [(-1, 2, 1)])))


_C = np.float32


@pytest.mark.parametrize("body", [
    lambda lax, x: lax.add(x, _C(2)),                            # seed 1, program 3139
    lambda lax, x: lax.clamp(_C(0), lax.tanh(x), _C(3)),         # 3964, 5665, 6379
    lambda lax, x: lax.rem(lax.log(lax.exp2(x)), _C(0.7)),       # 4399
    lambda lax, x: lax.sub(lax.rem(0.3, x), _C(-1.5)),           # 8361
    lambda lax, x: lax.mul(x, _C(2)),
])
@pytest.mark.parametrize("transform", ["grad", "jit_grad", "jvp"])
def test_weak_type_of_a_gradient_through_a_strong_constant(body, transform, jax_side):
    # outside jit JAX converts a concrete tracer even to its own type: the weak tangent of a
    # Python-float input then meets the convert, and its transpose makes the gradient weak
    # (under jit the convert is skipped and the gradient is strong); traxla skipped it always
    def run(api):
        f = lambda x: api.lax.convert_element_type(body(api.lax, x), np.float32)
        if transform == "jvp":
            return api.jvp(f, (1.5,), (1.0,))[1]
        g = api.grad(f)
        return (api.jit(g) if transform == "jit_grad" else g)(1.5)
    _same(run(traxla), _jax(jax_side, lambda: run(jax)))


@pytest.mark.parametrize("make", [
    # the constant tangent of integer_pow by 0 is a symbolic zero under grad (JAX's
    # fallback linearization): no JVP equations of clamp or reduce_sum on it (1952, 4944)
    lambda api, lax: api.grad(lambda x: lax.clamp(np.float32(0), lax.integer_pow(x, 0),
                                                  np.float32(3)))(np.float32(1.5)),
    lambda api, lax: api.grad(lambda x: lax.reduce_sum(lax.integer_pow(x, 0), ()))(np.float32(1.5)),
])
def test_a_constant_tangent_is_a_zero_under_grad(make):
    _same_jaxpr(lambda api, lax: (lambda: make(api, lax)))


def test_a_custom_jvp_rule_returning_a_constant_tangent_under_grad(jax_side):
    def make(api, lax):
        @api.custom_jvp
        def f(x):
            return lax.sin(x)
        f.defjvp(lambda p, t: (f(p[0]), lax.full_like(p[0], 3.0)))
        return api.grad(lambda x: lax.mul(f(x), x))
    _same_jaxpr(make, 1.5)
    _same(make(traxla, traxla.lax)(1.5), _jax(jax_side, lambda: make(jax, jax.lax)(1.5)))


def test_a_numpy_constant_converted_is_one_constvar():
    # lax.convert_element_type of a NumPy array to its own dtype made a second constant
    # (pow's JVP converts its exponent: program 8708)
    c = np.full((2, 3), 1.5, np.float32)
    _same_jaxpr(lambda api, lax: lambda x: lax.add(lax.add(x, lax.convert_element_type(
        c, np.float32)), lax.convert_element_type(c, np.float32)), c)
    _same_jaxpr(lambda api, lax: api.grad(lambda x: lax.reduce_sum(lax.pow(x, c), (0, 1))), c)


@pytest.mark.parametrize("name", ["population_count", "clz", "reduce_and", "reduce_xor",
                                  "reduce_or"])
@pytest.mark.parametrize("transform", ["jvp", "grad"])
def test_differentiating_an_integer_op_of_a_float_is_refused_as_jax(name, transform):
    # no JVP rule in JAX (reduce_or: a linearization only): NotImplementedError, not the
    # typing rule's TypeError (programs 65, 8506)
    x = np.ones(3, np.float32)

    def make(api, lax):
        op = getattr(lax, name)
        f = (lambda v: op(v, (0,))) if name.startswith("reduce") else op
        if transform == "jvp":
            return api.jvp(f, (x,), (x,))
        return api.grad(lambda v: lax.reduce_sum(lax.convert_element_type(f(v), np.float32),
                                                 tuple(range(np.ndim(f(x))))))(x)
    _same_error(make)


_REDUCTION_AXES = [
    (np.ones((4, 2), np.float32), (1, 1)), (np.ones((4, 2), np.float32), (2, 2)),
    (np.ones((4, 2), np.float32), (1, -1)), (np.ones((4, 2), bool), (5, 5)),
    (np.ones((4, 2), np.complex64), (1, 1)), (np.ones((4, 2), np.int32), (3,)),
]


# (JAX lets the logical reductions' bad axes of a valid dtype through to its lowering: its bug)
@pytest.mark.parametrize("name, x, axes", [
    (name, x, axes) for name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                                 "reduce_and", "reduce_or", "reduce_xor")
    for x, axes in _REDUCTION_AXES
    if not (name in ("reduce_and", "reduce_or", "reduce_xor") and x.dtype != np.float32)])
def test_reduction_axes_and_dtypes_are_checked_in_jax_order(name, x, axes):
    # JAX: repeated axes, then out-of-range (negative ones too), then the dtype; the logical
    # reductions check the dtype first, with their own message
    _same_error(lambda api, lax: getattr(lax, name)(x, axes))


def test_negative_reduction_axes_are_refused_not_miscompiled():
    # accepted by the typing rule, they failed MLIR verification (an internal error)
    with pytest.raises(ValueError, match=r"reduction axes \(-1,\) contains out-of-bounds"):
        traxla.lax.reduce_sum(np.ones((4, 2), np.float32), (-1,))
    with pytest.raises(ValueError, match=r"reduction axes \(-1,\) contains out-of-bounds"):
        traxla.lax.reduce_and(np.ones((4, 2), bool), (-1,))


def test_jvp_of_reduce_prod_over_a_repeated_axis_is_refused_while_tracing():
    # JAX traces a reshape of 8 elements to 16 and fails lowering it (program 3560)
    x = np.ones((4, 2), np.float32)
    with pytest.raises(ValueError, match=r"duplicate value in 'axes' of reduction: \(1, 1\)"):
        traxla.jvp(lambda v: traxla.lax.reduce_prod(v, (1, 1)), (x,), (x,))


_F2, _H2 = np.ones(2, np.float32), np.ones(2, np.float16)
_I2, _U2, _B2 = np.ones(2, np.int32), np.ones(2, np.uint8), np.ones(2, bool)


@pytest.mark.parametrize("name, x, y", [
    ("eq", _B2, np.ones(3, np.int32)),        # shapes checked before dtypes (program 1697)
    ("add", _F2, np.ones(3, np.int32)), ("add", _B2, np.ones(3, bool)),
    ("ge", _F2, _H2), ("lt", _F2, _H2),        # no jnp tip for these (program 1741)
    ("rem", _F2, _H2), ("bitwise_and", _I2, _U2), ("bitwise_or", _B2, _U2),
    ("max", _F2, _H2), ("shift_left", _I2, _U2), ("eq", _F2, _H2),
    ("pow", _F2, _H2),                          # pow's own dtype rule
])
def test_binary_op_errors_have_jax_order_and_messages(name, x, y):
    _same_error(lambda api, lax: api.jit(lambda a, b: getattr(lax, name)(a, b))(x, y))


@pytest.mark.parametrize("start, limit, strides", [
    ((5, 0), (0, 1), None),                     # programs 1613, 1917
    ((0,), (1,), None), ((0, 0), (1,), None), ((0, 0), (4, 4), None), ((-1, 0), (1, 1), None),
    ((2, 0), (1, 1), None), ((0, 0), (3, 4), (1,)), ((0, 0), (3, 4), (-1, 1)),
])
def test_slice_errors_have_jax_order_and_messages(start, limit, strides):
    x = np.ones((3, 4), np.float32)
    _same_error(lambda api, lax: api.jit(lambda v: lax.slice(v, start, limit, strides))(x))


def test_slice_with_a_zero_stride_is_refused():
    # JAX's check lets a zero stride through to a ZeroDivisionError; traxla had the same
    with pytest.raises(TypeError, match="slice strides must be positive"):
        traxla.lax.slice(np.ones((3, 4), np.float32), (0, 0), (3, 4), (0, 1))


def test_sort_of_operands_of_different_shapes_has_jax_message():
    # program 4444 of seed 1
    _same_error(lambda api, lax: lax.sort((np.ones((4, 2), np.int32), np.ones((2, 0), np.float32)),
                                          dimension=0, num_keys=1))


def test_broadcast_in_dim_refuses_negative_dimensions_as_jax():
    # program 9608 of seed 1
    _same_error(lambda api, lax: lax.broadcast_in_dim(np.ones(2, np.int32), (2,), (-3,)))
    _same_error(lambda api, lax: api.jit(lambda x: lax.broadcast_in_dim(x, (2,), (-1,)))(
        np.ones(2, np.int32)))

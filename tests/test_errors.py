"""Every error class, triggered through the public API, with its message."""
import re
import subprocess
import sys

import numpy as np
import pytest

import traxla as jax
import traxla.numpy as jnp
from traxla import errors, jit, lax, make_jaxpr

DOCS = "See https://docs.jax.dev/en/latest/errors.html#jax.errors."


def _origin(fn, arg_text):
    code = fn.__code__
    return (f"The error occurred while tracing the function {code.co_name} at "
            f"{code.co_filename}:{code.co_firstlineno} for jit. This concrete value was not "
            f"available in Python because it depends on {arg_text}.")


def f_two(x, y):
    if x + y > 0:
        return x
    return y


def test_bool_conversion_names_both_arguments():
    with pytest.raises(errors.TracerBoolConversionError) as info:
        jit(f_two)(1.0, 2.0)
    assert str(info.value) == (
        "Attempted boolean conversion of traced array with shape bool[].\n"
        + _origin(f_two, "the values of the arguments x and y") + "\n"
        + DOCS + "TracerBoolConversionError")


def f_tree(params):
    if params["w"] > 0:
        return 1.0
    return 0.0


def test_bool_conversion_names_the_pytree_leaf():
    with pytest.raises(errors.TracerBoolConversionError, match=re.escape("argument params['w']")):
        jit(f_tree)({"w": 1.0, "b": 2.0})


def f_range(n):
    return list(range(n))


def test_integer_conversion_error():
    with pytest.raises(errors.TracerIntegerConversionError) as info:
        jit(f_range)(3)
    assert str(info.value) == (
        "The __index__() method was called on traced array with shape int32[]\n"
        + _origin(f_range, "the value of the argument n") + "\n"
        "A traced value cannot be a Python int: for a loop over a traced bound use "
        "`lax.fori_loop` or `lax.scan` instead of `for i in range(n)`; for a shape or a size, "
        "mark the argument static with `static_argnums`.\n"
        + DOCS + "TracerIntegerConversionError")


def f_numpy(x):
    return np.asarray(x)


def test_array_conversion_error():
    with pytest.raises(errors.TracerArrayConversionError) as info:
        jit(f_numpy)(jnp.ones(2))
    assert str(info.value) == (
        "The numpy.ndarray conversion method __array__() was called on traced array with shape "
        "float32[2]\n" + _origin(f_numpy, "the value of the argument x") + "\n"
        + DOCS + "TracerArrayConversionError")


def f_float(x):
    return float(x) + 1


def test_concretization_error_for_float():
    with pytest.raises(errors.ConcretizationTypeError) as info:
        make_jaxpr(f_float)(1.0)
    assert str(info.value) == (
        "Abstract tracer value encountered where concrete value is expected: traced array with "
        "shape float32[]\nThe problem arose with the `float` function. If trying to convert the "
        "data type of a value, try using `x.astype(float)` or `jnp.array(x, float)` instead.\n"
        + _origin(f_float, "the value of the argument x") + "\n\n"
        + DOCS + "ConcretizationTypeError")


def test_concretization_error_from_constant_operations_names_the_line():
    def f(x):
        z = jnp.arange(3)
        if z.sum() > 0:
            return x
        return -x
    with pytest.raises(errors.TracerBoolConversionError) as info:
        jit(f)(1.0)
    assert "This value became a tracer due to JAX operations on these lines:" in str(info.value)
    assert "operation a:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None]" in str(info.value)


def test_unexpected_tracer_error_when_a_tracer_leaks():
    saved = []

    def leak(x):
        y = x * 2
        saved.append(y)
        return y

    jit(leak)(jnp.ones(3))
    with pytest.raises(errors.UnexpectedTracerError) as info:
        saved[0] + 1
    msg = str(info.value)
    assert msg.startswith(
        "Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
        "allowing for a reference to an intermediate value with type float32[3] wrapped in a "
        "DynamicJaxprTracer to escape the scope of the transformation.")
    assert f"The function being traced when the value leaked was leak at {__file__}:" in msg
    line = leak.__code__.co_firstlineno + 1
    # column 12: where ``x * 2`` starts on its line
    assert f"The leaked intermediate value was created on line {__file__}:{line}:12 (leak)." in msg
    assert msg.endswith(DOCS + "UnexpectedTracerError")


def test_leaked_tracer_used_in_jit_or_bool_also_raises():
    saved = []
    jit(lambda x: saved.append(x) or x)(1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        jit(lambda y: y + saved[0])(2.0)
    with pytest.raises(errors.UnexpectedTracerError):
        bool(saved[0])


def test_unhashable_static_argument():
    with pytest.raises(ValueError) as info:
        jit(lambda x, n: x, static_argnums=1)(1.0, [1, 2])
    assert str(info.value) == (
        "Non-hashable static arguments are not supported. An error occurred while trying to hash "
        "an object of type <class 'list'>, [1, 2]. The error was:\nTypeError: unhashable type: "
        "'list'\n")


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("thunk, exc, message", [
    (lambda: jnp.ones((2, 3)) + jnp.ones((4,)), ValueError,
     "Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]"),
    (lambda: lax.add(jnp.ones(2), jnp.ones(2, jnp.int32)), TypeError,
     "lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add is "
     "a similar function that does automatic type promotion on inputs)."),
    (lambda: jnp.ones((2, 3)) @ jnp.ones((4, 5)), TypeError,
     "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."),
    (lambda: jnp.reshape(jnp.ones(6), (4, 2)), TypeError,
     "cannot reshape array of shape (6,) (size 6) into shape (4, 2) (size 8)"),
    (lambda: lax.add(jnp.ones(2), jnp.ones(3)), TypeError,
     "add got incompatible shapes for broadcasting: (2,), (3,)."),
    (lambda: lax.sin(jnp.ones(3, jnp.int32)), TypeError,
     "sin does not accept dtype int32. Accepted dtypes are subtypes of floating, complexfloating."),
    (lambda: lax.shift_left(jnp.ones(3), jnp.ones(3)), TypeError,
     "shift_left does not accept dtype float32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer."),
    (lambda: lax.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))], 0), TypeError,
     "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
     "concatenated: concatenating along dimension 0 for shapes (2, 3), (2, 4)."),
    (lambda: lax.transpose(jnp.ones((2, 3)), (0, 0)), TypeError,
     "transpose permutation isn't a permutation of operand dimensions, got permutation (0, 0) "
     "for operand shape (2, 3)."),
    (lambda: lax.select_n(jnp.ones(2, bool), jnp.ones(3), jnp.ones(3)), TypeError,
     "select `which` must be scalar or have the same shape as cases, got `which` shape (2,) but "
     "case shape (3,)."),
    (lambda: lax.gather(jnp.ones((4, 3)), jnp.zeros((4, 1), jnp.int32), lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (2, 3), mode="clip"),
     TypeError, "Gather op can only collapse slice dims with bound 1, but bound is 2 for index 0 "
     "at position 0."),
    (lambda: lax.gather(jnp.ones((4, 3)), jnp.zeros((4, 1), jnp.int32), lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(1,), operand_batching_dims=(0,),
        start_indices_batching_dims=(0,)), (2, 1), mode="clip"),
     TypeError, "Gather op can only have operand batching dims with bound 0/1, but bound is 2 for "
     "index 0 at position 0."),
])
def test_shape_and_dtype_errors_at_trace_time(mode, thunk, exc, message):
    with pytest.raises(exc) as info:
        thunk() if mode == "eager" else jit(thunk)()
    assert str(info.value) == message


def test_error_classes_subclass_builtins():
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    for cls in (errors.ConcretizationTypeError, errors.TracerIntegerConversionError,
                errors.TracerArrayConversionError, errors.UnexpectedTracerError):
        assert issubclass(cls, TypeError)


def test_bad_argument_type_is_a_clear_error():
    with pytest.raises(TypeError, match="Error interpreting argument to .* as an abstract array"):
        jit(lambda x: x)("a string")


def f_shape(x, n):
    return jnp.zeros(n) + x


def test_traced_shape_names_the_argument_and_static_argnums():
    with pytest.raises(TypeError) as info:
        jit(f_shape)(1.0, 3)
    assert str(info.value) == (
        "Shapes must be 1D sequences of concrete values of integer type, got (JitTracer(~int32[]),).\n"
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.\n"
        + _origin(f_shape, "the value of the argument n"))
    np.testing.assert_array_equal(np.asarray(jit(f_shape, static_argnums=1)(1.0, 3)), np.ones(3))

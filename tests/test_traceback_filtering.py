"""Tracebacks of errors raised through the public API leave traxla's own frames out, as
JAX's ``jax_traceback_filtering`` does, so the user's line is the last one printed."""
import os
import subprocess
import sys
import textwrap
import traceback

import pytest

import traxla
import traxla.numpy as jnp
from traxla import lax
from traxla.ir import traceback_util

PACKAGE_DIR = os.path.dirname(os.path.abspath(traxla.__file__))
ROOT = os.path.dirname(PACKAGE_DIR)
NOTE = ("For simplicity, JAX has removed its internal frames from the traceback of the "
        "following exception. Set JAX_TRACEBACK_FILTERING=off to include these.")

SCRIPT = textwrap.dedent("""\
    import traxla as jax
    import traxla.numpy as jnp

    def f(x, y):
        return x @ y

    x = jnp.ones((3, 4)); y = jnp.ones((5, 6))
    jax.jit(f)(x, y)
    """)


def _run_script(tmp_path, mode):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TRAXLA_TRACEBACK_FILTERING", None)
    if mode is None:
        env.pop("JAX_TRACEBACK_FILTERING", None)
    else:
        env["JAX_TRACEBACK_FILTERING"] = mode
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 1
    return str(script), proc.stderr


def _frames(stderr):
    return [line.strip() for line in stderr.splitlines() if line.strip().startswith('File "')]


def test_default_mode_ends_with_the_users_frame_and_has_no_traxla_frames(tmp_path):
    script, err = _run_script(tmp_path, None)
    frames = _frames(err)
    assert frames == [f'File "{script}", line 8, in <module>',
                      f'File "{script}", line 5, in f'], err
    assert "TypeError: dot_general requires contracting dimensions" in err
    assert err.rstrip().endswith(NOTE)


def test_filtering_off_keeps_every_frame(tmp_path):
    script, err = _run_script(tmp_path, "off")
    frames = _frames(err)
    traxla_frames = [f for f in frames if PACKAGE_DIR in f]
    assert len(traxla_frames) >= 5, err  # the jit machinery and the typing rule
    assert frames[-1].startswith(f'File "{os.path.join(PACKAGE_DIR, "ir")}'), err
    assert NOTE not in err


def test_remove_frames_chains_the_unfiltered_trace_as_the_cause(tmp_path):
    script, err = _run_script(tmp_path, "remove_frames")
    cause, _, final = err.partition("The above exception was the direct cause")
    assert "UnfilteredStackTrace: TypeError: dot_general" in cause
    assert any(PACKAGE_DIR in f for f in _frames(cause))
    assert _frames(final)[-1] == f'File "{script}", line 5, in f'
    assert not any(PACKAGE_DIR in f for f in _frames(final))


def test_an_invalid_environment_value_is_refused_at_import(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_TRACEBACK_FILTERING="bogus")
    proc = subprocess.run([sys.executable, "-c", "import traxla"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert 'ValueError: Invalid value "bogus" for JAX flag jax_traceback_filtering' in proc.stderr


def _matmul_error(fun):
    """The TypeError that ``fun`` raises, and the files of its traceback's frames."""
    with pytest.raises(TypeError, match="contracting dimensions") as info:
        fun()
    files = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    return info.value, files


def _bad_matmul(x, y):
    return (x @ y).sum()


X, Y = jnp.ones((3, 4)), jnp.ones((5, 6))

ENTRY_POINTS = {
    "jit": lambda: traxla.jit(_bad_matmul)(X, Y),
    "jit_lower": lambda: traxla.jit(_bad_matmul).lower(X, Y),
    "nested_jit": lambda: traxla.jit(lambda a, b: traxla.jit(_bad_matmul)(a, b))(X, Y),
    "grad": lambda: traxla.grad(_bad_matmul)(X, Y),
    "vmap": lambda: traxla.vmap(_bad_matmul)(jnp.ones((2, 3, 4)), jnp.ones((2, 5, 6))),
    "make_jaxpr": lambda: traxla.make_jaxpr(_bad_matmul)(X, Y),
    "eval_shape": lambda: traxla.eval_shape(_bad_matmul, X, Y),
    "scan": lambda: lax.scan(lambda c, _: (_bad_matmul(X, Y), None), 0.0, None, length=2),
    "eager_operator": lambda: _bad_matmul(X, Y),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_each_entry_point_filters_and_notes_once(entry):
    err, files = _matmul_error(ENTRY_POINTS[entry])
    assert not any(f.startswith(PACKAGE_DIR + os.sep) for f in files), files
    assert files[-1] == __file__  # the user's `x @ y` is the last frame
    assert err.__notes__ == ["--------------------\n" + NOTE]


def test_config_update_off_and_back():
    traxla.config.update("jax_traceback_filtering", "off")
    try:
        err, files = _matmul_error(ENTRY_POINTS["jit"])
        assert any(f.startswith(PACKAGE_DIR + os.sep) for f in files)
        assert not getattr(err, "__notes__", None)
    finally:
        traxla.config.update("jax_traceback_filtering", "auto")
    _, files = _matmul_error(ENTRY_POINTS["jit"])
    assert not any(f.startswith(PACKAGE_DIR + os.sep) for f in files)


def test_tracebackhide_marks_traxla_frames_and_keeps_them():
    traxla.config.update("jax_traceback_filtering", "tracebackhide")
    try:
        with pytest.raises(TypeError) as info:
            traxla.jit(_bad_matmul)(X, Y)
    finally:
        traxla.config.update("jax_traceback_filtering", "auto")
    walked = list(traceback.walk_tb(info.value.__traceback__))
    hidden = [f for f, _ in walked if f.f_locals.get("__tracebackhide__")]
    ours = [f for f, _ in walked if f.f_code.co_filename.startswith(PACKAGE_DIR + os.sep)]
    assert ours and hidden == ours


def test_an_invalid_config_value_is_refused_with_jaxs_message():
    with pytest.raises(ValueError, match=r"new enum value must be in \['off', 'tracebackhide', "
                                         r"'remove_frames', 'quiet_remove_frames', 'auto'\], "
                                         r"got bogus"):
        traxla.config.update("jax_traceback_filtering", "bogus")
    assert traxla.config.jax_traceback_filtering == "auto"


def test_a_caught_exception_inside_user_code_is_not_touched():
    # Below a boundary, user code that catches an error sees it unfiltered (filtering happens
    # only where the exception leaves the outermost boundary).
    seen = {}

    def f(x):
        try:
            return x @ jnp.ones((5, 6))
        except TypeError as e:
            seen["notes"] = getattr(e, "__notes__", None)
            return x

    traxla.jit(f)(X)
    assert seen == {"notes": None}


def test_boundaries_are_registered_for_the_inline_hot_paths():
    from traxla.api.jit_function import JitFunction
    from traxla.tracer.eval import EvalTrace
    assert JitFunction.__call__.__code__ in traceback_util._boundary_codes
    assert EvalTrace.process_primitive.__code__ in traceback_util._boundary_codes


def test_aot_stages_filter_too():
    compiled = traxla.jit(lambda x: x * 2).lower(jnp.ones(3)).compile()
    with pytest.raises(TypeError, match="Argument types differ") as info:
        compiled(jnp.ones(4))
    files = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    assert files == [__file__]


def test_exclusions_edited_in_place_take_effect(tmp_path):
    # flax's show/hide_flax_in_tracebacks append to and remove from _exclude_paths
    name = str(tmp_path / "lib.py")
    assert traceback_util.include_filename(name)
    traceback_util._exclude_paths.append(str(tmp_path))
    try:
        assert not traceback_util.include_filename(name)
    finally:
        traceback_util._exclude_paths.remove(str(tmp_path))
    assert traceback_util.include_filename(name)

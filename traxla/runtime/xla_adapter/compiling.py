"""Compilation: XLA's compile options (JAX's defaults), compiling a StableHLO module on one
device or SPMD over several, shape refinement, XLA's errors explained, and what a compiled
program tells about itself (HLO text, cost and memory analyses, layouts, output shardings)."""
from __future__ import annotations

import io
import re

import numpy as np
from jaxlib import _jax, _hlo
from jaxlib import xla_client as _xc
from jaxlib.mlir import ir

from traxla.runtime.xla_adapter.callbacks import host_callback_objects

# As ``jax._src.compiler.get_compile_options`` at JAX's defaults (the same options make XLA
# do the same work: an unset memory-fitting level, or profile version 0, "look an AutoFDO
# profile up", cost TPU compiles time): memory fitting O2 (xla::EffortLevel 29), no profile.
def _jax_defaults(opts):
    opts.executable_build_options.memory_fitting_level = 29
    opts.profile_version = -1


def compile_options(num_partitions: int = 1, device=None, arity=(1, 1)):
    """Options of a program; ``device``: the one device it runs on (its device assignment,
    sharding propagation allowed to each of its ``arity`` (parameters, results), as JAX's
    ``jit`` without shardings)."""
    opts = _xc.CompileOptions()
    build = opts.executable_build_options
    build.use_spmd_partitioning = build.use_shardy_partitioner = True
    opts.num_replicas, opts.num_partitions = 1, num_partitions
    _jax_defaults(opts)
    if device is not None and num_partitions == 1:
        opts.device_assignment = _xc.DeviceAssignment.create(np.asarray([[device.id]], np.int32))
        build.allow_spmd_sharding_propagation_to_parameters = [True] * max(arity[0], 1)
        build.allow_spmd_sharding_propagation_to_output = [True] * max(arity[1], 1)
    return opts


def _main_arity(module) -> tuple:
    """(parameters, results) of an ``ir.Module``'s ``main``; (1, 1) for text or bytecode
    (one entry stands for all in XLA)."""
    if isinstance(module, (bytes, str)):
        return 1, 1
    for op in module.body.operations:
        if op.operation.name == "func.func" and \
                ir.StringAttr(op.attributes["sym_name"]).value == "main":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            return len(ftype.inputs), len(ftype.results)
    return 1, 1


def _under_ops(op, n) -> int:
    """``n`` less the operations in ``op``, stopping below 0 (JAX compiles a module of fewer
    than 10 without XLA's detailed logging: ``jax_compiler_detailed_logging_min_ops``)."""
    n -= 1
    for region in op.regions:
        for block in region:
            for child in block:
                n = _under_ops(child, n)
                if n < 0:
                    return n
    return n


def compile(client, module, devices_, host_callbacks=(), compiler_options=None,
            owned: bool = True):
    """Compiles an ``ir.Module`` (or its text/bytecode) into a loaded executable.

    ``host_callbacks``: the Python callables the module's ``xla_ffi_python_cpu_callback``
    custom calls index. A module with such calls compiled without them crashes the process,
    so they are always passed when there are any. ``compiler_options`` are XLA's debug
    options by name (``{'xla_cpu_enable_fast_math': True}``), checked by XLA (an unknown
    name raises ``INVALID_ARGUMENT``). ``owned``: see ``compilable``."""
    opts = compile_options(device=devices_[0] if len(devices_) == 1 else None,
                           arity=_main_arity(module) if len(devices_) == 1 else (1, 1))
    _apply_compiler_options(opts, compiler_options)
    if not isinstance(module, (bytes, str)) and _under_ops(module.operation, 10) >= 0:
        opts.executable_build_options.debug_options.xla_detailed_logging = False
    kwargs = {"host_callbacks": host_callback_objects(client, host_callbacks)} if host_callbacks else {}
    module = compilable(refine_polymorphic_shapes(module), owned)
    try:
        return client.compile_and_load(module, _xc.DeviceList(tuple(devices_)), opts, **kwargs)
    except _xc.XlaRuntimeError as e:
        raise _explain_compile_error(e) from None


def compilable(module, owned: bool):
    """What XLA compiles for ``module``. XLA compiles an ``ir.Module`` inside the module's
    MLIR context with the GIL released, so it gets the module itself only when ``owned``
    (the context is the calling thread's, which no other thread builds in, and this thread
    waits for the compile); otherwise its bytecode, which XLA parses into a context of its
    own (writing it holds the GIL: no other thread is inside MLIR meanwhile)."""
    if owned or isinstance(module, (bytes, str)):
        return module
    return module_bytecode(module)


def module_bytecode(module) -> bytes:
    buf = io.BytesIO()
    module.operation.write_bytecode(file=buf)
    return buf.getvalue()


def _apply_compiler_options(opts, compiler_options):
    if compiler_options:
        opts.env_option_overrides = [(str(k), _option_value(v))
                                     for k, v in compiler_options.items()]


def _option_value(v):
    # XLA parses every override from a string or takes a bool/int/float as it is.
    return v if isinstance(v, (str, bool, int, float)) else str(v)


def hlo_computation(module):
    """The HLO (an ``XlaComputation``) of a StableHLO module, as ``Lowered.compiler_ir('hlo')``
    (from bytecode: its locations name the HLO instructions x.1, sin.1, as JAX's)."""
    return _jax.mlir.mlir_module_to_xla_computation(
        module_bytecode(module) if isinstance(module, ir.Module) else module,
        use_tuple_args=False, return_tuple=False)


def hlo_text(computation, debug_info: bool = False) -> str:
    options = _hlo.HloPrintOptions.short_parsable()
    options.print_metadata = debug_info
    return computation.as_hlo_module().to_string(options)


_UNREGISTERED_FFI = re.compile(r"No FFI handler registered for (\S+) on a platform (\S+)")


def _explain_compile_error(error):
    """XLA's error, with what to do when it is a call to an unregistered FFI target."""
    m = _UNREGISTERED_FFI.search(str(error))
    if m is None:
        return error
    return type(error)(
        f"{error}\nThe program calls the FFI target `{m.group(1)}`, which is not registered "
        f"on this platform ({m.group(2)}): register its handler first with "
        f"traxla.ffi.register_ffi_target({m.group(1)!r}, traxla.ffi.pycapsule(lib.Handler), "
        "platform='cpu'), then call the jitted function again.")


def optimized_hlo_text(executable) -> str:
    return executable.hlo_modules()[0].to_string()


def cost_analysis(executable) -> dict:
    return dict(executable.cost_analysis())


def memory_analysis(executable):
    return executable.get_compiled_memory_stats()


def spmd_compile_options(devices_, num_partitions, compiler_options=None):
    """An SPMD program's compile options: Shardy partitioning over ``devices_`` in order
    (the device assignment is part of the executable)."""
    opts = _xc.CompileOptions()
    _apply_compiler_options(opts, compiler_options)
    opts.num_replicas = 1
    opts.num_partitions = num_partitions
    _jax_defaults(opts)
    build = opts.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    ids = np.asarray([d.id for d in devices_], np.int32).reshape(1, num_partitions)
    opts.device_assignment = _xc.DeviceAssignment.create(ids)
    return opts


def compile_spmd(client, module, devices_, num_partitions, host_callbacks=(),
                 compiler_options=None, owned: bool = True):
    opts = spmd_compile_options(devices_, num_partitions, compiler_options)
    kwargs = {"host_callbacks": host_callback_objects(client, host_callbacks)} if host_callbacks else {}  # see compile
    module = compilable(refine_polymorphic_shapes(module, enable_shardy=True), owned)
    try:
        return client.compile_and_load(module, _xc.DeviceList(tuple(devices_)), opts, **kwargs)
    except _xc.XlaRuntimeError as e:
        raise _explain_compile_error(e) from None


def output_hlo_shardings(executable):
    shardings = executable.get_output_shardings()
    if shardings is None:
        return None
    return [_xc.HloSharding.from_proto(s) for s in shardings]


def layouts(executable, outputs=False):  # jaxlib's xla Layout of each parameter (output)
    got = executable.get_output_layouts() if outputs else executable.get_parameter_layouts()
    return [p._xla_layout() for p in got]


def _uses_shape_polymorphism(module) -> bool:
    try:
        attrs = module.operation.attributes
    except AttributeError:  # text or bytecode
        return False
    if "jax.uses_shape_polymorphism" not in attrs:
        return False
    return ir.BoolAttr(attrs["jax.uses_shape_polymorphism"]).value


def refine_polymorphic_shapes(module, enable_shardy: bool = False):
    """A module that calls shape-polymorphic code with static arguments, with every
    dynamic shape resolved (and shape assertions checked) as bytecode XLA compiles; other
    modules unchanged."""
    if not _uses_shape_polymorphism(module):
        return module
    try:
        return _jax.mlir.refine_polymorphic_shapes(module_bytecode(module),
                                                   enable_shape_assertions=True,
                                                   validate_static_shapes=True,
                                                   enable_shardy=enable_shardy)
    except Exception as e:
        raise ValueError(f"Error refining the shapes of a shape-polymorphic exported call: "
                         f"{e}") from None


def hlo_cost_analysis(client, computation) -> dict:
    """XLA's cost estimate of an HLO module as written (no optimization passes), as JAX's
    ``Lowered.cost_analysis``."""
    return dict(_jax.hlo_module_cost_analysis(client, computation.as_hlo_module()))

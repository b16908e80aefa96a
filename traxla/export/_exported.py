"""``traxla.export``: a jitted function lowered once to a portable StableHLO artifact
(``Exported``), callable again in this or another process, and readable by JAX."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from traxla import tree_util
from traxla.ir.dtypes import tangent_dtype
from traxla.ir.shape_poly import is_constant_shape
from traxla.lowering.rules.export import exported_module
from traxla.runtime.backend import default_backend
from traxla.lowering.export import lower_for_export
from traxla.runtime import xla_adapter, ArrayImpl
from traxla.stages import result_names
from traxla.api import jit
from traxla.autodiff import vjp
from traxla.autodiff.partial_eval import prune_unused
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.api.shape_dtype_struct import ShapeDtypeStruct
from traxla.tracer.interpret import jaxpr_as_fun
from traxla.autodiff.custom import custom_vjp
from traxla.ir.rules.export import call_exported_p
from traxla.numpy import asarray, zeros
from traxla.tracer import Tracer

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
CALLING_CONVENTION_VERSION = 10


class DisabledSafetyCheck:
    """A safety check that should be skipped on (de)serialization (JAX's)."""

    @classmethod
    def platform(cls) -> "DisabledSafetyCheck":
        return DisabledSafetyCheck("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> "DisabledSafetyCheck":
        return DisabledSafetyCheck(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        return self._impl[len("custom_call:"):] if self._impl.startswith("custom_call:") else None

    def __init__(self, _impl: str):
        self._impl = _impl

    def __str__(self):
        return self._impl

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self):
        return hash(self._impl)


@dataclasses.dataclass(frozen=True, eq=False)
class Exported:
    """A function lowered to StableHLO, with its calling convention (JAX's fields).

    ``in_avals``/``out_avals`` may hold dimension expressions (``b``) for a
    shape-polymorphic export; ``mlir_module_serialized`` is the versioned StableHLO
    portable artifact; ``module_kept_var_idx`` lists the arguments the module takes."""
    fun_name: str
    in_tree: Any
    in_avals: tuple
    out_tree: Any
    out_avals: tuple
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: tuple
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple
    uses_global_constants: bool
    _get_vjp: Callable | None = None

    @property
    def _arg_names(self) -> list:
        """``args[0]``, ``kwargs['x']``: each flat argument's place, for error messages."""
        names = []
        placeholder = tree_util.tree_unflatten(self.in_tree, list(range(self.in_tree.num_leaves)))
        for path, _ in tree_util.tree_flatten_with_path(placeholder)[0]:
            head, rest = (path[0], path[1:]) if path else (None, ())
            root = "kwargs" if getattr(head, "idx", 0) == 1 else "args"
            names.append(root + tree_util.keystr(tuple(rest)))
        return names

    def mlir_module(self) -> str:
        """The module as StableHLO text."""
        return str(exported_module(self.mlir_module_serialized))

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"

    def in_shardings_jax(self, mesh) -> tuple:
        """Shardings of the arguments on ``mesh`` for ``jit``/``device_put``: traxla exports
        (and calls) single-device programs, whose shardings are unspecified (None)."""
        return (None,) * len(self.in_avals)

    def out_shardings_jax(self, mesh) -> tuple:
        return (None,) * len(self.out_avals)

    def has_vjp(self) -> bool:
        return self._get_vjp is not None

    def vjp(self) -> "Exported":
        """The exported VJP: flat primal arguments then one cotangent per primal output,
        returning the cotangents of the flat primal inputs."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """JAX's flatbuffer bytes; ``vjp_order=n`` also stores n orders of ``vjp()``."""
        # imported on use: flatbuffers is needed only to (de)serialize
        from traxla.export._serialization import serialize
        return serialize(self, vjp_order=vjp_order)

    def call(self, *args, **kwargs):
        """Runs the exported function (also under ``jit``, ``vmap`` and, when the export
        has a VJP, ``grad``) on arguments of the exported structure."""
        return call_exported(self)(*args, **kwargs)


def deserialize(blob) -> Exported:
    """An ``Exported`` from ``Exported.serialize()``'s (or JAX's) bytes."""
    from traxla.export._serialization import deserialize as _deserialize
    return _deserialize(blob)


def default_export_platform() -> str:
    p = default_backend()
    return "cuda" if p == "gpu" else p


def export(fun_jit, *, platforms=None, disabled_checks=()) -> Callable[..., Exported]:
    """``export(jit(f))(*args_or_ShapeDtypeStructs)`` -> ``Exported`` (JAX's API)."""
    if not hasattr(fun_jit, "trace") or not hasattr(fun_jit, "lower"):
        raise ValueError(
            f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    if platforms is not None:
        platforms = tuple("cuda" if p == "gpu" else p for p in platforms)
    else:
        platforms = (default_export_platform(),)

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        return _export_traced(traced, platforms, tuple(disabled_checks))
    return do_export


def _export_traced(traced, platforms, disabled_checks) -> Exported:
    info = traced._program_info
    closed = info.closed
    in_avals = tuple(closed.in_avals)
    polymorphic = not all(is_constant_shape(a.shape) for a in in_avals)
    if not polymorphic:  # as JAX's lowering (``pxla._dce_jaxpr``): dead equations go
        pruned, _ = prune_unused(closed.jaxpr)
        if pruned is not closed.jaxpr:
            j = closed.jaxpr
            closed = ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.outvars, pruned.eqns,
                                       j.debug_info), closed.consts)
    lowered = lower_for_export(closed, info.name, platforms, result_names(info.out_tree),
                               keep_unused=polymorphic)
    serialized = xla_adapter.serialize_portable_artifact(lowered.module)

    def get_vjp(primal: Exported) -> Exported:
        return _export_vjp(closed, primal, platforms, disabled_checks)

    return Exported(
        fun_name=info.name, in_tree=info.in_tree, in_avals=in_avals,
        out_tree=info.out_tree, out_avals=tuple(closed.out_avals),
        in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(closed.out_avals),
        nr_devices=1, platforms=tuple(platforms), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=disabled_checks, mlir_module_serialized=serialized,
        calling_convention_version=CALLING_CONVENTION_VERSION,
        module_kept_var_idx=tuple(lowered.kept), uses_global_constants=lowered.uses_dim_vars,
        _get_vjp=get_vjp)


def _export_vjp(closed, primal: Exported, platforms, disabled_checks) -> Exported:
    """Exports ``(*primals, *out_cts) -> in_cts`` of the primal program (JAX's layout)."""
    fun = jaxpr_as_fun(closed)
    n_in = len(primal.in_avals)

    def fun_vjp(*args_and_cts):
        primals, cts = args_and_cts[:n_in], args_and_cts[n_in:]
        _, pullback = vjp(lambda *xs: list(fun(*xs)), *primals)
        return tuple(pullback(list(cts)))
    fun_vjp.__name__ = f"vjp_{primal.fun_name}"
    # cotangents of integer (and bool) outputs are float0, as in JAX's exported VJPs
    specs = [*(ShapeDtypeStruct(a.shape, a.dtype) for a in primal.in_avals),
             *(ShapeDtypeStruct(a.shape, tangent_dtype(a.dtype)) for a in primal.out_avals)]
    return export(jit(fun_vjp), platforms=platforms, disabled_checks=disabled_checks)(*specs)


def call_exported(exported: Exported) -> Callable:
    """The exported function as a traxla callable (``exported.call``); differentiable
    through the exported VJP (JAX's ``jax.export.call``)."""
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. Found {exported}.")

    @custom_vjp
    def f_flat(*flat):
        return tuple(call_exported_p.bind(*flat, exported=exported))

    def f_flat_vjp_fwd(*flat):
        return f_flat(*flat), flat  # the primal arguments are the residual

    def f_flat_vjp_bwd(residual, cts):
        vjp_exp = exported.vjp()  # "No VJP is available" for an artifact without one
        cts = [_zeros_if_none(c, a) for c, a in zip(cts, exported.out_avals)]
        return tuple(call_exported(vjp_exp)(*residual, *cts))
    f_flat.defvjp(f_flat_vjp_fwd, f_flat_vjp_bwd)

    def f_imported(*args, **kwargs):
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != exported.in_tree:
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when "
                f"the function '{exported.fun_name}' was exported, but they differ: the "
                f"invocation has structure {tree} and the export {exported.in_tree}.")
        leaves = [x if isinstance(x, (ArrayImpl, Tracer)) else asarray(x) for x in leaves]
        return tree_util.tree_unflatten(exported.out_tree, list(f_flat(*leaves)))
    return f_imported


def _zeros_if_none(ct, aval):
    if ct is None:
        return zeros(aval.shape, aval.dtype)
    return ct


__all__ = ["DisabledSafetyCheck", "Exported", "call_exported", "default_export_platform",
           "deserialize", "export", "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version"]



def _vjp_orders(exp: Exported) -> int:
    """How many orders of VJP an Exported carries (``serialize(vjp_order=n)``)."""
    n = 0
    while exp.has_vjp():
        exp, n = exp.vjp(), n + 1
    return n

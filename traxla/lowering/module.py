"""Builds one verified StableHLO module per program from a closed jaxpr."""
from __future__ import annotations

import re
import weakref

import numpy as np

from traxla.errors import LoweringError
from traxla.ir import dtypes
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from traxla.ir.effects import has_ordered_effects, jaxpr_effects, ordered_effects
from traxla.lowering.mlir import (aval_type, broadcast_parts, broadcast_to, constant, context,
                                  create_op, func, hlo, ir, sdy)
from traxla.lowering.dynamic_shapes import dim_values
from traxla.lowering.registry import (_MODULE_PLATFORM, RuleContext, platform_rules,
                                      platform_sensitive, lowering_tables)


_target = {"platform": "cpu"}


def set_default_platform(platform: str):
    """The platform modules are lowered for unless told otherwise (the runtime's default
    backend): rules that differ by platform read ``ctx.module.platform``."""
    _target["platform"] = platform


class ModuleBuilder:
    """Owns the module being emitted and the private functions of nested jits."""

    def __init__(self, name: str, platform: str | None = None):
        self.platform = platform or _target["platform"]
        # A module for several platforms: the platforms, and in each function its platform
        # index argument (``jax.global_constant = "_platform_index"``, JAX's convention).
        self.platforms = None
        self.platform_index = None
        self.module = ir.Module.create()
        self.module.operation.attributes["sym_name"] = ir.StringAttr.get(name)
        i32 = ir.IntegerType.get_signless(32)
        self.module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, 1)
        self.module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        self.symbol_table = ir.SymbolTable(self.module.operation)
        self._functions: dict = {}
        self.mesh_stack: list = []      # meshes of the enclosing shard_maps (for collectives)
        self._mesh_emitted = False
        self._mesh_names: dict = {}  # (axis names, sizes) -> the sdy.mesh symbol
        self._last_mesh_op = None
        self._channels = 0
        # Python callables the program calls back (a custom call's ``index`` points here);
        # the runtime compiles the module together with them.
        self.host_callbacks: list = []
        self.host_callbacks_keepalive: list = []
        # The token ordering the ordered effects of the region being emitted (None: none).
        self.token = None
        self.scope_prefix = ""          # "jit(f)": the start of every op's name in its location
        # A shape-polymorphic export's dimension variables: every function but @main then
        # takes their values first (``jax.global_constant`` arguments, JAX's convention).
        self.dim_vars: list = []
        self._locations: dict = {}
        self.call_attributes: dict = {}  # function symbol -> a func.call's attributes
        # (id of a called ClosedJaxpr, platform, one platform?) -> (the jaxpr, its symbol,
        # result types, ordered effects?, call attributes): see ``rules.call.call_function``
        self.calls: dict = {}
        # (rule's key..., id of a location of ``_locations``) -> an op of this module that
        # a rule clones for a like equation at that location (a reduction and its body)
        self.op_templates: dict = {}
        # primitive -> a dict its inline op's ``attributes_of(eqn, memo)`` keeps this
        # module's MLIR attributes in (no thread-local read per equation)
        self.attribute_memos: dict = {}

    def location(self, eqn):
        """The op location JAX gives an equation: its name stack (``jit(f)/scope/sin``)
        around the user's source position; shown by ``as_text(debug_info=True)`` and kept
        as ``op_name`` metadata in the compiled HLO. One per distinct (scopes, primitive,
        source position) in this module (the code object by id: it outlives the
        lowering, held by the equation)."""
        info = eqn.source_info
        if info is None:
            key = eqn.primitive
        else:
            key = (info.name_stack, eqn.primitive, id(info.code), info.lasti)
        loc = self._locations.get(key)
        if loc is None:
            loc = self._locations[key] = self._new_location(eqn)
        return loc

    def _new_location(self, eqn):
        info = eqn.source_info
        scopes = info.name_stack if info is not None else ()
        name = "/".join((self.scope_prefix, *scopes, eqn.primitive.name)).lstrip("/")
        if info is None:
            return ir.Location.name(name)
        return ir.Location.name(name, childLoc=ir.Location.file(info.file, info.line,
                                                                info.column or 0))

    def add_host_callback(self, fn) -> int:
        self.host_callbacks.append(fn)
        return len(self.host_callbacks) - 1

    def add_keepalive(self, obj) -> None:
        """Keeps ``obj`` alive as long as the module (JAX's ``ModuleContext.add_keepalive``;
        a lowering rule's host callback object)."""
        self.host_callbacks_keepalive.append(obj)

    def next_channel(self) -> int:
        self._channels += 1
        return self._channels

    def ensure_mesh(self, mesh) -> str:
        """Declares ``sdy.mesh @mesh`` once per mesh shape (``mesh``: names and sizes) and
        returns its symbol: ``mesh`` for the first, ``mesh_0``, ``mesh_1``... for meshes of
        other axes (``use_abstract_mesh`` inside a program), declared in that order as JAX's."""
        key = (tuple(mesh.axis_names), tuple(mesh.axis_sizes))
        name = self._mesh_names.get(key)
        if name is not None:
            return name
        name = "mesh" if not self._mesh_names else f"mesh_{len(self._mesh_names) - 1}"
        self._mesh_emitted = True
        at = (ir.InsertionPoint.at_block_begin(self.module.body) if self._last_mesh_op is None
              else ir.InsertionPoint.after(self._last_mesh_op))
        with at:
            self._last_mesh_op = sdy.MeshOp(name, sdy.MeshAttr.get(
                [sdy.MeshAxisAttr.get(n, s) for n, s in zip(mesh.axis_names, mesh.axis_sizes)]))
        self._mesh_names[key] = name
        return name

    def function_for(self, closed: ClosedJaxpr, name: str) -> str:
        """A private function computing ``closed``, emitted once per jaxpr."""
        key = (id(closed.jaxpr), has_ordered_effects(closed.jaxpr), self.platforms is None,
               self.platform)
        sym = self._functions.get(key)
        if sym is None:
            sym = self._emit_function(closed, _sanitize(name), public=False, token=key[1])
            self._functions[key] = sym
        return sym

    def _emit_function(self, closed: ClosedJaxpr, name: str, public: bool, result_infos=None,
                       shardings=None, token=False, aliases=None):
        """``token``: a private function of a jaxpr with ordered effects takes the token as
        its first argument and returns the new one first (``@main`` creates its own)."""
        jaxpr = closed.jaxpr
        in_types = [aval_type(v.aval) for v in jaxpr.invars]
        out_types = [aval_type(v.aval) for v in jaxpr.outvars]
        n_dims = len(self.dim_vars) if (self.dim_vars and not public) else 0
        if token:
            in_types = [hlo.TokenType.get()] + in_types
            out_types = [hlo.TokenType.get()] + out_types
        multi = self.platforms is not None
        if multi:
            in_types = [ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))] + in_types
        with ir.InsertionPoint(self.module.body):
            fn = func.FuncOp(name, ir.FunctionType.get(in_types, out_types))
        fn.attributes["sym_visibility"] = ir.StringAttr.get("public" if public else "private")
        if shardings is not None or aliases is not None:
            n = len(jaxpr.invars)
            specs = shardings.in_specs if shardings is not None else [None] * n
            kinds = shardings.in_kinds if shardings is not None else [None] * n
            aliases = aliases if aliases is not None else [None] * n
            i32 = ir.IntegerType.get_signless(32)
            fn.arg_attrs = ir.ArrayAttr.get([
                ir.DictAttr.get({**({"tf.aliasing_output": ir.IntegerAttr.get(i32, alias)}
                                    if alias is not None else {}),
                                 **ModuleShardings.attrs(spec, kind, _rank(v))})
                for spec, kind, alias, v in zip(specs, kinds, aliases, jaxpr.invars)])
        if result_infos is not None:
            out_specs = shardings.out_specs if shardings is not None else [None] * len(result_infos)
            out_kinds = shardings.out_kinds if shardings is not None else [None] * len(result_infos)
            out_meshes = (getattr(shardings, "out_meshes", None) if shardings is not None
                          else None) or [None] * len(result_infos)
            fn.result_attrs = ir.ArrayAttr.get([
                ir.DictAttr.get({"jax.result_info": ir.StringAttr.get(r),
                                 **(shardings.attrs(spec, kind, _rank(v), shardings.mesh_axes,
                                                    self.ensure_mesh(m) if m is not None
                                                    else "mesh")
                                    if shardings is not None else {})})
                for r, spec, kind, v, m in zip(result_infos, out_specs, out_kinds,
                                               jaxpr.outvars, out_meshes)])
        if n_dims:
            in_types = [ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))] * n_dims \
                + in_types
            fn = _with_dim_args(fn, in_types, n_dims, self.dim_vars)
        if multi:
            try:
                attrs = list(fn.arg_attrs)[-(len(in_types) - 1):] if len(in_types) > 1 else []
            except (KeyError, ValueError):  # none set
                attrs = []
            if len(attrs) != len(in_types) - 1:
                attrs = [ir.DictAttr.get({})] * (len(in_types) - 1)
            fn.arg_attrs = ir.ArrayAttr.get(
                [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get("_platform_index")})]
                + attrs)
        sym = self.symbol_table.insert(fn)
        names = jaxpr.debug_info.arg_names if public and jaxpr.debug_info is not None else None
        if names and len(names) == len(jaxpr.invars):
            # @main's arguments located at their names, as JAX's (HLO parameters named x.1)
            unknown = ir.Location.unknown()
            entry = fn.add_entry_block([unknown] * (len(in_types) - len(names)) + [
                ir.Location.name(n) if n else unknown for n in names])
        else:
            entry = fn.add_entry_block()
        with ir.InsertionPoint(entry), dim_values(
                dict(zip(self.dim_vars, entry.arguments[:n_dims])) if n_dims else None):
            outer_token, outer_index = self.token, self.platform_index
            args = list(entry.arguments)[n_dims:]
            if multi:
                self.platform_index, args = args[0], args[1:]
            if token:
                self.token, args = args[0], args[1:]
            elif public and has_ordered_effects(jaxpr):
                if shardings is not None and shardings.num_devices > 1:
                    _refuse_ordered_effects(jaxpr)
                self.token = hlo.create_token()
            consts = [const_value(v.aval, c) for v, c in zip(jaxpr.constvars, closed.consts)]
            outs = emit_jaxpr(self, jaxpr, consts, args)
            if token:
                outs = [self.token] + list(outs)
            self.token, self.platform_index = outer_token, outer_index
            func.ReturnOp(outs)
        return ir.StringAttr(sym).value


def _with_dim_args(fn, in_types, n_dims, names):
    """``fn`` retyped to take the dimension values first, each marked as JAX marks them."""
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(in_types, list(ftype.results)))
    # private functions carry no other argument attributes
    fn.arg_attrs = ir.ArrayAttr.get(
        [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get(n)}) for n in names]
        + [ir.DictAttr.get({})] * (len(in_types) - n_dims))
    return fn


def const_value(aval, value):
    """A closed-over constant as a dense constant of its aval's (physical) type."""
    if hasattr(type(value), "__traxla_abstract__"):  # what JAX's mlir says of it
        raise TypeError("A ShapeDtypeStruct does not have a value and cannot be used as a "
                        "constant in a JAX function.")
    dtype = aval.dtype
    if isinstance(dtype, dtypes.ExtendedDType):  # key arrays: their raw uint32 data
        return constant(value.physical_value(), dtype.physical_dtype)
    return constant(np.asarray(value, dtype), dtype)


def _sanitize(name: str) -> str:
    """``<lambda>`` -> ``_lambda``, as JAX names modules (``jit__lambda``); dots and dashes
    stay, as in JAX's names (a composite's ``xla.scaled_dot``)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name.replace(">", ""))


def emit_jaxpr(builder: ModuleBuilder, jaxpr, consts, args):
    """Emits ops for ``jaxpr``'s equations at the current insertion point.

    The hot loop of lowering (one iteration per equation of every program): everything
    it touches is a local, and what repeats across equations (locations, literal
    constants, types, attributes) is built once."""
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    # One constant op per distinct literal in this block (a 4,000-equation program
    # repeats the same few scalars thousands of times); the first use dominates the rest.
    literals = {}
    # and by the Literal object's identity (tracing hands out one Literal per folded scalar,
    # and the jaxpr keeps every one alive while it lowers): no key worked out again
    literal_ids = {}

    def read(x, loc=None):  # ``loc``: a new constant's location (None: the current one)
        if type(x) is Literal:
            out = literal_ids.get(id(x))
            if out is not None:
                return out
            val = x.val
            dtype = x.aval.dtype
            kind = type(val)
            # a Python scalar is its own key, but for the floats that == conflates or never
            # matches (0.0 and -0.0, NaN): those, and NumPy scalars, by their bytes
            if kind is int or kind is bool or (kind is float and val == val and val != 0.0):
                key = (dtype, kind, val)
            else:
                try:
                    key = (dtype, kind, np.asarray(val, dtype).tobytes())
                except (TypeError, ValueError):  # a value NumPy cannot hold: no sharing
                    return constant(val, dtype, loc)
            out = literals.get(key)
            if out is None:
                out = literals[key] = constant(val, dtype, loc)
            literal_ids[id(x)] = out
            return out
        return env[x]

    rules, inline_table, direct_table = lowering_tables(builder.platform)
    # A program's equations share a few source infos and avals (tracing hands out one
    # object for each): their locations and types by those objects, which the jaxpr
    # holds while it lowers (a dict lookup by identity, no key worked out)
    plans = {}       # (source info, primitive) -> (``builder.location(eqn)``, inline op,
    #                  the primitive's ``builder.attribute_memos`` dict)
    memos = builder.attribute_memos
    aval_types = {}  # id(aval) -> ``(aval_type(aval),)`` (an op's result types)
    broadcasts = {}  # (id(operand aval), id(result aval)) -> ``broadcast_parts`` (or False)
    platforms = builder.platforms
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        plan = plans.get((eqn.source_info, prim))
        if plan is None:
            memo = memos.get(prim)
            if memo is None:
                memo = memos[prim] = {}
            plan = plans[(eqn.source_info, prim)] = (builder.location(eqn),
                                                     inline_table.get(prim), memo)
        loc, inline, memo = plan
        invars, outvars = eqn.invars, eqn.outvars
        if platforms is not None and _per_platform(builder, eqn, env, read, loc):
            continue
        if inline is not None:  # one op: no context, no rule call (see ``inline_ops``)
            op_name, attributes_of, elementwise = inline
            attributes = None  # (False: the equation needs its rule)
            if attributes_of is not None:
                if type(attributes_of) is tuple:  # none, unless the equation sets that
                    name, refused = attributes_of  # param or has an operand dtype refused
                    if (eqn.params.get(name) is not None
                            or (refused and invars[0].aval.dtype in refused)):
                        attributes = False
                else:
                    attributes = attributes_of(eqn, memo)
                    if attributes is None:
                        attributes = False
            if attributes is not False:
                out_aval = outvars[0].aval
                shape = out_aval.shape
                operands = []
                try:
                    for x in invars:  # variables of the result's shape need no op of their own
                        if type(x) is Literal or (elementwise and x.aval.shape != shape):
                            operands = []  # a literal's constant, a broadcast: this location
                            for x in invars:
                                if type(x) is Literal:
                                    value = literal_ids.get(id(x))  # (``read``'s first look)
                                    if value is None:
                                        value = read(x, loc)
                                else:
                                    value = env[x]
                                if elementwise:
                                    aval = x.aval
                                    if aval.shape != shape:  # (the parts by the avals' ids)
                                        parts = broadcasts.get((id(aval), id(out_aval)))
                                        if parts is None:
                                            parts = broadcasts[(id(aval), id(out_aval))] = (
                                                broadcast_parts(aval, shape) or False)
                                        value = (create_op("stablehlo.broadcast_in_dim",
                                                           parts[0], (value,), parts[1],
                                                           loc=loc).result if parts
                                                 else broadcast_to(value, aval, shape, loc))
                                operands.append(value)
                            break
                        operands.append(env[x])
                    result_types = aval_types.get(id(out_aval))
                    if result_types is None:
                        result_types = aval_types[id(out_aval)] = (aval_type(out_aval),)
                    env[outvars[0]] = create_op(op_name, result_types, operands, attributes,
                                                loc=loc).result
                except ir.MLIRError as e:
                    raise _lowering_error(eqn, e) from e
                st = out_aval.sharding_type
                if st is not None and st.spec.unreduced:
                    with loc:
                        env[outvars[0]] = _unreduced_constraint(builder, st, env[outvars[0]],
                                                                out_aval)
                continue
        direct = direct_table.get(prim)
        if direct is not None:  # no context, no keywords (see ``direct_rules``)
            operands = []
            for x in invars:
                operands.append(env[x] if type(x) is not Literal else read(x, loc))
            try:
                out = direct(builder, eqn, operands, loc)
            except ir.MLIRError as e:
                raise _lowering_error(eqn, e) from e
            if prim.multiple_results:
                for v, val in zip(outvars, out):
                    env[v] = val
            else:
                env[outvars[0]] = out
            continue
        rule = rules.get(prim)
        if rule is None:
            raise NotImplementedError(
                f"No lowering rule for primitive '{prim.name}' on platform "
                f"'{builder.platform}': traxla cannot compile this equation: {eqn}")
        # (most equations have one or two operands and one result: no comprehension frame)
        ctx = RuleContext(
            builder, prim,
            [invars[0].aval, invars[1].aval] if len(invars) == 2 else [x.aval for x in invars],
            [outvars[0].aval] if len(outvars) == 1 else [v.aval for v in outvars], loc)
        try:
            with loc:  # a literal's constant op too has the equation's location
                operands = []  # (a loop: a comprehension's frame costs more for a few)
                for x in invars:
                    operands.append(env[x] if type(x) is not Literal else read(x))
                out = rule(ctx, *operands, **eqn.params)
        except ir.MLIRError as e:
            raise _lowering_error(eqn, e) from e
        if prim.multiple_results:
            for v, val in zip(outvars, out):
                st = getattr(v.aval, "sharding_type", None)
                if st is not None and st.spec.unreduced and prim not in _OWN_CONSTRAINT:
                    with loc:
                        val = _unreduced_constraint(builder, st, val, v.aval)
                env[v] = val
        else:
            st = ctx.avals_out[0].sharding_type
            if st is not None and st.spec.unreduced and prim not in _OWN_CONSTRAINT:
                with loc:
                    out = _unreduced_constraint(builder, st, out, ctx.avals_out[0])
            env[outvars[0]] = out
    return [read(v) for v in jaxpr.outvars]


# primitives whose lowering places their result itself (JAX's check_unreduced_constraint)
_OWN_CONSTRAINT: set = set()


def _unreduced_constraint(builder, st, value, aval):
    """``value``, whose type is unreduced over some mesh axes, constrained so (as JAX
    lowers every result that is unreduced): the partitioner must not reduce it."""
    if st.mesh.size == 1 or st.mesh.are_all_axes_manual:  # (in a shard_map body: nothing)
        return value
    name = builder.ensure_mesh(st.mesh)
    rank = len(aval.shape) + len(getattr(aval.dtype, "physical_shape", ()))
    spec = tuple(st.spec) + (None,) * (rank - len(st.spec))
    dims = [sdy.DimensionShardingAttr.get(
        [sdy.AxisRefAttr.get(n) for n in (() if p is None else p if isinstance(p, tuple) else (p,))],
        is_closed=True) for p in spec]
    attr = sdy.TensorShardingAttr.get(
        name, dims, unreduced_axes=[sdy.AxisRefAttr.get(n) for n in st.mesh.axis_names
                                      if n in st.spec.unreduced])
    return sdy.ShardingConstraintOp(value, attr).result


def _rule_groups(platforms, eqn):
    """Per platform, the index of its rule among the distinct ones, numbered as JAX numbers
    them: platform-specific rules in order of first use, the default rule last."""
    prim = eqn.primitive
    sensitive = platform_sensitive.get(prim)
    own_jax = sensitive(eqn) if sensitive is not None else None  # True: every platform
    keys = []
    for p in platforms:
        group = _GPU_GROUP.get(p, p)
        own = platform_rules.get(_MODULE_PLATFORM.get(p, p), {}).get(prim)
        if own is not None:
            keys.append(("own", own))
        elif own_jax is True or (own_jax and group in own_jax):
            keys.append(("jax-own", group))
        else:
            keys.append(("default",))
    distinct = [k for k in dict.fromkeys(keys) if k != ("default",)]
    if ("default",) in keys:
        distinct.append(("default",))
    return [distinct.index(k) for k in keys], len(distinct)


_GPU_GROUP = {"cuda": "gpu", "rocm": "gpu"}


def _per_platform(builder, eqn, env, read, loc) -> bool:
    """For a module of several platforms: an equation whose lowering differs by platform
    becomes JAX's two cases (platform index -> rule index, then one branch per rule, each
    lowered for a platform using it). False: one lowering serves them all."""
    platforms = builder.platforms
    groups, n = _rule_groups(platforms, eqn)
    if n == 1:
        return False
    # operands are read before the cases (a literal's constant too, as JAX emits it)
    operands, invars = {}, []
    with loc:
        for x in eqn.invars:
            if type(x) is Literal:
                v = Var(x.aval)
                operands[v] = read(x)
                invars.append(v)
            else:
                operands.setdefault(x, env[x])
                invars.append(x)
    eqn = eqn.replace(invars=invars)
    single = Jaxpr([], list(operands), eqn.outvars, [eqn])
    if has_ordered_effects(single):
        raise NotImplementedError(f"lowering '{eqn.primitive.name}' (which has ordered effects) "
                                  f"for several platforms {platforms}: lower for one at a time")
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    with loc:
        select = hlo.CaseOp([i32], builder.platform_index, len(platforms))
        for region, g in zip(select.regions, groups):
            with ir.InsertionPoint(region.blocks.append()):
                hlo.return_([constant(np.int32(g), np.int32)])
        case = hlo.CaseOp([aval_type(v.aval) for v in eqn.outvars], select.result, n)
    outer = builder.platform, builder.platforms
    try:
        for g, region in enumerate(case.regions):
            builder.platform, builder.platforms = platforms[groups.index(g)], None
            with ir.InsertionPoint(region.blocks.append()):
                outs = emit_jaxpr(builder, single, [], list(operands.values()))
                with loc:
                    hlo.return_(list(outs))
    finally:
        builder.platform, builder.platforms = outer
    for v, r in zip(eqn.outvars, case.results):
        env[v] = r
    return True


def _lowering_error(eqn, e) -> LoweringError:
    return LoweringError(f"traxla bug: lowering '{eqn.primitive.name}' with operands "
                         f"{[x.aval.str_short() for x in eqn.invars]} and params "
                         f"{eqn.params} failed: {e}")


def result_infos(n: int):
    return ["result"] if n == 1 else [f"result[{i}]" for i in range(n)]


class ModuleShardings:
    """Placement annotations of ``@main`` for SPMD: a mesh (``[(axis, size)]``) and, per
    argument and result, a spec (None: unannotated, left to the partitioner) and a
    memory kind (None: device memory)."""

    def __init__(self, mesh_axes, in_specs, out_specs, in_kinds=None, out_kinds=None,
                 out_meshes=None):
        self.mesh_axes = list(mesh_axes)
        self.in_specs = list(in_specs)
        self.out_specs = list(out_specs)
        self.in_kinds = list(in_kinds or [None] * len(self.in_specs))
        self.out_kinds = list(out_kinds or [None] * len(self.out_specs))
        # per result, the mesh of its spec when it is not the program's (use_abstract_mesh)
        self.out_meshes = list(out_meshes or [None] * len(self.out_specs))

    @property
    def num_devices(self):
        n = 1
        for _, size in self.mesh_axes:
            n *= size
        return n

    def emit_mesh(self, builder):
        class _Mesh:
            axis_names = [n for n, _ in self.mesh_axes]
            axis_sizes = [s for _, s in self.mesh_axes]
        builder.ensure_mesh(_Mesh)

    @staticmethod
    def attrs(spec, kind, rank=None, mesh_axes=None, mesh_name="mesh") -> dict:
        """``rank``: the stored rank (a key's data has trailing dims, never split)."""
        out = {}
        if spec is not None:
            unreduced = getattr(spec, "unreduced", ())
            if rank is not None and len(spec) < rank:
                spec = tuple(spec) + (None,) * (rank - len(spec))
            dims = []
            for p in spec:
                names = () if p is None else (p if isinstance(p, tuple) else (p,))
                dims.append(sdy.DimensionShardingAttr.get([sdy.AxisRefAttr.get(n) for n in names],
                                                          is_closed=True))
            out["sdy.sharding"] = sdy.TensorShardingAttr.get(
                mesh_name, dims, unreduced_axes=_unreduced_refs(unreduced, mesh_axes))
        if kind is not None:
            out["mhlo.memory_kind"] = ir.StringAttr.get(kind)
        return out


def _unreduced_refs(unreduced, mesh_axes):
    """An sdy sharding's unreduced axes, in mesh order (as JAX emits them)."""
    if not unreduced:
        return []
    names = sorted(unreduced) if mesh_axes is None else [n for n, _ in mesh_axes]
    return [sdy.AxisRefAttr.get(n) for n in names if n in unreduced]


def _rank(v) -> int:
    """The rank of ``v``'s stored value: a key dtype's data adds trailing dims."""
    aval = v.aval
    physical = getattr(aval.dtype, "physical_shape", ())
    return len(aval.shape) + len(physical)


def lower_jaxpr(closed: ClosedJaxpr, name: str, shardings: ModuleShardings | None = None,
                aliases=None, result_names=None, platform: str | None = None):
    """Lowers ``closed`` to a verified module whose public ``@main`` computes it.
    ``aliases``: per argument, the index of the result that may reuse its (donated)
    buffer, or None (emitted as ``tf.aliasing_output``, as JAX does). ``result_names``:
    each result's ``jax.result_info`` (default ``result[i]``). ``platform``: the platform
    to lower for (default: the default backend's)."""
    platforms = None
    if isinstance(platform, tuple):  # several: the module takes the platform index first
        platform, platforms = platform[0], (platform if len(platform) > 1 else None)
    with context(), ir.Location.unknown():
        builder = ModuleBuilder(f"jit_{_sanitize(name)}", platform=platform)
        builder.platforms = platforms
        builder.scope_prefix = f"jit({name})"
        if shardings is not None:
            i32 = ir.IntegerType.get_signless(32)
            builder.module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(
                i32, shardings.num_devices)
        if shardings is not None:
            shardings.emit_mesh(builder)
        builder._emit_function(closed, "main", public=True,
                               result_infos=result_names or result_infos(len(closed.jaxpr.outvars)),
                               shardings=shardings, aliases=aliases)
        verify(builder.module, closed)
        if builder.host_callbacks:
            _host_callbacks[builder.module] = tuple(builder.host_callbacks)
        return builder.module


def _refuse_ordered_effects(jaxpr):
    """One token cannot order callbacks running on several devices: refused, as JAX does."""
    ordered = ordered_effects(jaxpr_effects(jaxpr))
    if ordered:
        raise ValueError("The following ordered effects are not supported for more than 1 "
                         f"device: {ordered}")


# module -> the Python callables its custom calls index (weak: dies with the module)
_host_callbacks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def host_callbacks_of(module) -> tuple:
    """The host callables a module lowered by ``lower_jaxpr`` calls back, by index (the
    runtime must compile the module with them: without them XLA crashes)."""
    try:
        return _host_callbacks.get(module, ())
    except TypeError:  # text or bytecode: lowered elsewhere, no callbacks recorded
        return ()


def verify(module, closed=None):
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        prims = sorted({e_.primitive.name for e_ in closed.jaxpr.eqns}) if closed else []
        raise LoweringError(f"traxla bug: the emitted StableHLO module failed MLIR verification "
                            f"(primitives involved: {prims}): {e}") from e

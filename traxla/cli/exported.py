"""``python -m traxla exported FILE``: what a serialized ``Exported`` (traxla's or JAX's)
holds: the function name, argument and result types and structure, platforms, calling
convention, whether it is shape-polymorphic, the VJP orders stored; ``--mlir`` prints the
StableHLO module too."""
from __future__ import annotations
from traxla.export._exported import _vjp_orders
from traxla.export import deserialize


def add_parser(sub):
    p = sub.add_parser("exported", help="describe a serialized traxla/JAX Exported artifact")
    p.add_argument("file", help="the bytes written by Exported.serialize()")
    p.add_argument("--mlir", action="store_true", help="also print the StableHLO module")


def describe(exp) -> str:
    lines = [f"function        {exp.fun_name}",
             f"arguments       {exp.in_tree}  "
             + " ".join(a.str_short() for a in exp.in_avals),
             f"results         {exp.out_tree}  "
             + " ".join(a.str_short() for a in exp.out_avals),
             f"platforms       {', '.join(exp.platforms)}",
             f"devices         {exp.nr_devices}",
             f"calling conv.   {exp.calling_convention_version}",
             f"polymorphic     {'yes' if exp.uses_global_constants else 'no'}",
             f"kept arguments  {list(exp.module_kept_var_idx)}",
             f"vjp orders      {_vjp_orders(exp)}",
             f"module          {len(exp.mlir_module_serialized)} bytes (StableHLO portable "
             "artifact)"]
    return "\n".join(lines)


def run(args):
    with open(args.file, "rb") as f:
        exp = deserialize(f.read())
    print(describe(exp))
    if args.mlir:
        print()
        print(exp.mlir_module())
    return 0

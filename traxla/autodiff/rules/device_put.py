"""``device_put`` is linear: tangents go through a device_put of their own; cotangents
through one back from the destination to the source (always copying, as JAX)."""
from __future__ import annotations

from traxla.ir.rules.device_put import ArrayCopySemantics, device_put_p
from traxla.autodiff.ad import Zero, is_undefined, jvp_rules, transpose_rules
from traxla.autodiff.rules._util import linear_jvp


def _device_put_transpose(cts, *args, devices, srcs, copy_semantics):
    results = [None] * len(args)
    moved = []
    for i, (ct, arg) in enumerate(zip(cts, args)):
        if is_undefined(arg):
            if type(ct) is Zero:
                results[i] = Zero(arg.aval)
            else:
                moved.append(i)
    if moved:
        outs = device_put_p.bind(
            *[cts[i] for i in moved], devices=tuple(srcs[i] for i in moved),
            srcs=tuple(devices[i] for i in moved),
            copy_semantics=tuple(ArrayCopySemantics.ALWAYS_COPY for _ in moved))
        for i, out in zip(moved, outs):
            results[i] = out
    return results


jvp_rules[device_put_p] = linear_jvp(device_put_p)
transpose_rules[device_put_p] = _device_put_transpose

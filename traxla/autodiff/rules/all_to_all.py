"""``all_to_all`` is linear; its transpose swaps the split and concat axes."""
from __future__ import annotations

from traxla.ir.rules.all_to_all import all_to_all_p
from traxla.autodiff.rules._util import deflinear2


def _transpose(ct, x, *, split_axis, concat_axis, **params):
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)]


deflinear2(all_to_all_p, _transpose)

"""``sharding_constraint`` is linear: tangents and cotangents get the same constraint."""
from __future__ import annotations

from traxla.ir.rules.sharding_constraint import sharding_constraint_p
from traxla.autodiff.rules._util import deflinear2


def _transpose(ct, x, **params):
    return [sharding_constraint_p.bind(ct, **params)]


deflinear2(sharding_constraint_p, _transpose)

"""``platform_index``: which of several platform groups the program is lowered for (an
i32 scalar decided at lowering time; ``lax.platform_dependent`` switches on it)."""
from __future__ import annotations

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing

platform_index_p = Primitive("platform_index")


def _platform_index_rule(*, platforms):
    return ShapedArray((), np.dtype(np.int32), False)


def_typing(platform_index_p, _platform_index_rule)

"""The multihost conversions are linear; as JAX's, each transposes to itself."""
from __future__ import annotations

from traxla.ir.rules.multihost import (global_array_to_host_local_array_p,
                                       host_local_array_to_global_array_p)
from traxla.autodiff.rules._util import deflinear2

for _prim in (host_local_array_to_global_array_p, global_array_to_host_local_array_p):
    deflinear2(_prim, lambda ct, _, _prim=_prim, **params: [_prim.bind(ct, **params)])

r"""``traxla.experimental.jet``: Taylor-mode higher-order automatic differentiation, as
``jax.experimental.jet``.

Given the derivatives ``(h_0, ..., h_K)`` of a curve ``h`` at a point, ``jet(f, (h_0,),
((h_1, ..., h_K),))`` returns the derivatives ``(f_0, (f_1, ..., f_K))`` of ``f(h(t))``
(Faa di Bruno's formula), propagating truncated Taylor series through each primitive of
``f`` rather than nesting first-order derivatives. The trace is ``traxla.jet``; the rules
(JAX's set) are in ``traxla.jet.rules``. A primitive without a rule (control flow, among
others, as in JAX) raises ``KeyError`` naming it.

>>> import traxla.numpy as np
>>> h0, h1, h2 = 0.5**3., 3.*0.5**2., 6.*0.5
>>> f0, (f1, f2) = jet(np.sin, (h0,), ((h1, h2),))
"""
from collections.abc import Callable  # noqa: F401  (JAX's module exposes these names)
from functools import partial  # noqa: F401
from typing import Any  # noqa: F401

import numpy as np  # noqa: F401

from traxla import api_util, lax  # noqa: F401
from traxla import numpy as jnp  # noqa: F401
from traxla.base.sequences import safe_zip, unzip2  # noqa: F401
from traxla.jet import (JetTrace, JetTracer, ZeroSeries, ZeroTerm, def_comp,  # noqa: F401
                        def_deriv, deflinear, defzero, deriv_prop, fact, jet, jet2, jet_rules,
                        linear_prop, zero_prop, zero_series, zero_term)
from traxla.jet import rules as _rules  # noqa: F401  (registers the rules)
from traxla.tree_util import (register_pytree_node, tree_flatten, tree_structure,  # noqa: F401
                              tree_unflatten, treedef_is_leaf)

__all__ = ["jet", "jet2", "fact", "jet_rules", "JetTrace", "JetTracer", "ZeroTerm",
           "ZeroSeries", "zero_term", "zero_series", "defzero", "zero_prop", "deflinear",
           "linear_prop", "def_deriv", "deriv_prop", "def_comp"]


# The other names of JAX's module (mostly its imports), as JAX's
import traxla._src.ad_util as ad_util
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.lax.lax as lax_internal
import traxla._src.pjit as pjit
import traxla.interpreters.partial_eval as pe
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's internal machinery of jax.experimental.jet (traxla implements its API its own way)",
      functions='jet_fun jet_subtrace traceable weakref_lru_cache',
      constants='call_param_updaters',
      modules='lu sharding_impls')

"""Batching ``mulhi`` (elementwise, with lax's scalar broadcasting) and ``reduce_xor``."""
from __future__ import annotations

from ...ir.rules.integer_ops import mulhi_p, reduce_xor_p
from ..core import register_batching
from .elementwise import _broadcasting
from .reduction import _reducer

register_batching(mulhi_p, _broadcasting(mulhi_p))
register_batching(reduce_xor_p, _reducer(reduce_xor_p))

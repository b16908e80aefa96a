"""Batching ``mulhi`` (elementwise, with lax's scalar broadcasting) and ``reduce_xor``."""
from __future__ import annotations

from traxla.ir.rules.integer_ops import mulhi_p, reduce_xor_p
from traxla.batching.batch_trace import register_batching
from traxla.batching.rules.elementwise import _broadcasting
from traxla.batching.rules.reduction import _reducer

register_batching(mulhi_p, _broadcasting(mulhi_p))
register_batching(reduce_xor_p, _reducer(reduce_xor_p))

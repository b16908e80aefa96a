"""``traxla.extend.source_info_util``: where traced equations come from
(``jax.extend.source_info_util``): ``register_exclusion(path)`` makes a library's own frames
invisible to the source lines recorded in jaxprs and error messages."""
from traxla.ir.jaxpr import SourceInfo  # noqa: F401
from traxla.tracer.traces import register_exclusion, user_source_info


def current():
    """The SourceInfo of the caller's user frame."""
    return user_source_info(3)


__all__ = ["SourceInfo", "current", "register_exclusion"]

"""What a call did, for comparing traxla with JAX (in a test, or in a device script, which
imports this module from the repository root): its result, or the exception it raised as
``"TypeName: message"``."""
from __future__ import annotations


def outcome(fn):
    """``fn()``, or the exception it raised as ``"TypeName: message"``."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001  (the outcome is compared)
        return f"{type(e).__name__}: {e}"


def error_of(fn):
    """The exception ``fn()`` raised as ``"TypeName: message"``; None if it returned."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"
    return None

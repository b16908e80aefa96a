"""Shared by the census programs: print one JSON document (arrays as nested lists of
Python numbers) as the last line of stdout, for tools/ecosystem_census.py to compare."""
import json
import sys

import numpy as np


def plain(x):
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (bool, str, type(None))):
        return x
    if isinstance(x, (int, float)):
        return x
    a = np.asarray(x)
    if a.dtype == bool:
        return a.tolist()
    if a.dtype.kind in "iu":
        return a.astype(np.int64).tolist()
    if a.dtype.kind == "c":
        return [plain(a.real), plain(a.imag)]
    return a.astype(np.float64).tolist()


def emit(result: dict, tol: float | None = None):
    out = plain(result)
    if tol is not None:
        out["_tol"] = tol
    sys.stdout.flush()
    print(json.dumps(out))

"""The wording of control flow's type-mismatch errors, as JAX's: the listed differences,
what does not match between two types, and the hint about varying manual axes."""
from __future__ import annotations


def _capitalize(s):
    return s[0].capitalize() + s[1:]


def _differences(diffs, *, capitalize=True, blank_lines=True):
    """The differences an error message lists, as JAX words them: one sentence, or a bulleted
    list (with ``blank_lines`` between the bullets where JAX's message has them)."""
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0]) if capitalize else diffs[0]}.\n"
    if blank_lines:
        return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    return "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"


def _str_short(aval):
    return aval.str_short(False)


def _mismatch_extra(a, b) -> str:
    mismatches = []
    if a.dtype != b.dtype:
        mismatches.append("the dtypes do not match")
    if a.shape != b.shape:
        mismatches.append("the shapes do not match")
    if a.vma != b.vma:
        mismatches.append("the manual axis types do not match")
    if not mismatches:
        return ""
    if len(mismatches) == 1:
        return ", so " + mismatches[0]
    return ", so " + ", ".join(mismatches[:-1]) + ", and " + mismatches[-1]


def _pvary_hint(applications, blank_lines) -> str:
    """JAX's hint for outputs that vary over more manual axes than their counterparts."""
    if not applications:
        return ""
    if len(applications) == 1:
        msg = f"This might be fixed by {applications[0]}.\n"
    elif blank_lines:
        msg = ("This might be fixed by:\n" + "\n".join(f"  * {d};\n" for d in applications[:-1])
               + f"  * {applications[-1]}.\n")
    else:
        msg = ("This might be fixed by:\n" + "\n".join(f"  * {d};" for d in applications[:-1])
               + f"\n  * {applications[-1]}.\n")
    return msg + ("See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for "
                  "more information.\n\n")
